"""The Stages page in AppTest (one sentence, a pair, a text over 512 tokens) and in Chromium.

Figure data are decoded from the chart JSON the page sends and compared with core's arrays,
computed here from the shipped model; autograd names with ones read from torch in the test.

The page is six tabs and only the open one runs, so each check opens the tab that holds it
through the URL (``?st_section=LayerNorm``), as a shared link would. The Heatmaps tab shows one
stage at a time by default; checks over every stage open it with ``?st_layout=stacked``.
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
    ImageHeatmap,
    assert_clean,
    image_heatmaps,
    live_checks,
    open_app,
    open_in_browser,
    plotly_values,
    scale_colours,
    tiny_config,
    wait_for_app,
)
from tests.switcher import switchers

PAGE = "pages/stages/page.py"
SEED = "This is a test sentence"
PAIR = ("What is your name?", "My name is BERT.")
LONG = "The quick brown fox jumps over the lazy dog. " * 60  # 602 tokens
TOLERANCE = 1e-5
DIMS = 64  # the default window: the first 64 hidden dimensions

SECTION_KEY = "st_section"
EXACT = {"st_exact": "true"}  # the heatmaps as interactive figures, whose data hold the values
HEATMAPS, PRINTOUTS, LAYERNORM, ONE_HOT, BROADCAST, PARTS = SECTIONS = (
    "Heatmaps", "Printouts", "LayerNorm", "One-hot lookup", "Broadcasting", "Parts of the sum",
)
STACKED = "Heatmaps, stacked"  # a Runs key: the Heatmaps tab with every stage drawn


# --- reading what the page sent ----------------------------------------------------------------

def charts(at: AppTest) -> dict[str, dict | ImageHeatmap]:
    """Figures by key: plotly figures (the id ends in "-<key>") and image heatmaps."""
    plotly = {c.proto.id.split("-", 2)[-1]: json.loads(c.proto.spec)
              for c in at.get("plotly_chart")}
    shown = {k: v for s in switchers(at).values() for k, v in s.heatmaps().items()}
    return {**plotly, **image_heatmaps(at), **shown}


def heatmap(spec: dict | ImageHeatmap) -> tuple[np.ndarray, list, list]:
    """The values, columns and rows of an interactive heatmap (open the page with EXACT)."""
    assert isinstance(spec, dict), "an image: open the page with the exact values on"
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
    """The max |difference| of the live check naming ``label_part``, which must have passed
    (its verdict and its number agree with the tolerance)."""
    [found] = [c for c in live_checks(at) if label_part in c.text]
    assert (found.verdict == "passed") == (found.error <= found.tolerance == TOLERANCE), found
    return found.error


def printout(at: AppTest) -> str:
    [code] = [c.value for c in at.code if c.value.startswith(">>> x = ")]
    return code


def printout_table(at: AppTest):
    """The printouts' table (a static table whose cells wrap), its difference as numbers."""
    [frame] = [t.value for t in at.table if "grad_fn" in t.value.columns]
    frame = frame.set_index("stage")
    return frame.assign(**{"max |Δ| to shown": frame["max |Δ| to shown"].astype(float)})


def segment_infos(at: AppTest) -> list[str]:
    return [i.value for i in at.info if i.value.startswith("The token-type heatmap has")]


def notes(at: AppTest) -> list[str]:
    """The page's body text (explanations and the notes beside numbers) and any captions."""
    return ([m.value for m in at.markdown] + [c.value for c in at.caption]
            + [s.words() for s in switchers(at).values()])


def widget_keys(at: AppTest) -> set[str]:
    return {w.key for kind in ("radio", "select_slider", "multiselect", "selectbox", "toggle",
                               "number_input", "slider") for w in at.get(kind) if w.key
            } | set(switchers(at))


# What only each section draws: its plotly charts (exactly these), a metric label, a code listing
# and the widgets it owns. Every tab is told apart from every other by these.
CONTENT = {
    HEATMAPS: {"charts": {"st_fig_word_embeddings"}, "metrics": (), "code": None,
               "widgets": {"st_layout", "st_scale", "st_clip", "st_dim_mode"}},
    PRINTOUTS: {"charts": set(), "metrics": (), "code": ">>> x = ",
                "widgets": {"st_print", "st_rows"}},
    LAYERNORM: {"charts": {"st_fig_ln_stats", "st_fig_ln_params"},
                "metrics": ("LayerNorm(sum) vs model.embeddings", "formula by hand"),
                "code": None, "widgets": set()},
    ONE_HOT: {"charts": {"st_fig_one_hot"}, "metrics": ("one_hot @ W",),
              "code": "one_hot = F.one_hot(", "widgets": set()},
    BROADCAST: {"charts": set(), "metrics": ("broadcast sum",), "code": "pos_ids = torch.arange",
                "widgets": set()},
    PARTS: {"charts": {"st_fig_norms", "st_fig_shares"}, "metrics": (), "code": None,
            "widgets": set()},
}
HEATMAP_WIDGETS = {*CONTENT[HEATMAPS]["widgets"], "st_stage", "st_stages", "st_dims", "st_range"}
PAGE_WIDGETS = HEATMAP_WIDGETS | {w for c in CONTENT.values() for w in c["widgets"]}


def open_tab(at: AppTest) -> str:
    """The label of the tab the page drew, checked against where its content went."""
    label = at.session_state[SECTION_KEY]
    assert [tab.label for tab in at.tabs] == list(SECTIONS)
    filled = [tab.label for tab in at.tabs if tab.children]
    assert filled == [label], (label, filled)
    return label


def assert_shows_section(at: AppTest, section: str) -> None:
    """The page drew ``section`` (its charts, metrics, code, widgets) and nothing of the others."""
    assert open_tab(at) == section
    want = CONTENT[section]
    if section == HEATMAPS:  # the stages picked, one or more
        assert charts(at) and all(k.removeprefix("st_fig_") in STAGE_KEYS for k in charts(at))
    else:
        assert set(charts(at)) == want["charts"]
    labels = [c.text for c in live_checks(at)]
    assert not at.metric
    assert len(labels) == len(want["metrics"])
    assert all(any(part in label for label in labels) for part in want["metrics"]), labels
    for other, content in CONTENT.items():
        listed = content["code"] is not None and any(content["code"] in c.value for c in at.code)
        assert listed == (other == section and want["code"] is not None), other
    found = widget_keys(at) & PAGE_WIDGETS
    if section == HEATMAPS:  # the stage picker and the window's input follow the other controls
        assert want["widgets"] <= found <= HEATMAP_WIDGETS, found
    else:
        assert found == want["widgets"], found
    assert bool(at.latex) == (section == LAYERNORM)  # the LayerNorm formula


class Runs(dict):
    """AppTest runs of the page for one URL, one per tab (and one stacked), each on first use."""

    def __init__(self, **query: str) -> None:
        super().__init__()
        self.query = query

    def __missing__(self, view: str) -> AppTest:
        # Stacked runs read the values of every stage: as interactive figures.
        extra = {"st_layout": "stacked", **EXACT} if view == STACKED else {SECTION_KEY: view}
        at = open_app(PAGE, **self.query, **extra)
        assert_clean(at)
        self[view] = at
        return at


@pytest.fixture(scope="module")
def seed() -> Runs:
    return Runs(a=SEED)


@pytest.fixture(scope="module")
def pair() -> Runs:
    return Runs(a=PAIR[0], b=PAIR[1])


@pytest.fixture(scope="module")
def seed_result(bundle: ModelBundle):
    return analyze(bundle, SEED, attentions=False)


def window_bound(arrays, clip: bool) -> float:
    """The colour range over the given matrices, computed here with numpy: the 99th percentile
    of |value| with clipping, the max without."""
    values = np.abs(np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays]))
    return float(np.percentile(values, 99) if clip else values.max())


# --- the sections ------------------------------------------------------------------------------

def test_default_run_draws_one_heatmap_only(seed_result):
    """No section, layout or stage in the URL: the Heatmaps tab, one stage at a time, on
    word_embeddings, drawn as an image; nothing of another tab (LayerNorm, one-hot, parts) is
    drawn or sent."""
    at = open_app(PAGE, a=SEED)
    assert_clean(at)
    assert_shows_section(at, HEATMAPS)
    assert not at.get("plotly_chart")
    assert list(stage_charts(at)) == ["word_embeddings"]
    assert at.radio(key="st_layout").value == "one at a time"
    # The stage slider switches the pictures in the browser: every stage's is sent.
    stages = switchers(at)["st_stage"]
    assert stages.value == "word_embeddings"
    assert stages.names == list(seed_result.stages)
    assert [list(stages.heatmaps(i)) for i in range(len(stages.names))] == [
        [f"st_fig_{name}"] for name in seed_result.stages]
    assert at.toggle(key="st_exact").value is False
    assert "st_stages" not in widget_keys(at)  # the stacked picker is not drawn
    assert not at.dataframe and not segment_infos(at)
    assert SECTION_KEY not in at.query_params  # the default tab keeps the URL clean
    # The stage's note takes its shape from the array, and grad_fn is no longer named there.
    text = "\n".join(notes(at))
    assert "Shape torch.Size([1, 7, 384]); dimensions 0–63 of 384" in text
    assert "grad_fn" not in text and "Backward" not in text


def test_the_image_is_the_stage_in_plotlys_colours(seed_result):
    """The image's pixels are the stage's values in plotly's RdBu_r on the note's ±bound (one
    pixel per token and dimension), its rows the token labels, its ticks dimensions."""
    at = open_app(PAGE, a=SEED)
    image = stage_charts(at)["word_embeddings"]
    values = seed_result.stages["word_embeddings"][:, :DIMS]
    bound = float(re.search(r"colours ±(\d[\d.e+-]*\d)", "\n".join(notes(at))).group(1))
    assert image.rgb.shape == (len(seed_result.tokens), DIMS, 3)
    expected = scale_colours(values, -bound, bound, "RdBu_r")
    # 256 colours against plotly's continuous scale, the bound rounded to 3 digits in the note.
    assert np.abs(image.rgb - expected).max() <= 6
    assert image.rows == [f"{i} {t}" for i, t in enumerate(seed_result.tokens)]
    assert image.cols and all(int(c) in range(DIMS) for c in image.cols)
    assert image.title == "word_embeddings  ·  [1, 7, 384]  ·  all-MiniLM-L6-v2"
    assert image.image_height == 22 * len(seed_result.tokens)
    assert not image.lines   # one sentence: no boundary


def test_exact_values_draw_the_interactive_figure(seed_result):
    """With the exact values on (a URL setting), the same stage is the plotly heatmap, its data
    core's float32 array."""
    at = open_app(PAGE, a=SEED, **EXACT)
    assert_clean(at)
    assert not image_heatmaps(at)
    assert len(at.get("plotly_chart")) == 1
    z, x, y = heatmap(stage_charts(at)["word_embeddings"])
    np.testing.assert_array_equal(z, seed_result.stages["word_embeddings"][:, :DIMS])
    assert x == list(range(DIMS))
    assert y == token_labels(seed_result.tokens)
    at.toggle(key="st_exact").set_value(False).run()
    assert list(stage_charts(at)) == ["word_embeddings"]   # the picture shown of every stage's
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("section", SECTIONS)
def test_each_section_label_draws_its_section(seed: Runs, section: str):
    at = seed[section]
    assert_shows_section(at, section)
    if section != HEATMAPS:  # nothing of the Heatmaps tab: no stage heatmap, none of its controls
        assert not stage_charts(at)
        assert not widget_keys(at) & HEATMAP_WIDGETS
    # The segment-rows box: always in Parts of the sum; in Heatmaps only under token_type.
    assert bool(segment_infos(at)) == (section == PARTS)


@pytest.mark.parametrize("value", ["<script>alert(1)</script>", "nope", "heatmaps", ""])
def test_unknown_section_in_the_url_opens_the_heatmaps(value: str):
    at = open_app(PAGE, a=SEED, **{SECTION_KEY: value})
    assert_clean(at)
    assert not at.error
    assert_shows_section(at, HEATMAPS)
    assert list(stage_charts(at)) == ["word_embeddings"]
    assert SECTION_KEY not in at.query_params  # the bad value is dropped from the URL


def test_the_sections_together_hold_the_whole_former_page(seed: Runs):
    """Stacked heatmaps plus the other five tabs: the 17 figures of the page before it had tabs,
    each sent exactly once."""
    keys = [k for view in (STACKED, *SECTIONS[1:]) for k in charts(seed[view])]
    assert len(keys) == len(set(keys)) == 12 + 5
    assert {k for k in keys if k.removeprefix("st_fig_") not in STAGE_KEYS} == {
        k for c in CONTENT.values() for k in c["charts"] if k != "st_fig_word_embeddings"}


def test_switching_tabs_keeps_each_sections_settings():
    """A setting made in one tab is still there after a visit to another: the controls were all
    on one page before, so hiding them must not reset them."""
    at = open_app(PAGE, a=SEED, st_layout="stacked", st_stages=["sum", "layer_2"])
    assert_clean(at)
    assert list(stage_charts(at)) == ["sum", "layer_2"]
    at.session_state[SECTION_KEY] = PRINTOUTS
    at.run()
    assert open_tab(at) == PRINTOUTS
    at.selectbox(key="st_print").set_value("sum").run()
    assert printout(at).startswith(">>> x = word_embeddings + token_type_embeddings")
    at.session_state[SECTION_KEY] = HEATMAPS
    at.run()
    assert_clean(at)
    assert at.radio(key="st_layout").value == "stacked"
    assert list(stage_charts(at)) == ["sum", "layer_2"]
    at.session_state[SECTION_KEY] = PRINTOUTS
    at.run()
    assert at.selectbox(key="st_print").value == "sum"


# --- one stage at a time -----------------------------------------------------------------------

@pytest.mark.parametrize("clip", [True, False])
def test_one_stage_with_the_shared_scale_covers_every_stage(seed_result, clip: bool):
    """Stepping to layer_3 draws layer_3 alone; the shared range is over ALL stages' windows."""
    query = {"st_stage": "layer_3", "st_scale": "shared"} | ({} if clip else {"st_clip": "false"})
    at = open_app(PAGE, **EXACT, a=SEED, **query)
    assert_clean(at)
    assert_shows_section(at, HEATMAPS)
    assert list(charts(at)) == ["st_fig_layer_3"]
    trace = charts(at)["st_fig_layer_3"]["data"][0]
    z, x, _ = heatmap(charts(at)["st_fig_layer_3"])
    np.testing.assert_allclose(z, seed_result.stages["layer_3"][:, :DIMS], rtol=0, atol=1e-6)
    assert x == list(range(DIMS))
    windows = [values[:, :DIMS] for values in seed_result.stages.values()]
    assert len(windows) == 12
    everything = window_bound(windows, clip)
    alone = window_bound([seed_result.stages["layer_3"][:, :DIMS]], clip)
    assert abs(everything - alone) > 0.01 * everything  # the two readings are told apart here
    assert trace["zmax"] == pytest.approx(everything, rel=1e-6)
    assert trace["zmin"] == pytest.approx(-everything, rel=1e-6)
    assert any(text.startswith(f"One colour range for every stage: ±{everything:.3g}")
               for text in notes(at))


def test_one_stage_with_its_own_scale(seed_result):
    at = open_app(PAGE, **EXACT, a=SEED, st_stage="layer_3")
    assert_clean(at)
    trace = charts(at)["st_fig_layer_3"]["data"][0]
    alone = window_bound([seed_result.stages["layer_3"][:, :DIMS]], clip=True)
    assert trace["zmax"] == pytest.approx(alone, rel=1e-6)
    assert trace["zmin"] == pytest.approx(-alone, rel=1e-6)


def test_token_type_stage_has_the_segment_box():
    """The segment-rows box sits under the token_type_embeddings heatmap, and only there."""
    at = open_app(PAGE, **EXACT, a=SEED, st_stage="token_type_embeddings")
    assert_clean(at)
    assert list(stage_charts(at)) == ["token_type_embeddings"]
    [text] = segment_infos(at)
    assert "one distinct row: segment 0 (7 tokens)" in text


# --- one sentence ------------------------------------------------------------------------------

def test_seed_sentence_figures_are_the_core_arrays(seed: Runs, seed_result):
    at = seed[STACKED]
    expected = seed_result
    figures = stage_charts(at)
    assert list(figures) == list(expected.stages)  # every stage, in pipeline order
    assert at.multiselect(key="st_stages").value == list(expected.stages)
    for stage, spec in figures.items():
        z, x, y = heatmap(spec)
        assert z.dtype == np.float32, stage
        np.testing.assert_allclose(z, expected.stages[stage][:, :DIMS], rtol=0, atol=1e-6,
                                   err_msg=stage)
        assert x == list(range(DIMS))
        assert y == token_labels(expected.tokens)
        assert spec["data"][0]["zmin"] == -spec["data"][0]["zmax"]
    # The lookups are table rows: exactly equal, not just close.
    z, _, _ = heatmap(figures["word_embeddings"])
    np.testing.assert_array_equal(z, expected.stages["word_embeddings"][:, :DIMS])
    assert set(charts(at)) == {f"st_fig_{stage}" for stage in expected.stages}  # no other tab's
    [text] = segment_infos(at)  # under the token_type_embeddings heatmap
    assert "one distinct row: segment 0 (7 tokens)" in text


def test_seed_sentence_printout_and_autograd_names(seed: Runs, bundle: ModelBundle):
    at = seed[PRINTOUTS]
    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 6251, 102]])  # DESIGN.md reference ids
    with torch.enable_grad():
        module_out = bundle.model.embeddings(input_ids=ids)
    # The default printout is LayerNorm, every token; with 7 rows print() would skip one.
    text = printout(at)
    assert "torch.Size([1, 7, 384])" in text
    assert text.endswith("grad_fn=<NativeLayerNormBackward0>)")
    assert text.count("...,") == 7  # one elided middle per row, no elided rows
    names = printout_table(at)["grad_fn"]
    assert names["word_embeddings"] == "<EmbeddingBackward0>"
    assert names["sum"] == "<AddBackward0>"
    assert names["LayerNorm"] == "<NativeLayerNormBackward0>"
    assert names["model.embeddings(...)"] == re.search(r"grad_fn=(<\w+>)", repr(module_out))[1]
    assert (printout_table(at)["max |Δ| to shown"] <= 1e-6).all()


def test_printout_as_print_shows_it_is_torch_repr(bundle: ModelBundle):
    at = open_app(PAGE, a=SEED, st_section=PRINTOUTS, st_print="word_embeddings",
                  st_rows="as print() shows it")
    assert_clean(at)
    assert open_tab(at) == PRINTOUTS
    ids = torch.tensor([analyze(bundle, SEED, attentions=False).input_ids])
    with torch.enable_grad():
        word = bundle.model.embeddings.word_embeddings(ids)
    assert printout(at).endswith(">>> x\n" + repr(word))


def test_seed_sentence_checks(seed: Runs):
    assert metric(seed[LAYERNORM], "LayerNorm(sum) vs model.embeddings") <= TOLERANCE
    assert metric(seed[LAYERNORM], "formula by hand") <= TOLERANCE
    assert metric(seed[ONE_HOT], "one_hot @ W") <= TOLERANCE
    assert metric(seed[BROADCAST], "broadcast sum") <= TOLERANCE
    shapes = [c.value for c in seed[BROADCAST].code if "pos_ids = torch.arange" in c.value][0]
    assert "position = position_embeddings(pos_ids)" in shapes
    assert re.search(r"position_embeddings\(pos_ids\)\s+# torch.Size\(\[7, 384\]\)", shapes)
    # The one-hot matrix is drawn for a short input: one 1 per row, in the input_id's column.
    z, x, _ = heatmap(charts(seed[ONE_HOT])["st_fig_one_hot"])
    assert z.sum(axis=1).tolist() == [1] * 7
    assert [int(str(label).split()[0]) for label in x] == sorted({101, 2023, 2003, 1037, 3231,
                                                                  6251, 102})


def test_seed_sentence_side_figures_are_the_core_arrays(seed: Runs, seed_result,
                                                        bundle: ModelBundle):
    """LayerNorm statistics, gamma and beta, and the lookup norms, against torch directly."""
    expected = seed_result
    ln = bundle.model.embeddings.LayerNorm
    total = torch.from_numpy(expected.stages["sum"]).double()
    after = torch.from_numpy(expected.stages["LayerNorm"]).double()
    figures = charts(seed[LAYERNORM])
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
    figures = charts(seed[PARTS])
    norms = [plotly_values(t["y"]) for t in figures["st_fig_norms"]["data"]]
    for values, stage in zip(norms, ("word_embeddings", "token_type_embeddings",
                                     "position_embeddings"), strict=True):
        expected_norms = torch.linalg.vector_norm(torch.from_numpy(expected.stages[stage]), dim=1)
        np.testing.assert_allclose(values, expected_norms, rtol=1e-5)
    shares = sum(plotly_values(t["y"]).astype(np.float64) for t in figures["st_fig_shares"]["data"])
    np.testing.assert_allclose(shares, 1.0, atol=1e-5)
    # The parts tab always carries the segment-rows box (no heatmap is drawn there).
    [text] = segment_infos(seed[PARTS])
    assert "one distinct row: segment 0 (7 tokens)" in text


# --- a pair ------------------------------------------------------------------------------------

def test_pair_token_type_heatmap_has_two_distinct_rows(pair: Runs, bundle: ModelBundle):
    at = pair[STACKED]
    expected = analyze(bundle, *PAIR, attentions=False)
    figures = stage_charts(at)
    assert list(figures) == list(expected.stages)
    z, _, y = heatmap(figures["token_type_embeddings"])
    assert len(y) == 13
    rows = np.unique(z, axis=0)
    assert len(rows) == 2
    table = bundle.model.embeddings.token_type_embeddings.weight.detach().numpy()[:, :DIMS]
    np.testing.assert_array_equal(z, table[expected.token_type_ids])
    for box in (segment_infos(at), segment_infos(pair[PARTS])):
        assert len(box) == 1
        assert "exactly two distinct rows" in box[0] and "segment 1 (6 tokens)" in box[0]
    for stage, spec in figures.items():
        np.testing.assert_allclose(heatmap(spec)[0], expected.stages[stage][:, :DIMS], atol=1e-6)
    assert metric(pair[LAYERNORM], "LayerNorm(sum) vs model.embeddings") <= TOLERANCE


# --- a text over 512 tokens ---------------------------------------------------------------------

def test_long_text_is_truncated_and_windowed(bundle: ModelBundle):
    long = Runs(a=LONG)
    at = long[STACKED]
    assert any("Truncated" in w.value for w in at.warning)
    expected = analyze(bundle, LONG, attentions=False)
    assert len(expected.tokens) == 512
    figures = stage_charts(at)
    assert list(figures) == list(expected.stages)
    for stage in ("word_embeddings", "position_embeddings", "LayerNorm", "layer_6"):
        z, x, _ = heatmap(figures[stage])
        assert z.shape == (512, DIMS)  # the default window: no 512 x 384 grid is sent
        np.testing.assert_allclose(z, expected.stages[stage][:, :DIMS], atol=1e-6)
    assert max(len(json.dumps(spec)) for spec in figures.values()) < 250_000
    assert any("Shape torch.Size([1, 512, 384])" in text for text in notes(at))
    one_hot = long[ONE_HOT]
    assert "st_fig_one_hot" not in charts(one_hot)  # 512 x 30,522 is described, not drawn
    assert any("too many to draw" in text for text in notes(one_hot))
    assert metric(one_hot, "one_hot @ W") <= TOLERANCE
    assert metric(long[LAYERNORM], "LayerNorm(sum) vs model.embeddings") <= TOLERANCE


# --- controls, bad query values, another model -------------------------------------------------

def test_dimension_window_and_shared_scale(seed_result):
    expected = seed_result
    at = open_app(PAGE, **EXACT, a=SEED, st_layout="stacked", st_dim_mode="all", st_scale="shared",
                  st_stages=["word_embeddings", "layer_6"])
    assert_clean(at)
    figures = stage_charts(at)
    assert list(figures) == ["word_embeddings", "layer_6"]
    for stage, spec in figures.items():
        np.testing.assert_allclose(heatmap(spec)[0], expected.stages[stage], atol=1e-6)
    bounds = {spec["data"][0]["zmax"] for spec in figures.values()}
    assert len(bounds) == 1
    # Stacked, the shared range covers the stages drawn (here every dimension of both).
    drawn = window_bound([expected.stages["word_embeddings"], expected.stages["layer_6"]], True)
    assert bounds.pop() == pytest.approx(drawn, rel=1e-6)
    at = open_app(PAGE, **EXACT, a=SEED, st_layout="stacked", st_dim_mode="range",
                  st_range=["100", "119"])
    z, x, _ = heatmap(stage_charts(at)["sum"])
    assert x == list(range(100, 120))
    np.testing.assert_allclose(z, expected.stages["sum"][:, 100:120], atol=1e-6)
    at = open_app(PAGE, **EXACT, a=SEED, st_layout="stacked", st_dims="16", st_clip="false")
    z, _, _ = heatmap(stage_charts(at)["dropout"])
    assert z.shape == (7, 16)
    zmax = stage_charts(at)["dropout"]["data"][0]["zmax"]
    assert zmax == pytest.approx(float(np.abs(expected.stages["dropout"][:, :16]).max()))
    # One at a time, the window applies to the one stage drawn.
    at = open_app(PAGE, **EXACT, a=SEED, st_stage="sum", st_dim_mode="range",
                  st_range=["100", "119"])
    assert list(stage_charts(at)) == ["sum"]
    z, x, _ = heatmap(stage_charts(at)["sum"])
    assert x == list(range(100, 120))
    np.testing.assert_allclose(z, expected.stages["sum"][:, 100:120], atol=1e-6)


@pytest.mark.parametrize(
    "query",
    [
        {"st_dims": "99999", "st_dim_mode": "bogus", "st_scale": "x"},
        {"st_layout": "stacked", "st_stages": ["nope", "sum"], "st_clip": "maybe"},
        {"st_section": PRINTOUTS, "st_print": "zzz", "st_rows": "q"},
        {"st_dim_mode": "range", "st_range": ["a", "<b>"]},
        {"st_dims": "-3"},
        {"st_layout": "stacked", "st_stages": ""},
        {"st_layout": "sideways", "st_stage": "layer_99"},
        {"st_stage": ["sum", "layer_1"], "st_scale": "shared"},
        {"st_section": ["LayerNorm", "Printouts"]},
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


def test_another_model_with_other_sizes(tmp_path, bundle: ModelBundle, folder_models_allowed):
    """A 2-layer, hidden-32 BERT from a folder: windows, layers and sizes follow the model."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(tiny_config(max_position_embeddings=512))
    model.save_pretrained(tmp_path, safe_serialization=True)
    bundle.tokenizer.save_pretrained(tmp_path)
    other = Runs(a=PAIR[0], b=PAIR[1], model=str(tmp_path))
    at = other[STACKED]
    assert not at.error
    figures = stage_charts(at)
    assert [s for s in figures if s.startswith("layer_")] == ["layer_1", "layer_2"]
    assert heatmap(figures["sum"])[0].shape == (13, 32)
    assert "torch.Size([1, 13, 32])" in printout(other[PRINTOUTS])
    assert metric(other[LAYERNORM], "LayerNorm(sum) vs model.embeddings") <= TOLERANCE
    # A stage this model does not have (layer_6) falls back to the first one.
    at = open_app(PAGE, **EXACT, a=PAIR[0], b=PAIR[1], model=str(tmp_path), st_stage="layer_6")
    assert_clean(at)
    assert list(stage_charts(at)) == ["word_embeddings"]


# --- Chromium ----------------------------------------------------------------------------------

def wait_for_charts(page, n: int, images: int = 0) -> None:
    """Until exactly ``n`` plotly figures and ``images`` image heatmaps (their pictures loaded)
    are drawn and no skeleton is left."""
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot').length === {n} && "
        f"[...document.querySelectorAll('[data-figure] img')].filter(i => i.complete && "
        f"i.naturalWidth > 0).length === {images} && "
        "document.querySelectorAll('[data-testid=\"stSkeleton\"]').length === 0",
        timeout=60_000,
    )


@pytest.mark.browser
def test_stages_page_in_chromium(server: str, browser):
    page = open_in_browser(browser, f"{server}/stages?a=This+is+a+test+sentence&st_layout=stacked",
                           height=1600)
    try:
        assert page.get_by_role("tab").all_inner_texts() == list(SECTIONS)
        wait_for_charts(page, 0, images=12)  # every stage stacked, and no other tab's figures
        assert page.locator("[data-testid='stException']").count() == 0
        title = page.get_by_text("word_embeddings  ·  [1, 7, 384]  ·  all-MiniLM-L6-v2")
        assert title.count() == 1
        # The picture spans the cells' column at 22 px a token; the labels sit beside it.
        figure = page.locator("[data-figure='st_fig_word_embeddings']")
        box = figure.locator("img").bounding_box()
        assert box["height"] == pytest.approx(22 * 7, abs=1) and box["width"] > 300
        assert figure.locator(".hm-row").all_inner_texts() == [
            "0 [CLS]", "1 this", "2 is", "3 a", "4 test", "5 sentence", "6 [SEP]"]
        page.screenshot(path=str(ARTIFACTS / "stages.png"))

        # Clicking a tab reruns the page with that section only, and puts it in the URL.
        page.get_by_role("tab", name=PRINTOUTS, exact=True).click()
        page.wait_for_url(re.compile(rf"[?&]{SECTION_KEY}={PRINTOUTS}(&|$)"), timeout=30_000)
        wait_for_app(page)
        wait_for_charts(page, 0)
        code = page.locator("[data-testid='stCode']").filter(
            has_text=">>> x = model.embeddings.LayerNorm(sum)")
        code.wait_for(timeout=30_000)
        assert code.is_visible()
        text = code.inner_text()
        assert "torch.Size([1, 7, 384])" in text
        assert "grad_fn=<NativeLayerNormBackward0>" in text
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ARTIFACTS / "stages-printouts.png"))
    finally:
        page.close()


@pytest.mark.browser
def test_a_stage_download_is_the_models_own_output(server: str, browser, bundle: ModelBundle,
                                                   tmp_path):
    """The LayerNorm stage's .npy download (made again on click from the cache by the input's
    key) is what transformers' own model.embeddings module returns for the pair."""
    from urllib.parse import urlencode

    query = urlencode({"a": PAIR[0], "b": PAIR[1], "st_stage": "LayerNorm"})
    page = open_in_browser(browser, f"{server}/stages?{query}")
    try:
        button = page.locator("[data-testid='stDownloadButton'] button", has_text=".npy").first
        with page.expect_download(timeout=60_000) as info:
            button.click()
        path = tmp_path / "LayerNorm.npy"
        info.value.save_as(path)
        got = np.load(path)
    finally:
        page.close()
    encoded = bundle.tokenizer(*PAIR, return_tensors="pt")
    with torch.no_grad():
        expected = bundle.model.eval().embeddings(
            input_ids=encoded["input_ids"], token_type_ids=encoded["token_type_ids"])[0]
    np.testing.assert_allclose(got, expected.numpy(), atol=1e-5)


# --- the shared tokenizer options, and the Chinese interface -----------------------------------

def test_padding_shows_pad_rows_and_the_checks_cover_them(bundle: ModelBundle):
    """With padding on, [PAD] rows are drawn as embeddings and every check runs on them too."""
    query = {"a": SEED, "max_length": "12", "padding": "true"}
    expected = analyze(bundle, SEED, max_length=12, pad_to_max_length=True, attentions=False)
    assert len(expected.tokens) == 12 and expected.tokens[-1] == "[PAD]"
    at = open_app(PAGE, **EXACT, **query, st_stage="position_embeddings")
    assert_clean(at)
    z, _, y = heatmap(stage_charts(at)["position_embeddings"])
    assert len(y) == 12 and "[PAD]" in y[-1]
    np.testing.assert_allclose(z, expected.stages["position_embeddings"][:, :DIMS], atol=1e-6)
    ln = open_app(PAGE, **query, **{SECTION_KEY: LAYERNORM})
    assert_clean(ln)
    assert metric(ln, "LayerNorm(sum) vs model.embeddings") <= TOLERANCE
    stats = charts(ln)["st_fig_ln_stats"]["data"][0]
    assert len(plotly_values(stats["y"])) == 12
    one_hot = open_app(PAGE, **query, **{SECTION_KEY: ONE_HOT})
    z, _, _ = heatmap(charts(one_hot)["st_fig_one_hot"])
    assert z.shape[0] == 12 and z.sum() == 12
    parts = open_app(PAGE, **query, **{SECTION_KEY: PARTS})
    assert len(plotly_values(charts(parts)["st_fig_norms"]["data"][0]["y"])) == 12


def test_sections_and_keys_are_the_pages_own():
    from pages.stages import page

    assert [s.label for s in page.SECTIONS] == list(SECTIONS)
    assert page.SECTION_KEY == SECTION_KEY


def test_the_page_in_chinese():
    """lang=zh: the Chinese title, explanation and tab labels, figures naming the model, no
    exception."""
    from components.i18n import _, set_language
    from pages.stages import page

    at = open_app(PAGE, **EXACT, a=SEED, lang="zh")
    assert_clean(at)
    set_language("zh")
    try:
        title, explanation = _(page.TITLE), _(page.EXPLANATION)
        tabs = [_(s.label) for s in page.SECTIONS]
    finally:
        set_language("en")
    assert title != page.TITLE and explanation != page.EXPLANATION
    assert at.title[0].value == title == "各阶段"
    assert explanation in notes(at)
    assert [tab.label for tab in at.tabs] == tabs
    assert all(re.search(r"[\u4e00-\u9fff]", label) for label in tabs), tabs
    assert len(set(tabs)) == len(SECTIONS)
    assert at.radio(key="st_layout").value == "one at a time"  # English values, Chinese labels
    [spec] = charts(at).values()
    assert "all-MiniLM-L6-v2" in spec["layout"]["title"]["text"]
    assert spec["layout"]["xaxis"]["title"]["text"] == "隐藏维度"
    for section in SECTIONS[1:]:
        other = open_app(PAGE, a=SEED, lang="zh", **{SECTION_KEY: section})
        assert_clean(other)
        assert not other.error


# --- the stage slider switches pictures in the browser -----------------------------------------

def test_every_stage_picture_is_sent_and_a_link_opens_on_its_stage(seed_result):
    """Stepping as images: the page sends each stage's picture (its values in plotly's RdBu_r on
    the ±bound its words state) and opens on the link's stage; the downloads under it are that
    stage's, and the switcher reports moves to redraw them."""
    at = open_app(PAGE, a=SEED, st_stage="layer_3")
    assert_clean(at)
    stages = switchers(at)["st_stage"]
    assert stages.value == "layer_3" and stages.report
    assert stages.label == "Stage"
    for i, name in enumerate(stages.names):
        [image] = stages.heatmaps(i).values()
        bound = float(re.search(r"colours ±([\d.e+-]+)", stages.words(i)).group(1).rstrip("."))
        expected = scale_colours(seed_result.stages[name][:, :DIMS], -bound, bound, "RdBu_r")
        assert np.abs(image.rgb - expected).max() <= 6, name
    keys = {b.proto.id.rsplit("-", 1)[-1] for b in at.get("download_button")}
    assert any(k.endswith("csv_st_layer_3") for k in keys), keys
    assert not any("st_word_embeddings" in k for k in keys)


@pytest.mark.parametrize("lang, line", [("en", "There is no stage"), ("zh", "没有阶段")])
def test_a_stage_the_model_lacks_is_said_in_one_line(lang: str, line: str):
    at = open_app(PAGE, a=SEED, st_stage="layer_99", lang=lang)
    assert_clean(at)
    [said] = [i.value for i in at.info if "layer_99" in i.value]
    assert line in said and "word_embeddings" in said
    assert switchers(at)["st_stage"].value == "word_embeddings"
