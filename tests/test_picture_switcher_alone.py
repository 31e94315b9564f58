"""The picture switcher on a page of its own (tests/switcher_app.py: no model, no page of the
app), in Chromium: the first run sends the shown picture only; the keyboard's focus asks for the
rest; an arrow key switches the picture with no request to the server, then writes the link and
reports the value (one run of the switcher's fragment, which then says it); the same key as a
server slider with exact values on starts where the pictures were and hands its value back; a
link's value opens on its picture, a bad one is said in one line; a grid of two sliders; and the
switcher keeps its state in the page's script, not on its elements."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from tests.conftest import ARTIFACTS, ROOT, blank_tab, free_port, stop_server
from tests.test_picture_switcher_browser import Frames, sent_pictures, shown

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def alone() -> Iterator[str]:
    """`streamlit run tests/switcher_app.py` on a free port; yields its base URL."""
    port = free_port()
    with open(ARTIFACTS / f"switcher-app-{port}.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "tests/switcher_app.py",
             "--server.port", str(port), "--server.address", "127.0.0.1"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop_server(proc)
                raise RuntimeError(f"the switcher's page did not start; see {log.name}") from None
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def open_page(browser, url: str):
    page = blank_tab(browser, 1024, 768)
    frames = Frames(page)
    page.goto(url)
    page.wait_for_selector("[data-keys~='alone_level'] .ps-picture:not([hidden]) [data-figure]",
                           timeout=60_000)
    idle(page)
    return page, frames


def idle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=60_000)


def link(page, key: str) -> str | None:
    return parse_qs(urlparse(page.url).query).get(key, [None])[0]


def text_shown(page, text: str) -> None:
    page.get_by_text(text, exact=True).wait_for(timeout=30_000)


def test_one_slider_switches_in_the_browser_and_reports_after(alone, browser):
    page, frames = open_page(browser, alone)
    key = "alone_level"
    assert shown(page, key) == "0" and sent_pictures(page, key) == 1
    text_shown(page, "the server has level 0")
    # The state is the page script's (one Switcher by element), not fields on the elements.
    assert page.evaluate("() => Object.keys(document.querySelector('.ps'))") == []
    reruns = len(frames.reruns)
    page.locator(f"#ps-{key}").focus()
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    idle(page)
    assert len(frames.reruns) == reruns + 1 and sent_pictures(page, key) == 5
    reruns = len(frames.reruns)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector("
                           "\"[data-keys~='alone_level'] .ps-picture:not([hidden])\")"
                           ".dataset.index === '2'", timeout=5_000)
    changed = time.monotonic()
    assert link(page, key) == "level 2"
    slider = page.locator(f"#ps-{key}")
    assert slider.get_attribute("aria-valuetext") == "level 2"
    # Held keys send one report, after the picture, for the switcher's fragment alone.
    text_shown(page, "the server has level 2")
    idle(page)
    asked = frames.reruns[reruns:]
    assert len(asked) == 1 and asked[0][1] and asked[0][0] > changed, asked
    assert shown(page, key) == "2"
    page.close()


def test_exact_values_take_the_value_over_and_hand_it_back(alone, browser):
    """The reconciliation the component does for the pages: the server slider of the same key
    starts where the pictures were, and the pictures where the server slider was."""
    page, _frames = open_page(browser, alone + "?alone_level=level+1")
    key = "alone_level"
    assert shown(page, key) == "1"
    page.locator(f"#ps-{key}").focus()
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    idle(page)
    page.keyboard.press("ArrowRight")
    text_shown(page, "the server has level 2")
    idle(page)
    page.get_by_text("Exact values").click()
    text_shown(page, "figure of level 2")
    assert page.locator("[data-testid='stSliderThumbValue']").inner_text() == "level 2"
    page.locator("[data-testid='stSlider'] input[type='range']").focus()
    page.keyboard.press("ArrowRight")
    text_shown(page, "figure of level 3")
    idle(page)
    assert link(page, key) == "level 3"
    page.get_by_text("Exact values").click()
    page.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden]) [data-figure]",
                           timeout=30_000)
    idle(page)
    assert shown(page, key) == "3"
    assert page.locator(f"#ps-{key}").get_attribute("aria-valuetext") == "level 3"
    text_shown(page, "the server has level 3")
    page.close()


def test_a_link_opens_on_its_value_and_a_bad_one_is_said(alone, browser):
    page, _frames = open_page(browser, alone + "?alone_level=4&alone_col=column+2")
    assert shown(page, "alone_level") == "4" and shown(page, "alone_col") == "2"
    page.close()
    page, _frames = open_page(browser, alone + "?alone_level=level+9")
    assert shown(page, "alone_level") == "0"
    text_shown(page, "There is no level 9 here: the values run from level 0 to level 4. "
                     "Showing level 0.")
    page.close()


def test_two_sliders_switch_every_combination(alone, browser):
    page, _frames = open_page(browser, alone + "?alone_row=row+1")
    assert shown(page, "alone_row") == "3"     # row 1, column 0: the last slider's values first
    page.locator("#ps-alone_col").focus()
    page.wait_for_selector("[data-keys~='alone_col'][data-complete='1']", timeout=30_000)
    idle(page)
    page.keyboard.press("End")
    page.wait_for_function("() => document.querySelector(\"[data-keys~='alone_col'] "
                           ".ps-picture:not([hidden])\").dataset.index === '5'", timeout=5_000)
    assert link(page, "alone_col") == "column 2" and link(page, "alone_row") == "row 1"
    text_shown(page, "the server has row 1, column 2")
    page.close()
