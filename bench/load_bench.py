"""Many users: browser contexts rerunning new sentences against one server for a bounded time.

Playwright's async API drives every context from one Chromium, so ten "students" cost one browser
rather than ten. All users open the app at once (timed apart); then, for a bounded time, user ``i``
works on page ``i mod pages`` (a class spread over the app): reads for ``think_s`` seconds, types
a new sentence, waits for the result, and repeats. An exception box or a rerun that does not
finish within the timeout is an error.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

from bench.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DONE_JS,
    EXCEPTION_TEXT_JS,
    HAS_MARKER_JS,
    INPUT_LABEL,
    LEARN_TIMEOUT_S,
    RESET_JS,
    VIEWPORT,
    WATCH_JS,
    page_url,
)
from bench.texts import SENTENCE_WORDS, SentenceFactory

RERUN_TIMEOUT_S = 30.0
OPEN_TIMEOUT_S = 120.0


@dataclass
class LoadFigures:
    users: int
    seconds: float
    think_s: float
    latencies: list[float] = field(default_factory=list)   # every rerun, errors included
    opens: list[float] = field(default_factory=list)       # first visit of each user
    exceptions: int = 0
    timeouts: int = 0
    details: Counter[str] = field(default_factory=Counter)   # exception box texts

    @property
    def errors(self) -> int:
        return self.exceptions + self.timeouts

    def record(self, seconds: float, status: str, first: bool = False, detail: str = "") -> None:
        (self.opens if first else self.latencies).append(seconds)
        self.exceptions += status == "exception"
        self.timeouts += status == "timeout"
        if detail:
            self.details[" ".join(detail.split())] += 1


async def _wait(page: Page, marker: str | None, timeout_s: float) -> tuple[str, str]:
    """The run's status, and the exception box's text if there is one."""
    try:
        handle = await page.wait_for_function(
            DONE_JS, arg=[marker, True], timeout=timeout_s * 1000, polling="raf"
        )
        status = str(await handle.json_value())
    except PlaywrightTimeout:
        return "timeout", ""
    return status, await page.evaluate(EXCEPTION_TEXT_JS) if status == "exception" else ""


async def _marker_shows(page: Page, marker: str, timeout_s: float) -> bool:
    try:
        await page.wait_for_function(HAS_MARKER_JS, arg=marker, timeout=timeout_s * 1000,
                                     polling="raf")
        return True
    except PlaywrightTimeout:
        return False


@dataclass
class User:
    page: Page
    shows_marker: bool


async def _open(browser: Browser, base: str, path: str, prints_tokens: bool | None,
                factory: SentenceFactory, figures: LoadFigures) -> User:
    """Open the page as AppTab.open does; ``prints_tokens`` as learnt by the app part."""
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(WATCH_JS)
    page = await context.new_page()
    sentence = factory.sentence(SENTENCE_WORDS)
    start = time.perf_counter()
    await page.goto(page_url(base, path, sentence.text), wait_until="commit")
    status, detail = await _wait(page, None, OPEN_TIMEOUT_S)
    shows_marker = False
    if status == "ok" and prints_tokens is not False:
        wait_s = LEARN_TIMEOUT_S if prints_tokens is None else OPEN_TIMEOUT_S
        shows_marker = await _marker_shows(page, sentence.marker, wait_s)
    figures.record(time.perf_counter() - start, status, first=True, detail=detail)
    return User(page, shows_marker)


async def _rerun_until(user: User, factory: SentenceFactory, deadline: float,
                       figures: LoadFigures) -> None:
    """New sentences until the time is up; every user does at least one rerun."""
    box = user.page.get_by_label(INPUT_LABEL, exact=True)
    first = True
    while first or time.perf_counter() + figures.think_s < deadline:
        first = False
        await asyncio.sleep(figures.think_s)
        sentence = factory.sentence(SENTENCE_WORDS)
        await box.fill(sentence.text)
        await user.page.evaluate(RESET_JS)
        start = time.perf_counter()
        await box.press("Control+Enter")
        marker = sentence.marker if user.shows_marker else None
        status, detail = await _wait(user.page, marker, RERUN_TIMEOUT_S)
        figures.record(time.perf_counter() - start, status, detail=detail)


async def _run(base: str, pages: dict[str, bool | None], factory: SentenceFactory,
               figures: LoadFigures) -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # The whole class opens the link at once; the clock for the reruns starts after that.
        paths = list(pages)
        users = await asyncio.gather(*(
            _open(browser, base, path, pages[path], factory, figures)
            for path in (paths[i % len(paths)] for i in range(figures.users))
        ))
        deadline = time.perf_counter() + figures.seconds
        await asyncio.gather(*(_rerun_until(u, factory, deadline, figures) for u in users))
        await browser.close()


def run_load(base: str, pages: dict[str, bool | None], factory: SentenceFactory, users: int,
             seconds: float, think_s: float) -> LoadFigures:
    """Run the users against ``base`` (a started app server) and return what they saw.

    ``pages``: url path -> whether the page prints the tokens (None: find out on opening).
    """
    figures = LoadFigures(users, seconds, think_s)
    asyncio.run(_run(base, pages, factory, figures))
    return figures
