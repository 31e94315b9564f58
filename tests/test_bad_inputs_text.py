"""Bad text typed into the sidebar (DESIGN.md, "Bad input"), in AppTest.

For each one: no uncaught exception, a clear message where one is due (its text is asserted), and
the app stays usable: in the same session a good sentence brings the page back exactly as a fresh
session draws it.

Every page (and every tab of a page with tabs) gets the texts that reach its own code: HTML and
markdown (a link, an image, a heading), a text over 512 tokens, and one text that mixes every
awkward kind of character (emoji, CJK, Arabic and Hebrew, a bidi override, zero-width and control
characters); every page also states one notice. The texts that only core's check reads (empty,
zero-width only, the character cap...) stop above the page's own code with core's message, the
same on every page: they run on three pages of different shapes, and each awkward kind of
character runs alone there too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from streamlit.testing.v1 import AppTest

from core import encode
from core.settings import MAX_CHARS
from core.similarity.choices import default_tokens
from tests.bad_inputs import (
    GOOD,
    IMG,
    LONG,
    MARKDOWN_VALUES,
    OVER_CAP,
    PAGES,
    ROUTER_PAGES,
    SCRIPT,
    SECTION_PAGES,
    TRUNCATED,
    assert_no_markup,
    assert_recovers,
    assert_shown_as_text,
    full_token_count,
    notices,
    page_id,
    reference,
    set_inputs,
    values,
)
from tests.conftest import assert_clean, open_app


@dataclass(frozen=True)
class TextCase:
    id: str
    a: str
    b: str = ""
    notice: str | None = None    # regex a warning or info box must match
    check: str | None = None     # extra check: "truncated", "char-cap" or "literal"
    every_page: bool = False     # reaches the page's own code (or is the page's one notice)


MIXED_A = ("BERT loves 🤗🔥👍🏽 and 👨‍👩‍👧 我爱自然语言处理 مرحبا بالعالم \u202eevil\u202c end, "
           "zero\u200bwidth jo\u200din\ufeffed, null\x00byte, bell\x07 and \x1b[31mred\x1b[0m 123")

TEXT_CASES = [
    TextCase("empty", "", notice="Type a sentence", every_page=True),
    TextCase("whitespace-only", " \t\n \u00a0\u3000 ", notice="Type a sentence"),
    TextCase("b-without-a", "", "My name is BERT.", notice="Sentence B needs a sentence A"),
    TextCase("over-512-tokens", LONG, notice="Truncated", check="truncated", every_page=True),
    TextCase("over-512-tokens-pair", LONG, LONG, notice="Truncated", check="truncated"),
    TextCase("over-char-cap", OVER_CAP, notice="characters over", check="char-cap"),
    TextCase("mixed-scripts", MIXED_A, "🎉🎉 שלום עולם, זה מבחן", every_page=True),
    TextCase("emoji", "BERT loves 🤗🔥👍🏽 and 👨‍👩‍👧 too", "🎉🎉"),
    TextCase("cjk", "我爱自然语言处理。東京タワーは高い。한국어 문장입니다"),
    TextCase("rtl-arabic-hebrew", "مرحبا بالعالم، هذا اختبار", "שלום עולם, זה מבחן"),
    TextCase("bidi-mixed", "BERT אומר hello مرحبا 123 \u202eevil\u202c end"),
    TextCase("zero-width-only", "\u200b\u200c\u200d\ufeff\u2060", notice="zero-width"),
    TextCase("zero-width-mixed", "zero\u200bwidth jo\u200din\ufeffed"),
    TextCase("control-only", "\x00\x07\x1b", notice="control"),
    TextCase("control-mixed", "null\x00byte, bell\x07 and \x1b[31mred\x1b[0m text"),
    TextCase("markup", f"# Big {MARKDOWN_VALUES['md-link']} {SCRIPT}",
             f"{IMG} {MARKDOWN_VALUES['md-image']} {MARKDOWN_VALUES['html-bold']}",
             check="literal", every_page=True),
    TextCase("script-tag", SCRIPT, IMG, check="literal"),
    TextCase("img-onerror", IMG, SCRIPT, check="literal"),
]
TEXT_RUNS = [
    pytest.param(page, case, id=f"{page_id(page)}-{case.id}")
    for page in PAGES for case in TEXT_CASES if case.every_page or page in ROUTER_PAGES
]


def check_truncation(at: AppTest, case: TextCase) -> None:
    """The page says it truncated, with the input's true length and how many tokens were cut."""
    found = [m for w in notices(at) if (m := TRUNCATED.search(w))]
    assert found, notices(at)
    full, limit, cut = (int(g.replace(",", "")) for g in found[0].groups())
    assert full == full_token_count(case.a, case.b or None)
    assert limit <= 512 and cut == full - limit > 0


def check_literal(at: AppTest, case: TextCase) -> None:
    """The HTML and markdown are kept as typed and reach no element that would render them."""
    assert at.sidebar.text_area(key="a").value == case.a
    assert at.sidebar.text_area(key="b").value == case.b
    assert_no_markup(at)
    for value in MARKDOWN_VALUES.values():
        if value in case.a + case.b:
            assert_shown_as_text(at, value)
    for frame in (d.value for d in [*at.dataframe, *at.table]):
        if "token" in frame.columns:  # the brackets are tokens of their own, shown as text
            assert "<" in set(frame["token"]) and ">" in set(frame["token"])


@pytest.mark.parametrize(("page", "case"), TEXT_RUNS)
def test_bad_text(page, case):
    at = open_app(page)
    assert_clean(at)
    set_inputs(at, case.a, case.b)
    assert_clean(at)
    assert not values(at, "error"), values(at, "error")
    if case.notice:
        assert any(re.search(case.notice, n) for n in notices(at)), notices(at)
    if case.check == "truncated":
        check_truncation(at, case)
    elif case.check == "char-cap":
        cut = len(case.a) - MAX_CHARS
        assert any(f"{cut:,} characters over" in n for n in notices(at)), notices(at)
        check_truncation(at, case)
    elif case.check == "literal":
        check_literal(at, case)
    if case.b and case.notice and "Sentence B" in case.notice:
        # Typing A next to the lone B makes a valid pair at once.
        at.sidebar.text_area(key="a").set_value(GOOD).run()
        assert_clean(at)
        assert not values(at, "warning") and not values(at, "error")
    assert_recovers(at, page)


# Texts that reach every section (the rest stop above the tabs with a notice), run in each tab
# that is not open by default: the default tab is covered by test_bad_text. The pair over 512
# tokens: the tabs that read B (sentences, pairs, next sentence) truncate it too.
SECTION_TEXT_CASES = [case for case in TEXT_CASES
                      if case.id in {"over-512-tokens-pair", "mixed-scripts", "markup"}]


@pytest.mark.parametrize("case", SECTION_TEXT_CASES, ids=lambda case: case.id)
@pytest.mark.parametrize("page", SECTION_PAGES, ids=page_id)
def test_bad_text_in_every_section(page, case):
    sections = reference(page).sections
    assert sections and len(sections.labels) > 1, f"{page} draws no section tabs"
    key = sections.key
    for label in sections.labels[1:]:
        at = open_app(page, **{key: label})
        assert_clean(at)
        set_inputs(at, case.a, case.b)
        assert_clean(at)
        assert not values(at, "error"), (label, values(at, "error"))
        assert_no_markup(at)
        if case.check == "truncated":
            check_truncation(at, case)
        elif case.check == "literal":
            check_literal(at, case)
        assert_recovers(at, page, label)


def test_similarity_picks_follow_a_new_text(bundle):
    """Texts that leave one token to pick ("Hi", zero-width only) must not pin both token pickers
    of the Similarity page to one token for the texts typed after them: each new text gets its own
    default pair."""
    page = "pages/similarity/page.py"
    at = open_app(page, sim_section="Word in context")
    for text in ("Hi", "\u200b\u200d", GOOD, "\x07", "Hi", "The dog saw the dog."):
        set_inputs(at, text)
        assert_clean(at)
        want = list(default_tokens(encode(bundle, text)))
        assert [at.selectbox(key=k).value for k in ("sim_i", "sim_j")] == want, repr(text)
    assert want[0] != want[1]
    assert not any("same token" in n for n in notices(at))
