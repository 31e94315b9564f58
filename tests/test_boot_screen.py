"""The loading card in every page's HTML (frame/boot_screen.py): the middleware on its own,
then on a fresh server in Chromium, from the first paint until the app has drawn."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from frame.boot_screen import BootScreen, boot_html
from tests.conftest import ARTIFACTS, blank_tab, run_async, start_server, stop_server

PAGE = b"<!DOCTYPE html><html><head></head><body><div id=\"root\"></div></body></html>"


def serve(path: str, body: bytes, content_type: bytes, query: bytes = b"",
          accept: bytes = b"gzip") -> tuple[dict, bytes, list]:
    """Run the middleware around a tiny app that answers ``body`` in two chunks."""
    seen_headers: list = []

    async def inner(scope, receive, send):
        seen_headers.extend(scope["headers"])
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", content_type),
                                (b"content-length", str(len(body)).encode())]})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:], "more_body": False})

    messages: list[dict] = []

    async def send(message):
        messages.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": "http", "method": "GET", "path": path, "query_string": query,
             "headers": [(b"accept-encoding", accept), (b"host", b"x")]}
    run_async(BootScreen(inner)(scope, receive, send))   # beside sync Playwright's loop
    start = next(m for m in messages if m["type"] == "http.response.start")
    out = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    SENT.clear()
    SENT.extend(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    return dict(start["headers"]), out, seen_headers


SENT: list[bytes] = []   # the last ``serve``'s body messages, as sent


def test_a_page_gets_the_card_before_the_end_of_its_body():
    headers, out, inner_headers = serve("/stages", PAGE, b"text/html; charset=utf-8")
    assert out.startswith(PAGE[:-len(b"</body></html>")])
    assert out.endswith(b"</body></html>") and b'id="boot-screen"' in out
    assert int(headers[b"content-length"]) == len(out)
    # Asked for uncompressed, so the card can be added.
    assert all(k != b"accept-encoding" for k, _v in inner_headers)


def test_the_link_language_comes_first():
    _h, out, _s = serve("/", PAGE, b"text/html", query=b"a=x&lang=zh")
    text = out.decode()
    assert text.index("正在加载") < text.index("Loading")
    assert "BERT 嵌入探索器" in text
    _h, out, _s = serve("/", PAGE, b"text/html", query=b"lang=%3Cscript%3E")
    assert out.decode().index("Loading") < out.decode().index("正在加载")


@pytest.mark.parametrize(("path", "content_type"), [
    ("/_stcore/health", b"text/html"),          # Streamlit's own routes: never touched
    ("/static/js/index.js", b"text/javascript"),
    ("/tokens", b"application/json"),           # not HTML
])
def test_everything_else_passes_untouched(path, content_type):
    headers, out, inner_headers = serve(path, PAGE, content_type)
    assert out == PAGE and headers[b"content-length"] == str(len(PAGE)).encode()


def test_the_card_is_fixed_text():
    card = boot_html("en")
    assert "<script>" in card and card.count("<script>") == 1
    assert "Loading…" in card and "正在加载…" in card and 'role="status"' in card


@pytest.mark.browser
def test_a_fresh_servers_first_visitor_sees_the_card_at_the_first_paint(browser):
    """On a server just started, the deep link's first HTML already holds the card, so the first
    paint shows it (never a blank page), and the card is gone once the page has drawn. How soon
    it shows is timed in bench/app_bench.py (a timed assertion here fails on a busy machine)."""
    proc, url = start_server()
    page = blank_tab(browser, width=1024, height=768)
    try:
        response = page.goto(f"{url}/tokens?a={quote('What is your name?')}", wait_until="commit")
        assert response is not None and b'id="boot-screen"' in response.body()
        page.wait_for_selector("#boot-screen", state="visible", timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "boot-screen.png"))
        assert page.get_by_text("Loading…").is_visible()
        # /tokens' card carries the link's tokens (frame/boot_tokens.py), in the first HTML.
        card_table = "#boot-screen [data-table='boot-tokens']"
        assert page.locator(f"{card_table} td").all_inner_texts()[:2] == ["0", "[CLS]"]
        assert "what" in page.locator(card_table).inner_text()
        page.locator("[data-testid='stMain'] h1").first.wait_for(timeout=90_000)
        page.wait_for_selector("#boot-screen", state="detached", timeout=5_000)
        page.get_by_text("[CLS]").first.wait_for(timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        page.close()
        stop_server(proc)


def test_the_cards_words_are_the_catalogs():
    """The card writes its words out (no catalog to compile on a fresh server's first request);
    they must say what the interface says."""
    from components.i18n import LANGUAGES, translations
    from frame.boot_screen import WORDS

    assert set(WORDS) == set(LANGUAGES)
    for code, (name, loading) in WORDS.items():
        assert translations(code).gettext("BERT Embedding Explorer") == name
        assert translations(code).gettext("Loading…") == loading
