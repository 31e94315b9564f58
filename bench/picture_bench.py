"""A page that sends every value's picture (components.picture_switcher) against the same page
as it was before (a server slider, one picture a run): its first paint and the bytes its
websocket carries, opened afresh in Chromium, in alternating rounds on two servers started side
by side: this tree's app and the commit before the switcher (``git archive``, unchanged).

First paint: from the address entered until the page's first figure (an image heatmap or a
plotly chart) is visible. Bytes: what the server sent over the page's websocket until its run is
over (a new session is sent the shown picture only). Goal (issue 54): both within 1.2x of
before. Then, on this tree, the bytes the slider's first focus brings: every other value's
picture, once a session.

Then, in AppTest, what each view's picture switchers send: packed, and how much of that is the
pictures' PNG images (base64 in the JSON; already compressed, so packing them again saves
nothing) against the rest (labels, words, style), which compresses several times over.

    python3 -m bench.picture_bench [--reps 5] [--before 44a19ae]
"""

from __future__ import annotations

import argparse
import base64
import re
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.app_bench import log
from bench.browser import CHROMIUM, CHROMIUM_ARGS, AppTab, page_url
from bench.report import Row, markdown
from bench.server import ROOT, start_server

BEFORE = "44a19ae"   # the last commit before components/picture_switcher.py
GOAL = 1.2
SENTENCE = "The bank of the river was steep and muddy after the rain."
FIGURE = ("[data-testid='stMain'] [data-figure], "
          "[data-testid='stMain'] .js-plotly-plot .main-svg >> visible=true")
VIEWS = {   # a page as it opens, with the control switched in the browser now
    "/stages (stage)": ("stages", {}),
    "/similarity, Tokens (stage)": ("similarity", {}),
    "/encoder, Attention (head)": ("encoder", {"enc_section": "Attention"}),
    "/positions, PCA (first positions)": ("positions", {}),
}


IMAGE = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]*)")


@dataclass
class Opens:
    paint_s: list[float] = field(default_factory=list)
    ws_bytes: list[int] = field(default_factory=list)
    reach_bytes: list[int] = field(default_factory=list)   # the slider's first focus


def checkout(commit: str) -> Path:
    """The tree of ``commit`` in a new temporary folder (git archive: this work tree and its
    index are not touched)."""
    folder = Path(tempfile.mkdtemp(prefix="before-"))
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def open_once(browser, base: str, path: str, view: dict[str, str]) -> tuple[float, int, int]:
    """First paint (s) and the first run's bytes; then the bytes the slider's first focus
    brings (every other value's picture: one run of its fragment), 0 for a page with no
    switcher in the main area (before: its moves were runs of the server)."""
    tab = AppTab(browser)
    try:
        tab.start_open(page_url(base, path, SENTENCE, view=view))
        paint = tab.seconds_until_visible(FIGURE, timeout_s=60)
        run = tab.finish_open("", shows_marker=False)
        sent = run.ws_bytes if run.status == "ok" else -1
        return paint, sent, reach_bytes(tab)
    finally:
        tab.close()


def reach_bytes(tab: AppTab) -> int:
    """The websocket bytes from the first picture slider's focus until every value's picture
    is there and the run is over; 0 when the page shows none or sent them all already."""
    partial = tab.page.locator("[data-testid='stMain'] [data-complete='0']")
    if partial.count() == 0:
        return 0
    tab.page.wait_for_timeout(50)
    tab.meter.bytes = 0
    partial.first.locator(".ps-range").first.focus()
    tab.page.wait_for_selector("[data-testid='stMain'] [data-complete='1']", timeout=60_000)
    tab._wait(None, need_run=False, timeout_s=60)
    tab.page.wait_for_timeout(50)
    return tab.meter.bytes


def measure(reps: int, before: str) -> dict[tuple[str, str], Opens]:
    from playwright.sync_api import sync_playwright

    folder = checkout(before)
    servers = {"now": start_server("app.py"), "before": start_server("app.py", folder=folder)}
    results = {(v, s): Opens() for v in VIEWS for s in servers}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for path, query in VIEWS.values():   # warm: model, analysis, pictures
                for server in servers.values():
                    open_once(browser, server.url, path, query)
            for rep in range(reps):
                order = list(servers.items())
                for name, server in order if rep % 2 == 0 else order[::-1]:
                    for view, (path, query) in VIEWS.items():
                        paint, sent, reach = open_once(browser, server.url, path, query)
                        results[view, name].paint_s.append(paint)
                        results[view, name].ws_bytes.append(sent)
                        results[view, name].reach_bytes.append(reach)
                log(f"pictures: round {rep + 1} of {reps} done")
            browser.close()
    finally:
        for server in servers.values():
            server.stop()
    return results


def rows(results: dict[tuple[str, str], Opens], before: str) -> list[Row]:
    out = []
    for view in VIEWS:
        now, then = results[view, "now"], results[view, "before"]
        paint_now = statistics.median(now.paint_s) * 1000
        paint_then = statistics.median(then.paint_s) * 1000
        bytes_now, bytes_then = statistics.median(now.ws_bytes), statistics.median(then.ws_bytes)
        out.append(Row("2 Exploring", f"{view}: first paint of the page's first figure, opened "
                       f"afresh, median of {len(now.paint_s)}: the shown picture / before "
                       f"({before})", f"{paint_now:.0f} ms / {paint_then:.0f} ms "
                       f"({paint_now / paint_then:.2f}x)", f"≤ {GOAL}x",
                       paint_now / paint_then <= GOAL))
        out.append(Row("2 Exploring", f"{view}: websocket bytes of that first run, median: "
                       f"the shown picture / before", f"{bytes_now / 1e3:.1f} kB / "
                       f"{bytes_then / 1e3:.1f} kB ({bytes_now / bytes_then:.2f}x)",
                       f"≤ {GOAL}x", bytes_now / bytes_then <= GOAL))
        reach = statistics.median(now.reach_bytes)
        both = bytes_now + reach
        out.append(Row("2 Exploring", f"{view}: then the slider's first focus (every other "
                       "value's picture, once a session), median; first run and that together "
                       "/ before's first run", f"{reach / 1e3:.1f} kB; "
                       f"{both / 1e3:.1f} kB ({both / bytes_then:.2f}x)",
                       "—", True))
    return out


def switcher_parts() -> list[str]:
    """Each view's picture switchers as the page sends them (AppTest, this tree): packed bytes,
    the PNG images in them, and the data packed again without the images."""
    from streamlit.testing.v1 import AppTest

    from components.picture_switcher import WHOLE_KEY, pack, unpack

    lines = ["| view | switcher | pictures | packed | PNG images (base64) | packed without "
             "the images |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for view, (path, query) in VIEWS.items():
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.session_state[WHOLE_KEY] = True   # a reader who reached for a slider: every picture
        for key, value in {"a": SENTENCE, **query}.items():
            at.query_params[key] = value
        at.run()
        at.switch_page(f"pages/{path}/page.py").run()
        for element in at.get("bidi_component"):
            packed = bytes(element.proto.bytes)
            data = unpack(packed)
            pictures = list(data.get("pictures", []))
            images = [base64.b64decode(m) for p in pictures for m in IMAGE.findall(p)]
            bare = pack({**data, "pictures": [IMAGE.sub("data:image/png;base64,", p)
                                              for p in pictures]})
            lines.append(
                f"| {view} | {str(data.get('id', '')).split(':')[0]} | {len(pictures)} | "
                f"{len(packed) / 1e3:.1f} kB | {len(images)}: {sum(map(len, images)) / 1e3:.1f}"
                f" kB ({sum(len(base64.b64encode(i)) for i in images) / 1e3:.1f} kB) | "
                f"{len(bare) / 1e3:.1f} kB |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--before", default=BEFORE)
    args = parser.parse_args(argv)
    print(markdown(rows(measure(args.reps, args.before), args.before)))
    print()
    print("\n".join(switcher_parts()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
