"""Garbage in a shared link (DESIGN.md, "Bad input"), in AppTest: every value falls back to a
sensible default without a stack trace, and a value the page repeats on screen is shown as the
characters it is, never as a link, an image, a heading or HTML.

Each kind of URL value gets the whole list of garbage once: every kind of Streamlit widget bound
to the URL and every shared helper of components/ that reads the link (components.url_values,
components.controls, components.sections, the exact-values toggle), on the first tab that draws
it (found by running every tab, not by a list kept here). Every tab of every page then gets the
values that reach its own code differently (a negative number, an overflowing one, a markdown
link), and every place that repeats a link's value gets each kind of markup.
"""

from __future__ import annotations

import functools
import re

import pytest
from streamlit.testing.v1 import AppTest

from core import DEFAULT_MODEL
from tests.bad_inputs import (
    GOOD,
    HOME,
    IMG,
    KEYED_PAGES,
    MARKDOWN_VALUES,
    ROUTER_PAGES,
    SCRIPT,
    SECTION_PAGES,
    URL_HELPERS,
    as_read,
    assert_bounded_widgets,
    assert_no_markup,
    assert_recovers,
    assert_shown_as_text,
    code_spans,
    notices,
    open_with_query,
    page_id,
    reference,
    set_inputs,
    signature,
    values,
    view,
    views,
)
from tests.conftest import assert_clean, open_app

REFUSED = "is not one of the models this server offers"

# ---------------------------------------------------------------- the shared keys, router pages

QUERY_CASES = [
    pytest.param({"a": ""}, "notice", "Type a sentence", id="a-empty"),
    pytest.param({"a": "", "b": "My name is BERT."}, "notice", "Sentence B needs a sentence A",
                 id="b-without-a"),
    pytest.param({"model": ""}, None, None, id="model-empty"),
    pytest.param({"foo": "bar", "page": "nowhere", "embed_options": "x", "zzz": ""},
                 None, None, id="unknown-params"),
    pytest.param({"max_length": "abc", "truncation": "maybe", "padding": "-5"},
                 None, None, id="tokens-keys-elsewhere"),
    pytest.param({"a": "y " * 15_000}, "notice", "characters over", id="long-a"),
    pytest.param({"a": "ok", "b": "z " * 15_000}, "notice", "characters over", id="long-b"),
    pytest.param({"a": ["first sentence", "second sentence"]}, None, None, id="duplicate-a"),
    # A repeated key: the last value wins, as in the browser.
    pytest.param({"model": [DEFAULT_MODEL, "no-such-model"]}, "error", REFUSED,
                 id="duplicate-model"),
    pytest.param({"a": "\x00"}, "notice", "zero-width", id="nul-a"),
    pytest.param({"a": "%00%ZZ%", "b": "%%"}, None, None, id="percent-garbage"),
    pytest.param({"a": IMG, "b": SCRIPT}, None, None, id="html-a-b"),
    pytest.param({"model": "m" * 5000}, "error", REFUSED, id="long-model"),
]


@pytest.mark.parametrize(("query", "kind", "message"), QUERY_CASES)
@pytest.mark.parametrize("page", ROUTER_PAGES, ids=page_id)
def test_query_garbage(closed_hub, page, query, kind, message):
    at = open_with_query(page, query)
    assert_clean(at)
    found = notices(at) if kind == "notice" else values(at, kind) if kind else []
    if kind:
        assert any(re.search(message, v) for v in found), found
    if kind != "error":
        assert not values(at, "error"), values(at, "error")
    assert_no_markup(at)
    assert_bounded_widgets(at)
    if kind == "error":  # the bad model name stays picked until the user picks another
        at.sidebar.selectbox(key="model").set_value(DEFAULT_MODEL).run()
    assert_recovers(at, page)


# ---------------------------------------------------------------- each kind of URL value, once

# Numbers a link can carry that no number box takes: each must fall back, never raise.
URL_NUMBERS = ["inf", "-inf", "1e309", "9" * 400, "nan", "-1e309", "0x10", "1_000"]
NUMBER_GARBAGE = ["-5", "999999", "NaN", *URL_NUMBERS]
TEXT_GARBAGE = ["abc", "", "x" * 3000, *MARKDOWN_VALUES.values()]
# Kinds that read a number from the link (the others only look the value up, or keep it as text).
NUMBER_KINDS = {"number_input", "slider", "select_slider", "whole_number", "number_in_link",
                "option_in_link"}


@functools.cache
def kind_views() -> dict[tuple[str, str | None], frozenset[str]]:
    """For each kind of URL value some tab draws, one tab that draws it: the tabs with the most
    kinds not yet covered first, so a few tabs cover every kind."""
    every = {(page, label): view(page, label).kinds
             for page in KEYED_PAGES for label in views(page)}
    left = set().union(*every.values())
    chosen: dict[tuple[str, str | None], frozenset[str]] = {}
    while left:
        where = max(every, key=lambda w: len(every[w] & left))
        chosen[where] = frozenset(every[where] & left)
        left -= every[where]
    return chosen


def assert_as_text(at: AppTest, value: str) -> None:
    """Markup from the link reaches the screen as text (a number or plain word may be repeated
    as it is: "got -5")."""
    if value in MARKDOWN_VALUES.values():
        assert_shown_as_text(at, value)
    else:
        assert_no_markup(at)


def garbage_in_view(page: str, label: str | None, value: str) -> AppTest:
    """A fresh session of a tab with every URL key of its page set to ``value``: it draws, keeps
    its numbers in range and shows the value as text; a good sentence then brings it back."""
    ref = reference(page)
    keys = set(ref.bound_keys) | set(view(page, label).keys)
    query = dict.fromkeys(keys, value) | ({ref.sections.key: label} if label else {})
    at = open_app(page, **query)
    assert_clean(at)
    assert values(at, "title"), (label, value[:20])
    assert_as_text(at, value)
    assert_bounded_widgets(at)
    set_inputs(at, GOOD)
    assert_clean(at)
    assert values(at, "title"), (label, value[:20])
    return at


@pytest.mark.parametrize("value", NUMBER_GARBAGE + TEXT_GARBAGE, ids=lambda v: v[:12] or "empty")
def test_each_kind_of_url_value_with_garbage(value):
    chosen = kind_views()
    helpers = {name for _module, name in URL_HELPERS}
    assert helpers <= set().union(*chosen.values()), "a shared URL helper is run by no tab"
    for (page, label), kinds in chosen.items():
        if value in NUMBER_GARBAGE and not kinds & NUMBER_KINDS:
            continue
        garbage_in_view(page, label, value)


# Values that reach a page's own code differently: a number out of range, one that overflows
# (int() and float() disagree), and text with markup in it.
EVERY_VIEW_GARBAGE = ["-5", "1e309", MARKDOWN_VALUES["md-link"]]


@pytest.mark.parametrize("page", KEYED_PAGES, ids=page_id)
def test_every_tab_with_garbage(page):
    """Each tab of the page with all its URL keys given each of EVERY_VIEW_GARBAGE."""
    assert reference(page).bound_keys, f"{page} draws none of the URL-bound widgets its file names"
    for label in views(page):
        if not view(page, label).keys and label is not None:
            continue   # the tab reads nothing from the link
        for value in EVERY_VIEW_GARBAGE:
            garbage_in_view(page, label, value)


SECTION_GARBAGE = ["abc", "-5", "", IMG, "x" * 3000, *URL_NUMBERS[:4],
                   MARKDOWN_VALUES["md-link"]]


def test_section_key_with_garbage():
    """A tab name no tab has opens the default tab (components.sections, one helper for every
    page with tabs: tried on the first)."""
    page = SECTION_PAGES[0]
    ref = reference(page)
    assert ref.sections, f"{page} draws no section tabs"
    for value in SECTION_GARBAGE:
        at = open_app(page, **{ref.sections.key: value})
        assert_clean(at)
        assert_as_text(at, value)
        assert signature(set_inputs(at, GOOD)) == ref.signature, value[:20]


# ---------------------------------------------------------------- values a page repeats

# Every place that repeats a link's value in a message: the page, the link's keys and the words
# the message must hold (besides the value, shown verbatim in a code span).
ECHOES = [
    pytest.param(HOME.path, {"model": "{v}"}, [REFUSED], id="model"),
    pytest.param("pages/lesson/page.py", {"class": "{v}"}, ["There is no class"], id="class"),
    pytest.param("pages/encoder/page.py", {"enc_layer": "{v}", "enc_head": "{v}"},
                 ["There is no layer", "There is no head"], id="encoder-layer-head"),
    pytest.param("pages/attribution/page.py", {"att_target": "{v}", "att_layer": "{v}"},
                 ["There is no quantity", "There is no layer"], id="attribution-target-layer"),
    pytest.param("pages/attribution/page.py", {"att_token": "{v}"}, ["There is no token"],
                 id="attribution-token"),
    pytest.param("pages/pretraining/page.py", {"pre_seed": "{v}", "pre_prob": "{v}"},
                 ["is not a number from 0 ", "is not a number from 0.05"],
                 id="pretraining-numbers"),
    pytest.param("pages/pairs/page.py", {"pr_layer": "{v}", "b": "My name is BERT."},
                 ["There is no layer"], id="pairs-layer"),
    pytest.param("pages/compare/page.py", {"cmp_model": "{v}", "cmp_corpus": "A + B"},
                 ["is not one of the models this server offers"], id="compare-model"),
]


@pytest.mark.parametrize("name", list(MARKDOWN_VALUES))
@pytest.mark.parametrize(("page", "query", "messages"), ECHOES)
def test_a_repeated_link_value_is_text(closed_hub, page, query, messages, name):
    """The message says what the link asked for, the value shown as the characters it is (a code
    span: no link, image, heading or HTML), and nothing else of it reaches markdown."""
    value = MARKDOWN_VALUES[name]
    at = open_with_query(page, {k: v.format(v=value) for k, v in query.items()})
    assert_clean(at)
    boxes = [e.proto.body for e in [*at.error, *at.warning, *at.info]]  # markdown source
    for words in messages:
        said = [body for body in boxes if words in as_read(body)]
        assert said, (words, [as_read(b) for b in boxes])
        shown = [span for body in said for span in code_spans(body)]
        assert any(span and value.startswith(span) for span in shown), (words, said)
    assert_shown_as_text(at, value)
