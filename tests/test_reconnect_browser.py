"""After a server restart the browser reconnects with a new session: its first edit must be kept.

The server is stopped and started again on the same port under an open page; Chromium
reconnects by itself. Then one new sentence is typed, once. Before the fix the new session's
first run seeded the box from the link (the old text) over the value the browser sent, so the
box snapped back and the edit was lost (components/inputs.py, draw_shared_inputs).
"""

from __future__ import annotations

import time
import urllib.request

import pytest

from tests.conftest import (
    ARTIFACTS,
    TOKEN_TABLE,
    free_port,
    open_in_browser,
    start_server,
    stop_server,
    wait_for_app,
)

pytestmark = pytest.mark.browser

OLD, NEW = "An old sentence from the link", "Zebras gallop over the hills"
RECONNECT_S = 60.0


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def wait_reconnected(page, url: str) -> None:
    """Until the server answers and the page's websocket is back (no "Connecting" status)."""
    deadline = time.monotonic() + RECONNECT_S
    while not healthy(url):
        assert time.monotonic() < deadline, "the restarted server did not answer"
        time.sleep(0.2)
    page.wait_for_function(
        """() => { const s = document.querySelector("[data-testid='stStatusWidget']");
                   return !s || !/connect/i.test(s.innerText); }""",
        timeout=RECONNECT_S * 1000)
    page.wait_for_timeout(1500)   # the frontend's own reconnect handshake


def type_once(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Sentence A", exact=True)
    box.fill(text)
    box.press("Control+Enter")   # a text area sends its value on Ctrl+Enter (or on blur)
    wait_for_app(page)


def test_first_edit_after_a_restart_is_kept(browser):
    port = free_port()
    proc, url = start_server(port)
    page = None
    try:
        page = open_in_browser(browser, f"{url}/tokens?a={OLD.replace(' ', '+')}")
        assert OLD.split()[1] in page.locator(TOKEN_TABLE).inner_text()
        stop_server(proc)
        proc, _ = start_server(port)
        wait_reconnected(page, url)
        type_once(page, NEW)
        page.wait_for_timeout(1000)   # a snap back would come with the run's end
        box = page.get_by_role("textbox", name="Sentence A", exact=True)
        if box.input_value() != NEW:
            page.screenshot(path=str(ARTIFACTS / "reconnect-lost-edit.png"))
        assert box.input_value() == NEW
        assert "zebra" in page.locator(TOKEN_TABLE).inner_text().lower()
        assert "a=Zebras" in page.url
    finally:
        if page is not None:
            page.close()
        stop_server(proc)
