"""The Compare page's layer map against two bare batched forwards, and the memory two models
take.

The bare forwards are what a notebook user would write for the same sentences on each model: the
tokenizer on the same length-sorted batches with padding, ``model(**batch,
output_hidden_states=True)`` under ``torch.inference_mode()``, nothing else, once per model. The
map (``core.layer_similarity``) also encodes each sentence alone with its offsets, matches the two
models' rows, keeps every layer's tokens and computes linear CKA between every pair of layers
(float32 products summed in float64). Both models are the shipped all-MiniLM-L6-v2 and its
random-weights copy (the page's default, needing no download), over the built-in corpus's English
sentences (the page's default for an English model). The two are interleaved (order rotated each
repetition) and the ratio is the median of the per-repetition ratios, as in bench.contexts_bench.

    python3 -m bench.compare_bench [--reps 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MAP_GOAL = 1.3           # layer map / two bare batched forwards (issue 52)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_map(bundle, other, texts: list[str], reps: int
              ) -> tuple[float, float, float, list[float], list[float], float]:
    """(median bare s, median map s, median ratio, every bare s, every map s, median ratio of
    processor seconds: on a machine shared with other work, wall time counts their share too)."""
    from core import layer_similarity
    from core.contexts.vectors import batches

    lengths = [len(x) for x in bundle.tokenize(texts)["input_ids"]]
    groups = [[texts[i] for i in g] for g in batches(lengths)]

    @torch.inference_mode()
    def bare() -> None:
        for model in (bundle, other):
            for group in groups:
                batch = model.tokenize(group, padding=True, return_tensors="pt")
                model.model(**batch, output_hidden_states=True)

    runs = {"bare": bare, "map": lambda: layer_similarity(bundle, other, texts)}
    for fn in runs.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for rep in range(reps):
        for name in names[rep % 2:] + names[:rep % 2]:
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            runs[name]()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return (statistics.median(times["bare"]), statistics.median(times["map"]),
            statistics.median(m / b for m, b in zip(times["map"], times["bare"], strict=True)),
            times["bare"], times["map"],
            statistics.median(m / b for m, b in zip(cpu["map"], cpu["bare"], strict=True)))


def rows(reps: int) -> list:
    from bench.app_bench import log
    from bench.report import Row, fmt_s
    from core import DEFAULT_MODEL, layer_similarity, load_model
    from core.compare import random_weights
    from core.contexts import NEIGHBOUR_CORPUS

    texts = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == "en"]
    start_rss = _rss_mb()
    bundle = load_model(DEFAULT_MODEL)
    other = random_weights(bundle)
    with torch.inference_mode():
        for model in (bundle, other):
            model.model(**model.tokenize("warm up", return_tensors="pt"))
    loaded = _rss_mb()
    log(f"compare: layer map vs two bare batched forwards, {len(texts)} sentences, {reps} reps")
    bare_s, map_s, ratio, bares, maps, cpu_ratio = bench_map(bundle, other, texts, reps)
    result = layer_similarity(bundle, other, texts, with_checks=True)
    out = [
        Row("1 Core", f"layer map / two bare batched forwards (output_hidden_states): "
            f"{DEFAULT_MODEL} against its random weights, {len(texts)} sentences alone, "
            f"{result.rows:,} tokens, {result.cka.size} layer pairs (float32 products, "
            "float64 sums)",
            f"{ratio:.2f}x ({fmt_s(map_s)} vs {fmt_s(bare_s)})", f"≤ {MAP_GOAL}x",
            ratio <= MAP_GOAL),
        Row("1 Core", "the same in processor seconds (median ratio)", f"{cpu_ratio:.2f}x",
            f"≤ {MAP_GOAL}x", cpu_ratio <= MAP_GOAL),
        Row("1 Core", "the same, every repetition (map / bare)",
            ", ".join(f"{m:.2f}/{b:.2f} s" for m, b in zip(maps, bares, strict=True)), "—",
            None),
        Row("1 Core", "RSS: Python and the libraries / with both models loaded / peak after "
            "the map", f"{start_rss:.0f} / {loaded:.0f} / {_peak_mb():.0f} MB", "—", None),
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch and BLAS threads (1, as the app runs each model run)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from threadpoolctl import threadpool_limits

    from bench.report import markdown
    with threadpool_limits(args.threads):
        print(markdown(rows(args.reps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
