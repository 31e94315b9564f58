"""Page switches as a teacher makes them: every page opened from the top navigation in the same
tab (the first and the second time in that tab), and from a link in a new tab, on a warm server.

A switch is timed from the click on the page's entry in the top navigation (its menu is opened
first, untimed: that is the browser alone) until the new page's content is drawn: the URL is the
page's, its script ran and is back to ``notRunning``, no element is stale, its title is in the
page, no skeleton is left and every plotly figure, graphviz diagram and image has drawn. A new
tab is a new page of the same browser context (it shares the HTTP cache, as a tab does) opened
on the page's link with the same sentence, timed from the request to the same state.

Each of ``reps`` rounds opens one fresh tab on Home with a new sentence, walks every page in the
menu's order twice (first and second time in that tab), then opens every page's link in a new
tab; the figure per page is the median over the rounds.

For the new tab's floor, ``reference_new_tabs`` opens the bare Streamlit page and the app's frame
alone (bench/bare_app.py, bench/frame_app.py) the same way: a round's first tab loads the
browser's cache, untimed; a second tab is timed until the page has run and shows its text.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.browser import RESET_JS, VIEWPORT, WATCH_JS, page_url
from bench.texts import SENTENCE_WORDS, SentenceFactory

ROOT = Path(__file__).resolve().parent.parent
SWITCH_TIMEOUT_S = 60.0
_TITLE = re.compile(r'^TITLE = N_\("(.+)"\)', re.MULTILINE)

# 'ok' / 'exception' once the page at ``path`` has run and drawn everything; false meanwhile.
SWITCHED_JS = """
([path, title]) => {
  const b = window.__bench || {};
  const app = document.querySelector("[data-testid='stApp']");
  if (app && app.getAttribute('data-test-script-state') === 'running') b.sawRun = true;
  const started = b.sawRun || (b.frames > 2 && performance.now() - b.lastFrame > 100);
  if (!started) return false;
  if (location.pathname.replace(/^\\/+|\\/+$/g, '') !== path) return false;
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector("[data-stale='true']")) return false;
  const main = document.querySelector("[data-testid='stMain']");
  if (!main) return false;
  const failed = main.querySelector("[data-testid='stException']");
  const h1 = main.querySelector('h1');
  if (!h1 || !h1.textContent.includes(title)) return failed ? 'exception' : false;
  if (main.querySelector("[data-testid='stSkeleton']")) return false;
  for (const chart of main.querySelectorAll("[data-testid='stPlotlyChart']")) {
    if (!chart.querySelector('.main-svg')) return false;
  }
  for (const chart of main.querySelectorAll("[data-testid='stGraphVizChart']")) {
    if (!chart.querySelector('svg')) return false;
  }
  for (const img of main.querySelectorAll('img')) if (!img.complete) return false;
  return failed ? 'exception' : 'ok';
}
"""


@dataclass(frozen=True)
class SwitchTarget:
    title: str      # the page's title as its h1 shows it (English)
    path: str       # url path, "" for Home
    group: str      # the navigation menu it is listed under ("" for a top-level link)


@dataclass
class SwitchRuns:
    target: SwitchTarget
    first: list[float] = field(default_factory=list)    # first time in the tab, seconds
    second: list[float] = field(default_factory=list)   # second time in the tab
    new_tab: list[float] = field(default_factory=list)  # its link opened in a new tab
    errors: list[str] = field(default_factory=list)     # "first: timeout", ...


def page_title(folder: str) -> str:
    """The page's TITLE, read from its source (the bench does not import the pages)."""
    found = _TITLE.search((ROOT / "pages" / folder / "page.py").read_text())
    return found.group(1) if found else ""


def switch_targets() -> list[SwitchTarget]:
    """Home and every page that exists now, in the menu's order."""
    from frame.page_list import HOME, available_pages

    return [SwitchTarget(page_title(spec.folder), spec.url_path, spec.group)
            for spec in [HOME, *available_pages()]]


def wait_switched(page: Page, target: SwitchTarget, timeout_s: float = SWITCH_TIMEOUT_S) -> str:
    try:
        handle = page.wait_for_function(SWITCHED_JS, arg=[target.path, target.title],
                                        timeout=timeout_s * 1000, polling="raf")
        return str(handle.json_value())
    except PlaywrightTimeout:
        return "timeout"


def click_switch(page: Page, target: SwitchTarget) -> tuple[float, str]:
    """Open the page's menu (untimed), click its entry, time until it is drawn."""
    if target.group:
        page.get_by_test_id("stTopNavSection").filter(has_text=target.group).click()
        link = page.locator(f"[data-testid='stTopNavDropdownLink'][href$='/{target.path}']")
    else:
        link = page.locator("[data-testid='stTopNavLink']").first
    link.wait_for(state="visible", timeout=10_000)
    page.evaluate(RESET_JS)
    start = time.perf_counter()
    link.click()
    status = wait_switched(page, target)
    return time.perf_counter() - start, status


def open_link(page: Page, url: str, target: SwitchTarget) -> tuple[float, str]:
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    status = wait_switched(page, target)
    return time.perf_counter() - start, status


def _record(runs: SwitchRuns, bucket: list[float], label: str, seconds: float,
            status: str) -> None:
    if status == "ok":
        bucket.append(seconds)
    else:
        runs.errors.append(f"{label}: {status}")


def page_switches(browser: Browser, base: str, factory: SentenceFactory, reps: int,
                  log=print) -> list[SwitchRuns]:
    """``reps`` rounds of: a fresh tab on Home, every page twice from the menu, every page's
    link in a new tab. Returns one SwitchRuns per page, in the menu's order."""
    targets = switch_targets()
    results = [SwitchRuns(t) for t in targets]
    home = targets[0]
    for rep in range(reps):
        sentence = factory.sentence(SENTENCE_WORDS)
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(WATCH_JS)
        try:
            tab = context.new_page()
            seconds, status = open_link(tab, page_url(base, home.path, sentence.text), home)
            if status != "ok":
                log(f"switches: round {rep + 1}: Home did not open ({status})")
                continue
            tab.wait_for_timeout(300)   # the URL binding's own settling
            for label, bucket_of in (("first", lambda r: r.first),
                                     ("second", lambda r: r.second)):
                # Home last: the tab opened on it, so its "first" is the first switch back.
                for runs in [*results[1:], results[0]]:
                    seconds, status = click_switch(tab, runs.target)
                    _record(runs, bucket_of(runs), label, seconds, status)
            for runs in results:
                fresh = context.new_page()
                seconds, status = open_link(
                    fresh, page_url(base, runs.target.path, sentence.text), runs.target)
                _record(runs, runs.new_tab, "new tab", seconds, status)
                fresh.close()
        finally:
            context.close()
        log(f"switches: round {rep + 1}/{reps} done")
    return results


# 'ok' once a page with no title of its own has run and shows ``text``; false meanwhile.
DRAWN_JS = """
(text) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector("[data-stale='true']")) return false;
  const main = document.querySelector("[data-testid='stMain']");
  return !!main && main.innerText.includes(text) && 'ok';
}
"""


def reference_new_tabs(browser: Browser, urls: dict[str, tuple[str, str]], reps: int,
                       ) -> dict[str, list[float]]:
    """Seconds until each reference page (title -> (url, text it shows)) is drawn in a new tab
    of a browser that has opened it once, over ``reps`` rounds."""
    seconds: dict[str, list[float]] = {title: [] for title in urls}
    for _ in range(reps):
        context = browser.new_context(viewport=VIEWPORT)
        try:
            for title, (url, text) in urls.items():
                for timed in (False, True):
                    tab = context.new_page()
                    start = time.perf_counter()
                    tab.goto(url, wait_until="commit")
                    try:
                        tab.wait_for_function(DRAWN_JS, arg=text, polling="raf",
                                              timeout=SWITCH_TIMEOUT_S * 1000)
                        if timed:
                            seconds[title].append(time.perf_counter() - start)
                    except PlaywrightTimeout:
                        pass
                    tab.close()
        finally:
            context.close()
    return seconds
