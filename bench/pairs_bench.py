"""Sentence pairs' speed: compare_pairs against a bare batched forward, and the Pairs page's warm
rerun with a results table against /tokens.

The bare forward is what a notebook user would write for the same sentences: the tokenizer on 64
sentences at a time with padding, ``model(**batch)`` under ``torch.inference_mode()``, nothing
else. compare_pairs also keeps every layer's hidden states, mean-pools each layer through the
attention mask and takes the cosines. The two are interleaved (order rotated each repetition) and
the ratio is the median of the per-repetition ratios, as in bench.core_bench.

    python3 -m bench.pairs_bench [--reps 3] [--browser]   # this part alone, printed as rows
    python3 -m bench.pairs_bench --no-core --big          # 20,000 pairs: time and memory

The big list (``--big``) is the Pairs page's largest: ``BIG_PAIRS`` pairs of STS-like length
(10 to 24 one-token words) written as a tab-separated file, read by core.sentence_files.reader
and run through compare_pairs on the job executor (serving.jobs) once; it reports the seconds of
each, the process's peak resident memory over its resident memory before (what the run added at its
peak), and the bytes of the results table the page keeps.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.texts import SentenceFactory  # noqa: E402 - after the path is set for `python bench/…`

N_PAIRS = 1000
BIG_PAIRS = 20_000
BIG_WORDS = (10, 25)        # STS-like sentences: 10 to 24 one-token words
PAIR_WORDS = (6, 14)        # short sentences: 6 to 13 one-token words, 8 to 15 tokens
BATCH = 64                  # compare_pairs' own batch size, for both
PAIRS_GOAL = 1.5            # compare_pairs / bare batched forward (issue 26)
PAGE_GOAL = 2.0             # /pairs warm rerun with a results table / /tokens' (issue 26)
PAIRS_VIEW = (("pr_section", "Many pairs"), ("pr_list", "examples"))


@dataclass(frozen=True)
class PairsFigures:
    n_pairs: int
    bare_s: float       # median bare batched forward of the 2 x n_pairs sentences
    compare_s: float    # median compare_pairs of the same pairs
    ratio: float        # median of compare / bare, paired by repetition


def short_pairs(factory: SentenceFactory, n: int = N_PAIRS) -> list[tuple[str, str]]:
    """``n`` pairs of distinct short sentences of mixed lengths (no sentence repeats, so
    compare_pairs runs every one as the bare forward does)."""
    lengths = range(*PAIR_WORDS)
    return [(factory.words(lengths[(2 * i) % len(lengths)]),
             factory.words(lengths[(2 * i + 5) % len(lengths)])) for i in range(n)]


def bench_pairs(factory: SentenceFactory, reps: int) -> PairsFigures:
    from components.cache import get_model
    from core import DEFAULT_MODEL, compare_pairs
    from core.similarity.pairs import sentence_limit

    bundle = get_model(DEFAULT_MODEL)
    pairs = short_pairs(factory)
    texts = [s for pair in pairs for s in pair]
    limit = sentence_limit(bundle)

    @torch.inference_mode()
    def bare() -> None:
        for start in range(0, len(texts), BATCH):
            batch = bundle.tokenize(texts[start:start + BATCH], padding=True, truncation=True,
                                    max_length=limit, return_tensors="pt")
            bundle.model(**batch)

    runs = {"bare": bare, "compare": lambda: compare_pairs(bundle, pairs, batch_size=BATCH)}
    for fn in runs.values():   # one warm-up each
        fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for rep in range(reps):
        for name in names[rep % 2:] + names[:rep % 2]:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return PairsFigures(
        N_PAIRS, statistics.median(times["bare"]), statistics.median(times["compare"]),
        statistics.median(c / b for c, b in zip(times["compare"], times["bare"], strict=True)))


def core_rows(factory: SentenceFactory, reps: int) -> list:
    """The part-1 row: 1,000 short pairs through compare_pairs vs a bare batched forward."""
    from bench.app_bench import log
    from bench.report import Row, fmt_s

    log(f"core: {N_PAIRS:,} short pairs, compare_pairs vs a bare batched forward")
    f = bench_pairs(factory, reps)
    return [Row("1 Core", f"compare_pairs / bare batched forward, {f.n_pairs:,} short pairs "
                f"({2 * f.n_pairs:,} sentences of 8-15 tokens, batches of {BATCH})",
                f"{f.ratio:.2f}x ({fmt_s(f.compare_s)} vs {fmt_s(f.bare_s)})",
                f"≤ {PAIRS_GOAL}x", f.ratio <= PAIRS_GOAL)]


def app_rows(browser, base: str, factory: SentenceFactory, reps: int) -> list:
    """The part-2 row: /pairs showing the example set's results (table, scatter, the pairs that
    disagree most), rerun with a new sentence A, against /tokens, interleaved."""
    from bench.app_bench import Target, checked, log, median_s, open_tabs
    from bench.report import Row, fmt_s
    from bench.texts import SENTENCE_WORDS

    log("app: /pairs with a results table vs /tokens")
    targets = [Target("Tokens", base, "tokens", "Control+Enter"),
               Target("Pairs, many pairs", base, "pairs", "Control+Enter", PAIRS_VIEW)]
    opened = open_tabs(browser, targets, [factory.sentence(SENTENCE_WORDS) for _ in targets], {})
    tabs = [tab for tab, _ in opened]
    # The example set's job runs in the background: wait for its table before timing reruns.
    tabs[1].page.wait_for_selector("[data-testid='stDataFrame']", timeout=120_000)
    runs: list[list] = [[], []]
    for rep in range(reps):
        for i in (rep % 2, 1 - rep % 2):
            runs[i].append(checked(tabs[i].rerun(factory.sentence(SENTENCE_WORDS)),
                                   targets[i].title))
    for tab in tabs:
        tab.close()
    tokens_s, pairs_s = median_s(runs[0]), median_s(runs[1])
    ratio = pairs_s / tokens_s
    return [Row("2 App", "/pairs warm rerun with the example set's results shown "
                "(the results table, the scatter, the pairs that disagree most) / /tokens",
                f"{ratio:.2f}x ({fmt_s(pairs_s)} vs {fmt_s(tokens_s)})", f"≤ {PAGE_GOAL}x",
                ratio <= PAGE_GOAL)]


def _rss_mb() -> float:
    """The process's resident memory now, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def big_rows(factory: SentenceFactory) -> list:
    """The 20,000-pair row: reading the file, comparing on the executor, memory."""
    import resource

    from bench.app_bench import log
    from bench.report import Row, fmt_s
    from core import DEFAULT_MODEL, compare_pairs, load_model
    from core.sentence_files.reader import read_table
    from core.similarity.pair_lists import proposed_pairs
    from serving import jobs

    bundle = load_model(DEFAULT_MODEL)
    lengths = range(*BIG_WORDS)
    lines = [f"{factory.words(lengths[i % len(lengths)])}\t"
             f"{factory.words(lengths[(i * 7 + 3) % len(lengths)])}\t{i % 6}"
             for i in range(BIG_PAIRS)]
    data = ("\n".join(lines) + "\n").encode()
    log(f"big: {BIG_PAIRS:,} pairs ({len(data) / 1e6:.1f} MB), read and compared once")
    start = time.perf_counter()
    pairs = proposed_pairs(read_table(data, "big.tsv"))
    read_s = time.perf_counter() - start
    assert len(pairs.pairs) == BIG_PAIRS, len(pairs.pairs)
    before = _rss_mb()
    start = time.perf_counter()
    job = jobs.submit(("bench", BIG_PAIRS),
                      lambda j: compare_pairs(bundle, pairs.pairs, progress=j.report), "bench")
    while not job.done():
        time.sleep(0.5)
        job.touch()
    frame = job.result()
    compare_s = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024     # KB on Linux
    table_mb = frame.memory_usage(deep=True).sum() / 1e6
    return [Row("1 Core", f"{BIG_PAIRS:,} pairs ({2 * BIG_PAIRS:,} sentences of 12-26 tokens) "
                f"read from a {len(data) / 1e6:.1f} MB TSV / compared on the job executor",
                f"{fmt_s(read_s)} / {fmt_s(compare_s)}; peak RSS {peak:,.0f} MB "
                f"(+{peak - before:,.0f} MB over {before:,.0f} MB); results table "
                f"{table_mb:.1f} MB", "—", None)]


def main(argv: list[str] | None = None) -> int:
    """This part alone (the full bench runs it inside bench/run.py)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also the /pairs vs /tokens row")
    parser.add_argument("--no-core", action="store_true", help="skip the compare_pairs row")
    parser.add_argument("--big", action="store_true", help="also the 20,000-pair row")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch threads for the core row (0: torch's default); one keeps "
                             "the ratio steady on a machine busy with other work")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    from bench.report import markdown
    from core import load_model

    factory = SentenceFactory(load_model().tokenizer)
    rows = [] if args.no_core else core_rows(factory, args.reps)
    if args.big:
        rows += big_rows(factory)
    if args.browser:
        from playwright.sync_api import sync_playwright

        from bench.browser import CHROMIUM, CHROMIUM_ARGS
        from bench.server import start_server

        server = start_server("app.py")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                rows += app_rows(browser, server.url, factory, max(args.reps, 5))
                browser.close()
        finally:
            server.stop()
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
