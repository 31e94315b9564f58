"""The Encoder page in AppTest: every section for a sentence and a pair, the live checks equal
core's, any link value for the pickers, and the Chinese interface."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from components.inputs import DEFAULT_SENTENCE
from core import analyze
from core.encoder import STEP_NAMES, encoder_steps, pooler_steps
from core.encoder.ffn import feed_forward_checks
from pages.encoder.figures import STEP_TEXT
from pages.encoder.page import HEAD_KEY, LAYER_KEY, SECTION_KEY, SECTIONS, STEP_KEY, TOKEN_KEY
from tests.bad_inputs import as_read
from tests.conftest import (
    assert_clean,
    image_heatmaps,
    live_checks,
    open_app,
    plotly_values,
    scale_colours,
)
from tests.switcher import switchers

PAGE = "pages/encoder/page.py"
PAIR = {"a": "The cat sat on the mat.", "b": "It was tired."}
LABELS = [s.label for s in SECTIONS]
CJK = re.compile(r"[\u4e00-\u9fff]")


def head_of(at) -> int:
    """The head the page shows: the Attention tab's picture switcher (images), else the slider."""
    switcher = switchers(at).get(HEAD_KEY)
    return switcher.index if switcher else widget(at, "select_slider", HEAD_KEY).value


def layer_of(at) -> int:
    """The layer the page shows: the Attention tab's picture switcher (images), else the
    slider."""
    switcher = switchers(at).get(LAYER_KEY)
    return switcher.index + 1 if switcher else widget(at, "select_slider", LAYER_KEY).value


def shown_images(at) -> dict:
    """The image heatmaps a reader sees: the page's own and the pictures its switchers show."""
    found = dict(image_heatmaps(at))
    for switcher in switchers(at).values():
        found.update(switcher.heatmaps())
    return found


def widget(at, kind: str, key: str):
    return next(w for w in getattr(at, kind) if w.key == key)


def page_text(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_every_step_has_words():
    assert set(STEP_TEXT) == set(STEP_NAMES)


@pytest.mark.parametrize("query", [{}, PAIR], ids=["sentence", "pair"])
@pytest.mark.parametrize("section", LABELS)
def test_every_section_renders(section, query):
    at = open_app(PAGE, **{SECTION_KEY: section}, **query)
    assert_clean(at)
    assert at.title[0].value == "Encoder"
    assert at.get("plotly_chart") or shown_images(at), section


def test_pair_padding_and_hidden_specials():
    at = open_app(PAGE, **{SECTION_KEY: "Attention"}, **PAIR, max_length="24", padding="true")
    assert_clean(at)
    at.toggle(key="enc_hide_specials").set_value(True).run()
    assert_clean(at)
    assert "exBERT" in page_text(at)
    at = open_app(PAGE, **{SECTION_KEY: "Layer walk", STEP_KEY: "attention_scores"},
                  max_length="24", padding="true")
    assert_clean(at)
    assert "float32" in page_text(at)


@pytest.mark.parametrize("step", STEP_NAMES)
def test_checks_shown_equal_core(bundle, step):
    at = open_app(PAGE, **{SECTION_KEY: "Layer walk", LAYER_KEY: "2", STEP_KEY: step})
    assert_clean(at)
    assert layer_of(at) == 2
    expected = encoder_steps(bundle, DEFAULT_SENTENCE, layer=2).checks[step]
    [check] = live_checks(at)
    assert check.text.startswith(f"Live check passed · {step}, ours vs "), check.text
    assert f"max |difference| = {expected:.2e}," in check.text
    assert check.error <= check.tolerance


def test_pooler_check_equals_core(bundle):
    at = open_app(PAGE, **{SECTION_KEY: "Pooler"})
    assert_clean(at)
    error = pooler_steps(bundle, analyze(bundle, DEFAULT_SENTENCE)).error
    [check] = live_checks(at)
    assert check.verdict == "passed" and f"= {error:.2e}," in check.text


def test_feed_forward_checks_with_their_verdicts(bundle):
    """The block's four steps against their formulas, then the model's own intermediate and
    output modules, each with a verdict; the numbers are core's."""
    at = open_app(PAGE, **{SECTION_KEY: "Feed-forward", LAYER_KEY: "3"})
    assert_clean(at)
    steps = encoder_steps(bundle, DEFAULT_SENTENCE, layer=3)
    module = feed_forward_checks(bundle, steps)
    checks = live_checks(at)
    assert [c.verdict for c in checks] == ["passed"] * 6, [c.text for c in checks]
    expected = [steps.checks[n] for n in ("intermediate.dense", "intermediate", "output.dense",
                                          "output")] + [module.intermediate, module.output]
    assert [f"{c.error:.2e}" for c in checks] == [f"{e:.2e}" for e in expected]
    assert "layer.intermediate" in checks[4].text and "layer.output" in checks[5].text


@pytest.mark.parametrize("section", LABELS)
def test_pickers_only_where_they_change_the_tab(section):
    at = open_app(PAGE, **{SECTION_KEY: section})
    assert_clean(at)
    keys = {w.key for w in at.select_slider} | set(switchers(at))
    assert (LAYER_KEY in keys) == (section in ("Layer walk", "Attention", "Feed-forward"))
    assert (HEAD_KEY in keys) == (section in ("Layer walk", "Attention"))


def test_hidden_specials_keep_positions():
    at = open_app(PAGE, **{SECTION_KEY: "Attention"})
    at.toggle(key="enc_hide_specials").set_value(True).run()
    assert_clean(at)
    [picture] = switchers(at)[HEAD_KEY].heatmaps().values()   # the picked head's picture
    rows = picture.rows
    assert rows[0].startswith("1 ") and rows[-1].startswith(f"{len(rows)} "), rows


@pytest.mark.parametrize("bad", ["99", "-1", "abc", "inf", ""])
@pytest.mark.parametrize("section", ["Layer walk", "Attention"])
def test_bad_link_values(bad, section):
    at = open_app(PAGE, **{SECTION_KEY: section, LAYER_KEY: bad, HEAD_KEY: bad, STEP_KEY: bad,
                           TOKEN_KEY: bad})
    assert_clean(at)
    assert layer_of(at) == 1
    assert head_of(at) == 0
    if bad:
        notes = [as_read(i.value) for i in at.info]   # the asked value shows as typed
        assert any(f"There is no layer {bad}" in n for n in notes), notes
        assert any(f"There is no head {bad}" in n for n in notes), notes
    if section == "Layer walk":
        assert widget(at, "select_slider", STEP_KEY).value == STEP_NAMES[0]


@pytest.mark.parametrize("bad", ["99", "-1", "abc", ""])
def test_bad_token_link(bad):
    at = open_app(PAGE, **{SECTION_KEY: "Across layers", LAYER_KEY: bad, TOKEN_KEY: bad})
    assert_clean(at)
    assert widget(at, "selectbox", TOKEN_KEY).value == 0   # [CLS]


def test_last_layer_and_head_from_link(bundle):
    n, h = bundle.config.num_hidden_layers, bundle.config.num_attention_heads
    at = open_app(PAGE, **{LAYER_KEY: str(n), HEAD_KEY: str(h - 1)})
    assert_clean(at)
    assert layer_of(at) == n
    assert head_of(at) == h - 1
    at = open_app(PAGE, **{LAYER_KEY: str(n + 1), HEAD_KEY: str(h)})
    assert layer_of(at) == 1
    assert any(f"There is no layer {n + 1}" in as_read(i.value) for i in at.info)


@pytest.mark.parametrize("section", LABELS)
def test_chinese(section):
    at = open_app(PAGE, lang="zh", **{SECTION_KEY: section})
    assert_clean(at)
    assert CJK.search(at.title[0].value)
    assert CJK.search(at.markdown[0].value)
    assert all(CJK.search(tab.label) for tab in at.tabs), [t.label for t in at.tabs]
    assert at.get("plotly_chart") or shown_images(at)


@pytest.mark.parametrize("asked", ["3", "layer 3", "第 3 层"])
def test_layer_link_in_either_language(asked):
    at = open_app(PAGE, **{LAYER_KEY: asked, HEAD_KEY: "head 2"})
    assert_clean(at)
    assert layer_of(at) == 3
    assert head_of(at) == 2
    assert not at.info


def test_token_from_link_and_trajectory(bundle):
    at = open_app(PAGE, **{SECTION_KEY: "Across layers", TOKEN_KEY: "1 this"})
    assert_clean(at)
    assert widget(at, "selectbox", TOKEN_KEY).value == 1
    assert len(at.get("plotly_chart")) == 1


def test_the_heads_matrices_one_at_a_time_on_request():
    """Q, K, V, scores, softmax and weights × V of the picked head: hidden until asked for, then
    one at a time, each equal to core.head_slice."""
    from core import head_slice, load_model

    at = open_app("pages/encoder/page.py", a="What is your name?", enc_head="3",
                  enc_exact="true")
    assert_clean(at)
    shown_before = len(at.get("plotly_chart"))
    at.toggle(key="enc_head_steps").set_value(True).run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == shown_before + 1
    view = head_slice(encoder_steps(load_model(), "What is your name?", layer=1), 3)
    for label, want in (("key K", view.key), ("weights × V", view.weighted)):
        picker = next(w for w in at.get("button_group") if w.key == "enc_head_view")
        picker.set_value(label).run()
        spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
        np.testing.assert_allclose(plotly_values(spec["data"][0]["z"]), want[:, :64], atol=1e-4)


@pytest.mark.parametrize("step", ["attention.self.query", "attention_probs", "output"])
def test_the_walks_matrix_is_an_image_of_the_step(bundle, step):
    """As it opens, the walk draws the step as an image: its pixels the step's values (core, on
    the picked head) in plotly's colours, its rows the tokens; with the exact values on, the
    same step is the interactive figure, whose data are the values."""
    steps = encoder_steps(bundle, DEFAULT_SENTENCE, layer=2)
    value = steps.steps[step]
    matrix = (value[1] if value.ndim == 3 else value).astype(np.float64)
    square = step == "attention_probs"
    shown = matrix if square else matrix[:, :64]
    at = open_app(PAGE, **{LAYER_KEY: "2", HEAD_KEY: "1", STEP_KEY: step})
    assert_clean(at)
    assert not at.get("plotly_chart")
    [image] = shown_images(at).values()
    low, high = (0.0, 1.0) if square else (-np.abs(shown).max(), np.abs(shown).max())
    expected = scale_colours(shown, low, high, "Blues" if square else "RdBu_r")
    assert image.rgb.shape == (*shown.shape, 3)
    assert np.abs(image.rgb - expected).max() <= 3
    words = ["[CLS]", *bundle.tokenizer.tokenize(DEFAULT_SENTENCE), "[SEP]"]
    assert image.rows == [f"{i} {t}" for i, t in enumerate(words)]
    if square:   # the keys are named under their columns
        assert image.cols == image.rows
    assert "all-MiniLM-L6-v2, layer 2" in image.title
    at.toggle(key="enc_exact").set_value(True).run()
    [chart] = at.get("plotly_chart")
    z = plotly_values(json.loads(chart.proto.spec)["data"][0]["z"])
    np.testing.assert_allclose(z, shown, atol=1e-5)
    assert not image_heatmaps(at)


@pytest.mark.browser
@pytest.mark.parametrize("step", ["attention_probs", "intermediate"])
def test_a_download_holds_the_step_it_names(server, browser, bundle, step, tmp_path):
    """The layer walk's .npy download is the whole matrix of the step shown (for a per-head step,
    the picked head), made again on click from the cache by the input's key (the button keeps
    no array of its own)."""
    from urllib.parse import urlencode

    from tests.conftest import open_in_browser

    query = {**PAIR, LAYER_KEY: "2", HEAD_KEY: "3", STEP_KEY: step}
    page = open_in_browser(browser, f"{server}/encoder?{urlencode(query)}", 1400, 1000)
    try:
        button = page.locator("[data-testid='stDownloadButton'] button", has_text=".npy").first
        with page.expect_download(timeout=60_000) as info:
            button.click()
        path = tmp_path / f"{step}.npy"
        info.value.save_as(path)
        got = np.load(path)
    finally:
        page.close()
    steps = encoder_steps(bundle, PAIR["a"], PAIR["b"], layer=2).steps[step]
    expected = steps[3] if steps.ndim == 3 else steps
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_attention_layers_and_heads_are_pictures_switched_in_the_browser(bundle):
    """As images, the Attention tab sends every layer's every head (each picture is that head's
    attention in plotly's Blues on 0..1, computed here by transformers), two sliders over them,
    and opens on the link's layer and head; the downloads under it are that head's and layer's.
    A layer and head moved there (only the address knows them) are the Layer walk's too."""
    at = open_app(PAGE, **{SECTION_KEY: "Attention", LAYER_KEY: "2", HEAD_KEY: "head 5"})
    assert_clean(at)
    layers, heads = switchers(at)[LAYER_KEY], switchers(at)[HEAD_KEY]
    config = bundle.config
    n_heads = config.num_attention_heads
    assert layers.index == 1 and heads.index == 5 and heads.report
    assert layers.names == [f"layer {k}" for k in range(1, config.num_hidden_layers + 1)]
    assert heads.names == [f"head {h}" for h in range(n_heads)]
    assert heads.shown == 1 * n_heads + 5 and len(heads.pictures) == len(layers.names) * n_heads
    import torch

    with torch.no_grad():   # transformers' own attention weights, not core's
        out = bundle.model(**bundle.tokenizer(DEFAULT_SENTENCE, return_tensors="pt"),
                           output_attentions=True)
    attentions = np.stack([a[0].numpy() for a in out.attentions])
    for layer in range(config.num_hidden_layers):
        for h in range(n_heads):
            [picture] = heads.heatmaps(layer * n_heads + h).values()
            assert picture.key == f"fig_att_head_{h}"
            assert f"head {h}" in picture.title and f"layer {layer + 1}" in picture.title
            expected = scale_colours(attentions[layer][h], 0.0, 1.0, "Blues")
            assert np.abs(picture.rgb - expected).max() <= 4, (layer, h)
    buttons = [b.proto.id for b in at.get("download_button")]
    assert any(b.endswith("attention_layer2_head5") for b in buttons), buttons
    assert not any(b.endswith("attention_layer2_head0") for b in buttons)
    assert any("Every head of layer 2" in s.value for s in at.subheader)
    at.query_params[LAYER_KEY] = "layer 4"   # moved in the browser: the address says so
    at.query_params[HEAD_KEY] = "head 7"
    at.session_state[SECTION_KEY] = "Layer walk"
    at.query_params[SECTION_KEY] = "Layer walk"
    at.run()
    assert_clean(at)
    assert head_of(at) == 7 and layer_of(at) == 4


def test_the_walk_sends_every_layer_and_head_of_a_step(bundle):
    """As images, the Layer walk sends the step of every layer, and of every head for a per-head
    step (each picture that layer's and head's step, computed here by core.encoder_steps on
    its own), and opens on the link's; a step of the whole layer keeps a head slider on the
    server, for the head's matrices under it."""
    config = bundle.config
    n_layers, n_heads = config.num_hidden_layers, config.num_attention_heads
    at = open_app(PAGE, **{LAYER_KEY: "3", HEAD_KEY: "2", STEP_KEY: "attention_probs"})
    assert_clean(at)
    heads = switchers(at)[HEAD_KEY]
    assert len(heads.pictures) == n_layers * n_heads and heads.shown == 2 * n_heads + 2
    for layer in range(1, n_layers + 1):
        probs = encoder_steps(bundle, DEFAULT_SENTENCE, layer=layer).steps["attention_probs"]
        for h in range(n_heads):
            [image] = heads.heatmaps((layer - 1) * n_heads + h).values()
            assert f"layer {layer}" in image.title and f"(head {h})" in image.title
            expected = scale_colours(probs[h], 0.0, 1.0, "Blues")
            assert np.abs(image.rgb - expected).max() <= 3, (layer, h)
    at = open_app(PAGE, **{LAYER_KEY: "3", HEAD_KEY: "2", STEP_KEY: "output"})
    assert_clean(at)
    assert HEAD_KEY not in switchers(at) and len(switchers(at)[LAYER_KEY].pictures) == n_layers
    assert widget(at, "select_slider", HEAD_KEY).value == 2


def test_a_long_input_picks_its_attention_layer_on_the_server(bundle):
    """Every layer's heads of a long input would be too many pictures at once: the layer is a
    server slider there, and only that layer's heads come with the page."""
    long = " ".join(["word"] * 80)
    at = open_app(PAGE, **{SECTION_KEY: "Attention", LAYER_KEY: "3", "a": long})
    assert_clean(at)
    assert LAYER_KEY not in switchers(at)
    assert widget(at, "select_slider", LAYER_KEY).value == 3
    heads = switchers(at)[HEAD_KEY]
    assert len(heads.pictures) == bundle.config.num_attention_heads
    assert "layer 3" in next(iter(heads.heatmaps().values())).title


def test_attention_exact_values_keep_the_figure_and_its_slider(bundle):
    at = open_app(PAGE, **{SECTION_KEY: "Attention", HEAD_KEY: "3", "enc_exact": "true"})
    assert_clean(at)
    assert HEAD_KEY not in switchers(at)
    assert widget(at, "select_slider", HEAD_KEY).value == 3
    spec = json.loads(next(c for c in at.get("plotly_chart")
                           if "fig_att_head" in c.proto.id).proto.spec)
    expected = analyze(bundle, DEFAULT_SENTENCE).attentions[0][3]
    np.testing.assert_allclose(plotly_values(spec["data"][0]["z"]), expected, atol=1e-6)
