"""Script and HTML typed as a sentence, in a real Chromium, on every page: shown as text, never run.

Home is opened on the shared server by a deep link whose query (URL-encoded) is
``a=<img src=x onerror=alert(1)>&b=<script>alert(1)</script>``, and every other page from the top
bar's menus. A page passes when no dialog
fires, no exception box is drawn, the text sits unchanged in the sidebar boxes (and as token text
in a token table), and no <img src=x>, inline handler or script carrying the payload exists
anywhere in the DOM.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from core import encode
from core.similarity.choices import default_tokens
from frame.page_list import HOME, available_pages
from tests.conftest import (
    ARTIFACTS,
    TOKEN_TABLE,
    go_to_page,
    open_in_browser,
    table_rows,
    wait_for_app,
)

pytestmark = pytest.mark.browser

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
PAGES = [HOME, *available_pages()]  # read at collection time: new pages are covered as they land

# Everything the payload could have become in the DOM, in the page and in any iframe.
INJECTED_JS = """() => ({
    img_src_x: [...document.querySelectorAll('img')]
        .filter(i => i.getAttribute('src') === 'x').length,
    inline_handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
    payload_scripts: [...document.scripts]
        .filter(s => s.textContent.includes('alert(1)')).length,
})"""
NOTHING = {"img_src_x": 0, "inline_handlers": 0, "payload_scripts": 0}


def wait_for_images(page) -> None:
    """Until every image in the page and its frames has loaded or failed: an image that fails
    fires its onerror in the same task that marks it complete, so a handler the payload
    injected has run (and its dialog been recorded) by then."""
    for frame in page.frames:
        frame.wait_for_function("() => [...document.images].every(i => i.complete)",
                                timeout=30_000)


def page_url(server: str, url_path: str, query: dict[str, str]) -> str:
    return f"{server}/{url_path}?{urlencode(query)}"


def token_columns(page) -> list[list[str]]:
    """For each table or data grid with a "token" column, the tokens it shows as text."""
    found = []
    for grid in page.locator("[data-testid='stDataFrame']").all():
        headers = [h.strip() for h in grid.locator("[role='columnheader']").all_inner_texts()]
        if "token" not in headers:
            continue
        column = headers.index("token") + 1  # aria-colindex counts from 1
        cells = grid.locator(f"[role='gridcell'][aria-colindex='{column}']").all_inner_texts()
        found.append([c.strip() for c in cells])
    for selector in ("[data-testid='stTable']", TOKEN_TABLE):
        if page.locator(selector).count():
            headers, rows = table_rows(page, selector)
            if "token" in headers:
                found.append([row[headers.index("token")] for row in rows])
    return found


def assert_shown_as_text(page, spec) -> None:
    """No dialog, no exception box, the sentences unchanged in their boxes and as tokens, nothing
    injected in the page or its frames; the screenshot kept."""
    wait_for_images(page)  # an injected onerror fires as its image fails to load
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_role("textbox", name="Sentence A", exact=True).input_value() == IMG
    assert page.get_by_role("textbox", name="Sentence B (optional)").input_value() == SCRIPT
    for frame in page.frames:
        assert frame.evaluate(INJECTED_JS) == NOTHING, frame.url
    # "<" is token 1 of sentence A, so it is among the rows a grid draws first, shown as text.
    columns = token_columns(page)
    assert columns or spec.url_path != "tokens"  # the Tokens page has its table
    for tokens in columns:
        assert tokens[:2] == ["[CLS]", "<"], tokens[:20]
    page.screenshot(path=ARTIFACTS / f"xss-{spec.url_path or 'home'}.png")


def test_html_sentence_shows_as_text_on_every_page(server, browser):
    """Home opened by the deep link, then every page from the top bar's menus, as a student
    moves on with the text still in the boxes (a page load costs the browser about twice what
    a move between pages does). Every page is looked at; the failures are listed together."""
    page = open_in_browser(browser, page_url(server, HOME.url_path, {"a": IMG, "b": SCRIPT}))
    failures: list[str] = []
    try:
        for spec in PAGES:
            if spec is not HOME:
                go_to_page(page, spec.url_path)
            try:
                assert_shown_as_text(page, spec)
            except AssertionError as failure:
                failures.append(f"{spec.url_path or 'home'}: {failure}")
    finally:
        page.close()
    assert not failures, "\n".join(failures)


# Markdown a student might type; every mark is a token of its own, and the token table renders
# its cells as markdown (st.table), so each must still read as typed.
MARKDOWN_SENTENCE = "- * # > $x$ :smile: ~~s~~ | 1. _a_ `c` [l](u) \\"


def test_markdown_sentence_shows_as_tokens(server, browser, bundle):
    page = open_in_browser(browser, page_url(server, "tokens", {"a": MARKDOWN_SENTENCE}))
    try:
        assert token_columns(page) == [encode(bundle, MARKDOWN_SENTENCE).tokens]
    finally:
        page.close()


# A model name in the URL is echoed in the router's error box, which renders markdown.
MARKDOWN_NAME = "![pwn](http://127.0.0.1:9/pwn.png) [click](http://127.0.0.1:9/phish) **bold**"


def test_markdown_model_name_shows_as_text(server, browser):
    """Markdown in a shared link's model name is shown verbatim: no image, link or bold text."""
    page = open_in_browser(browser, page_url(server, "", {"model": MARKDOWN_NAME}))
    try:
        assert page.dialogs == []  # type: ignore[attr-defined]
        assert page.locator("[data-testid='stException']").count() == 0
        alert = page.locator("[data-testid='stAlert']").first
        assert alert.locator("img, a, strong").count() == 0
        assert alert.locator("code").first.inner_text() == MARKDOWN_NAME  # as typed, as code
    finally:
        page.screenshot(path=ARTIFACTS / "xss-model-name.png")
        page.close()


def test_html_model_name_is_not_rendered(server, browser):
    """Raw HTML in the model name is escaped by the markdown renderer: no element, no dialog."""
    page = open_in_browser(browser, page_url(server, "tokens", {"model": IMG}))
    try:
        wait_for_images(page)
        assert page.dialogs == []  # type: ignore[attr-defined]
        assert page.evaluate(INJECTED_JS) == NOTHING
        assert IMG in page.locator("[data-testid='stAlert']").first.inner_text()
    finally:
        page.close()


def test_similarity_pickers_follow_a_new_sentence(server, browser, bundle):
    """After a sentence with one token to pick ("Hi", zero-width only), the next sentence's token
    pickers show that sentence's own default pair, by name, as the figure uses it."""
    page = open_in_browser(browser, f"{server}/similarity?sim_section=Word+in+context")
    box = page.get_by_role("textbox", name="Sentence A", exact=True)
    pickers = [page.get_by_role("combobox", name=n) for n in ("First token", "Second token")]
    try:
        for text in ("Hi", "\u200b\u200d", "The dog saw the dog."):
            box.fill(text)
            box.press("Control+Enter")
            wait_for_app(page)
            enc = encode(bundle, text)
            want = [f"{p} {enc.tokens[p]}" for p in default_tokens(enc)]
            assert [p.input_value() for p in pickers] == want, text
        assert page.get_by_text("Both choices are the same token").count() == 0
        assert page.get_by_text(" vs ".join(want)).count() >= 1  # the curve's legend
    finally:
        page.close()


# The link of the issue: a class code that is a markdown link, in the lesson's warning.
CLASS_LINK = "[Prize: click](https://evil.example/x)"


def test_markdown_class_code_shows_as_text(server, browser):
    """/lesson?class=<a markdown link>: the warning shows the characters, and no link to it."""
    page = open_in_browser(browser, page_url(server, "lesson", {"class": CLASS_LINK}))
    try:
        alert = page.locator("[data-testid='stAlert']").filter(has_text="There is no class")
        assert alert.count() == 1
        assert CLASS_LINK in alert.inner_text()
        assert alert.locator("a").count() == 0
        assert page.locator("a[href*='evil.example']").count() == 0
    finally:
        page.screenshot(path=ARTIFACTS / "xss-class-code.png")
        page.close()
