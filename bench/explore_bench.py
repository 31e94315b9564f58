"""Exploring in Chromium: on every page, the control a student moves most (the layer, the stage,
the head, the draw), changed 7 times, beside a new sentence on the same page, the bare Streamlit
page and the app's frame alone, in one round-robin so the machine's load hits all of them alike.

A control change is timed from the key press or click that commits it until the script is back
to ``notRunning`` with nothing stale (bench.browser's DONE_JS, a run seen to start). With the
open section run as a fragment (components.sections) a control change reruns that section
alone; a new sentence reruns the whole page. Goal (issue 40): a control change at most 1.5x a
bare page.

A picture switched in the browser (kind "picture": components.picture_switcher) is timed in the
page itself, from the key press's event time until the frame after the new picture is shown
(a requestAnimationFrame callback, then a task: the frame holding it has been painted); beside
it, the requests it sends: any websocket message before that paint, and the reruns asked for
within a second (a page that reports the move to its fragment asks one, after the picture).
Goal (issue 54): at most 0.3x a bare page's rerun, no rerun for the picture.

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
PICTURE_GOAL = 0.3   # a picture switched in the browser: at most this many times


@dataclass(frozen=True)
class Control:
    """The widget a student moves most on a page, as the page opens (``view``: its tab)."""

    path: str
    kind: str        # "slider" (arrow keys on its thumb), "selectbox" (arrow + Enter), "step"
    label: str       # the widget's English label
    first: str       # the first key: the direction that moves away from the default
    view: tuple[tuple[str, str], ...] = ()
    server: str = "app"   # the app, or FLOOR_TITLE's script
    key: str = ""         # kind "picture": the switcher's URL key
    name: str = ""        # the row's title when a page has two controls measured

    @property
    def title(self) -> str:
        return self.name or self.path or self.server


CONTROLS = (
    Control("stages", "picture", "Stage", "ArrowRight", key="st_stage"),
    Control("encoder", "picture", "Encoder layer", "ArrowRight", key="enc_layer"),
    Control("encoder", "picture", "Attention head", "ArrowRight", (("enc_section", "Attention"),),
            key="enc_head", name="encoder Attention"),
    Control("encoder", "picture", "Encoder layer", "ArrowRight", (("enc_section", "Attention"),),
            key="enc_layer", name="encoder Attention layer"),
    Control("similarity", "picture", "Stage or layer", "ArrowLeft", key="sim_stage"),
    Control("positions", "picture", "Positions to project", "ArrowLeft", key="pos_count"),
    Control("positions", "slider", "Positions to project", "ArrowRight", (("pos_free", "true"),),
            name="positions any range"),
    # Its layer slider shows once there are two sentences.
    Control("pairs", "picture", "Layer", "ArrowLeft", (("b", "It rained all day."),),
            key="pr_layer"),
    Control("attribution", "picture", "Encoder layer", "ArrowLeft", key="att_layer"),
    Control("pretraining", "step", "Draw number", "+"),
    Control("parameters", "selectbox", "Config", "ArrowDown",
            (("par_section", "From the config"),)),
    Control("contexts", "picture", "Layer", "ArrowLeft", key="ctx_layer"),
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


# Set up before a picture move: resolves with the milliseconds from the key press (its event's
# time) to the frame after the new picture is shown, and how many websocket messages the page
# sent before that. Sends are counted on WebSocket.prototype.send, patched once.
PICTURE_JS = """
(key) => {
  if (!window.__sends) {
    window.__sends = [];
    const send = WebSocket.prototype.send;
    // A BackMsg's first byte is its message's tag: 90 is field 11, rerun_script.
    const RERUN = 90;
    WebSocket.prototype.send = function (data) {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
                  : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset) : null;
      window.__sends.push({at: performance.now(), rerun: !!bytes && bytes[0] === RERUN});
      return send.call(this, data);
    };
  }
  const root = document.querySelector(`[data-keys~='${key}']`);
  window.__paint = new Promise((done) => {
    // A key that shows no other picture (a value at the end of the range) is a failed move,
    // not a wait without end.
    setTimeout(() => done({ms: NaN, sentBefore: 0}), 5000);
    let pressed = null;
    const down = (e) => { pressed = e.timeStamp; };
    root.addEventListener("keydown", down, {capture: true, once: true});
    const seen = new MutationObserver(() => {
      seen.disconnect();
      requestAnimationFrame(() => setTimeout(() => {
        const painted = performance.now();
        window.__pressed = pressed;
        done({ms: painted - pressed,
              sentBefore: window.__sends.filter((m) => m.at >= pressed && m.at <= painted)
                .length});
      }, 0));
    });
    seen.observe(root.querySelector(".ps-pictures"),
                 {subtree: true, attributes: true, attributeFilter: ["hidden"]});
  });
}
"""


@dataclass(frozen=True)
class PictureMove:
    ms: float            # key press to the new picture painted
    sent_before: int     # websocket messages the page sent before that paint
    reruns: int          # reruns asked for within a second of the press
    status: str = "ok"
    reach_ms: float = float("nan")   # focus to every value's picture there, when it was not


@dataclass
class ExploreRuns:
    title: str
    sentence: list[Rerun] = field(default_factory=list)   # a new sentence: the whole page
    control: list[Rerun] = field(default_factory=list)    # the control moved: its section
    pictures: list[PictureMove] = field(default_factory=list)   # kind "picture"


# Reruns the page asked for within a second of the key press.
RERUNS_JS = """
() => window.__sends.filter((m) => m.rerun && m.at >= window.__pressed
                                   && m.at <= window.__pressed + 1000).length
"""


def move_picture(tab: AppTab, control: Control, forward: bool) -> PictureMove:
    """Step the picture switcher of ``control.key`` with an arrow key; time it in the page."""
    key = control.first if forward else _BACK[control.first]
    slider = tab.page.locator(f"#ps-{control.key}")
    try:
        slider.wait_for(state="visible", timeout=5000)
    except PlaywrightTimeout:
        return PictureMove(float("nan"), 0, 0, "missing")
    # A new session is sent the shown picture only; the slider's focus asks for the rest (one
    # run of its fragment), which a reader's first key press meets there. Timed apart.
    root = f"[data-keys~='{control.key}']"
    partial = tab.page.locator(f"{root}[data-complete='0']").count() > 0
    reached = time.monotonic()
    slider.focus()
    reach_ms = float("nan")
    if partial:
        tab.page.wait_for_selector(f"{root}[data-complete='1']", timeout=60_000)
        reach_ms = (time.monotonic() - reached) * 1000
        tab._wait(None, need_run=False, timeout_s=60)
    tab.page.evaluate(IDLE_JS)
    tab.page.evaluate(PICTURE_JS, control.key)
    tab.page.keyboard.press(key)
    seen = tab.page.evaluate("() => window.__paint")
    tab.page.wait_for_timeout(1000)   # a report to the fragment leaves 150 ms after the move
    tab._wait(None, need_run=False, timeout_s=60)
    if seen["ms"] is None or seen["ms"] != seen["ms"]:   # NaN: no other picture was shown
        log(f"{control.title}: {key} showed no other picture")
        return PictureMove(float("nan"), 0, 0, "unchanged")
    return PictureMove(float(seen["ms"]), int(seen["sentBefore"]),
                       int(tab.page.evaluate(RERUNS_JS)), reach_ms=reach_ms)


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
        title = c.title
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
            if control is not None and control.kind == "picture":
                runs.pictures.append(move_picture(tab, control, rep % 2 == 0))
            elif control is not None:
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
        runs = by_title.get(c.title)
        if runs is None:
            continue
        if c.kind == "picture":
            out.extend(picture_rows(c, runs, bare))
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


def picture_rows(c: Control, runs: ExploreRuns, bare: float) -> list[Row]:
    """A picture switched in the browser: its paint against the bare page's rerun, and the
    requests its moves sent."""
    ok = [m for m in runs.pictures if m.status == "ok"]
    ms = statistics.median(m.ms for m in ok) if ok else float("nan")
    errors = len(runs.pictures) - len(ok) + sum(r.status != "ok" for r in runs.sentence)
    before = sum(m.sent_before for m in ok)
    reruns = sorted({m.reruns for m in ok})
    return [
        Row("2 Exploring", f"/{c.title}: {c.label} moved in the browser, key press to the new "
            f"picture painted, median of {len(ok)} (a new sentence: "
            f"{median_ms(runs.sentence):.0f} ms; {errors} errors)",
            f"{ms:.1f} ms ({ms / bare:.2f}x bare)", f"≤ {PICTURE_GOAL}x bare",
            ms / bare <= PICTURE_GOAL and errors == 0),
        Row("2 Exploring", f"/{c.title}: requests of {len(ok)} moves: messages sent before the "
            "picture painted / reruns asked within 1 s of a move (a report to the fragment "
            "under the picture)", f"{before} / {', '.join(map(str, reruns)) or '-'} per move",
            "none before the picture", before == 0),
        *reach_rows(c, ok),
    ]


def reach_rows(c: Control, moves: list[PictureMove]) -> list[Row]:
    """A session's first reach for the slider (its focus) to every value's picture there:
    what a reader's first key press may meet (no goal; the key waits, dimmed, if it is
    sooner)."""
    reached = [m.reach_ms for m in moves if m.reach_ms == m.reach_ms]
    if not reached:
        return []
    return [Row("2 Exploring", f"/{c.title}: the slider's first focus in a session to every "
                f"value's picture there (the shown one came first), median of {len(reached)}",
                f"{statistics.median(reached):.0f} ms", "before a first key press", True)]


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
    controls = tuple(c for c in CONTROLS if not wanted or c.path in wanted or c.title in wanted)

    from core import load_model

    results = measure(SentenceFactory(load_model().tokenizer), controls, args.reps)
    print(markdown(rows(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
