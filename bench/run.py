"""The benchmark: `python bench/run.py [--quick] [--out FILE]`.

Starts everything it needs (the app server, a bare Streamlit server, Debian's Chromium), measures
the four parts of issue 7 in one run, and prints the machine and one markdown table. Progress goes
to stderr, the result to stdout (and to FILE with --out).

    1 Core        core.analyze vs a bare forward; the cache layer's repeat vs its first call;
                  1,000 short pairs through compare_pairs vs a bare batched forward (pairs_bench)
    2 App         cold start, warm reruns on every page vs the app's frame alone (and the
                  frame vs a bare Streamlit page), websocket bytes, /stages vs /tokens
                  (issue 3), /positions first visit (issue 4), every page opened from the
                  top navigation and in a new tab (switch_bench), every page with a 512-token
                  pair vs /tokens (long_bench), /pairs with a results table vs /tokens, the
                  views by word vs their token views (words_bench), on every page the
                  control a student moves most vs a bare page (explore_bench), and what
                  one more element of each kind adds to a move (element_costs)
    3 Memory      server RSS after every page and after 10 / 25 / 50 distinct sentences; then, on a
                  fresh server, 30 websocket sessions with 512-token pairs on every page
                  (bench/long_text.py): RSS start / peak / a while after they close
    4 Many users  browser contexts rerunning against one server: p50 / p95 latency, errors;
                  then a class of browserless students over Streamlit's websocket (ws_load),
                  and the same class through deploy/'s HAProxy in front of two replicas on
                  this machine (bench/replicas.py; skipped where HAProxy is not installed);
                  then a class as a lesson runs, half following the teacher, half on the
                  pages, through the proxy to two replicas sharing a Redis poll store
                  (bench/mixed_class.py; skipped where HAProxy or Redis is not installed)
"""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.app_bench import AppFigures
    from bench.load_bench import LoadFigures
    from bench.texts import SentenceFactory

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Plan:
    name: str
    core_reps: int
    reps_new: int        # warm reruns with a new sentence, per page
    reps_repeat: int     # reruns with a sentence already analysed, per page
    checkpoints: list[int]
    long_users: int        # part 3's long-text class (bench/long_text.py)
    long_seconds: float
    long_after_s: float    # past Streamlit's 120 s for a closed tab's session
    load_seconds: float
    switch_reps: int = 5   # rounds of page switches (every page from the menu, and a new tab)
    long_reps: int = 5     # warm reruns per page with a 512-token pair
    explore_reps: int = 7  # in-page control changes per page (bench/explore_bench.py)


FULL = Plan("full", core_reps=9, reps_new=7, reps_repeat=5, checkpoints=[10, 25, 50],
            long_users=30, long_seconds=90, long_after_s=150, load_seconds=60)
QUICK = Plan("quick (smoke run: too few repetitions for final figures)", core_reps=3,
             reps_new=3, reps_repeat=2, checkpoints=[3, 6, 10], long_users=6,
             long_seconds=20, long_after_s=40, load_seconds=15,
             switch_reps=2, long_reps=2, explore_reps=2)
CORE_SIZES = (16, 128, 512)
ELEMENT_COUNT = 8   # extra elements of each kind on the floor's fragment (element_costs)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--out", type=Path, help="also write the result as markdown here")
    parser.add_argument("--users", type=int, default=10, help="browser contexts in part 4")
    parser.add_argument("--students", type=int, default=100,
                        help="browserless students in part 4 (websocket sessions)")
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds a user reads the result before the next sentence (part 4)")
    return parser.parse_args(argv)


def measure_core(plan: Plan) -> tuple[list, list, SentenceFactory]:
    """Part 1, before any server runs, so nothing else competes for the CPU."""
    from bench import core_bench
    from bench.app_bench import log
    from bench.texts import SentenceFactory
    from core import load_model

    bundle = load_model()
    factory = SentenceFactory(bundle.tokenizer)
    forward, cache = [], []
    for n in CORE_SIZES:
        log(f"core: {n} tokens")
        forward += core_bench.bench_forward(bundle, factory, n, plan.core_reps)
        cache += core_bench.bench_cache(factory, n, plan.core_reps)
    return forward, cache, factory


def measure_app(plan: Plan, factory: SentenceFactory, users: int, think_s: float,
                students: int, pair_rows: list | None = None,
                ) -> tuple[AppFigures, LoadFigures, int, dict, str, Path]:
    """Parts 2 to 4 against one app server. Returns figures, RSS after the load, Chromium's
    version and the server's log; the Pairs page's row and the views by word are appended to
    ``pair_rows``."""
    from playwright.sync_api import sync_playwright

    from bench import app_bench, load_bench, ws_load
    from bench.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        chromium = browser.version
        app, server = app_bench.run_app(browser, factory, plan.reps_new, plan.reps_repeat,
                                        plan.checkpoints, plan.switch_reps, plan.long_reps)
        if pair_rows is not None:
            from bench import pairs_bench, words_bench

            try:
                pair_rows += pairs_bench.app_rows(browser, server.url, factory, plan.reps_new)
                pair_rows += words_bench.app_rows(browser, server.url, factory, plan.reps_new)
            except BaseException:
                server.stop()
                raise
        try:
            browser.close()
        except BaseException:
            server.stop()
            raise
    try:   # the async users need the sync Playwright above to be closed
        app_bench.log(f"many users: {users} users for {plan.load_seconds:.0f} s")
        pages = {t.path: app.prints_tokens.get(t.path) for t in app_bench.app_targets(server.url)}
        load = load_bench.run_load(server.url, pages, factory, users, plan.load_seconds, think_s)
        rss_after_load = server.rss_bytes()
        app_bench.log(f"class: {students} browserless students for {plan.load_seconds:.0f} s")
        # The class spread over every page of the app, Home included.
        students_figures = ws_load.run_ws_load(server.url, users=students,
                                               seconds=plan.load_seconds, think_s=think_s,
                                               pages=list(pages), pid=server.proc.pid,
                                               factory=factory).summary()
    finally:
        server.stop()
    return app, load, rss_after_load, students_figures, chromium, server.log


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # A plain `kill` should still stop the servers this run started (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    plan = QUICK if args.quick else FULL
    sys.path.insert(0, str(ROOT))   # `python bench/run.py` puts bench/ on the path, not ROOT
    from bench import machine, report

    load_at_start = machine.load_average()
    forward, cache, factory = measure_core(plan)
    # Sentence pairs: the core row before any server runs, the /pairs row beside the app rows.
    from bench import pairs_bench
    pair_core = pairs_bench.core_rows(factory, plan.core_reps)
    pair_app: list = []
    app, load, rss_after_load, students, chromium, server_log = measure_app(
        plan, factory, args.users, args.think, args.students, pair_app)
    from bench import explore_bench  # part 2's controls moved, with references of their own

    explore_rows = explore_bench.rows(explore_bench.measure(factory, reps=plan.explore_reps))
    from bench import element_costs  # what one element adds to a move, against the 1.5x budget

    explore_rows += element_costs.rows(element_costs.measure(
        factory, ELEMENT_COUNT, plan.explore_reps), ELEMENT_COUNT)
    from bench import long_text  # part 3's long texts, on a fresh server of their own

    long_rows = long_text.long_text_rows(long_text.run_long_texts(
        factory, plan.long_users, plan.long_seconds, plan.long_after_s))
    from bench import replicas  # part 4c: the same class through deploy/'s proxy and replicas
    from bench.app_bench import log

    log(f"class: {args.students} students through HAProxy to 2 replicas")
    pages = list(app.prints_tokens)
    through_proxy = replicas.run_replica_class(2, args.students, plan.load_seconds,
                                               think_s=args.think, pages=pages, factory=factory)
    from bench import mixed_class  # part 4d: half the class on the lesson, half on the pages

    log(f"class: {args.students} students, half on the lesson, through HAProxy to 2 replicas")
    mixed = mixed_class.run_mixed_class(2, args.students, plan.load_seconds, think_s=args.think,
                                        pages=tuple(pages), factory=factory)
    rows = [*report.core_rows(forward, cache), *pair_core, *report.app_rows(app), *explore_rows,
            *pair_app,
            *report.memory_rows(app), *long_rows, *report.load_rows(load, rss_after_load),
            *report.class_rows(students),
            *(report.class_rows(through_proxy) if through_proxy else []),
            *(mixed_class.rows(mixed) if mixed else [])]
    printed = ", ".join(p or "Home" for p, shown in app.prints_tokens.items() if shown)
    text = "\n".join([
        f"## Benchmark ({plan.name})",
        "",
        *machine.describe(chromium, load_at_start),
        "",
        report.markdown(rows),
        "",
        "A rerun is timed from the key press until Streamlit's script state is back to "
        "notRunning with no stale element and, on the pages that print the tokens "
        f"({printed or 'none'}), until the new sentence's tokens are in the page.",
        "",
        f"Server log (tracebacks behind any exception box): {server_log.relative_to(ROOT)}",
        "",
    ])
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
