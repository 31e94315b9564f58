"""Exploring in Chromium: on every page, the control a student moves most (the layer, the stage,
the head, the draw), changed 7 times, beside a new sentence on the same page, the bare Streamlit
page and the app's frame alone, in one round-robin so the machine's load hits all of them alike.

A control change is timed from the key press or click that commits it until the script is back
to ``notRunning`` with nothing stale (bench.browser's DONE_JS, a run seen to start). With the
open section run as a fragment (components.sections) a control change reruns that section
alone; a new sentence reruns the whole page. Goal (issue 40): a control change at most 1.5x a
bare page.

    python3 -m bench.explore_bench [--reps 7] [--pages stages,encoder]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field

from playwright.sync_api import Browser, Locator
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.app_bench import (
    BARE_TITLE,
    FRAME_TITLE,
    REFERENCES,
    MarkerMemo,
    Target,
    checked,
    log,
    open_tab,
)
from bench.browser import CHROMIUM, CHROMIUM_ARGS, RESET_JS, AppTab, Rerun
from bench.report import Row, markdown
from bench.server import start_server
from bench.texts import SENTENCE_WORDS, SentenceFactory

GOAL = 1.5   # a control change at most this many times a bare page's rerun


@dataclass(frozen=True)
class Control:
    """The widget a student moves most on a page, as the page opens (``view``: its tab)."""

    path: str
    kind: str        # "slider" (arrow keys on its thumb), "selectbox" (arrow + Enter), "step"
    label: str       # the widget's English label
    first: str       # the first key: the direction that moves away from the default
    view: tuple[tuple[str, str], ...] = ()
    server: str = "app"   # the app, or FLOOR_TITLE's script


CONTROLS = (
    Control("stages", "slider", "Stage", "ArrowRight"),
    Control("encoder", "slider", "Encoder layer", "ArrowRight"),
    Control("similarity", "slider", "Stage or layer", "ArrowLeft"),
    Control("positions", "slider", "Positions to project", "ArrowRight"),
    # Its layer slider shows once there are two sentences.
    Control("pairs", "slider", "Layer", "ArrowLeft", (("b", "It rained all day."),)),
    Control("attribution", "slider", "Encoder layer", "ArrowLeft"),
    Control("pretraining", "step", "Draw number", "+"),
    Control("parameters", "selectbox", "Config", "ArrowDown",
            (("par_section", "From the config"),)),
    Control("contexts", "slider", "Layer", "ArrowLeft"),
)
# The floor under any of them, moved in the same rounds: a fragment holding a slider and one
# heatmap, nothing else (bench/fragment_app.py).
FLOOR_TITLE = "a fragment: one slider and one picture"
FLOOR = Control("", "slider", "Layer", "ArrowLeft", server=FLOOR_TITLE)
# Resolves once the browser's main thread has been idle (at most a second).
IDLE_JS = "() => new Promise((done) => requestIdleCallback(() => done(true), {timeout: 1000}))"
_BACK = {"ArrowRight": "ArrowLeft", "ArrowLeft": "ArrowRight", "ArrowUp": "ArrowDown",
         "ArrowDown": "ArrowUp", "+": "-"}
_TEST_IDS = {"slider": "stSlider", "selectbox": "stSelectbox", "step": "stNumberInput"}


@dataclass
class ExploreRuns:
    title: str
    sentence: list[Rerun] = field(default_factory=list)   # a new sentence: the whole page
    control: list[Rerun] = field(default_factory=list)    # the control moved: its section


def _widget(tab: AppTab, control: Control) -> Locator:
    main = tab.page.locator("[data-testid='stMain']")
    return main.locator(f"[data-testid='{_TEST_IDS[control.kind]}']").filter(
        has=tab.page.get_by_text(control.label, exact=True)).first


def move(tab: AppTab, control: Control, forward: bool, timeout_s: float = 60.0) -> Rerun:
    """Move ``control`` one step (forward: away from its default, else back) and time the run;
    status "missing" when the page does not show the control where it is looked for."""
    key = control.first if forward else _BACK[control.first]
    widget = _widget(tab, control)
    try:
        widget.wait_for(state="visible", timeout=5000)
    except PlaywrightTimeout:
        return Rerun(float("nan"), 0, "missing", control.label)
    if control.kind == "selectbox":
        widget.locator("input").click()
        tab.page.wait_for_timeout(100)   # the list opens: the browser alone, not timed
        tab.page.keyboard.press(key)
    elif control.kind == "slider":
        widget.locator("input[type='range']").first.focus()
    # The move starts on an idle page: what the browser still draws of the run before (a new
    # sentence's) is that run's cost, not the move's. A selectbox's list took 100 ms to open
    # before its timed Enter, a slider's focus none: without this wait a slider's move was
    # charged the leftovers a selectbox's was not.
    tab.page.evaluate(IDLE_JS)
    tab.page.evaluate(RESET_JS)
    tab.page.wait_for_timeout(50)
    tab.meter.bytes = 0
    start = time.perf_counter()
    if control.kind == "selectbox":
        tab.page.keyboard.press("Enter")
    elif control.kind == "slider":
        tab.page.keyboard.press(key)
    else:
        widget.get_by_test_id("stNumberInputStepUp" if key == "+" else
                              "stNumberInputStepDown").click()
    status = tab._wait(None, need_run=True, timeout_s=timeout_s)
    seconds = time.perf_counter() - start
    tab.page.wait_for_timeout(50)
    return Rerun(seconds, tab.meter.bytes, status, tab._detail(status))


def explore(browser: Browser, bases: dict[str, str], references: dict[str, str],
            factory: SentenceFactory, controls: tuple[Control, ...],
            reps: int) -> list[ExploreRuns]:
    """Round-robin over the pages and the references: each round, on each page, a new sentence
    and then one control move; on the references, a new sentence. ``bases``: each control's
    server URL by ``Control.server``. A control's runs are titled by its path, or by its
    server where it has none (the floor)."""
    memo: MarkerMemo = {}
    tabs: list[tuple[AppTab, Control | None, ExploreRuns]] = []
    for c in controls:
        title = c.path or c.server
        tab, run = open_tab(browser, Target(title, bases[c.server], c.path, "Control+Enter",
                                            c.view), factory.sentence(SENTENCE_WORDS), memo)
        if run.status == "ok":
            tabs.append((tab, c, ExploreRuns(title)))
        else:
            tab.close()
    for title, url in references.items():
        ref = REFERENCES[title]
        sentence = ref.opening or factory.sentence(SENTENCE_WORDS)
        tab, _ = open_tab(browser, Target(title, url, "", ref.commit_key), sentence, memo)
        tabs.append((tab, None, ExploreRuns(title)))
    for rep in range(reps):
        for k in range(len(tabs)):
            tab, control, runs = tabs[(rep + k) % len(tabs)]
            runs.sentence.append(checked(tab.rerun(factory.sentence(SENTENCE_WORDS)),
                                         f"{runs.title}: new sentence"))
            if control is not None:
                runs.control.append(checked(move(tab, control, forward=rep % 2 == 0),
                                            f"{runs.title}: {control.label}"))
        log(f"explore: round {rep + 1} of {reps} done")
    for tab, _, _ in tabs:
        tab.close()
    return [runs for _, _, runs in tabs]


def median_ms(runs: list[Rerun]) -> float:
    ok = [r.seconds for r in runs if r.status == "ok"]
    return statistics.median(ok) * 1000 if ok else float("nan")


def rows(results: list[ExploreRuns]) -> list[Row]:
    """The same figures as rows of bench/run.py's table: per page, a control change against the
    bare page (goal 1.5x) and the new sentence beside it; first the references and the floor
    (a fragment of one slider and one picture) moved in the same rounds."""
    by_title = {r.title: r for r in results}
    bare = median_ms(by_title[BARE_TITLE].sentence)
    frame = median_ms(by_title[FRAME_TITLE].sentence)
    out = [Row("2 Exploring", "references in the same rounds: bare Streamlit page / the app's "
               "frame alone, rerun median", f"{bare:.0f} ms / {frame:.0f} ms "
               f"({frame / bare:.2f}x bare)")]
    floor = by_title.get(FLOOR_TITLE)
    if floor is not None:
        floor_ms = median_ms(floor.control)
        out.append(Row("2 Exploring", f"the floor: {FLOOR_TITLE}, the slider moved, median of "
                       f"{len(floor.control)}", f"{floor_ms:.0f} ms ({floor_ms / bare:.2f}x "
                       "bare)", f"≤ {GOAL}x bare", floor_ms / bare <= GOAL))
    for c in CONTROLS:
        runs = by_title.get(c.path)
        if runs is None:
            continue
        move_ms = median_ms(runs.control)
        errors = sum(r.status != "ok" for r in runs.sentence + runs.control)
        ratio = move_ms / bare
        out.append(Row("2 Exploring",
                       f"/{c.path}: {c.label} moved, median of {len(runs.control)} "
                       f"(a new sentence: {median_ms(runs.sentence):.0f} ms; {errors} errors)",
                       f"{move_ms:.0f} ms ({ratio:.2f}x bare)", f"≤ {GOAL}x bare",
                       ratio <= GOAL and errors == 0))
    return out


def measure(factory: SentenceFactory, controls: tuple[Control, ...] = CONTROLS,
            reps: int = 7) -> list[ExploreRuns]:
    """Start the app, the floor and the two references, explore in Chromium, stop the
    servers."""
    from playwright.sync_api import sync_playwright

    servers = {"app": start_server("app.py"), FLOOR_TITLE: start_server("bench/fragment_app.py"),
               **{t: start_server(REFERENCES[t].script) for t in (BARE_TITLE, FRAME_TITLE)}}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            results = explore(browser, {name: s.url for name, s in servers.items()},
                              {t: servers[t].url for t in (BARE_TITLE, FRAME_TITLE)},
                              factory, (FLOOR, *controls), reps)
            browser.close()
    finally:
        for server in servers.values():
            server.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--pages", default="", help="comma-separated url paths (default: all)")
    args = parser.parse_args(argv)
    wanted = set(filter(None, args.pages.split(",")))
    controls = tuple(c for c in CONTROLS if not wanted or c.path in wanted)

    from core import load_model

    results = measure(SentenceFactory(load_model().tokenizer), controls, args.reps)
    print(markdown(rows(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
