"""Cold start: `python bench/cold_start_bench.py [--runs 5] [--against DIR ...]`.

From `python3 -m streamlit run app.py --server.headless true` spawned to the first page (/tokens,
the default sentence) showing the model's tokens in Chromium, several times, and the median of each
phase: the port open, the loading card visible, the first message of the session's script run, the
tokens on screen (the loading card of /tokens carries them, frame/boot_tokens.py; a copy without
that shows them first in the page), and the tokens in Streamlit's page. With ``--against DIR``
(other copies of the app, e.g. the code before a change: ``git archive HEAD | tar -x -C DIR``) they
are started in turn, round by round, each round in another order, so a busy shared machine weighs
on every copy alike.

The server's processor seconds (user + system, the server's process only) at the moment the
tokens show are printed too: on a noisy machine they say how much work the start-up did,
where the wall time also says how long it waited for the cores.

``--phases N``: where that work goes, without a server or a browser: N fresh interpreters each
do, one after the other, what a fresh server does: import Streamlit and the first page's app
modules (no torch), read the default tokenizer from its files and tokenise the default sentence
(the first page's tokens), then import torch, transformers and its model code and load the
default model (the warm-up), and last what the first page does not need (the rest of core, for
reference); the median processor seconds of each step.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):   # `python bench/cold_start_bench.py` puts bench/ on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402
from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from bench.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, WATCH_JS  # noqa: E402
from bench.server import ROOT, start_server  # noqa: E402

PAGE = "tokens"
# The default sentence's "sentence" token as the token table prints its input_id (a number in
# none of the page's own text): on the page only once the tokens are.
MARKER = "6251"
BOOT_SCREEN = "#boot-screen"
TIMEOUT_S = 120.0
MARKER_JS = """
(marker) => (document.querySelector("[data-testid='stMain']")?.textContent || '').includes(marker)
"""
# The marker anywhere a reader sees it: the page's table, or the loading card's, which /tokens'
# HTML carries (frame/boot_tokens.py; the card covers the page while it is there).
ON_SCREEN_JS = """
(marker) => ['#boot-screen', "[data-testid='stMain']"].some(
  (where) => (document.querySelector(where)?.textContent || '').includes(marker))
"""
# performance.now() of the first websocket message the page received (bench.browser's watch).
FIRST_FRAME_JS = "() => window.__bench && window.__bench.firstFrame"
FIRST_FRAME_WATCH = """
(() => {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => {
        if (window.__bench && !window.__bench.firstFrame) {
          window.__bench.firstFrame = performance.now();
        }
      });
    }
  };
})();
"""


@dataclass(frozen=True)
class ColdRun:
    code: str            # which copy of the app
    listening_s: float   # spawned -> the port accepts connections
    card_s: float        # spawned -> the loading card visible (nan: never seen)
    first_frame_s: float  # spawned -> the page's first websocket message
    tokens_s: float      # spawned -> the tokens on screen, in the card or the page (nan: never)
    page_tokens_s: float  # spawned -> the tokens in Streamlit's page (nan: timed out)
    cpu_s: float         # the server's processor seconds when the page's tokens showed


def cold_run(browser: Browser, code: str, folder: Path) -> ColdRun:
    """One fresh server, one fresh browser context on its first page."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(WATCH_JS)
    context.add_init_script(FIRST_FRAME_WATCH)
    page = context.new_page()
    server = start_server("app.py", timeout_s=TIMEOUT_S, folder=folder)
    started, listening = server.started, server.listening_s
    try:
        page.goto(f"{server.url}/{PAGE}", wait_until="commit")
        went = time.perf_counter()
        origin = page.evaluate("() => performance.now()")   # the page's clock at `went`
        try:
            page.wait_for_selector(BOOT_SCREEN, state="visible", timeout=10_000)
            card = time.perf_counter() - started
        except PlaywrightTimeout:
            card = float("nan")
        tokens = until(page, ON_SCREEN_JS, started)
        page_tokens = until(page, MARKER_JS, started)
        cpu = psutil.Process(server.proc.pid).cpu_times()
        first = page.evaluate(FIRST_FRAME_JS)
        first_frame = (went - started + (first - origin) / 1000) if first else float("nan")
        return ColdRun(code, listening, card, first_frame, tokens, page_tokens,
                       cpu.user + cpu.system)
    finally:
        context.close()
        server.stop()


def until(page: Page, check: str, started: float) -> float:
    """Seconds from ``started`` until ``check`` holds for the marker (nan: timed out)."""
    try:
        page.wait_for_function(check, arg=MARKER, timeout=TIMEOUT_S * 1000, polling="raf")
        return time.perf_counter() - started
    except PlaywrightTimeout:
        return float("nan")


# One fresh interpreter's steps, in the order a fresh server meets them; each prints its processor
# seconds. Imports already done by an earlier step cost nothing in a later one.
PHASES = r"""
import json, time
steps = {}
def step(name, work):
    start = time.process_time()
    work()
    steps[name] = time.process_time() - start
step("import streamlit", lambda: __import__("streamlit"))
step("the first page's app modules (router, /tokens, Home, cache layer; pandas; no torch)",
     lambda: [__import__(m) for m in ("frame.router", "pages.tokens.page", "pages.home.page",
                                       "components.cache")])
def tokens():
    from core.tokenizer_files import read_files
    from core.tokens import encode
    encode(read_files(), "This is a test sentence")
step("the default tokenizer from its files, the default sentence's tokens", tokens)
step("import torch", lambda: __import__("torch"))
step("import transformers", lambda: __import__("transformers"))
step("transformers' model code (BertModel)",
     lambda: __import__("transformers").BertModel)
def load():
    from core.models import load_model
    load_model()
step("load the default model and tokenizer", load)
step("not on the first page: the rest of core (scikit-learn, scipy.stats, ...)",
     lambda: [__import__(m) for m in ("core.attribution", "core.similarity", "core.compare",
                                       "core.encoder", "core.pretraining", "core.positions")])
print(json.dumps(steps))
"""


def phases(runs: int) -> dict[str, float]:
    """Median processor seconds of each PHASES step over ``runs`` fresh interpreters."""
    import json

    seen: dict[str, list[float]] = {}
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", PHASES], cwd=ROOT, capture_output=True,
                              text=True, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        for name, seconds in json.loads(done.stdout.strip().splitlines()[-1]).items():
            seen.setdefault(name, []).append(seconds)
    return {name: statistics.median(values) for name, values in seen.items()}


def median(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return statistics.median(kept) if kept else float("nan")


def summary(runs: list[ColdRun]) -> str:
    fields = ("listening_s", "card_s", "first_frame_s", "tokens_s", "page_tokens_s", "cpu_s")
    return ", ".join(f"{name} {median([getattr(r, name) for r in runs]):.2f}"
                     for name in fields) + f" (median of {len(runs)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold starts per copy of the app")
    parser.add_argument("--against", type=Path, nargs="*", default=[],
                        help="other copies of the app, started in turn with this one")
    parser.add_argument("--phases", type=int, default=0,
                        help="also time the first page's steps in this many fresh interpreters")
    args = parser.parse_args(argv)
    if args.phases:
        for name, seconds in phases(args.phases).items():
            print(f"{seconds:6.2f} s CPU  {name} (median of {args.phases})")
    if args.runs == 0:
        return 0
    codes = {"this": ROOT}
    for folder in args.against:
        codes[folder.resolve().name] = folder.resolve()
    runs: list[ColdRun] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for i in range(args.runs):
            order = list(codes.items())
            order = order[i % len(order):] + order[:i % len(order)]   # each copy first in turn
            for code, folder in order:
                run = cold_run(browser, code, folder)
                runs.append(run)
                print(f"run {i + 1} {code}: listening {run.listening_s:.2f} s, card "
                      f"{run.card_s:.2f} s, first message {run.first_frame_s:.2f} s, tokens on "
                      f"screen "
                      f"{run.tokens_s:.2f} s, in the page {run.page_tokens_s:.2f} s, server CPU "
                      f"{run.cpu_s:.2f} s; load "
                      f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        browser.close()
    for code, folder in codes.items():
        print(f"{code} ({folder}): {summary([r for r in runs if r.code == code])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
