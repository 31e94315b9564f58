"""The Attribution page in AppTest: the bars equal core's numbers, integrated gradients and flow
on their buttons, the blank-out verdict computed from core, the messages for what a target or a
length cannot take, garbage in the link, and the Chinese interface. The shared bad-input tests
(tests/test_bad_inputs.py) cover every registered page, this one included."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from components.i18n import _, set_language
from core import analyze
from core.attribution import (
    Method,
    Target,
    agreement,
    attention_flow,
    attention_methods,
    best_agreement,
    blank_out,
    plan_target,
    shares,
    token_importance,
)
from core.similarity.sentences import sentence_embedding
from pages.attribution.page import EXPLANATION, SECTIONS, TARGET_TITLES, TITLE
from pages.attribution.records import METHOD_TITLES
from tests.conftest import assert_clean, open_app
from tests.switcher import switchers

PAGE = "pages/attribution/page.py"
IMPORTANCE, BLANK_OUT = (s.label for s in SECTIONS)
A = "The cat sat on the warm mat by the door."
B = "A dog slept on the rug near the fire."
ROW = re.compile(r'<td class="tok" title="[^"]*">(.*?)</td>(.*?)</tr>')
VALUE = re.compile(r'<span class="val">([^<]*)</span>')


def open_page(**query: str):
    return open_app(PAGE, **query)


def bodies(at) -> list[str]:
    """The page's HTML blocks, and the picture the layer slider shows (every layer's table is
    sent to the browser, which switches between them)."""
    shown = [s.pictures[s.index] for s in switchers(at).values()]
    return [h.proto.body for h in at.get("html")] + shown


def table(at, name: str, body: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """(column titles, tokens, values (N, columns)) of one bar table on the page (or in
    ``body``)."""
    body = body or next(b for b in bodies(at) if f'data-table="{name}"' in b)
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", body).group(1)
    titles = [html.unescape(t) for t in re.findall(r"<th[^>]*>(.*?)</th>", head)][2:]
    tokens, values = [], []
    for token, cells in ROW.findall(body):
        tokens.append(html.unescape(token))
        values.append([float(v) if v != "–" else np.nan for v in VALUE.findall(cells)])
    return titles, tokens, np.array(values)


def messages(at) -> str:
    """Every notice, its markdown escapes taken out (as a reader sees it)."""
    return " ".join(e.value for kind in ("warning", "info", "error")
                    for e in getattr(at, kind)).replace("\\", "")


def click(at, label: str):
    next(b for b in at.button if b.label == label).click().run()
    return at


def test_one_sentence_bars_equal_core(bundle):
    at = open_page(a=A, att_layer="3")
    assert_clean(at)
    titles, tokens, values = table(at, "importance")
    assert titles == [METHOD_TITLES[m] for m in ("raw attention", "rollout", "norm-weighted")]
    methods = attention_methods(bundle, analyze(bundle, A, attentions=True))
    assert tokens == analyze(bundle, A).tokens
    # The default for one sentence: its vector's cosine, so the mean over every output token.
    expected = [token_importance(methods.raw, None)[2], token_importance(methods.rollout, None)[2],
                shares(token_importance(methods.norm, None))[2]]
    np.testing.assert_allclose(values, np.stack(expected, axis=1), atol=5e-4)


def test_every_layer_table_is_sent_and_the_link_opens_on_its_layer(bundle):
    """The layer slider switches in the browser: each layer's table is core's importance at
    that layer, under its heading (as text), and the page opens on the link's layer; the move
    is reported (to the slider's own fragment) so a button's rerun keeps the layer."""
    at = open_page(a=A, att_layer="layer 2")
    assert_clean(at)
    layers = switchers(at)["att_layer"]
    assert layers.names == [f"layer {n}" for n in range(1, 7)] and layers.report
    assert layers.value == "layer 2" and layers.label == "Encoder layer"
    methods = attention_methods(bundle, analyze(bundle, A, attentions=True))
    raw = token_importance(methods.raw, None)
    rollout = token_importance(methods.rollout, None)
    norm = shares(token_importance(methods.norm, None))
    for k, picture in enumerate(layers.pictures):
        _titles, _tokens, values = table(at, "importance", picture)
        np.testing.assert_allclose(values, np.stack([raw[k], rollout[k], norm[k]], axis=1),
                                   atol=5e-4)
        assert layers.words(k) == (f"What the mean over all tokens draws on at layer {k + 1} · "
                                   "all-MiniLM-L6-v2")


@pytest.mark.parametrize(("lang", "line"), [("en", "There is no layer"), ("zh", "这里没有")])
def test_a_layer_the_model_lacks_is_said_in_one_line(lang: str, line: str):
    at = open_page(a=A, att_layer="layer 99", lang=lang)
    assert_clean(at)
    [said] = [i.value for i in at.info if "layer 99" in i.value]
    assert line in said
    assert switchers(at)["att_layer"].index == 5     # the last layer, the default


def test_pair_runs_a_and_b_separately_and_ig_is_the_models_figure(bundle):
    at = open_page(a=A, b=B, att_steps="20")
    assert_clean(at)
    _titles, tokens, _values = table(at, "importance")
    assert tokens == analyze(bundle, A).tokens + analyze(bundle, B).tokens
    click(at, "Compute integrated gradients")
    assert_clean(at)
    titles, _tokens, values = table(at, "importance")
    assert titles[-1] == "integrated gradients"
    line = next(m.value for m in at.markdown if m.value.startswith("Integrated gradients of"))
    figure = sentence_embedding(analyze(bundle, A)) @ sentence_embedding(analyze(bundle, B))
    target, baseline = (float(x) for x in re.findall(r"(-?\d\.\d{4}) for", line))
    assert target == pytest.approx(figure, abs=1e-4)
    assert np.nansum(values[:, -1]) == pytest.approx(target - baseline, rel=0.05, abs=0.01)
    at.run()   # a rerun keeps what was asked for, from the cache
    assert table(at, "importance")[0][-1] == "integrated gradients"


def test_flow_on_its_button_and_past_its_limit(bundle):
    at = open_page(a=A, att_token="0")
    click(at, "Compute attention flow")
    assert_clean(at)
    titles, _tokens, values = table(at, "importance")
    # The column is core's attention_flow of [CLS], at the layer shown (the last by default).
    flow = attention_flow(bundle, A, rows=[0])[-1, 0]
    np.testing.assert_allclose(values[:, titles.index("flow")], flow, atol=5e-4)
    long = " ".join(["word"] * 60)   # the mean over tokens: limit 32 on this model
    at = open_page(a=long)
    click(at, "Compute attention flow")
    assert_clean(at)
    assert re.search(r"up to \S*32\S* tokens", messages(at)), messages(at)
    assert "flow" not in table(at, "importance")[0]


def test_blank_out_verdict_is_computed_from_core(bundle):
    at = open_page(a=A, att_section=BLANK_OUT)
    assert_clean(at)
    plan = plan_target(bundle, Target.SENTENCE_COSINE, A)
    change = blank_out(bundle, plan).change
    methods = attention_methods(bundle, analyze(bundle, A, attentions=True))
    importances = {m: token_importance(x, None) for m, x in methods.matrices().items()}
    importances["norm-weighted"] = shares(importances["norm-weighted"])
    best = best_agreement(agreement(importances, change))
    verdict = next(m.value for m in at.markdown if m.value.startswith("**On this input"))
    assert f"{best.method} at layer {best.layer}" in verdict and f"{best.rho:+.2f}" in verdict
    assert "Abnar & Zuidema (2020)" in " ".join(m.value for m in at.markdown)
    rows = at.get("html")
    assert any('data-table="agreement"' in h.proto.body for h in rows)
    _titles, tokens, values = table(at, "blank_out")
    np.testing.assert_allclose(values[:, 0], change, atol=1e-4)


@pytest.mark.parametrize(("query", "words"), [
    ({"att_target": "mask_probability", "a": "Fill [MASK] in."}, "bert-base-uncased"),
    ({"att_target": "is_next", "b": B}, "bert-base-uncased"),
    ({"att_target": Target.PAIR_COSINE}, "sentence B"),
])
def test_a_target_the_model_or_input_cannot_take_says_what_to_do(query, words):
    at = open_page(**query)
    assert_clean(at)
    assert words in messages(at), messages(at)


@pytest.mark.parametrize("query", [
    {"att_layer": "99"}, {"att_token": "zz"}, {"att_target": "<img src=x onerror=alert(1)>"},
    {"att_steps": "1e309"}, {"att_methods": "nonsense"}, {"att_section": "nowhere"},
])
def test_garbage_in_the_link(query):
    at = open_page(**query)
    assert_clean(at)
    assert at.title


def test_a_link_in_chinese_labels_opens_the_same_view():
    set_language("zh")
    try:
        label = _("layer {n}").format(n=2)
    finally:
        set_language("en")
    at = open_page(a=A, att_layer=label)
    assert_clean(at)
    assert switchers(at)["att_layer"].value == "layer 2"   # read, shown in English


# Links made before the methods and targets were named kinds: the widget wrote each label (in
# the reader's language), the Pairs page links with the target's value.
OLD_METHOD_LINKS = [("rollout", {Method.ROLLOUT}), ("raw attention", {Method.RAW}),
                    ("norm-weighted", {Method.NORM}), ("integrated gradients", {Method.GRADIENTS}),
                    ("flow", {Method.FLOW})]


@pytest.mark.parametrize(("value", "methods"), OLD_METHOD_LINKS, ids=str)
def test_an_old_link_selects_the_same_method(value, methods):
    at = open_page(a=A, att_methods=value)
    assert_clean(at)
    assert set(at.multiselect(key="att_methods").value) == methods
    if methods <= {Method.RAW, Method.ROLLOUT, Method.NORM}:
        assert table(at, "importance")[0] == [value]


@pytest.mark.parametrize(("value", "target"), [
    ("pair_cosine", Target.PAIR_COSINE), ("cosine of A and B", Target.PAIR_COSINE),
    ("sentence_cosine", Target.SENTENCE_COSINE), ("the sentence vector", Target.SENTENCE_COSINE),
])
def test_an_old_link_selects_the_same_target(value, target):
    at = open_page(a=A, b=B, att_target=value)
    assert_clean(at)
    assert at.selectbox(key="att_target").value == target
    assert at.selectbox(key="att_target").value == target.value   # the same words as before


def test_an_old_link_in_chinese_labels_selects_the_same_method_and_target():
    set_language("zh")
    try:
        method, target = _(METHOD_TITLES[Method.ROLLOUT]), _(TARGET_TITLES[Target.PAIR_COSINE])
    finally:
        set_language("en")
    assert method != "rollout" and target != "cosine of A and B"
    at = open_page(lang="zh", a=A, b=B, att_methods=method, att_target=target)
    assert_clean(at)
    assert at.multiselect(key="att_methods").value == [Method.ROLLOUT]
    assert at.selectbox(key="att_target").value == Target.PAIR_COSINE


def test_chinese_interface():
    at = open_page(lang="zh", a=A)
    assert_clean(at)
    set_language("zh")
    try:
        assert at.title[0].value == _(TITLE)
        assert any(m.value == _(EXPLANATION) for m in at.markdown)
        titles = table(at, "importance")[0]
        assert titles[0] == _(METHOD_TITLES[Method.RAW]) != METHOD_TITLES[Method.RAW]
    finally:
        set_language("en")


def test_mask_probability_on_a_checkpoint_with_heads(folder_models_allowed, bundle):
    from tests.pretraining_folders import make_pretraining_folder
    folder = folder_models_allowed / "tiny-pretraining"
    make_pretraining_folder(folder, bundle.tokenizer)
    text = "The capital of France is [MASK]."
    at = open_page(model=str(folder), a=text, att_target="mask_probability", att_steps="10")
    assert_clean(at)
    assert "bert-base-uncased" not in messages(at)
    mask = bundle.tokenizer(text)["input_ids"].index(bundle.tokenizer.mask_token_id)
    assert at.selectbox(key="att_token").value == str(mask)   # the [MASK] by default
    click(at, "Compute integrated gradients")
    assert_clean(at)
    assert any(m.value.startswith("Integrated gradients of probability at [MASK]")
               for m in at.markdown)


def test_padded_input_shows_its_real_tokens_only(bundle):
    at = open_page(a=A, max_length="32", padding="true", att_target=Target.SENTENCE_COSINE)
    assert_clean(at)
    _titles, tokens, _values = table(at, "importance")
    assert tokens == analyze(bundle, A).tokens and "[PAD]" not in tokens
