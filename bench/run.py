"""The benchmark: `python bench/run.py [--quick] [--out FILE]`.

Starts everything it needs (the app server, a bare Streamlit server, Debian's Chromium), measures
its four parts in one run, and prints the machine and one markdown table. Progress goes
to stderr, the result to stdout. The table is also written to FILE (--out; by default
bench/results/benchmark.md) as each part ends, so a run that fails or is stopped keeps the rows
of every part before; a part that fails has a row saying why, and the parts after it still run
(bench/parts.py). The exit status is 1 when a part failed.

    1 Core        core.analyze vs a bare forward; the cache layer's repeat vs its first call;
                  1,000 short pairs through compare_pairs vs a bare batched forward (pairs_bench)
                  mask_lens vs fill_mask on checkpoints with an MLM head (mask_lens_bench)
                  the Compare page's layer map vs two bare batched forwards (compare_bench)
                  the probe at every layer vs a bare forward and the fits (probes_bench)
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
                  (bench/mixed_class.py; skipped where HAProxy or Redis is not installed);
                  last, where a class's server time goes: each of its pages' new sentence
                  alone on a warm server, server and client processor time (bench/class_cost.py)
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from bench.app_bench import AppFigures
    from bench.load_bench import LoadFigures
    from bench.server import Server
    from bench.texts import SentenceFactory
    from core import ModelBundle

if __package__ in (None, ""):   # `python bench/run.py` puts bench/ on the path, not the repo
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.parts import Slot, Table  # noqa: E402

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
    parser.add_argument("--out", type=Path,
                        help="write the table as markdown here as each part ends "
                             "(default: bench/results/benchmark.md)")
    parser.add_argument("--users", type=int, default=10, help="browser contexts in part 4")
    parser.add_argument("--students", type=int, default=100,
                        help="browserless students in part 4 (websocket sessions)")
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds a user reads the result before the next sentence (part 4)")
    return parser.parse_args(argv)


# The table's places, in the order it shows them (the parts run in another order: part 1 first,
# with no server; the app's server serves parts 2 to 4 before the parts with servers of their
# own). Each part's rows are written as it ends (bench/parts.py).
SLOTS = (
    Slot("core", "1 Core", "core.analyze vs a bare forward, and the cache's repeat"),
    Slot("pairs_core", "1 Core", "short pairs through compare_pairs vs a bare batched forward"),
    Slot("mask_lens", "1 Core", "core.mask_lens vs fill_mask on a checkpoint with an MLM head"),
    Slot("compare", "1 Core", "the layer map vs two bare batched forwards, two models' memory"),
    Slot("probes", "1 Core", "the parts-of-speech probe vs a bare forward and the fits alone"),
    Slot("finetune", "1 Core", "fine_tune vs a bare torch loop, an epoch, a page while training"),
    Slot("app", "2 App", "the app's pages in Chromium (cold start, reruns, switches, long pairs)"),
    Slot("explore", "2 Exploring", "the control a student moves most, on every page"),
    Slot("element_costs", "2 Exploring", "what one more element adds to a move"),
    Slot("pairs_app", "2 App", "/pairs and the views by word in Chromium"),
    Slot("memory", "3 Memory", "server RSS after every page and after many sentences"),
    Slot("long_texts", "3 Memory", "sessions with 512-token pairs on a fresh server"),
    Slot("load", "4 Many users", "browser users rerunning against one server"),
    Slot("class", "4 Many users", "a class of browserless students"),
    Slot("proxy", "4 Many users", "the class through HAProxy to two replicas"),
    Slot("class_cost", "4 Many users", "where a class's server time goes, page by page"),
    Slot("mixed", "4 Many users", "a class as a lesson runs, through HAProxy to two replicas"),
)


@dataclass
class Seen:
    """What the parts learnt that the table's header and footer print."""

    chromium: str = "unknown (the app part did not start Chromium)"
    prints_tokens: dict[str, bool] | None = None   # page -> whether it prints the tokens
    server_log: Path | None = None


def measure_core(plan: Plan, bundle: ModelBundle, factory: SentenceFactory,
                 ) -> tuple[list, list]:
    """Part 1, before any server runs, so nothing else competes for the CPU."""
    from bench import core_bench
    from bench.app_bench import log

    forward, cache = [], []
    for n in CORE_SIZES:
        log(f"core: {n} tokens")
        forward += core_bench.bench_forward(bundle, factory, n, plan.core_reps)
        cache += core_bench.bench_cache(factory, n, plan.core_reps)
    return forward, cache


def measure_app(table: Table, plan: Plan, factory: SentenceFactory, users: int,
                think_s: float, students: int, seen: Seen) -> None:
    """Parts 2 to 4 against one app server, each part's rows written as it ends: the pages in
    Chromium (and, from the same run, the memory rows), /pairs and the views by word, then the
    browser users and the class of browserless students."""
    from playwright.sync_api import sync_playwright

    from bench import app_bench, load_bench, pairs_bench, report, words_bench, ws_load
    from bench.browser import CHROMIUM, CHROMIUM_ARGS

    servers: list[Server] = []

    def run_app(browser: Browser) -> AppFigures:
        app, server = app_bench.run_app(browser, factory, plan.reps_new, plan.reps_repeat,
                                        plan.checkpoints, plan.switch_reps, plan.long_reps)
        servers.append(server)
        seen.server_log = server.log
        return app

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            seen.chromium = browser.version
            app = table.measure(("app", "memory"), lambda: run_app(browser), lambda a: {
                "app": report.app_rows(a), "memory": report.memory_rows(a)})
            if app is not None and servers:
                seen.prints_tokens = app.prints_tokens
                url = servers[0].url
                table.measure("pairs_app", lambda: [
                    *pairs_bench.app_rows(browser, url, factory, plan.reps_new),
                    *words_bench.app_rows(browser, url, factory, plan.reps_new)], list)
            with contextlib.suppress(Exception):   # a browser that will not close is no figure
                browser.close()
        if app is None or not servers:
            for key in ("pairs_app", "load", "class"):
                table.skip(key, needs="app")
            return
        server = servers[0]
        # The async users need the sync Playwright above to be closed.
        pages = {t.path: app.prints_tokens.get(t.path) for t in app_bench.app_targets(server.url)}

        def load() -> tuple[LoadFigures, int]:
            app_bench.log(f"many users: {users} users for {plan.load_seconds:.0f} s")
            figures = load_bench.run_load(server.url, pages, factory, users, plan.load_seconds,
                                          think_s)
            return figures, server.rss_bytes()

        table.measure("load", load, lambda r: report.load_rows(*r))

        def klass() -> dict:
            app_bench.log(f"class: {students} browserless students for "
                          f"{plan.load_seconds:.0f} s")
            # The class spread over every page of the app, Home included.
            return ws_load.run_ws_load(server.url, users=students, seconds=plan.load_seconds,
                                       think_s=think_s, pages=list(pages),
                                       pid=server.proc.pid, factory=factory).summary()

        table.measure("class", klass, report.class_rows)
    finally:
        for server in servers:
            server.stop()


def footer(seen: Seen) -> list[str]:
    if seen.prints_tokens is None:
        printed = "unknown: the app part did not finish"
    else:
        printed = ", ".join(p or "Home" for p, shown in seen.prints_tokens.items() if shown)
    lines = [
        "A rerun is timed from the key press until Streamlit's script state is back to "
        "notRunning with no stale element and, on the pages that print the tokens "
        f"({printed or 'none'}), until the new sentence's tokens are in the page.",
    ]
    if seen.server_log is not None:
        lines += ["", "Server log (tracebacks behind any exception box): "
                      f"{seen.server_log.relative_to(ROOT)}"]
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # A plain `kill` should still stop the servers this run started (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    plan = QUICK if args.quick else FULL
    from bench import machine, pairs_bench, report
    from bench.app_bench import app_targets, log
    from bench.server import RESULTS
    from bench.texts import SentenceFactory
    from core import load_model

    load_at_start = machine.load_average()
    seen = Seen()
    out = args.out or RESULTS / "benchmark.md"
    table = Table(SLOTS, header=lambda: [
        f"## Benchmark ({plan.name})", "", *machine.describe(seen.chromium, load_at_start)],
        footer=lambda: footer(seen), out=out)
    log(f"the table goes to {out}, a part's rows as soon as that part ends")
    bundle = load_model()
    factory = SentenceFactory(bundle.tokenizer)
    try:
        table.measure("core", lambda: measure_core(plan, bundle, factory),
                      lambda r: report.core_rows(*r))
        # Sentence pairs: the core row before any server runs, the /pairs row beside the app's.
        table.measure("pairs_core", lambda: pairs_bench.core_rows(factory, plan.core_reps), list)
        from bench import mask_lens_bench  # the [MASK] lens vs the fill-mask view's work

        table.measure("mask_lens", lambda: mask_lens_bench.core_rows(plan.core_reps), list)
        from bench import compare_bench  # the layer map vs two bare forwards, two models' RSS

        table.measure("compare", lambda: compare_bench.rows(plan.core_reps), list)
        from bench import probes_bench  # layer_probe vs a bare forward + the fits, memory

        table.measure("probes", lambda: probes_bench.rows(max(2, plan.core_reps // 3)), list)
        from bench import finetune_bench  # fine_tune vs a bare torch loop, epochs, a page beside

        table.measure("finetune", lambda: finetune_bench.rows(finetune_bench.measure(3)), list)
        measure_app(table, plan, factory, args.users, args.think, args.students, seen)
        from bench import explore_bench  # part 2's controls moved, with references of their own

        table.measure("explore", lambda: explore_bench.measure(factory, reps=plan.explore_reps),
                      explore_bench.rows)
        from bench import element_costs  # what one element adds to a move, vs the 1.5x budget

        table.measure("element_costs", lambda: element_costs.measure(
            factory, ELEMENT_COUNT, plan.explore_reps),
            lambda r: element_costs.rows(r, ELEMENT_COUNT))
        from bench import long_text  # part 3's long texts, on a fresh server of their own

        table.measure("long_texts", lambda: long_text.run_long_texts(
            factory, plan.long_users, plan.long_seconds, plan.long_after_s),
            long_text.long_text_rows)
        from bench import mixed_class, replicas  # part 4c and 4d: deploy/'s proxy and replicas

        # The pages the app part found; where it failed, every page of the app.
        pages = (list(seen.prints_tokens) if seen.prints_tokens is not None
                 else [t.path for t in app_targets("")])

        def through_proxy() -> dict | None:
            log(f"class: {args.students} students through HAProxy to 2 replicas")
            return replicas.run_replica_class(2, args.students, plan.load_seconds,
                                              think_s=args.think, pages=pages, factory=factory)

        table.measure("proxy", through_proxy,
                      lambda r: report.class_rows(r) + report.class_cost_rows(r) if r else [])
        from bench import class_cost  # the class's pages one at a time: where its time goes

        table.measure("class_cost", lambda: class_cost.measure(
            pages, plan.core_reps + 6, factory), class_cost.rows)

        def mixed() -> dict | None:
            log(f"class: {args.students} students, half on the lesson, through HAProxy to 2 "
                "replicas")
            return mixed_class.run_mixed_class(2, args.students, plan.load_seconds,
                                               think_s=args.think, pages=tuple(pages),
                                               factory=factory)

        table.measure("mixed", mixed, lambda r: mixed_class.rows(r) if r else [])
    except BaseException:
        table.stop()   # stopped between parts: the table says so
        raise
    print(table.text())
    log(f"written to {out}")
    return 0 if table.ok else 1


if __name__ == "__main__":
    sys.exit(main())
