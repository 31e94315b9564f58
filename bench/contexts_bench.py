"""The Contexts page's core: the corpus pass against a bare batched forward, a neighbours query
over 32,000 tokens, and the memory the built-in corpus and a 2,000-sentence corpus add.

The bare forward is what a notebook user would write for the same sentences: the tokenizer on
the same length-sorted batches with padding, ``model(**batch, output_hidden_states=True)`` under
``torch.inference_mode()``, nothing else. The corpus pass also takes each sentence's offsets,
keeps every layer's word tokens as unit vectors in float16 with their lengths, and finds the
labelled words. The two are interleaved (order rotated each repetition) and the ratio is the
median of the per-repetition ratios, as in bench.core_bench.

    python3 -m bench.contexts_bench [--reps 3] [--threads 1]
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

PASS_GOAL = 1.2          # corpus pass / bare batched forward (issue 37)
QUERY_GOAL_S = 0.050     # one layer's neighbours over 32,000 tokens (issue 37)
BIG_TOKENS = 32_000
QUERIES = 30


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _settled_rss() -> float:
    """RSS after a collection and handing freed heap pages back (malloc_trim)."""
    import ctypes
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    return _rss_mb()


def bench_pass(bundle, reps: int) -> tuple[float, float, float]:
    """(median bare s, median pass s, median ratio) over NEIGHBOUR_CORPUS."""
    from core.contexts import NEIGHBOUR_CORPUS, corpus_pass
    from core.contexts.vectors import batches

    sentences = [r.sentence for r in NEIGHBOUR_CORPUS]
    lengths = [len(x) for x in bundle.tokenize(sentences)["input_ids"]]
    groups = [[sentences[i] for i in g] for g in batches(lengths)]

    @torch.inference_mode()
    def bare() -> None:
        for group in groups:
            batch = bundle.tokenize(group, padding=True, return_tensors="pt")
            bundle.model(**batch, output_hidden_states=True)

    runs = {"bare": bare, "pass": lambda: corpus_pass(bundle)}
    for fn in runs.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for rep in range(reps):
        for name in names[rep % 2:] + names[:rep % 2]:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return (statistics.median(times["bare"]), statistics.median(times["pass"]),
            statistics.median(p / b for p, b in zip(times["pass"], times["bare"], strict=True)))


def big_corpus(bundle):
    """About 32,000 tokens of sentences (NEIGHBOUR_CORPUS's, numbered so none repeats) as a
    user's corpus would come: at most 2,000 sentences or 32,000 tokens."""
    from core.contexts import NEIGHBOUR_CORPUS
    from core.contexts.user_corpus import corpus_from, table_of_text

    lines = []
    k = 0
    while len(lines) < 2_000:
        r = NEIGHBOUR_CORPUS[k % len(NEIGHBOUR_CORPUS)]
        lines.append(f"{r.sentence} Again, number {k}, and the story goes on a little more.")
        k += 1
    return corpus_from(bundle, table_of_text("\n".join(lines)), 0)


def rows(reps: int) -> list:
    from bench.app_bench import log
    from bench.report import Row, fmt_s
    from core import DEFAULT_MODEL, load_model
    from core.contexts import corpus_pass, nearest_to
    from core.contexts.neighbours import with_tokens
    from core.contexts.vectors import layers_within

    bundle = load_model(DEFAULT_MODEL)
    with torch.inference_mode():
        bundle.model(**bundle.tokenize("warm up", return_tensors="pt"))
    before = _settled_rss()
    log("contexts: the built-in corpus pass, memory")
    corpus = corpus_pass(bundle)
    after = _settled_rss()
    out = [Row("1 Core", f"RSS added by the built-in corpus on {DEFAULT_MODEL} "
               f"({len(corpus.records)} sentences, {corpus.n_tokens:,} tokens, "
               f"{corpus.n_layers} layers in float16)",
               f"+{after - before:.1f} MB (its arrays {corpus.nbytes / 1e6:.1f} MB)", "—", None)]
    log(f"contexts: corpus pass vs bare batched forward, {reps} reps")
    bare_s, pass_s, ratio = bench_pass(bundle, reps)
    out.append(Row("1 Core", f"corpus pass / bare batched forward (output_hidden_states), "
                   f"{len(corpus.records)} sentences alone, batched by length",
                   f"{ratio:.2f}x ({fmt_s(pass_s)} vs {fmt_s(bare_s)})", f"≤ {PASS_GOAL}x",
                   ratio <= PASS_GOAL))
    del corpus
    user = big_corpus(bundle)
    budget = int(0.6 * 130 * 1024 * 1024)   # the page's share of the default results budget
    kept = layers_within(bundle, user.tokens - 2 * len(user.records), budget)
    log(f"contexts: a {len(user.records):,}-sentence corpus ({user.tokens:,} tokens), "
        f"layers {kept}")
    before = _settled_rss()
    start = time.perf_counter()
    big = corpus_pass(bundle, user.records, layers=kept)
    big_s = time.perf_counter() - start
    after = _settled_rss()
    out.append(Row("1 Core", f"a {len(user.records):,}-sentence corpus of {user.tokens:,} tokens "
                   f"as the page keeps it (layers {', '.join(map(str, kept))}): pass / RSS added",
                   f"{fmt_s(big_s)} / +{after - before:.1f} MB (its arrays "
                   f"{big.nbytes / 1e6:.1f} MB)", "—", None))
    rng = np.random.default_rng(0)
    picks = rng.integers(0, big.n_tokens, QUERIES)
    layer = kept[-1]
    times = []
    for pick in picks:
        vector = big.raw(layer, slice(int(pick), int(pick) + 1))[0]
        start = time.perf_counter()
        with_tokens(bundle, big, nearest_to(big, vector, layer, 10))
        times.append(time.perf_counter() - start)
    query = statistics.median(times)
    out.append(Row("1 Core", f"neighbours query, one layer, exact cosine over {big.n_tokens:,} "
                   f"stored tokens (top 10, median of {QUERIES})", fmt_s(query),
                   f"< {QUERY_GOAL_S * 1000:.0f} ms", query < QUERY_GOAL_S))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (1, as the app runs each model run)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from bench.report import markdown
    print(markdown(rows(args.reps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
