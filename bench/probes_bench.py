"""The probe over every layer of the built-in parts-of-speech set against one bare forward pass
over the same sentences plus scikit-learn's fits alone, and the memory it takes.

The bare side is what a notebook user would write for the same result: the tokenizer on the
same length-sorted batches with padding, ``model(**batch, output_hidden_states=True)`` under
``torch.inference_mode()``, then the same fits (``StandardScaler`` + ``LogisticRegression``,
every layer, every fold, the task and its control) on vectors and labels already made. The probe
(``core.layer_probe``) also tokenises each sentence alone with its offsets, groups the pieces
into the treebank's words (a word is the mean of its pieces), draws the control labels and makes
the folds. Both run on the shipped all-MiniLM-L6-v2 and the English treebank subset (400
sentences); the two are interleaved (order rotated each repetition) and the ratio is the median
of the per-repetition ratios, as in bench.compare_bench.

    python3 -m bench.probes_bench [--reps 3] [--threads 1] [--language en]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PROBE_GOAL = 1.2     # probe / (bare forward + the fits alone) (issue 61)


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_probe(bundle, language: str, reps: int) -> dict:
    """Per repetition: the probe's seconds, the bare forward's and the fits' alone."""
    from core import layer_probe
    from core.contexts.vectors import batches
    from core.probes import BuiltinSet, ProbeTask, builtin_items
    from core.probes.probe import (
        control_labels,
        example_vectors,
        examples_of,
        fold_scores,
        fold_split,
    )

    items = builtin_items(BuiltinSet.POS, language, bundle)
    texts = [" ".join(words) for words, _ in items]
    # The fits' inputs, made once outside the timing (the bare side's fits start from them).
    examples = examples_of(bundle, ProbeTask.WORD_TAGS, items)
    vectors = example_vectors(bundle, examples)
    labels = [t for s in examples.labels for t in s]
    types = [t for s in examples.types for t in s]
    y = np.asarray(labels)
    y_control = np.asarray(control_labels(types, labels))
    groups = np.repeat(np.arange(len(examples.labels)), [len(x) for x in examples.labels])
    test_fold = fold_split(groups, 5)
    lengths = [len(x) for x in bundle.tokenize(texts)["input_ids"]]
    ordered = [[texts[i] for i in g] for g in batches(lengths)]

    @torch.inference_mode()
    def forward() -> None:
        for group in ordered:
            batch = bundle.tokenize(group, padding=True, return_tensors="pt")
            bundle.model(**batch, output_hidden_states=True)

    def fits() -> None:
        for layer in range(vectors.shape[0]):
            fold_scores(vectors[layer], y, test_fold)
            fold_scores(vectors[layer], y_control, test_fold)

    result: dict = {"probe": [], "forward": [], "fits": [], "probe_cpu": [], "bare_cpu": [],
                    "examples": len(labels), "sentences": len(items),
                    "vectors_mb": vectors.nbytes / 1e6}
    for rep in range(reps):
        order = ["probe", "bare"] if rep % 2 == 0 else ["bare", "probe"]
        for name in order:
            gc.collect()
            start, cpu = time.perf_counter(), time.process_time()
            if name == "probe":
                probe = layer_probe(bundle, ProbeTask.WORD_TAGS, items)
                result["probe"].append(time.perf_counter() - start)
                result["probe_cpu"].append(time.process_time() - cpu)
                result["accuracy"] = probe.accuracy
                result["control"] = probe.control
                result["expected"] = probe.expected_layer
            else:
                forward()
                middle = time.perf_counter()
                fits()
                result["forward"].append(middle - start)
                result["fits"].append(time.perf_counter() - middle)
                result["bare_cpu"].append(time.process_time() - cpu)
    return result


def rows(reps: int, language: str = "en") -> list:
    from bench.app_bench import log
    from bench.report import Row, fmt_s
    from core import DEFAULT_MODEL, load_model

    start_rss = _status_mb("VmRSS:")
    bundle = load_model(DEFAULT_MODEL)
    with torch.inference_mode():
        bundle.model(**bundle.tokenize("warm up", return_tensors="pt"))
    loaded = _status_mb("VmRSS:")
    log(f"probes: the parts-of-speech probe vs a bare forward and the fits, {reps} reps")
    r = bench_probe(bundle, language, reps)
    bare = [f + s for f, s in zip(r["forward"], r["fits"], strict=True)]
    ratio = statistics.median(p / b for p, b in zip(r["probe"], bare, strict=True))
    cpu_ratio = statistics.median(p / b for p, b in zip(r["probe_cpu"], r["bare_cpu"],
                                                        strict=True))
    layers = len(r["accuracy"])
    return [
        Row("1 Core", f"layer_probe, parts of speech ({language}): {DEFAULT_MODEL}, "
            f"{r['sentences']} sentences, {r['examples']:,} words, {layers} layers x 5 folds x "
            "(task + control) / a bare batched forward plus the same scikit-learn fits alone",
            f"{ratio:.2f}x ({fmt_s(statistics.median(r['probe']))} vs "
            f"{fmt_s(statistics.median(r['forward']))} + "
            f"{fmt_s(statistics.median(r['fits']))})", f"≤ {PROBE_GOAL}x",
            ratio <= PROBE_GOAL),
        Row("1 Core", "the same in processor seconds (median ratio)", f"{cpu_ratio:.2f}x",
            f"≤ {PROBE_GOAL}x", cpu_ratio <= PROBE_GOAL),
        Row("1 Core", "the same, every repetition (probe / forward + fits)",
            ", ".join(f"{p:.1f}/{f:.1f}+{s:.1f} s" for p, f, s in
                      zip(r["probe"], r["forward"], r["fits"], strict=True)), "—", None),
        Row("1 Core", "the probe's result: accuracy by layer / control / expected layer",
            " ".join(f"{a:.3f}" for a in r["accuracy"]) + " / "
            + " ".join(f"{c:.3f}" for c in r["control"]) + f" / {r['expected']:.2f}", "—",
            None),
        Row("1 Core", "RSS: Python and the libraries / the model loaded / peak after the "
            "probes; every layer's word vectors (float32)",
            f"{start_rss:.0f} / {loaded:.0f} / {_status_mb('VmHWM:'):.0f} MB; "
            f"{r['vectors_mb']:.1f} MB", "—", None),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch and BLAS threads (1, as the app runs each model run)")
    parser.add_argument("--language", default="en", choices=["en", "zh"])
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from threadpoolctl import threadpool_limits

    from bench.report import markdown
    with threadpool_limits(args.threads):
        print(markdown(rows(args.reps, args.language)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
