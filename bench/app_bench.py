"""App speed and memory in Chromium against a server this module starts.

Every rerun types a sentence into the sidebar box "Sentence A", commits it with Ctrl+Enter and is
timed until the new content is on the page (see bench.browser). Tabs are visited round-robin, so
a change in the machine's load hits every page and the bare Streamlit page alike.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from playwright.sync_api import Browser

from bench.browser import AppTab, Rerun, page_url
from bench.server import Server, start_server
from bench.texts import SENTENCE_WORDS, Sentence, SentenceFactory

if TYPE_CHECKING:
    from bench.switch_bench import SwitchRuns

BOOT_SCREEN = "#boot-screen"   # the loading card in the page's HTML (frame/boot_screen.py)
PAIR_TOKENS = 64             # issue 3: /stages vs /tokens with a 64-token pair
MEMORY_WORDS = (10, 20, 40, 80, 160)   # lengths cycled through by the memory run
BARE_TITLE = "bare Streamlit page"
BARE_PLOTLY_TITLE = "bare Streamlit page with one plotly heatmap"
BARE_IMAGE_TITLE = "bare Streamlit page with one image heatmap"
FRAME_TITLE = "the app's frame alone (sidebar, navigation, sentence echoed)"
FRAME_MODEL_TITLE = "the app's frame with the model's run on sentence A (no figure)"


@dataclass(frozen=True)
class Reference:
    script: str
    opening: Sentence | None   # what it shows when opened; None: it reads the URL, as the app
    commit_key: str = "Enter"


# The reference pages. The bare pages do not read the URL: the bare page echoes its opening
# sentence whole, the heatmap pages label a row with its first word. The frame is the app's own
# sidebar and navigation, driven like a page of the app.
_OPENING = "This is a test sentence"
REFERENCES = {
    BARE_TITLE: Reference("bench/bare_app.py", Sentence(_OPENING, _OPENING)),
    BARE_PLOTLY_TITLE: Reference("bench/bare_plotly_app.py", Sentence(_OPENING, "0: This")),
    BARE_IMAGE_TITLE: Reference("bench/bare_image_app.py", Sentence(_OPENING, "0: This")),
    FRAME_TITLE: Reference("bench/frame_app.py", None, "Control+Enter"),
    FRAME_MODEL_TITLE: Reference("bench/frame_model_app.py", None, "Control+Enter"),
}

# Whether a page prints the tokens of sentence A, by (url path, words in sentence A): learnt on
# the first visit, so only that visit pays for finding out.
MarkerMemo = dict[tuple[str, int], bool]

_T0 = time.perf_counter()


def log(message: str) -> None:
    print(f"[bench {time.perf_counter() - _T0:6.1f} s] {message}", file=sys.stderr, flush=True)


def checked(run: Rerun, where: str) -> Rerun:
    """Say on stderr when a run ended in an exception box or a timeout."""
    if run.status != "ok":
        detail = " ".join(run.detail.split())
        log(f"{where}: {run.status} after {run.seconds:.1f} s {detail}".rstrip())
    return run


@dataclass(frozen=True)
class Target:
    title: str
    base: str        # server URL
    path: str        # url path, "" for the default page
    commit_key: str  # Ctrl+Enter commits a text area, Enter a text input
    view: tuple[tuple[str, str], ...] = ()   # the page's own URL settings, e.g. a layout


@dataclass
class PageRuns:
    title: str
    path: str
    shows_marker: bool = False
    new: list[Rerun] = field(default_factory=list)      # a sentence not seen before
    repeat: list[Rerun] = field(default_factory=list)   # a sentence already analysed
    figures: dict[str, int] = field(default_factory=dict)  # what the page drew, by kind

    @property
    def errors(self) -> int:
        return sum(r.status != "ok" for r in self.new + self.repeat)


@dataclass(frozen=True)
class ColdStart:
    listening_s: float   # process spawned -> port accepts connections
    render_s: float      # process spawned -> /tokens shows the tokens
    status: str
    shows_tokens: bool
    loading_s: float     # request sent -> the loading card is visible (nan: never seen)
    cpu_s: float = float("nan")   # the server's processor seconds when the tokens showed: the
    # start-up's work, where render_s also holds the wait for a shared machine's cores


@dataclass
class AppFigures:
    cold: ColdStart
    pages: list[PageRuns]                       # Home, every page, then the bare page
    pair: dict[str, list[Rerun]] | None         # {"tokens", "stages", "stages_stacked"}, 64 tokens
    positions: dict[str, list[Rerun]] | None    # first visit, second visit, warm reruns
    rss_after_pages: int
    rss_series: list[tuple[int, int]]           # (distinct sentences so far, server RSS)
    memory_errors: int
    prints_tokens: dict[str, bool]              # url path -> page shows a sentence's tokens
    switches: list[SwitchRuns] | None = None    # every page from the menu and in a new tab
    long: dict[str, tuple[str, list[Rerun]]] | None = None   # path -> (title, 512-token reruns)
    reference_tabs: dict[str, list[float]] | None = None   # the bare page and frame in a new tab


def median_s(runs: list[Rerun]) -> float:
    return statistics.median(r.seconds for r in runs) if runs else float("nan")


def app_targets(base: str) -> list[Target]:
    """Home plus every page that exists right now (other pages may still be being written)."""
    from frame.page_list import HOME, available_pages

    specs = [HOME, *available_pages()]
    return [Target(spec.title, base, spec.url_path, "Control+Enter") for spec in specs]


def open_tabs(browser: Browser, targets: list[Target], sentences: list[Sentence],
              memo: MarkerMemo, b: str | None = None) -> list[tuple[AppTab, Rerun]]:
    """New tabs on ``targets``, each with its sentence (and ``b``) in the URL, loaded at once.

    Loading them together overlaps the wait for pages that do not print the tokens; a time
    that matters is taken with one tab at a time (open_tab).
    """
    tabs = []
    for target, sentence in zip(targets, sentences, strict=True):
        tab = AppTab(browser, commit_key=target.commit_key, name=target.title)
        tab.start_open(page_url(target.base, target.path, sentence.text, b, dict(target.view)))
        tabs.append(tab)
    opened = []
    for tab, target, sentence in zip(tabs, targets, sentences, strict=True):
        key = (f"{target.base}/{target.path}{target.view}", len(sentence.text.split()))
        run = tab.finish_open(sentence.marker, shows_marker=memo.get(key))
        if run.status == "ok":
            memo[key] = tab.shows_marker
        log(f"opened {target.title} in {run.seconds:.1f} s; shows the tokens: {tab.shows_marker}")
        opened.append((tab, checked(run, f"opening {target.title}")))
    return opened


def open_tab(browser: Browser, target: Target, sentence: Sentence, memo: MarkerMemo,
             b: str | None = None) -> tuple[AppTab, Rerun]:
    """A new tab on ``target`` with ``sentence`` (and ``b``) in the URL, timed."""
    return open_tabs(browser, [target], [sentence], memo, b)[0]


def cold_start(browser: Browser, factory: SentenceFactory) -> tuple[Server, ColdStart]:
    """Spawn the server and time until /tokens has finished its first run and shows the tokens."""
    sentence = factory.sentence(SENTENCE_WORDS)
    tab = AppTab(browser, name="Tokens")
    server = start_server("app.py")
    before_goto = time.perf_counter() - server.started
    tab.start_open(page_url(server.url, "tokens", sentence.text))
    loading_s = tab.seconds_until_visible(BOOT_SCREEN)
    run = tab.finish_open(sentence.marker, timeout_s=240)
    cpu_s = server.cpu_seconds()
    checked(run, "cold start")
    tab.close()
    return server, ColdStart(server.listening_s, before_goto + run.seconds, run.status,
                             tab.shows_marker, loading_s, cpu_s)


def positions_visits(browser: Browser, server: Server, factory: SentenceFactory, reps: int,
                     memo: MarkerMemo) -> dict[str, list[Rerun]] | None:
    """Issue 4: the first visit to /positions (per-model tables built) vs later runs."""
    target = next((t for t in app_targets(server.url) if t.path == "positions"), None)
    if target is None:
        return None
    first_tab, first = open_tab(browser, target, factory.sentence(SENTENCE_WORDS), memo)
    second_tab, second = open_tab(browser, target, factory.sentence(SENTENCE_WORDS), memo)
    second_tab.close()
    warm = [first_tab.rerun(factory.sentence(SENTENCE_WORDS)) for _ in range(reps)]
    first_tab.close()
    return {"first": [first], "second": [second], "warm": warm}


# Issue 3's comparison: /tokens, /stages as it opens (one heatmap and a stage slider) and
# /stages with every stage stacked, the long walk a user can switch to.
STAGES_STACKED = (("st_layout", "stacked"),)


# Pages compared with /tokens on the same 64-token pair, as each opens.
PAIR_PAGES = ("stages", "encoder", "pretraining")


def stages_vs_tokens(browser: Browser, server: Server, factory: SentenceFactory, reps: int,
                     memo: MarkerMemo) -> dict[str, list[Rerun]] | None:
    """Warm reruns of /tokens, /stages (as it opens and stacked), /encoder and /pretraining with
    one 64-token pair, interleaved so a change in the machine's load hits them all."""
    pages = {t.path: t for t in app_targets(server.url) if t.path in ("tokens", *PAIR_PAGES)}
    if "tokens" not in pages or "stages" not in pages:
        return None
    stacked = Target("Stages, stacked", server.url, "stages", "Control+Enter", STAGES_STACKED)
    targets = {"tokens": pages["tokens"], "stages": pages["stages"], "stages_stacked": stacked,
               **{name: pages[name] for name in PAIR_PAGES[1:] if name in pages}}
    a, b = factory.pair(PAIR_TOKENS)
    n_words = len(a.text.split())
    opened = open_tabs(browser, list(targets.values()), [a] * len(targets), memo, b)
    tabs = {name: tab for name, (tab, _) in zip(targets, opened, strict=True)}
    runs: dict[str, list[Rerun]] = {name: [] for name in tabs}
    order = list(tabs)
    for rep in range(reps):
        for name in order[rep % len(order):] + order[:rep % len(order)]:
            sentence = factory.sentence(n_words)
            factory.check_length(sentence.text, b, PAIR_TOKENS)
            runs[name].append(checked(tabs[name].rerun(sentence), name))
    for tab in tabs.values():
        tab.close()
    return runs


def page_reruns(browser: Browser, targets: list[Target], factory: SentenceFactory,
                reps_new: int, reps_repeat: int, memo: MarkerMemo,
                ) -> tuple[list[PageRuns], list[AppTab]]:
    """Warm reruns on every page (and the bare page), round-robin; the tabs stay open."""
    sentences = [
        ref.opening if (ref := REFERENCES.get(target.title)) and ref.opening
        else factory.sentence(SENTENCE_WORDS)
        for target in targets
    ]
    tabs = [tab for tab, _ in open_tabs(browser, targets, sentences, memo)]
    results = [PageRuns(t.title, t.path, tab.shows_marker) for t, tab in zip(targets, tabs,
                                                                              strict=True)]
    history = [[sentence] for sentence in sentences]
    n = len(tabs)
    for rep in range(reps_new + reps_repeat):
        for i in [(rep + k) % n for k in range(n)]:   # rotate which page goes first
            if rep < reps_new:
                sentence = factory.sentence(SENTENCE_WORDS)
                bucket = results[i].new
            else:   # back to the sentence before the current one: already in the cache
                sentence = history[i][-2]
                bucket = results[i].repeat
            bucket.append(checked(tabs[i].rerun(sentence), results[i].title))
            history[i].append(sentence)
        log(f"reruns: round {rep + 1}/{reps_new + reps_repeat} done")
    for runs, tab in zip(results, tabs, strict=True):
        runs.figures = tab.figures()
    return results, tabs


def memory_series(tabs: list[AppTab], rss: Callable[[], int], factory: SentenceFactory,
                  checkpoints: list[int]) -> tuple[list[tuple[int, int]], int]:
    """Send distinct sentences to every page at once; read the server's RSS at the checkpoints.

    Only completion matters here, not timing, so the marker is not awaited: sentences of other
    lengths than the one a tab was opened with may not show it (a plot thins its labels).
    """
    series, errors = [], 0
    for i in range(1, max(checkpoints) + 1):
        sentence = factory.sentence(MEMORY_WORDS[i % len(MEMORY_WORDS)])
        for tab in tabs:
            tab.start_rerun(sentence, use_marker=False)
        runs = [checked(tab.finish_rerun(120), f"memory {i}: {tab.name}") for tab in tabs]
        errors += sum(run.status != "ok" for run in runs)
        if i in checkpoints:
            series.append((i, rss()))
            log(f"memory: {i} sentences, RSS {series[-1][1] / 2**20:.0f} MiB")
    return series, errors


def run_app(browser: Browser, factory: SentenceFactory, reps_new: int, reps_repeat: int,
            checkpoints: list[int], switch_reps: int = 5, long_reps: int = 5,
            ) -> tuple[AppFigures, Server]:
    """Parts 2 and 3 in order; returns the app server still running for the many-users part."""
    from bench.long_bench import long_pair_reruns
    from bench.switch_bench import page_switches, reference_new_tabs

    log("app: cold start")
    server, cold = cold_start(browser, factory)
    memo: MarkerMemo = {}
    try:
        log("app: /positions first visit")
        positions = positions_visits(browser, server, factory, reps_new, memo)
        log(f"app: page switches, {switch_reps} rounds")
        switches = page_switches(browser, server.url, factory, switch_reps, log)
        log("app: /stages vs /tokens, 64-token pair")
        pair = stages_vs_tokens(browser, server, factory, reps_new, memo)
        references = {title: start_server(ref.script) for title, ref in REFERENCES.items()}
        try:
            targets = [*app_targets(server.url),
                       *(Target(title, ref.url, "", REFERENCES[title].commit_key)
                         for title, ref in references.items())]
            log(f"app: warm reruns on {', '.join(t.title for t in targets)}")
            pages, tabs = page_reruns(browser, targets, factory, reps_new, reps_repeat, memo)
            for _ in references:   # the reference pages' tabs come last
                tabs.pop().close()
            log("app: the bare page and the frame opened in a new tab")
            sentence = factory.sentence(SENTENCE_WORDS).text
            reference_tabs = reference_new_tabs(browser, {
                BARE_TITLE: (references[BARE_TITLE].url, _OPENING),
                FRAME_TITLE: (page_url(references[FRAME_TITLE].url, "", sentence), sentence),
            }, switch_reps)
        finally:
            for ref in references.values():
                ref.stop()
        rss_after_pages = server.rss_bytes()
        log(f"memory: after every page, RSS {rss_after_pages / 2**20:.0f} MiB")
        series, memory_errors = memory_series(tabs, server.rss_bytes, factory, checkpoints)
        for tab in tabs:
            tab.close()
        # After the short sentences: what each page showed of them saves learning it again.
        log(f"app: every page with a long pair, {long_reps} rounds")
        long = long_pair_reruns(browser, server.url, factory, long_reps, memo)
    except BaseException:
        server.stop()
        raise
    prints_tokens = {p.path: p.shows_marker for p in pages if p.title not in REFERENCES}
    figures = AppFigures(cold, pages, pair, positions, rss_after_pages, series, memory_errors,
                         prints_tokens, switches, long, reference_tabs)
    return figures, server
