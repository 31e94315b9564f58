"""Driving the app in Debian's Chromium: open a page, change sentence A, time the rerun.

A rerun counts as done when the script state is ``notRunning`` (Streamlit's own e2e suite waits
on that attribute), no element is marked stale, and either the new sentence's marker word is in
the page (pages that print the tokens) or the run was seen to start after the key press (so a
"notRunning" from before the run is not taken for its end).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlencode

from playwright.async_api import Page as AsyncPage
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.texts import Sentence

CHROMIUM = "/usr/bin/chromium"
# Debian's Chromium, headless; no background networking: this machine refuses those connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
INPUT_LABEL = "Sentence A"

# Installed before any page script. Remembers whether a script run started since the last reset
# and whether its end arrived: the script state seen leaving "notRunning", or the server's
# "script finished" message read off the websocket (a ForwardMsg whose field 6 is set; only the
# top-level tags are read, every payload skipped). A fragment's run can be so fast that React
# batches the state's change away; its end message is still there. Frames are also counted, for
# the bytes meter and as a run's sign on a server whose messages cannot be read.
WATCH_JS = """
(() => {
  window.__bench = {sawRun: false, frames: 0, lastFrame: 0, finished: 0, finishedAt: 0,
                    lastChange: 0};
  // React applies a run's last messages in one commit after its end message has arrived:
  // a change to the page after that message is that commit.
  new MutationObserver(() => { window.__bench.lastChange = performance.now(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      const state = m.target.getAttribute('data-test-script-state');
      if (state && state !== 'notRunning') window.__bench.sawRun = true;
    }
  }).observe(document, {subtree: true, attributes: true,
                        attributeFilter: ['data-test-script-state']});
  const SCRIPT_FINISHED = 6;   // ForwardMsg.script_finished
  const varint = (u, at) => {
    let value = 0, scale = 1, b;
    do { b = u[at.i++]; value += (b & 0x7f) * scale; scale *= 128; } while (b & 0x80);
    return value;
  };
  const finishes = (buffer) => {
    const u = new Uint8Array(buffer), at = {i: 0};
    while (at.i < u.length) {
      const tag = varint(u, at), field = Math.floor(tag / 8), wire = tag % 8;
      if (field === SCRIPT_FINISHED) return true;
      if (wire === 0) varint(u, at);
      else if (wire === 2) at.i += varint(u, at);
      else if (wire === 1) at.i += 8;
      else if (wire === 5) at.i += 4;
      else return false;
    }
    return false;
  };
  const read = (data) => {
    if (data instanceof ArrayBuffer && finishes(data)) {
      window.__bench.finished += 1;
      window.__bench.finishedAt = performance.now();
    }
  };
  const NativeWebSocket = window.WebSocket;
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        window.__bench.frames += 1;
        window.__bench.lastFrame = performance.now();
        if (event.data instanceof Blob) event.data.arrayBuffer().then(read);
        else read(event.data);
      });
    }
  };
})();
"""

# 'ok' or 'exception' once the run is over and its content is in the page; false meanwhile.
# With a marker, the marker showing proves the new run drew the page; without one, the run must
# have been seen to start.
DONE_JS = """
([marker, needRun]) => {
  const QUIET_MS = 100;   // a server whose messages were not read: adds at most this much
  const b = window.__bench || {};
  const app = document.querySelector("[data-testid='stApp']");
  // A run already under way when the watch was reset changes no attribute: seen here instead.
  if (app && app.getAttribute('data-test-script-state') === 'running') b.sawRun = true;
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector("[data-stale='true']")) return false;
  // The run's end message counts once the page has changed after it (React has applied it),
  // or, for a run that changed nothing, once QUIET_MS have passed. Without it, one stray frame
  // of an earlier run is not a run: a run sends at least its start, its elements and its end,
  // then goes quiet.
  const now = performance.now();
  const applied = b.lastChange > b.finishedAt || now - b.finishedAt > QUIET_MS;
  const started = b.sawRun || (b.finished > 0 ? applied
                                              : b.frames > 2 && now - b.lastFrame > QUIET_MS);
  const failed = document.querySelector("[data-testid='stException']");
  if (marker) {
    const main = document.querySelector("[data-testid='stMain']");
    if (main && main.textContent.includes(marker)) return failed ? 'exception' : 'ok';
    return failed && started ? 'exception' : false;
  }
  if (needRun && !started) return false;
  return failed ? 'exception' : 'ok';
}
"""
# What a page draws, by kind: images drawn on the server (components.heatmap_image), interactive
# plotly figures, graphviz diagrams, static tables and data grids.
FIGURES_JS = """
() => {
  const main = document.querySelector("[data-testid='stMain']");
  const count = (selector) => main ? main.querySelectorAll(selector).length : 0;
  return {images: count('[data-figure]'), interactive: count('.js-plotly-plot'),
          diagrams: count("[data-testid='stGraphVizChart']"),
          tables: count("[data-testid='stTable']") + count("[data-testid='stHtml'] table"),
          grids: count("[data-testid='stDataFrame']")};
}
"""
RESET_JS = "() => { Object.assign(window.__bench, {sawRun: false, frames: 0, finished: 0}); }"
HAS_MARKER_JS = """
(marker) => (document.querySelector("[data-testid='stMain']")?.textContent || '').includes(marker)
"""
EXCEPTION_TEXT_JS = """
() => (document.querySelector("[data-testid='stException']")?.innerText || '').slice(0, 160)
"""
# How long a first visit may take to show the marker before we decide the page does not print the
# tokens. Charts and tables are loaded lazily, which takes seconds on a busy CPU; the answer is
# remembered per page (see app_bench.MarkerMemo), so a page without the tokens pays this once.
LEARN_TIMEOUT_S = 20.0


class WsMeter:
    """Counts the bytes the server sends over a page's websocket."""

    def __init__(self) -> None:
        self.bytes = 0

    def attach(self, page: Page | AsyncPage) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", self.on_frame))

    def on_frame(self, payload: str | bytes) -> None:
        self.bytes += len(payload.encode() if isinstance(payload, str) else payload)


@dataclass(frozen=True)
class Rerun:
    seconds: float
    ws_bytes: int     # bytes the server sent over the websocket during this run
    status: str       # "ok", "exception" (an exception box) or "timeout"
    detail: str = ""  # the exception box's text, if any


def page_url(base: str, path: str, a: str, b: str | None = None,
             view: dict[str, str] | None = None) -> str:
    """The page with sentence A (and B) and any of the page's own view settings in the URL."""
    query = {"a": a} if b is None else {"a": a, "b": b}
    return f"{base}/{path}?{urlencode({**query, **(view or {})})}"


class AppTab:
    """One app page in its own browser context, with a meter of websocket bytes received."""

    def __init__(self, browser: Browser, commit_key: str = "Control+Enter", name: str = "",
                 ) -> None:
        self.name = name
        self.context = browser.new_context(viewport=VIEWPORT)
        self.context.add_init_script(WATCH_JS)
        self.page: Page = self.context.new_page()
        self.meter = WsMeter()
        self.meter.attach(self.page)
        self.commit_key = commit_key
        self.shows_marker = False   # learnt on open: does this page print the tokens?
        self._marker: str | None = None
        self._start = 0.0

    def open(self, url: str, marker: str, shows_marker: bool | None = None,
             timeout_s: float = 120.0) -> Rerun:
        """Load ``url`` and time it until the run is over and, on a page that prints the tokens,
        until the marker shows. ``shows_marker`` None: find out (and wait up to LEARN_TIMEOUT_S).
        """
        self.start_open(url)
        return self.finish_open(marker, shows_marker, timeout_s)

    def start_open(self, url: str) -> None:
        self.meter.bytes = 0
        self._start = time.perf_counter()
        self.page.goto(url, wait_until="commit")

    def seconds_until_visible(self, selector: str, timeout_s: float = 10.0) -> float:
        """Seconds from start_open until ``selector`` is visible; nan if it never is."""
        try:
            self.page.wait_for_selector(selector, state="visible", timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            return float("nan")
        return time.perf_counter() - self._start

    def finish_open(self, marker: str, shows_marker: bool | None = None,
                    timeout_s: float = 120.0) -> Rerun:
        status = self._wait(None, need_run=True, timeout_s=timeout_s)
        seconds = time.perf_counter() - self._start
        self.shows_marker = False
        if status == "ok" and shows_marker is not False:
            wait_s = LEARN_TIMEOUT_S if shows_marker is None else timeout_s
            self.shows_marker = self._marker_shows(marker, wait_s)
            if self.shows_marker:   # plotly draws after its element arrives: count that too
                seconds = time.perf_counter() - self._start
        self.page.wait_for_timeout(200)  # let a rerun triggered by the URL binding settle
        self._wait(None, need_run=False, timeout_s=timeout_s)
        return Rerun(seconds, self.meter.bytes, status, self._detail(status))

    def rerun(self, sentence: Sentence, timeout_s: float = 60.0) -> Rerun:
        """Type a new sentence A, commit it, and time the rerun until the new content shows."""
        self.start_rerun(sentence)
        return self.finish_rerun(timeout_s)

    def start_rerun(self, sentence: Sentence, use_marker: bool = True) -> None:
        """Type sentence A and commit it; finish_rerun() waits for the result.

        ``use_marker=False`` when the sentence is much longer than the one the page was opened
        with: a plot may then leave the marker's label out.
        """
        box = self.page.get_by_label(INPUT_LABEL, exact=True)
        box.fill(sentence.text)
        self.page.evaluate(RESET_JS)
        self.page.wait_for_timeout(50)   # flush frames of earlier runs before zeroing the meter
        self.meter.bytes = 0
        self._marker = sentence.marker if self.shows_marker and use_marker else None
        self._start = time.perf_counter()
        box.press(self.commit_key)

    def finish_rerun(self, timeout_s: float = 60.0) -> Rerun:
        status = self._wait(self._marker, need_run=True, timeout_s=timeout_s)
        seconds = time.perf_counter() - self._start
        self.page.wait_for_timeout(50)   # frames are dispatched to Python between calls
        return Rerun(seconds, self.meter.bytes, status, self._detail(status))

    def figures(self) -> dict[str, int]:
        """What the page shows now, by kind (FIGURES_JS)."""
        return dict(self.page.evaluate(FIGURES_JS))

    def _detail(self, status: str) -> str:
        return self.page.evaluate(EXCEPTION_TEXT_JS) if status == "exception" else ""

    def _marker_shows(self, marker: str, timeout_s: float) -> bool:
        try:
            self.page.wait_for_function(HAS_MARKER_JS, arg=marker, timeout=timeout_s * 1000,
                                        polling="raf")
            return True
        except PlaywrightTimeout:
            return False

    def _wait(self, marker: str | None, need_run: bool, timeout_s: float) -> str:
        try:
            handle = self.page.wait_for_function(
                DONE_JS, arg=[marker, need_run], timeout=timeout_s * 1000, polling="raf"
            )
            return str(handle.json_value())
        except PlaywrightTimeout:
            return "timeout"

    def close(self) -> None:
        self.context.close()
