"""The Stages page in AppTest (one sentence, a pair, a text over 512 tokens) and in Chromium.

Figure data are decoded from the chart JSON the page sends and compared with core's arrays,
computed here from the shipped model; autograd names with ones read from torch in the test.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from components.labels import token_labels
from core import ModelBundle, analyze
from tests.conftest import (
    ARTIFACTS,
    assert_clean,
    open_app,
    open_in_browser,
    plotly_values,
    tiny_config,
)

PAGE = "pages/stages.py"
SEED = "This is a test sentence"
PAIR = ("What is your name?", "My name is BERT.")
LONG = "The quick brown fox jumps over the lazy dog. " * 60  # 602 tokens
TOLERANCE = 1e-5


# --- reading what the page sent ----------------------------------------------------------------

def charts(at: AppTest) -> dict[str, dict]:
    """Plotly figures by widget key (the id ends in "-<key>")."""
    return {c.proto.id.split("-", 2)[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def heatmap(spec: dict) -> tuple[np.ndarray, list, list]:
    trace = spec["data"][0]
    return plotly_values(trace["z"]), list(plotly_values(trace["x"])), list(trace["y"])


def stage_charts(at: AppTest) -> dict[str, dict]:
    return {k.removeprefix("st_fig_"): v for k, v in charts(at).items()
            if k.startswith("st_fig_") and k.removeprefix("st_fig_") in STAGE_KEYS}


STAGE_KEYS = {
    "word_embeddings", "token_type_embeddings", "position_embeddings", "sum", "LayerNorm",
    "dropout", *(f"layer_{k}" for k in range(1, 7)),
}


def metric(at: AppTest, label_part: str) -> float:
    [found] = [m for m in at.metric if label_part in m.label]
    return float(found.value)


def printout(at: AppTest) -> str:
    [code] = [c.value for c in at.code if c.value.startswith(">>> x = ")]
    return code


def printout_table(at: AppTest):
    [frame] = [d.value for d in at.dataframe if "grad_fn" in d.value.columns]
    return frame.set_index("stage")


# --- one sentence ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def seed_page() -> AppTest:
    return open_app(PAGE, a=SEED)


def test_seed_sentence_figures_are_the_core_arrays(seed_page: AppTest, bundle: ModelBundle):
    assert_clean(seed_page)
    expected = analyze(bundle, SEED, attentions=False)
    figures = stage_charts(seed_page)
    assert list(figures) == list(expected.stages)  # every stage, in pipeline order
    for stage, spec in figures.items():
        z, x, y = heatmap(spec)
        assert z.dtype == np.float32, stage
        np.testing.assert_allclose(z, expected.stages[stage][:, :64], rtol=0, atol=1e-6,
                                   err_msg=stage)
        assert x == list(range(64))
        assert y == token_labels(expected.tokens)
        assert spec["data"][0]["zmin"] == -spec["data"][0]["zmax"]
    # The lookups are table rows: exactly equal, not just close.
    z, _, _ = heatmap(figures["word_embeddings"])
    np.testing.assert_array_equal(z, expected.stages["word_embeddings"][:, :64])


def test_seed_sentence_printout_and_autograd_names(seed_page: AppTest, bundle: ModelBundle):
    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 6251, 102]])  # DESIGN.md reference ids
    with torch.enable_grad():
        module_out = bundle.model.embeddings(input_ids=ids)
    # The default printout is LayerNorm, every token; with 7 rows print() would skip one.
    text = printout(seed_page)
    assert "torch.Size([1, 7, 384])" in text
    assert text.endswith("grad_fn=<NativeLayerNormBackward0>)")
    assert text.count("...,") == 7  # one elided middle per row, no elided rows
    names = printout_table(seed_page)["grad_fn"]
    assert names["word_embeddings"] == "<EmbeddingBackward0>"
    assert names["sum"] == "<AddBackward0>"
    assert names["LayerNorm"] == "<NativeLayerNormBackward0>"
    assert names["model.embeddings(...)"] == re.search(r"grad_fn=(<\w+>)", repr(module_out))[1]
    assert (printout_table(seed_page)["max |Δ| to shown"] <= 1e-6).all()


def test_printout_as_print_shows_it_is_torch_repr(bundle: ModelBundle):
    at = open_app(PAGE, a=SEED, st_print="word_embeddings", st_rows="as print() shows it")
    assert_clean(at)
    ids = torch.tensor([analyze(bundle, SEED, attentions=False).input_ids])
    with torch.enable_grad():
        word = bundle.model.embeddings.word_embeddings(ids)
    assert printout(at).endswith(">>> x\n" + repr(word))


def test_seed_sentence_checks(seed_page: AppTest):
    assert metric(seed_page, "LayerNorm(sum) vs model.embeddings") <= TOLERANCE
    assert metric(seed_page, "formula by hand") <= TOLERANCE
    assert metric(seed_page, "one_hot @ W") <= TOLERANCE
    assert metric(seed_page, "broadcast sum") <= TOLERANCE
    shapes = [c.value for c in seed_page.code if "pos_ids = torch.arange" in c.value][0]
    assert "position = position_embeddings(pos_ids)" in shapes
    assert re.search(r"position_embeddings\(pos_ids\)\s+# torch.Size\(\[7, 384\]\)", shapes)
    # The one-hot matrix is drawn for a short input: one 1 per row, in the input_id's column.
    z, x, _ = heatmap(charts(seed_page)["st_fig_one_hot"])
    assert z.sum(axis=1).tolist() == [1] * 7
    assert [int(str(label).split()[0]) for label in x] == sorted({101, 2023, 2003, 1037, 3231,
                                                                  6251, 102})


def test_seed_sentence_side_figures_are_the_core_arrays(seed_page: AppTest, bundle: ModelBundle):
    """LayerNorm statistics, gamma and beta, and the lookup norms, against torch directly."""
    expected = analyze(bundle, SEED, attentions=False)
    figures = charts(seed_page)
    ln = bundle.model.embeddings.LayerNorm
    total = torch.from_numpy(expected.stages["sum"]).double()
    after = torch.from_numpy(expected.stages["LayerNorm"]).double()
    traces = {(t["name"], t.get("xaxis", "x")): plotly_values(t["y"]) for t in
              figures["st_fig_ln_stats"]["data"]}
    np.testing.assert_allclose(traces["sum (before)", "x"], total.mean(1), atol=1e-6)
    np.testing.assert_allclose(traces["sum (before)", "x2"], total.std(1, correction=0),
                               atol=1e-6)
    np.testing.assert_allclose(traces["LayerNorm (after)", "x"], after.mean(1), atol=1e-6)
    np.testing.assert_allclose(traces["LayerNorm (after)", "x2"], after.std(1, correction=0),
                               atol=1e-6)
    gamma, beta = (plotly_values(t["y"]) for t in figures["st_fig_ln_params"]["data"])
    np.testing.assert_array_equal(gamma, ln.weight.detach().numpy())
    np.testing.assert_array_equal(beta, ln.bias.detach().numpy())
    norms = [plotly_values(t["y"]) for t in figures["st_fig_norms"]["data"]]
    for values, stage in zip(norms, ("word_embeddings", "token_type_embeddings",
                                     "position_embeddings"), strict=True):
        expected_norms = torch.linalg.vector_norm(torch.from_numpy(expected.stages[stage]), dim=1)
        np.testing.assert_allclose(values, expected_norms, rtol=1e-5)
    shares = sum(plotly_values(t["y"]).astype(np.float64) for t in figures["st_fig_shares"]["data"])
    np.testing.assert_allclose(shares, 1.0, atol=1e-5)


# --- a pair ------------------------------------------------------------------------------------

def test_pair_token_type_heatmap_has_two_distinct_rows(bundle: ModelBundle):
    at = open_app(PAGE, a=PAIR[0], b=PAIR[1])
    assert_clean(at)
    expected = analyze(bundle, *PAIR, attentions=False)
    figures = stage_charts(at)
    z, _, y = heatmap(figures["token_type_embeddings"])
    assert len(y) == 13
    rows = np.unique(z, axis=0)
    assert len(rows) == 2
    table = bundle.model.embeddings.token_type_embeddings.weight.detach().numpy()[:, :64]
    np.testing.assert_array_equal(z, table[expected.token_type_ids])
    assert any("exactly two distinct rows" in i.value and "segment 1 (6 tokens)" in i.value
               for i in at.info)
    for stage, spec in figures.items():
        np.testing.assert_allclose(heatmap(spec)[0], expected.stages[stage][:, :64], atol=1e-6)
    assert metric(at, "LayerNorm(sum) vs model.embeddings") <= TOLERANCE


# --- a text over 512 tokens ---------------------------------------------------------------------

def test_long_text_is_truncated_and_windowed(bundle: ModelBundle):
    at = open_app(PAGE, a=LONG)
    assert_clean(at)
    assert any("Truncated" in w.value for w in at.warning)
    expected = analyze(bundle, LONG, attentions=False)
    assert len(expected.tokens) == 512
    figures = stage_charts(at)
    for stage in ("word_embeddings", "position_embeddings", "LayerNorm", "layer_6"):
        z, x, _ = heatmap(figures[stage])
        assert z.shape == (512, 64)  # the default window: no 512 x 384 grid is sent
        np.testing.assert_allclose(z, expected.stages[stage][:, :64], atol=1e-6)
    assert max(len(json.dumps(spec)) for spec in figures.values()) < 250_000
    assert "st_fig_one_hot" not in charts(at)  # 512 x 30,522 is described, not drawn
    assert metric(at, "one_hot @ W") <= TOLERANCE
    assert metric(at, "LayerNorm(sum) vs model.embeddings") <= TOLERANCE


# --- controls, bad query values, another model -------------------------------------------------

def test_dimension_window_and_shared_scale(bundle: ModelBundle):
    expected = analyze(bundle, SEED, attentions=False)
    at = open_app(PAGE, a=SEED, st_dim_mode="all", st_scale="shared",
                  st_stages=["word_embeddings", "layer_6"])
    assert_clean(at)
    figures = stage_charts(at)
    assert list(figures) == ["word_embeddings", "layer_6"]
    for stage, spec in figures.items():
        np.testing.assert_allclose(heatmap(spec)[0], expected.stages[stage], atol=1e-6)
    bounds = {spec["data"][0]["zmax"] for spec in figures.values()}
    assert len(bounds) == 1
    at = open_app(PAGE, a=SEED, st_dim_mode="range", st_range=["100", "119"])
    z, x, _ = heatmap(stage_charts(at)["sum"])
    assert x == list(range(100, 120))
    np.testing.assert_allclose(z, expected.stages["sum"][:, 100:120], atol=1e-6)
    at = open_app(PAGE, a=SEED, st_dims="16", st_clip="false")
    z, _, _ = heatmap(stage_charts(at)["dropout"])
    assert z.shape == (7, 16)
    zmax = stage_charts(at)["dropout"]["data"][0]["zmax"]
    assert zmax == pytest.approx(float(np.abs(expected.stages["dropout"][:, :16]).max()))


@pytest.mark.parametrize(
    "query",
    [
        {"st_dims": "99999", "st_dim_mode": "bogus", "st_scale": "x"},
        {"st_stages": ["nope", "sum"], "st_print": "zzz", "st_rows": "q", "st_clip": "maybe"},
        {"st_dim_mode": "range", "st_range": ["a", "<b>"]},
        {"st_dims": "-3"},
        {"st_stages": ""},
    ],
)
def test_garbage_query_values_never_raise(query: dict):
    at = open_app(PAGE, a=SEED, **query)
    assert_clean(at)
    assert not at.error


def test_bad_text_gets_a_message():
    at = open_app(PAGE, a="   ")
    assert_clean(at)
    assert any("Type a sentence" in w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_another_model_with_other_sizes(tmp_path, bundle: ModelBundle):
    """A 2-layer, hidden-32 BERT from a folder: windows, layers and sizes follow the model."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(tiny_config(max_position_embeddings=512))
    model.save_pretrained(tmp_path, safe_serialization=True)
    bundle.tokenizer.save_pretrained(tmp_path)
    at = open_app(PAGE, a=PAIR[0], b=PAIR[1], model=str(tmp_path))
    assert_clean(at)
    assert not at.error
    figures = stage_charts(at)
    assert [s for s in figures if s.startswith("layer_")] == ["layer_1", "layer_2"]
    assert heatmap(figures["sum"])[0].shape == (13, 32)
    assert "torch.Size([1, 13, 32])" in printout(at)
    assert metric(at, "LayerNorm(sum) vs model.embeddings") <= TOLERANCE


# --- Chromium ----------------------------------------------------------------------------------

@pytest.mark.browser
def test_stages_page_in_chromium(server: str, browser):
    page = open_in_browser(browser, f"{server}/stages?a=This+is+a+test+sentence", height=1600)
    try:
        page.wait_for_selector(".js-plotly-plot .heatmaplayer", timeout=60_000)
        page.wait_for_timeout(800)  # let plotly finish drawing before the screenshot
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.get_by_text("word_embeddings  ·  [1, 7, 384]").count() == 1
        assert page.locator(".js-plotly-plot").count() >= 13
        assert page.get_by_text("grad_fn=<NativeLayerNormBackward0>").count() >= 1
        page.screenshot(path=str(ARTIFACTS / "stages.png"))
    finally:
        page.close()
