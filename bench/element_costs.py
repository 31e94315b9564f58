"""What each element a section redraws adds to a control move, in Chromium.

The floor (bench/fragment_app.py: a fragment of one slider and one picture) and, beside it, the
same fragment with ``--count`` more elements of one kind (its ELEMENTS_ variables), the slider
moved ``--reps`` times on each, in the same round-robin as a bare page's rerun
(bench/explore_bench.explore). Per kind: the move's median and what one element of the kind
adds to it. The budget issue 40 sets a move, 1.5x a bare page, against what a section must
show (a picker, a picture, its explanation, its downloads and its live check) is read off it.

    python3 -m bench.element_costs [--reps 9] [--count 8]
"""

from __future__ import annotations

import argparse

from bench.app_bench import BARE_TITLE, REFERENCES
from bench.browser import CHROMIUM, CHROMIUM_ARGS
from bench.explore_bench import GOAL, Control, ExploreRuns, explore, median_ms
from bench.report import Row, markdown
from bench.server import start_server
from bench.texts import SentenceFactory

# Each kind as bench/fragment_app.py draws it; "none" is the floor itself.
KINDS = {
    "none": "nothing more (the floor: one slider, one picture)",
    "markdown": "an explanation (markdown)",
    "selectbox": "a selectbox",
    "download": "a download button",
    "select_slider": "a select slider",
    "picture": "a picture (an image heatmap)",
    "columns": "two columns of one line each",
}


def measure(factory: SentenceFactory, count: int, reps: int) -> list[ExploreRuns]:
    """One server per kind and a bare page, moved and rerun in one round-robin."""
    from playwright.sync_api import sync_playwright

    servers = {kind: start_server("bench/fragment_app.py", env={
        "ELEMENTS_KIND": kind, "ELEMENTS_COUNT": "0" if kind == "none" else str(count)})
        for kind in KINDS}
    servers[BARE_TITLE] = start_server(REFERENCES[BARE_TITLE].script)
    controls = tuple(Control("", "slider", "Layer", "ArrowLeft", server=kind) for kind in KINDS)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            results = explore(browser, {name: s.url for name, s in servers.items()},
                              {BARE_TITLE: servers[BARE_TITLE].url}, factory, controls, reps)
            browser.close()
    finally:
        for server in servers.values():
            server.stop()
    return results


def rows(results: list[ExploreRuns], count: int) -> list[Row]:
    by_title = {r.title: r for r in results}
    bare = median_ms(by_title[BARE_TITLE].sentence)
    floor = median_ms(by_title["none"].control)
    out = [Row("2 Exploring", "elements' rounds: a bare page's rerun, median", f"{bare:.0f} ms"),
           Row("2 Exploring", f"budget for a move: {GOAL}x bare, minus the floor's own move",
               f"{GOAL * bare - floor:.0f} ms ({GOAL * bare:.0f} - {floor:.0f})")]
    for kind, what in KINDS.items():
        move = median_ms(by_title[kind].control)
        if kind == "none":
            out.append(Row("2 Exploring", f"the floor, slider moved, median of "
                           f"{len(by_title[kind].control)}", f"{move:.0f} ms "
                           f"({move / bare:.2f}x bare)"))
            continue
        out.append(Row("2 Exploring", f"+ {count} x {what}: move; one of them adds",
                       f"{move:.0f} ms; {(move - floor) / count:.1f} ms"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--count", type=int, default=8)
    args = parser.parse_args(argv)
    from bench.ws_load import default_factory

    print(markdown(rows(measure(default_factory(), args.count, args.reps), args.count)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
