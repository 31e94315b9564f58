"""What a person sees: Chromium against a real `streamlit run` server."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlparse

import pytest

from tests.conftest import (
    ARTIFACTS,
    TOKEN_TABLE,
    open_in_browser,
    start_server,
    stop_server,
    table_rows,
    wait_for_app,
)

pytestmark = pytest.mark.browser
# The top navigation: Home as a link, the other pages in menus (sections).
NAV = "[data-testid='stTopNavLink'], [data-testid='stTopNavSection']"


def token_rows(page) -> list[list[str]]:
    """The Tokens page's table, row by row, as text."""
    return table_rows(page, TOKEN_TABLE)[1]


def test_first_visits_at_once_on_a_fresh_server_all_get_the_router(browser):
    """A class opens a freshly started server's links at the same moment: every deep link gets
    the router (sentence boxes, the top navigation), none is left in legacy pages/ mode. The very
    first session opens /tokens?a=...&b=... and sees both segments, with no "Page not found"
    dialog over the page (frame/startup.py): the teacher who opens the link first is that
    session."""
    proc, url = start_server()
    first = f"tokens?a={quote('What is your name?')}&b={quote('My name is BERT.')}"
    links = {"tokens": first, **{path: f"{path}?a={quote(f'All at once on {path}')}"
                                 for path in ["stages", "positions", "similarity"]}}
    pages = []
    try:
        for link in links.values():  # all requests out before any first run has finished
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/{link}", wait_until="commit")
            pages.append(page)
        for path, page in zip(links, pages, strict=True):
            wait_for_app(page, timeout_ms=120_000)
            typed = "What is your name?" if path == "tokens" else f"All at once on {path}"
            assert page.get_by_role("textbox", name="Sentence A").input_value() == typed, path
            assert page.locator("[data-testid='stSidebarNav']").count() == 0, path
            assert page.locator(NAV).count() >= 2, path
            assert page.locator("[data-testid='stException']").count() == 0, path
            assert page.get_by_text("Page not found").count() == 0, path
        page = pages[0]
        page.screenshot(path=str(ARTIFACTS / "tokens-deep-link.png"), full_page=True)
        rows = token_rows(page)
        assert [r[1] for r in rows][:7] == ["[CLS]", "what", "is", "your", "name", "?", "[SEP]"]
        assert [r[4] for r in rows] == ["A"] * 7 + ["B"] * 6
        box_b = page.get_by_role("textbox", name="Sentence B (optional)")
        assert box_b.input_value() == "My name is BERT."
    finally:
        for page in pages:
            page.close()
        stop_server(proc)


def test_typing_updates_the_url_and_the_link_reopens_the_view(server, browser):
    page = open_in_browser(browser, f"{server}/tokens")
    box = page.get_by_role("textbox", name="Sentence A")
    box.fill("Links carry the sentence")
    box.press("Control+Enter")
    wait_for_app(page)
    assert parse_qs(urlparse(page.url).query)["a"] == ["Links carry the sentence"]
    assert [r[1] for r in token_rows(page)][:4] == ["[CLS]", "links", "carry", "the"]
    shared = open_in_browser(browser, page.url)
    assert [r[1] for r in token_rows(shared)][:4] == ["[CLS]", "links", "carry", "the"]
    page.close()
    shared.close()


def test_home_links_to_pages(server, browser):
    page = open_in_browser(browser, server)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
    assert page.get_by_role("heading", name="BERT Embedding Explorer").count() == 1
    page.get_by_role("link", name="Tokens").first.click()
    wait_for_app(page)
    assert urlparse(page.url).path == "/tokens"
    page.close()


def test_text_too_long_for_a_link_stays_out_of_the_url_and_reloads(server, browser):
    """A 20,000-character sentence: the page analyses it, the address leaves it out (with a note
    saying so) and a reload opens a working page instead of a server error."""
    page = open_in_browser(browser, f"{server}/tokens")
    box = page.get_by_role("textbox", name="Sentence A")
    box.fill("word " * 4000)
    box.press("Control+Enter")
    wait_for_app(page)
    assert "a" not in parse_qs(urlparse(page.url).query)
    assert page.get_by_text("too long for a link").count() == 1
    assert [r[1] for r in token_rows(page)][:3] == ["[CLS]", "word", "word"]
    response = page.reload()
    assert response is not None and response.ok
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()
