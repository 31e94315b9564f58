"""The Similarity page: AppTest runs checked against the core's numbers, and one Chromium look."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import numpy as np
import pytest

from core import analyze, encode
from core.anisotropy import CorpusStats, anisotropy_table, corpus_statistics
from core.sentences import compare_sentences
from core.similarity import TokenRef, token_curve, token_matrix, top_dimensions
from core.similarity_choices import depth_stages, token_options
from tests.conftest import ARTIFACTS, assert_clean, open_app, open_in_browser, plotly_values

PAGE = "pages/similarity.py"
RIVER = "I sat on the bank of the river."
MONEY = "I deposited money at the bank."
SINGLE = "The cat saw the dog and the dog saw the cat."


def figures(at) -> dict[str, dict]:
    """The page's figures by the ``meta`` tag each one carries."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return {spec["layout"]["meta"]: spec for spec in specs}


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t.get("name") == name)


def widget(at, kind: str, key: str):
    return next(w for w in getattr(at, kind) if w.key == key)


@pytest.fixture(scope="module")
def stats(bundle) -> CorpusStats:
    return corpus_statistics(bundle)


def test_single_sentence(bundle, stats):
    at = open_app(PAGE, a=SINGLE, sim_stage="layer_3", sim_mode="standardised")
    assert_clean(at)
    figs = figures(at)
    assert set(figs) == {"sim_matrix", "sim_words", "sim_dims", "sim_anisotropy"}
    assert any("needs sentence B" in info.value for info in at.info)

    result = analyze(bundle, SINGLE, attentions=False)
    expected = token_matrix(result, "layer_3", "standardised", stats)
    np.testing.assert_allclose(plotly_values(figs["sim_matrix"]["data"][0]["z"]), expected,
                               atol=1e-5)
    assert figs["sim_matrix"]["data"][0]["y"][2] == "2 cat"
    assert not figs["sim_matrix"]["layout"].get("shapes")  # no A x B block for one sentence

    # Word in context defaults to a repeated word, here "cat" at positions 2 and 11.
    assert (widget(at, "selectbox", "sim_i").value, widget(at, "selectbox", "sim_j").value) == (
        2, 11)
    depth = depth_stages(result.stages)
    curve = token_curve(TokenRef(result, 2), TokenRef(result, 11), depth, "standardised", stats)
    words = figs["sim_words"]
    assert words["data"][0]["x"] == depth
    np.testing.assert_allclose(plotly_values(words["data"][0]["y"]), curve, atol=1e-6)
    np.testing.assert_allclose(plotly_values(trace(words, "two unrelated corpus tokens")["y"]),
                               [stats.stage(s).baseline_standardised for s in depth], atol=1e-6)

    top = top_dimensions(result.stages["layer_3"][2], result.stages["layer_3"][11],
                         "layer_3", "standardised", stats)
    bars = figs["sim_dims"]["data"][0]
    assert bars["y"] == [f"dim {d}" for d in top["dimension"]]
    np.testing.assert_allclose(plotly_values(bars["x"]), top["contribution"], atol=1e-6)

    table = anisotropy_table(stats, depth)
    aniso = figs["sim_anisotropy"]
    np.testing.assert_allclose(plotly_values(trace(aniso, "random tokens, raw")["y"]),
                               table["random tokens, raw"], atol=1e-6)


def test_pair(bundle, stats):
    at = open_app(PAGE, a=RIVER, b=MONEY, sim_stage="word_embeddings")
    assert_clean(at)
    figs = figures(at)
    assert set(figs) == {"sim_matrix", "sim_sentences", "sim_words", "sim_dims",
                         "sim_anisotropy"}
    pair = analyze(bundle, RIVER, MONEY, attentions=False)
    alone_a = analyze(bundle, RIVER, attentions=False)
    alone_b = analyze(bundle, MONEY, attentions=False)

    # The matrix, and its A x B block framed: rows 0..10 (A) against columns 11..18 (B).
    matrix = figs["sim_matrix"]
    np.testing.assert_allclose(plotly_values(matrix["data"][0]["z"]),
                               token_matrix(pair, "word_embeddings", "raw", stats), atol=1e-6)
    rect = next(s for s in matrix["layout"]["shapes"] if s["type"] == "rect")
    assert (rect["x0"], rect["x1"], rect["y0"], rect["y1"]) == (10.5, 18.5, -0.5, 10.5)

    # Sentence curves, and the model's own figure as the star on the last layer.
    comparison = compare_sentences(pair, alone_a, alone_b)
    sentences = figs["sim_sentences"]
    np.testing.assert_allclose(
        plotly_values(
            trace(sentences, "A and B separately, mean pooling (sentence-transformers)")["y"]),
        comparison.mean_separate, atol=1e-6)
    np.testing.assert_allclose(
        plotly_values(trace(sentences, "one pair input, mean of each segment")["y"]),
        comparison.mean_in_pair, atol=1e-6)
    star = trace(sentences, "the model's own figure")
    assert star["x"] == ["layer_6"]
    assert plotly_values(star["y"])[0] == pytest.approx(comparison.model_figure, abs=1e-6)
    assert at.metric[0].value == f"{comparison.model_figure:.4f}"

    # Word in context: "bank" (5) vs "bank" (16), A and B run separately by default.
    assert (widget(at, "selectbox", "sim_i").value, widget(at, "selectbox", "sim_j").value) == (
        5, 16)
    depth = depth_stages(pair.stages)
    separate = token_curve(TokenRef(alone_a, 5), TokenRef(alone_b, 6), depth, "raw", stats)
    curve = plotly_values(figs["sim_words"]["data"][0]["y"])
    np.testing.assert_allclose(curve, separate, atol=1e-6)
    assert curve[0] == pytest.approx(1.0, abs=1e-6)

    # The same pair read from the one pair input: by the radio, and by a shared link.
    in_pair = token_curve(TokenRef(pair, 5), TokenRef(pair, 16), depth, "raw", stats)
    widget(at, "radio", "sim_context").set_value("as one pair").run()
    assert_clean(at)
    np.testing.assert_allclose(plotly_values(figures(at)["sim_words"]["data"][0]["y"]), in_pair,
                               atol=1e-6)
    linked = open_app(PAGE, a=RIVER, b=MONEY, sim_context="as one pair", sim_mode="adjusted",
                      sim_i="1 i", sim_j="16 bank")
    assert_clean(linked)
    expected = token_curve(TokenRef(pair, 1), TokenRef(pair, 16), depth, "adjusted", stats)
    np.testing.assert_allclose(plotly_values(figures(linked)["sim_words"]["data"][0]["y"]),
                               expected, atol=1e-6)


def test_bad_choices_fall_back_to_defaults(bundle):
    at = open_app(PAGE, a=RIVER, b=MONEY, sim_stage="layer_99", sim_mode="cosine",
                  sim_i="99 nope", sim_j="<script>", sim_context="sideways", sim_from="-5")
    assert_clean(at)
    assert widget(at, "selectbox", "sim_stage").value == "layer_6"
    assert widget(at, "radio", "sim_mode").value == "raw"
    assert widget(at, "selectbox", "sim_i").value == 5
    assert widget(at, "radio", "sim_context").value == "separately"
    assert "sim_stage" not in at.query_params  # Streamlit drops what it could not use

    # A token of B given as the first token (a token of A) is not an option either.
    at = open_app(PAGE, a=RIVER, b=MONEY, sim_i="16 bank")
    assert_clean(at)
    assert widget(at, "selectbox", "sim_i").value == 5

    # The same token twice: said plainly, and the curve is 1 everywhere.
    at = open_app(PAGE, a=SINGLE, sim_i="2 cat", sim_j="2 cat")
    assert_clean(at)
    assert any("same token" in info.value for info in at.info)
    assert np.allclose(plotly_values(figures(at)["sim_words"]["data"][0]["y"]), 1.0, atol=1e-5)

    # Choices that stop existing when the text changes are reset, not a traceback.
    widget(at, "selectbox", "sim_j").set_value(12).run()
    at.text_area(key="a").set_value("short").run()
    assert_clean(at)
    assert widget(at, "selectbox", "sim_j").value in token_options(encode(bundle, "short"))[1]

    # Markup in the text stays text: the legend shows escaped tokens, never live tags.
    at = open_app(PAGE, a="<b>x</b> and <b>x</b>", sim_i="1 <", sim_j="5 <")
    assert_clean(at)
    legend = figures(at)["sim_words"]["data"][0]["name"]
    assert legend == "1 &lt; vs 5 &lt;"

    # B without A, and nothing at all: a message, no figure.
    for query in ({"a": "", "b": MONEY}, {"a": "   "}):
        at = open_app(PAGE, **query)
        assert_clean(at)
        assert at.warning and not at.get("plotly_chart")


def test_long_input_is_windowed(bundle, stats):
    """Over 160 tokens the matrix is drawn in a window the user moves; past sentence-transformers'
    256 tokens a token has no "separately" vector, which the page says."""
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)  # 362 tokens
    at = open_app(PAGE, a=long_text, b=MONEY, sim_from="100", sim_i="298 the")
    assert_clean(at)
    assert widget(at, "slider", "sim_from").value == 100
    z = plotly_values(figures(at)["sim_matrix"]["data"][0]["z"])
    full = token_matrix(analyze(bundle, long_text, MONEY, attentions=False), "layer_6", "raw",
                        stats)
    np.testing.assert_allclose(z, full[100:260, 100:260], atol=1e-6)
    assert any("cut off when its sentence is run on its own" in w.value for w in at.warning)
    assert any("reads the first 256" in c.value for c in at.caption)


@pytest.mark.browser
def test_screenshot_of_the_bank_pair(server, browser):
    url = f"{server}/similarity?{urlencode({'a': RIVER, 'b': MONEY})}"
    page = open_in_browser(browser, url, height=4200)  # Streamlit scrolls inside the page
    page.wait_for_selector(".js-plotly-plot .heatmaplayer", timeout=30_000)
    page.wait_for_timeout(800)  # let plotly finish drawing every chart
    page.screenshot(path=str(ARTIFACTS / "similarity.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator(".js-plotly-plot").count() == 5
    assert page.get_by_text("A × B").count() >= 1
    page.close()
