"""After a server restart the browser reconnects with a new session: its first edit must be kept.

The server is stopped and started again on the same port under an open page; Chromium
reconnects by itself. Then one new sentence is typed, once. Before the fix the new session's
first run seeded the box from the link (the old text) over the value the browser sent, so the
box snapped back and the edit was lost (components/inputs.py, draw_shared_inputs). The same
behind deploy/haproxy.cfg with the tab's replica stopped: the tab reconnects to the other one.
"""

from __future__ import annotations

import os
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.server import healthy
from tests.conftest import (
    ARTIFACTS,
    TOKEN_TABLE,
    free_port,
    open_in_browser,
    start_server,
    stop_server,
    wait_for_app,
)
from tests.test_deploy_proxy import HAPROXY, cluster  # noqa: F401   (the proxy's fixture)

pytestmark = pytest.mark.browser

OLD, NEW = "An old sentence from the link", "Zebras gallop over the hills"
RECONNECT_S = 60.0
CONNECTING_JS = """(s => !!s && /connect/i.test(s.innerText))(
    document.querySelector("[data-testid='stStatusWidget']"))"""


def wait_reconnected(page, url: str) -> None:
    """Until the server answers and the page's websocket is back (no "Connecting" status)."""
    deadline = time.monotonic() + RECONNECT_S
    while not healthy(url):
        assert time.monotonic() < deadline, "the restarted server did not answer"
        time.sleep(0.2)
    try:   # the tab notices the closed websocket first (a quick reconnect may hide it)
        page.wait_for_function(f"() => {CONNECTING_JS}", timeout=10_000)
    except PlaywrightTimeout:
        pass
    page.wait_for_function(f"() => !({CONNECTING_JS})", timeout=RECONNECT_S * 1000)
    page.wait_for_timeout(1500)   # the frontend's own reconnect handshake


def type_once(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Sentence A", exact=True)
    box.fill(text)
    box.press("Control+Enter")   # a text area sends its value on Ctrl+Enter (or on blur)
    wait_for_app(page)


def assert_edit_kept(page, name: str) -> None:
    type_once(page, NEW)
    page.wait_for_timeout(1000)   # a snap back would come with the run's end
    box = page.get_by_role("textbox", name="Sentence A", exact=True)
    if box.input_value() != NEW:
        page.screenshot(path=str(ARTIFACTS / f"reconnect-lost-edit-{name}.png"))
    assert box.input_value() == NEW
    assert "zebra" in page.locator(TOKEN_TABLE).inner_text().lower()
    assert "a=Zebras" in page.url


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
        assert_edit_kept(page, "restart")
    finally:
        if page is not None:
            page.close()
        stop_server(proc)


@pytest.mark.skipif(not os.path.exists(HAPROXY), reason="HAProxy is not installed")
def test_first_edit_after_a_failover_is_kept(browser, cluster):  # noqa: F811
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"{cluster.proxy}/tokens?a={OLD.replace(' ', '+')}")
        wait_for_app(page)
        replica = next(c["value"] for c in context.cookies() if c["name"] == "SERVERID")
        stop_server(cluster.procs[replica])   # the tab's replica; the proxy redispatches
        wait_reconnected(page, cluster.proxy)
        assert_edit_kept(page, "failover")
        assert next(c["value"] for c in context.cookies() if c["name"] == "SERVERID") != replica
    finally:
        context.close()
