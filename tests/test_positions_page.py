"""The Positions page in AppTest (figure data checked against core and independent numpy), and
in Chromium for a screenshot and the PCA's count of positions switched in the browser.

The page is four tabs and only the open one runs, so each check opens the tab that holds it
through the URL (``?pos_section=Probe``), as a shared link would.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from streamlit.testing.v1 import AppTest
from transformers import BertModel

from components.labels import SEGMENT_COLOURS
from core.positions import (
    PROBE_FOLDS,
    PROBE_SEED,
    RIDGE_ALPHAS,
    offset_cosine,
    pca_projection,
    position_cosines,
    position_table,
    vector_norms,
)
from pages.positions import cache as positions_cache
from pages.positions.cache import CALLS, clear_position_caches
from pages.positions.figures import first_counts
from pages.positions.pictures import STYLE
from tests.conftest import (
    ARTIFACTS,
    assert_clean,
    open_app,
    open_in_browser,
    plotly_values,
    table_rows,
    tiny_config,
    wait_for_app,
)
from tests.switcher import switchers
from tests.test_picture_switcher_browser import move_and_check
from tests.test_positions_core import lstsq_probe, numpy_pca

PAGE = "pages/positions/page.py"
MODEL = "all-MiniLM-L6-v2"
COUNT_KEY = "pos_count"
COUNTS = [32, 64, 128, 256, 512]
COUNT_NAMES = ["first 32", "first 64", "first 128", "first 256", "all 512"]
FREE = {"pos_free": "true"}   # "Choose any range": the two-ended slider
SENTENCE = "This is a test sentence"
TOKENS = ["[CLS]", "this", "is", "a", "test", "sentence", "[SEP]"]
MODEL_LEVEL = ("table", "pca", "cosine", "offset", "probe", "norms")
SECTION_KEY = "pos_section"
SECTIONS = ("PCA", "Cosines", "Probe", "Norms")   # the tabs, in order; the first is the default
ZH_SECTIONS = ("主成分分析", "余弦相似度", "探针", "范数")
# The figures name the loaded model, never "BERT" when it is MiniLM.
LEARNED = "learned (all-MiniLM-L6-v2)"
SINUSOID = "sinusoidal (formula)"
NAMES = {"learned": LEARNED, "sinusoidal": SINUSOID}
PLAIN, RIDGE = "plain linear regression", "ridge regression"
MAE_COLUMN = "mean absolute error (positions)"
# What each section draws: chart titles (by their start), its header, download buttons (CSV + .npy
# per matrix) and the cached computations it needs (positions_cache.CALLS names).
CONTENT = {
    "PCA": {
        "charts": (f"{LEARNED}: positions 0–511", f"{SINUSOID}: positions 0–511",
                   "Explained variance"),
        # As it opens: the same three as pictures (interactive with "Exact values on hover")
        "pictures": ("positions_pca_learned", "positions_pca_sinusoidal", "positions_scree"),
        "header": "PCA of the position table",
        "downloads": 8,    # 2 tables, 2 PCA coordinate sets
        "computes": {"table", "pca"},
    },
    "Cosines": {
        "charts": (f"{LEARNED}: cos(p, q)", f"{SINUSOID}: cos(p, q)",
                   "How similarity falls"),
        "header": "Cosine similarity between positions",
        "downloads": 6,    # 2 cosine windows, the offset curves
        "computes": {"table", "cosine", "offset"},
    },
    "Probe": {
        "charts": ("Probe",),
        "header": "Position probe (Wang & Chen 2020)",
        "downloads": 2,    # the probe's predictions
        "computes": {"table", "probe"},
    },
    "Norms": {
        "charts": (f"Norm of each position vector: {LEARNED}",
                   f"Norm of each position vector: {SINUSOID}"),
        "header": "Norm of each position vector",
        "downloads": 2,    # the norms
        "computes": {"table", "norms"},
    },
}
N_CHARTS = sum(len(c["charts"]) for c in CONTENT.values())   # 9: the whole page before the tabs
EXACT = {"pos_exact": "true"}   # the PCA tab's interactive figures instead of its pictures

pytestmark = pytest.mark.usefixtures("one_blas_thread")


# --- reading the page --------------------------------------------------------------------------
def charts(at) -> dict[str, dict]:
    """Every plotly figure on the page, by its title ("title: subtitle" for the figures drawn
    two to a row, whose title has a second line)."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return {heading(spec["layout"]["title"]): spec for spec in specs}


def pictures(at) -> dict[str, str]:
    """Every picture drawn as page HTML (st.html), by its data-figure name; and the parts of
    the picture the PCA's count switcher shows (both tables' PCA and the scree), by theirs."""
    found = {}
    for element in at.get("html"):
        name = re.search(r'data-figure="([^"]+)"', element.proto.body)
        if name:
            found[name.group(1)] = element.proto.body
    counts = switchers(at).get(COUNT_KEY)
    if counts is not None:
        found.update(picture_parts(counts.pictures[counts.index]))
    return found


def picture_parts(body: str) -> dict[str, str]:
    """The parts of one of the count switcher's pictures by name, each from its name on to the
    next part's."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'data-part="([^"]+)"', body)]
    ends = [start for start, _ in starts[1:]] + [len(body)]
    return {name: body[start:end] for (start, name), end in zip(starts, ends, strict=True)}


def picture_labels(body: str) -> list[str]:
    """The token labels printed beside the input's rings in a PCA picture."""
    block = re.search(r'<div data-labels="input">(.*?)</div>', body)
    return re.findall(r'<span class="pp-label"[^>]*>(.*?)</span>', block.group(1)) if block \
        else []


def picture_label_places(body: str) -> list[tuple[str, float, float]]:
    """(token, left %, top %) of every label printed beside a ring in a PCA picture."""
    block = re.search(r'<div data-labels="input">(.*?)</div>', body)
    return [(text, float(x), float(y)) for x, y, text in re.findall(
        r'<span class="pp-label" style="left:([\d.-]+)%;top:([\d.-]+)%">(.*?)</span>',
        block.group(1))] if block else []


def picture_rings(body: str) -> list[tuple[float, float, str]]:
    """(left %, top %, pointer text) of every ring in a PCA picture."""
    return [(float(x), float(y), title) for x, y, title in re.findall(
        r'<span class="pp-ring" style="left:([\d.-]+)%;top:([\d.-]+)%;[^"]*" title="([^"]*)"',
        body)]


def picture_points(body: str) -> np.ndarray:
    """The dots of a PCA picture's SVG image, in its view box units, in position order."""
    data = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', body).group(1)
    svg = base64.b64decode(data).decode()
    return np.array([(float(x), float(y)) for x, y in re.findall(r'M([\d.-]+) ([\d.-]+)h0',
                                                                 svg)])


def interactive(at) -> bool:
    """Whether the PCA tab drew interactive figures (asked for, or the 3D view)."""
    return bool(at.session_state["pos_exact"]) or at.session_state["pos_view"] == "3D"


def heading(title: dict) -> str:
    subtitle = title.get("subtitle", {}).get("text")
    return f"{title['text']}: {subtitle}" if subtitle else title["text"]


def chart(at, prefix: str) -> dict:
    found = [spec for title, spec in charts(at).items() if title.startswith(prefix)]
    assert len(found) == 1, (prefix, list(charts(at)))
    return found[0]


def trace(spec: dict, name: str) -> dict | None:
    found = [t for t in spec["data"] if t.get("name") == name]
    return found[0] if found else None


def probe_cell(at, row: str, table: str) -> str:
    """One cell of the probe's error table: a fit (or the guess) against a table."""
    frame = at.table[0].value
    found = frame.loc[frame[MAE_COLUMN] == row, table]
    assert len(found) == 1, (row, table, frame)
    return found.iloc[0]


def page_text(at) -> str:
    """Every markdown element of the page, joined (explanations and notes are body text)."""
    return "\n".join(m.value for m in at.markdown)


def download_keys(at) -> list[str]:
    return [b.proto.id.rsplit("-", 1)[-1] for b in at.get("download_button")]


def open_tab(at) -> str:
    """The label of the tab the page drew, checked against where its content went."""
    label = at.session_state[SECTION_KEY]
    filled = [tab.label for tab in at.tabs if tab.children]
    assert filled == [label], (label, filled)
    return label


def assert_shows_section(at, section: str) -> None:
    """The page drew ``section``'s header and figures and nothing of the other sections."""
    assert open_tab(at) == section
    assert [h.value for h in at.main.header] == [CONTENT[section]["header"]]
    titles = list(charts(at))
    drawn = list(pictures(at))
    if "pictures" in CONTENT[section] and not interactive(at):
        assert drawn == list(CONTENT[section]["pictures"]) and not titles, (drawn, titles)
        return
    assert not drawn, drawn
    assert len(titles) == len(CONTENT[section]["charts"]), titles
    for prefix in CONTENT[section]["charts"]:
        assert any(t.startswith(prefix) for t in titles), (prefix, titles)


class Runs(dict):
    """AppTest runs of the page for one URL, one per section, each opened on first use."""

    def __init__(self, **query: str) -> None:
        super().__init__()
        self.query = query

    def __missing__(self, section: str) -> AppTest:
        at = open_app(PAGE, **self.query, **{SECTION_KEY: section})
        assert_clean(at)
        self[section] = at
        return at


@pytest.fixture(scope="module")
def tables(bundle) -> dict[str, np.ndarray]:
    return {kind: position_table(bundle, kind) for kind in ("learned", "sinusoidal")}


@pytest.fixture(scope="module")
def single() -> Runs:
    """Each tab with its interactive figures, whose data the checks below read."""
    return Runs(a=SENTENCE, **EXACT)


@pytest.fixture(scope="module")
def pair() -> Runs:
    return Runs(a="What is your name?", b="My name is BERT.", **EXACT)


@pytest.fixture(scope="module")
def as_opened() -> AppTest:
    """The PCA tab as it opens: pictures."""
    at = open_app(PAGE, a=SENTENCE)
    assert_clean(at)
    return at


# --- the sections ------------------------------------------------------------------------------
def test_default_run_draws_only_the_first_section():
    """No section in the URL: the PCA tab is open, and the other sections' figures (the probe's,
    the norms', the cosine heatmaps) are neither drawn nor sent."""
    at = open_app(PAGE, a=SENTENCE)
    assert_clean(at)
    assert [tab.label for tab in at.tabs] == list(SECTIONS)
    assert_shows_section(at, "PCA")
    assert not any(title.startswith("Probe") for title in charts(at))
    assert not at.metric and not at.dataframe
    assert SECTION_KEY not in at.query_params   # the default tab keeps the URL clean


@pytest.mark.parametrize("section", SECTIONS)
def test_each_section_label_draws_its_section(single, section):
    at = single[section]
    assert_shows_section(at, section)
    assert "Position table: **512 × 384**" in page_text(at)   # above the tabs
    keys = download_keys(at)
    assert len(keys) == CONTENT[section]["downloads"] == len(set(keys))
    assert all(k.startswith(("csv_pos_dl_", "npy_pos_dl_")) for k in keys)
    # each control lives in the one section it drives
    sliders = {s.key: s.value for s in at.slider}
    assert sliders == {"PCA": {"pos_range": (0, 511)},
                       "Cosines": {"pos_cos_window": (0, 127)}}.get(section, {})


def test_the_sections_together_hold_the_whole_former_page(single):
    """Nine figures and 18 distinct download buttons, as on the page before it had tabs."""
    assert sum(len(single[s].get("plotly_chart")) for s in SECTIONS) == N_CHARTS
    keys = [k for s in SECTIONS for k in download_keys(single[s])]
    assert len(keys) == 18 and len(set(keys)) == 18


@pytest.mark.parametrize("section", SECTIONS)
def test_only_the_open_section_is_computed(section):
    """From empty position caches, opening one tab runs only that section's computations (the
    probe is not fitted while the PCA tab is open, and so on)."""
    clear_position_caches()
    before = {name: CALLS[name] for name in MODEL_LEVEL}
    at = open_app(PAGE, a=SENTENCE, **{SECTION_KEY: section})
    assert_clean(at)
    ran = {name for name in MODEL_LEVEL if CALLS[name] != before[name]}
    assert ran == CONTENT[section]["computes"]


@pytest.mark.parametrize("value", ["probe", "<script>alert(1)</script>"])
def test_unknown_section_in_the_url_opens_the_pca_section(value):
    at = open_app(PAGE, a=SENTENCE, **{SECTION_KEY: value})
    assert_clean(at)
    assert_shows_section(at, "PCA")
    assert SECTION_KEY not in at.query_params   # the bad value is dropped from the URL


def test_switching_tabs_keeps_each_sections_settings():
    """A setting made in one tab is still there after a visit to another: the controls were all
    on one page before, so hiding them must not reset them."""
    at = open_app(PAGE, a=SENTENCE)
    at.toggle(key="pos_free").set_value(True).run()
    at.slider(key="pos_range").set_value((20, 300)).run()
    at.segmented_control(key="pos_view").set_value("3D").run()
    at.session_state[SECTION_KEY] = "Cosines"
    at.run()
    assert_shows_section(at, "Cosines")
    at.slider(key="pos_cos_window").set_value((5, 60)).run()
    at.session_state[SECTION_KEY] = "PCA"
    at.run()
    assert_clean(at)
    assert at.slider(key="pos_range").value == (20, 300)
    assert at.segmented_control(key="pos_view").value == "3D"
    assert f"{LEARNED}: positions 20–300" in charts(at)
    at.session_state[SECTION_KEY] = "Cosines"
    at.run()
    assert at.slider(key="pos_cos_window").value == (5, 60)
    assert "How similarity falls with distance (positions 5–60)" in charts(at)


# --- one sentence ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["learned", "sinusoidal"])
def test_pca_scatter_shows_the_core_projection(single, tables, kind):
    proj = pca_projection(tables[kind])
    spec = chart(single["PCA"], f"{NAMES[kind]}: positions")
    points = trace(spec, "positions 0–511")
    np.testing.assert_array_equal(plotly_values(points["x"]), proj.coords[:, 0])
    np.testing.assert_array_equal(plotly_values(points["y"]), proj.coords[:, 1])
    np.testing.assert_array_equal(plotly_values(points["marker"]["color"]), np.arange(512))
    assert plotly_values(points["x"]).dtype == np.float32
    assert spec["layout"]["xaxis"]["title"]["text"].startswith("PC1 (")


def test_input_positions_are_highlighted_with_their_tokens(single, tables):
    proj = pca_projection(tables["learned"])
    marks = trace(chart(single["PCA"], f"{LEARNED}: positions"), "your input")
    assert marks["text"] == TOKENS  # far enough apart that every token is printed
    assert marks["hovertext"] == [f"{i} {tok}" for i, tok in enumerate(TOKENS)]
    np.testing.assert_array_equal(plotly_values(marks["x"]), proj.coords[:7, 0])
    np.testing.assert_array_equal(plotly_values(marks["y"]), proj.coords[:7, 1])
    assert marks["marker"]["color"] == [SEGMENT_COLOURS[0]] * 7
    norms = trace(chart(single["Norms"], f"Norm of each position vector: {LEARNED}"),
                  "your input")
    np.testing.assert_array_equal(plotly_values(norms["x"]), np.arange(7))
    np.testing.assert_array_equal(plotly_values(norms["y"]), vector_norms(tables["learned"])[:7])


def test_scree_shows_explained_variance(single, tables):
    spec = chart(single["PCA"], "Explained variance")
    for kind, name in NAMES.items():
        ratio = pca_projection(tables[kind]).explained_variance_ratio[:20]
        np.testing.assert_array_equal(plotly_values(trace(spec, name)["y"]), ratio)


# --- the PCA tab as it opens: pictures ---------------------------------------------------------
def test_pca_opens_as_pictures_without_a_plotly_figure(as_opened):
    """Pictures first: the two paths and the scree are page HTML, and "Exact values on hover"
    turns them into the interactive figures (the data of those is checked above)."""
    assert_shows_section(as_opened, "PCA")
    assert not as_opened.get("plotly_chart")
    assert as_opened.toggle(key="pos_exact").value is False
    as_opened.toggle(key="pos_exact").set_value(True).run()
    assert_clean(as_opened)
    assert_shows_section(as_opened, "PCA")
    as_opened.toggle(key="pos_exact").set_value(False).run()
    assert_shows_section(as_opened, "PCA")


@pytest.mark.parametrize("kind", ["learned", "sinusoidal"])
def test_pca_picture_draws_the_core_projection_on_one_scale(as_opened, tables, kind):
    """Every position is a dot at its PC1 / PC2 coordinates: an affine map of the core's PCA
    with one scale for both axes (y upwards), in position order."""
    proj = pca_projection(tables[kind])
    body = pictures(as_opened)[f"positions_pca_{kind}"]
    dots = picture_points(body)
    assert dots.shape == (512, 2)
    for axis, sign in ((0, 1.0), (1, -1.0)):
        slope, offset = np.polyfit(proj.coords[:, axis], dots[:, axis], 1)
        np.testing.assert_allclose(dots[:, axis], slope * proj.coords[:, axis] + offset,
                                   atol=0.6)   # the picture writes whole units
        assert np.sign(slope) == sign
        if axis == 0:
            x_slope = slope
    assert slope == pytest.approx(-x_slope, rel=1e-2)
    assert f"{NAMES[kind]}" in body and "positions 0–511" in body and "PC1 (" in body


def test_pca_picture_rings_and_labels_the_input(as_opened, tables):
    """The input's tokens are page text beside their rings, at the dots of their positions;
    the pointer on a ring names its position and token."""
    body = pictures(as_opened)["positions_pca_learned"]
    rings = picture_rings(body)
    # Labelled where there is room: the printed labels are the input's tokens, in order, each
    # at its own ring, and no two closer than an eighth of the picture (they would overprint).
    printed = picture_label_places(body)
    assert printed and printed[0][0] == TOKENS[0]
    by_place = {(round(x, 2), round(y, 2)): title.split(" ", 1)[1] for x, y, title in rings}
    assert [by_place[(x, y)] for _t, x, y in printed] == [t for t, _x, _y in printed]
    assert [t for t, *_ in printed] == [t for t in TOKENS if t in {p[0] for p in printed}]
    places = np.array([(x, y) for _t, x, y in printed]) / 100 * np.array([1000.0, 750.0])
    if len(places) > 1:
        gaps = np.linalg.norm(places[:, None] - places[None], axis=-1)
        assert gaps[np.triu_indices(len(places), 1)].min() >= 0.1 * 750
    assert [title for *_, title in rings] == [f"{i} {tok}" for i, tok in enumerate(TOKENS)]
    dots = picture_points(body)
    box = np.array([1000.0, 750.0])
    shown = np.array([(x, y) for x, y, _ in rings]) / 100 * box
    np.testing.assert_allclose(shown, dots[:7], atol=0.6)
    colours = re.findall(r'border-color:(#[0-9a-f]{6})', body)
    assert colours == [SEGMENT_COLOURS[0]] * 7


def test_scree_picture_bars_are_the_explained_variance(as_opened, tables):
    body = pictures(as_opened)["positions_scree"]
    for kind, name in NAMES.items():
        ratio = pca_projection(tables[kind]).explained_variance_ratio[:20]
        shown = [float(h) for h in re.findall(
            rf'height:([\d.]+)%;background:[^"]+" title="{re.escape(name)}: PC\d+', body)]
        np.testing.assert_allclose(shown, ratio * 100, atol=0.006)


# --- the PCA's count of first positions, switched in the browser -------------------------------
def test_first_counts_are_powers_of_two_then_the_whole_table():
    assert first_counts(512) == COUNTS
    assert first_counts(64) == [32, 64]
    assert first_counts(40) == [32, 40]     # a model with 40 positions gets fewer values
    assert first_counts(20) == [20]
    assert first_counts(1000) == [*COUNTS, 1000]


def test_pca_opens_on_a_switcher_over_the_first_positions(as_opened):
    """As it opens: no range slider but the switcher, on the whole table, telling the server of
    each move (the downloads follow it); the link stays clean."""
    counts = switchers(as_opened)[COUNT_KEY]
    assert counts.label == "Positions to project" and counts.report
    assert counts.names == COUNT_NAMES and counts.value == "all 512"
    assert not as_opened.slider and as_opened.toggle(key="pos_free").value is False
    assert "PCA coordinates of positions 0–511" in page_text(as_opened)
    assert COUNT_KEY not in as_opened.query_params and "pos_free" not in as_opened.query_params


def test_each_counts_picture_is_the_pca_of_its_first_positions(as_opened, tables):
    """Each value's picture is what the tab draws for positions 0..N-1: the cached pictures
    (cache.get_pca_picture, get_scree_picture) with the input's rings, the style sent once for
    all; its dots and bars are numpy's PCA of the first N rows, computed here."""
    counts = switchers(as_opened)[COUNT_KEY]
    for count, body in zip(COUNTS, counts.pictures, strict=True):
        assert body.count('data-figure="') == 1 and STYLE not in body
        parts = picture_parts(body)
        assert list(parts) == list(CONTENT["PCA"]["pictures"])
        subtitle = f"positions 0–{count - 1}"
        for kind, name in NAMES.items():
            part = parts[f"positions_pca_{kind}"]
            head, tail = positions_cache.get_pca_picture(MODEL, kind, 0, count - 1, (1, 2), name,
                                                         subtitle, "en")
            assert head.replace(STYLE, "") in part and tail in part
            reference, ratio = numpy_pca(tables[kind][:count], 20)
            dots = picture_points(part)
            assert dots.shape == (count, 2)
            scales = []
            for axis in (0, 1):
                slope, offset = np.polyfit(reference[:, axis], dots[:, axis], 1)
                np.testing.assert_allclose(dots[:, axis], slope * reference[:, axis] + offset,
                                           atol=0.6)   # the picture writes whole units
                scales.append(abs(slope))
            assert scales[0] == pytest.approx(scales[1], rel=1e-2)   # one scale for both axes
            assert [t for *_, t in picture_rings(part)] == [f"{i} {t}" for i, t in
                                                            enumerate(TOKENS)]
            bars = [float(h) for h in re.findall(
                rf'height:([\d.]+)%;background:[^"]+" title="{re.escape(name)}: PC\d+',
                parts["positions_scree"])]
            np.testing.assert_allclose(bars, ratio * 100, atol=0.006)
        scree = positions_cache.get_scree_picture(MODEL, 0, count - 1, "en")
        assert scree.replace(STYLE, "").replace("data-figure", "data-part", 1) in body


def test_a_link_opens_on_its_count_in_either_language():
    """A link's count in the other language (or as a number) opens on it; the words that depend
    on the count are in its picture (they switch with it), the downloads are its positions'."""
    at = open_app(PAGE, a=" ".join(["word"] * 60), **{COUNT_KEY: "前 32 个"})
    assert_clean(at)
    counts = switchers(at)[COUNT_KEY]
    assert counts.value == "first 32" and not at.info
    assert counts.words(0) == "30 of your input's positions lie outside 0–31 and are not drawn."
    assert counts.words(1) == ("Your input has 62 positions here: they are ringed; hover a ring "
                               "to read its token.")
    assert "PCA coordinates of positions 0–31" in page_text(at)
    at = open_app(PAGE, a=" ".join(["word"] * 60), lang="zh", **{COUNT_KEY: "64"})
    assert_clean(at)
    counts = switchers(at)[COUNT_KEY]
    assert counts.names == ["前 32 个", "前 64 个", "前 128 个", "前 256 个", "全部 512 个"]
    assert counts.value == "前 64 个" and counts.label == "要投影的位置"
    assert counts.words(0) == "你的输入有 30 个位置在 0–31 之外，没有画出。"
    assert "位置 0–63 的主成分分析坐标" in page_text(at)


def test_an_unknown_count_in_the_link_gets_one_line():
    at = open_app(PAGE, a=SENTENCE, **{COUNT_KEY: "<b>first 1000</b>"})
    assert_clean(at)
    assert switchers(at)[COUNT_KEY].value == "all 512"
    assert [i.value for i in at.info] == [
        "There is no choice `<b>first 1000</b>` of positions to project here\\: the choices run "
        "from `first 32` to `all 512`\\. Showing `all 512`\\."]


def test_an_old_link_with_a_range_opens_on_that_range(tables):
    """Links made before the switcher carry a range: they open with "Choose any range" on and
    the two-ended slider on it; turning it off goes to the switcher on the whole table."""
    at = open_app(PAGE, a=SENTENCE, pos_range=["10", "200"])
    assert_clean(at)
    assert at.toggle(key="pos_free").value is True
    assert at.slider(key="pos_range").value == (10, 200) and COUNT_KEY not in switchers(at)
    body = pictures(at)["positions_pca_learned"]
    assert "positions 10–200" in body and picture_points(body).shape == (191, 2)
    assert "7 of your input's positions lie outside 10–200" in page_text(at)
    at.toggle(key="pos_free").set_value(False).run()
    assert_clean(at)
    assert not at.slider and switchers(at)[COUNT_KEY].value == "all 512"
    at.toggle(key="pos_free").set_value(True).run()   # the range chosen is kept
    assert at.slider(key="pos_range").value == (10, 200)


def test_the_3d_view_is_interactive_without_the_toggle():
    at = open_app(PAGE, a=SENTENCE, pos_view="3D")
    assert_clean(at)
    assert not pictures(at) and len(charts(at)) == 3
    assert "The 3D view is always an interactive figure" in "\n".join(c.value for c in at.caption)


def reference_folds(n: int = 512) -> np.ndarray:
    """The probe's folds, rebuilt from its definition: 5 shuffled folds, seed 0."""
    fold = np.empty(n, dtype=np.int64)
    kfold = KFold(n_splits=PROBE_FOLDS, shuffle=True, random_state=PROBE_SEED)
    for f, (_, test) in enumerate(kfold.split(np.zeros((n, 1)))):
        fold[test] = f
    return fold


def test_probe_errors_appear_on_the_page(single, tables):
    """The MAE table, fold table and scatter equal numpy least squares on the same folds."""
    fold = reference_folds()
    positions = np.arange(512)
    predictions = {kind: lstsq_probe(tables[kind], fold) for kind in tables}
    errors = {kind: np.abs(pred - positions) for kind, pred in predictions.items()}
    single = single["Probe"]

    learned = probe_cell(single, PLAIN, LEARNED)
    assert learned == f"{errors['learned'].mean():.2f}"
    assert errors["learned"].mean() > 1.0  # MiniLM's learned table is far from linear in p
    sinusoid = probe_cell(single, PLAIN, SINUSOID)
    assert sinusoid == "< 0.01" and errors["sinusoidal"].mean() < 0.01
    guess = np.array([positions[fold != fold[p]].mean() for p in positions])
    baseline = probe_cell(single, "guessing the mean index", LEARNED)
    assert baseline == f"{np.abs(guess - positions).mean():.2f}"

    frame = single.table[1].value   # the per-fold table, under the error table
    assert list(frame["positions held out"]) == list(np.bincount(fold))
    for f in range(PROBE_FOLDS):
        assert frame["learned, plain"][f] == pytest.approx(
            errors["learned"][fold == f].mean(), rel=1e-6
        )
        assert frame["sinusoidal, plain"][f] < 0.01

    spec = chart(single, "Probe")
    for kind, name in NAMES.items():
        shown = plotly_values(trace(spec, f"{name}, {PLAIN}")["y"]).astype(np.float64)
        np.testing.assert_allclose(shown, predictions[kind], rtol=1e-5, atol=5e-3)


def test_probe_shows_plain_and_ridge_side_by_side(single, tables):
    """The ridge row, the per-fold ridge columns and the ridge traces equal scikit-learn's
    RidgeCV on the same folds, and the page says why the two fits differ."""
    at = single["Probe"]
    kfold = KFold(n_splits=PROBE_FOLDS, shuffle=True, random_state=PROBE_SEED)
    positions = np.arange(512, dtype=np.float64)
    fold = reference_folds()
    spec = chart(at, "Probe")
    frame = at.table[1].value
    ridge_mae = {}
    for kind, name in NAMES.items():
        x = np.asarray(tables[kind], dtype=np.float64)
        expected = cross_val_predict(RidgeCV(alphas=RIDGE_ALPHAS), x, positions, cv=kfold)
        errors = np.abs(expected - positions)
        ridge_mae[kind] = errors.mean()
        shown = f"{errors.mean():.2f}" if errors.mean() >= 0.01 else "< 0.01"
        assert probe_cell(at, RIDGE, name) == shown
        traced = plotly_values(trace(spec, f"{name}, {RIDGE}")["y"]).astype(np.float64)
        np.testing.assert_allclose(traced, expected, rtol=1e-5, atol=5e-3)
        for f in range(PROBE_FOLDS):
            column = "learned, ridge" if kind == "learned" else "sinusoidal, ridge"
            # abs: the sinusoidal errors are ~3e-4 positions, where BLAS threading moves digits
            assert frame[column][f] == pytest.approx(errors[fold == f].mean(), rel=1e-6, abs=1e-4)
    plain = float(probe_cell(at, PLAIN, LEARNED))
    assert ridge_mae["learned"] < plain / 2   # MiniLM: about 15 against 61
    text = page_text(at)
    assert "Why the two fits differ: each training fold holds only 409 positions for 384 inputs" \
        in text
    assert f"misses by {ridge_mae['learned']:.2f}" in text and "α = 0.01" in text
    assert not at.metric   # long values in narrow metric columns were cut off at 1024 px


# --- a pair ------------------------------------------------------------------------------------
def test_pair_highlights_both_segments(pair):
    pair = pair["PCA"]
    marks = trace(chart(pair, f"{LEARNED}: positions"), "your input")
    assert marks["text"][0] == "[CLS]" and marks["text"].count("[SEP]") == 2
    assert len(marks["text"]) == 13
    assert marks["marker"]["color"] == [SEGMENT_COLOURS[0]] * 7 + [SEGMENT_COLOURS[1]] * 6
    assert "blue = sentence A, orange = sentence B" in page_text(pair)
    # The sinusoid's first positions sit almost on one spot: only labels with room are printed,
    # every ring keeps its "position token" hover.
    crowded = trace(chart(pair, f"{SINUSOID}: positions"), "your input")
    assert crowded["text"][0] == "[CLS]" and "" in crowded["text"]
    assert all(t in ("", tok) for t, tok in zip(crowded["text"], marks["text"], strict=True))
    assert crowded["hovertext"] == marks["hovertext"]


def test_cosine_heatmap_and_offset_curve(pair, tables):
    pair = pair["Cosines"]
    for kind, name in NAMES.items():
        cos = position_cosines(tables[kind])
        spec = chart(pair, f"{name}: cos(p, q)")
        heat = spec["data"][0]
        np.testing.assert_array_equal(plotly_values(heat["z"]), cos[:128, :128])
        np.testing.assert_array_equal(plotly_values(heat["x"]), np.arange(128))
        assert (heat["zmin"], heat["zmax"]) == (-1.0, 1.0)
        box = spec["layout"]["shapes"][0]
        assert (box["x0"], box["x1"]) == (-0.5, 12.5)  # the pair's 13 positions
        curve = trace(chart(pair, "How similarity falls"), name)
        np.testing.assert_array_equal(plotly_values(curve["y"]), offset_cosine(cos, 0, 127))


# --- words and legibility ----------------------------------------------------------------------
@pytest.mark.parametrize("section", SECTIONS)
def test_figures_name_the_model_and_keep_legends_below(single, section):
    """No "BERT" where MiniLM is loaded; every legend sits under its plot, clear of the title."""
    for title, spec in charts(single[section]).items():
        assert "BERT" not in title, title
        assert all("BERT" not in str(t.get("name", "")) for t in spec["data"]), title
        legend = spec["layout"]["legend"]
        assert legend["orientation"] == "h" and legend["y"] < 0, (title, legend)


def test_pca_pickers_share_one_row_of_four_columns(single):
    """The range slider has a row of its own; view and the three axes share four columns (five
    columns collapsed the pickers at 1024 px)."""
    at = single["PCA"]
    pickers = [(c.weight, [getattr(w, "key", None) for w in c.children.values()])
               for c in at.main.columns if c.weight < 0.5]
    assert pickers == [(0.25, ["pos_view"]), (0.25, ["pos_pc_x"]), (0.25, ["pos_pc_y"]),
                       (0.25, ["pos_pc_z"])], pickers
    assert at.slider(key="pos_range").value == (0, 511)   # not inside a column


@pytest.mark.parametrize("section", ZH_SECTIONS)
def test_page_in_chinese(section):
    """lang=zh: the Chinese title, explanation, tab labels and figure titles; no exception."""
    at = open_app(PAGE, a=SENTENCE, lang="zh", **{SECTION_KEY: section})
    assert_clean(at)
    assert at.title[0].value == "位置"
    assert "位置嵌入" in page_text(at) and "正弦位置编码" in page_text(at)
    assert [tab.label for tab in at.tabs] == list(ZH_SECTIONS)
    label = at.session_state[SECTION_KEY]
    assert label == section and [t.label for t in at.tabs if t.children] == [section]
    titles = list(charts(at)) or [
        re.search(r'<div class="pp-title">(.*?)</div>', body).group(1)
        for body in pictures(at).values()]
    assert titles and all(re.search(r"[\u4e00-\u9fff]", t) for t in titles), titles
    if section == "探针":
        assert at.table[0].value.columns[0] == "平均绝对误差（位置）"
        assert "岭回归" in list(at.table[0].value.iloc[:, 0])


def test_an_english_link_opens_the_same_tab_in_chinese():
    at = open_app(PAGE, a=SENTENCE, lang="zh", **{SECTION_KEY: "Probe"})
    assert_clean(at)
    assert [t.label for t in at.tabs if t.children] == ["探针"]


# --- caching -----------------------------------------------------------------------------------
def test_changing_the_sentence_does_not_recompute_model_level_results():
    at = open_app(PAGE, a=SENTENCE)
    assert_clean(at)
    before = {name: CALLS[name] for name in MODEL_LEVEL}
    at.text_area(key="a").set_value("Completely different words now").run()
    assert_clean(at)
    words = ["[CLS]", "completely", "different", "words", "now", "[SEP]"]
    assert picture_labels(pictures(at)["positions_pca_learned"]) == words
    assert {name: CALLS[name] for name in MODEL_LEVEL} == before
    at.toggle(key="pos_exact").set_value(True).run()
    marks = trace(chart(at, f"{LEARNED}: positions"), "your input")
    assert marks["text"] == words
    assert {name: CALLS[name] for name in MODEL_LEVEL} == before
    at.text_area(key="b").set_value("And a second one.").run()
    assert {name: CALLS[name] for name in MODEL_LEVEL} == before
    # The counter is live: a range never asked for before runs PCA once per table.
    at.slider(key="pos_range").set_value((3, 97)).run()
    assert_clean(at)
    assert CALLS["pca"] == before["pca"] + 2
    assert CALLS["probe"] == before["probe"]


# --- the URL -----------------------------------------------------------------------------------
def test_deep_link_to_a_3d_view_of_a_range(tables):
    at = open_app(PAGE, a=SENTENCE, pos_range=["10", "200"], pos_view="3D", pos_pc_x="PC2",
                  pos_pc_y="PC3", pos_pc_z="PC1")
    assert_clean(at)
    proj = pca_projection(tables["learned"], 10, 200)
    points = trace(chart(at, f"{LEARNED}: positions 10–200"), "positions 10–200")
    assert points["type"] == "scatter3d"
    for axis, column in zip("xyz", (1, 2, 0), strict=True):
        np.testing.assert_array_equal(plotly_values(points[axis]), proj.coords[:, column])
    assert trace(chart(at, f"{LEARNED}: positions 10–200"), "your input") is None
    assert "7 of your input's positions lie outside 10–200" in page_text(at)


def test_garbage_query_values_fall_back_to_defaults():
    garbage = {"pos_range": "abc", "pos_view": "4D", "pos_pc_x": "PC99", "pos_pc_z": "<script>",
               "pos_cos_window": "-5", "pos_exact": "<b>maybe</b>"}
    at = open_app(PAGE, a=SENTENCE, **garbage)
    assert_clean(at)
    assert_shows_section(at, "PCA")
    assert at.slider(key="pos_range").value == (0, 511)
    assert at.selectbox(key="pos_pc_x").value == 1
    at = open_app(PAGE, a=SENTENCE, **garbage, **{SECTION_KEY: "Cosines"})
    assert_clean(at)
    assert_shows_section(at, "Cosines")
    assert at.slider(key="pos_cos_window").value == (0, 127)


def test_too_short_range_and_high_component_are_explained():
    at = open_app(PAGE, a=SENTENCE, pos_range=["7", "7"], pos_view="3D", pos_pc_x="PC10")
    assert_clean(at)
    text = page_text(at)
    assert "PCA needs at least 4 positions: showing positions 7–10." in text
    assert "PC10 is shown as PC4" in text
    assert f"{LEARNED}: positions 7–10" in charts(at)


def test_wide_cosine_window_is_thinned_and_payload_stays_small():
    at = open_app(PAGE, a=SENTENCE, pos_cos_window=["0", "511"], **{SECTION_KEY: "Cosines"})
    assert_clean(at)
    heat = chart(at, f"{LEARNED}: cos(p, q)")["data"][0]
    z = plotly_values(heat["z"])
    assert z.shape == (128, 128) and z.dtype == np.float32
    np.testing.assert_array_equal(plotly_values(heat["x"]), np.arange(0, 512, 4))
    assert "drawn one in every 4" in page_text(at)
    total = sum(len(c.proto.spec) for c in at.get("plotly_chart"))
    assert total < 500_000, total


# --- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("section", SECTIONS)
def test_empty_sentence_still_shows_the_tables(section):
    at = open_app(PAGE, a="   ", **{SECTION_KEY: section})
    assert_clean(at)
    assert any("Type a sentence" in i.value for i in at.info)
    assert_shows_section(at, section)
    for spec in charts(at).values():   # no rings, no shaded band, no box: there is no input
        assert trace(spec, "your input") is None
        assert all(s["type"] != "rect" for s in spec["layout"].get("shapes", []))
    for body in pictures(at).values():
        assert not picture_rings(body) and not picture_labels(body)


def test_markup_in_the_sentence_is_shown_as_text():
    at = open_app(PAGE, a='<b>x</b> <img src=x onerror="alert(1)">')
    assert_clean(at)
    body = pictures(at)["positions_pca_learned"]
    assert "&lt;" in picture_labels(body) and "&gt;" in picture_labels(body)
    assert "<b>" not in body and "onerror" not in body and "<img src=x" not in body
    at.toggle(key="pos_exact").set_value(True).run()
    marks = trace(chart(at, f"{LEARNED}: positions"), "your input")
    assert "&lt;" in marks["text"] and "&gt;" in marks["text"]
    assert not any("<" in t for t in marks["text"] + marks["hovertext"])
    # The norms tab labels its rings "position token", as the PCA's hover does.
    at.session_state[SECTION_KEY] = "Norms"
    at.run()
    assert_clean(at)
    norms = trace(chart(at, f"Norm of each position vector: {LEARNED}"), "your input")
    assert norms["text"] == marks["hovertext"]


def test_a_folder_model_with_64_positions_and_a_truncated_input(tmp_path, tiny_bundle,
                                                              folder_models_allowed):
    model = BertModel(tiny_config()).eval()
    model.load_state_dict(tiny_bundle.model.state_dict())
    model.save_pretrained(tmp_path)
    tiny_bundle.tokenizer.save_pretrained(tmp_path)
    at = open_app(PAGE, model=str(tmp_path), a=" ".join(["word"] * 100), **EXACT)
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.slider(key="pos_range").value == (0, 63)
    assert any("Truncated" in w.value for w in at.warning)
    assert "Position table: **64 × 32**" in page_text(at)
    proj = pca_projection(position_table(tiny_bundle, "learned"))
    learned = f"learned ({tmp_path.resolve().name})"   # a folder model is named by its folder
    spec = chart(at, f"{learned}: positions 0–63")
    np.testing.assert_allclose(plotly_values(trace(spec, "positions 0–63")["x"]), proj.coords[:, 0],
                               atol=1e-6)
    marks = trace(spec, "your input")
    assert marks["mode"] == "markers" and len(marks["hovertext"]) == 64  # too many to print
    assert "hover a ring to read its token" in page_text(at)
    at.toggle(key="pos_exact").set_value(False).run()   # the pictures: two counts, 32 and 64
    assert_clean(at)
    counts = switchers(at)[COUNT_KEY]
    assert counts.names == ["first 32", "all 64"] and counts.value == "all 64"
    assert picture_points(picture_parts(counts.pictures[0])["positions_pca_learned"]).shape \
        == (32, 2)
    at.session_state[SECTION_KEY] = "Probe"   # the probe, as a visitor clicking its tab sees it
    at.run()
    assert_clean(at)
    assert_shows_section(at, "Probe")
    for fit in (PLAIN, RIDGE):
        assert re.fullmatch(r"\d+\.\d\d|< 0\.01", probe_cell(at, fit, learned))


# --- a real browser ----------------------------------------------------------------------------
def wait_for_charts(page, n: int) -> None:
    """Until exactly ``n`` plotly figures are drawn and no skeleton is left."""
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot').length === {n} && "
        "document.querySelectorAll('[data-testid=\"stSkeleton\"]').length === 0",
        timeout=60_000,
    )


def full_screenshot(page, name: str) -> None:
    """The whole open section: Streamlit scrolls inside its main block, so a "full page" shot
    needs a window that tall (the window goes back to its usual size afterwards)."""
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 40, 8000)})
    page.wait_for_timeout(1500)  # let plotly redraw at the new size before the screenshot
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})


SHOWN = ".ps-picture:not([hidden])"   # the count switcher's picture on screen


def wait_for_count_pictures(page) -> None:
    """Until the count switcher shows its count's picture, its images loaded (the other counts'
    come when the reader reaches for the slider: tests/test_picture_switcher_browser.py)."""
    page.wait_for_function(
        f"document.querySelectorAll('{SHOWN} [data-figure]').length === 1 && "
        f"document.querySelectorAll('{SHOWN}').length === 1 && [...document.querySelectorAll("
        "'.ps-picture img')].every(i => i.complete && i.naturalWidth > 0)", timeout=60_000)


# Where the shown picture's parts sit, and the switcher's words, at the window's size.
LAYOUT_JS = """() => {
  const main = document.querySelector("[data-testid='stMain'] [data-testid='stMainBlockContainer']")
    .getBoundingClientRect();
  const shown = document.querySelector(".ps-picture:not([hidden])");
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, width: r.width}; };
  return {pair: [...shown.querySelectorAll(".pp-pair > div")].map(box),
          scree: box(shown.querySelector("[data-part='positions_scree']")),
          overflow: [...shown.querySelectorAll(".pp-title, .pp-sub, .pp-xtitle, .pp-legend")]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText),
          value: document.querySelector(".ps-value").innerText,
          label_px: parseFloat(getComputedStyle(document.querySelector(".ps-label")).fontSize),
          main_right: main.right};
}"""


@pytest.mark.browser
def test_the_count_of_positions_switches_in_the_browser(server, browser):
    """In Chinese on a 1024x768 projector: both tables' pictures side by side inside the page,
    the scree under them, nothing cut off, the slider's words translated and legible. Then an
    arrow key switches the count in the browser, the link follows, the server hears of it
    after the picture (tests/test_picture_switcher_browser.py's move_and_check)."""
    page = open_in_browser(browser, f"{server}/positions?lang=zh", 1024, 768)
    try:
        wait_for_count_pictures(page)
        seen = page.evaluate(LAYOUT_JS)
        left, right = seen["pair"]
        assert left["top"] == right["top"] and left["right"] <= right["left"], seen
        assert left["width"] > 250 and right["right"] <= seen["main_right"] + 1, seen
        assert seen["scree"]["right"] <= seen["main_right"] + 1, seen
        assert not seen["overflow"], seen
        assert seen["value"] == "全部 512 个" and seen["label_px"] >= 16, seen
        page.locator(".ps-range").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "positions-counts-zh-1024x768.png"))
    finally:
        page.close()
    move_and_check(browser, f"{server}/positions?{COUNT_KEY}=first+64", COUNT_KEY, report=True)


@pytest.mark.browser
def test_positions_page_in_chromium(server, browser):
    page = open_in_browser(browser, f"{server}/positions?a=What+is+your+name%3F&b=My+name+is+BERT.")
    try:
        # Only the open tab (PCA) is drawn: the shown count's picture (both tables' PCA and the
        # scree), and no plotly figure.
        wait_for_count_pictures(page)
        wait_for_charts(page, 0)
        tabs = page.get_by_role("tab")
        assert tabs.all_inner_texts() == list(SECTIONS)
        assert page.locator("[data-testid='stException']").count() == 0
        labels = page.locator(f"{SHOWN} [data-part='positions_pca_learned'] .pp-label")
        assert labels.first.inner_text() == "[CLS]"
        size = labels.first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert size >= 12
        full_screenshot(page, "positions.png")
        page.get_by_text("Exact values on hover").click()   # the interactive figures
        wait_for_charts(page, len(CONTENT["PCA"]["charts"]))
        legend = page.locator(".js-plotly-plot").first.get_by_text("your input")
        assert legend.count() >= 1

        # Clicking a tab reruns the page with that section only, and puts it in the URL.
        page.get_by_role("tab", name="Probe").click()
        page.wait_for_url(re.compile(rf"[?&]{SECTION_KEY}=Probe(&|$)"), timeout=30_000)
        wait_for_app(page)
        wait_for_charts(page, len(CONTENT["Probe"]["charts"]))
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.get_by_text("Position probe (Wang & Chen 2020)").is_visible()
        headers, rows = table_rows(page)   # the probe's error table, plain / ridge / guess
        assert headers[-2:] == [LEARNED, SINUSOID], headers
        assert [row[0] for row in rows] == [PLAIN, RIDGE, "guessing the mean index"], rows
        assert rows[0][-1] == "< 0.01" and rows[1][-1] == "< 0.01", rows
        assert all(re.fullmatch(r"\d+\.\d\d|< 0\.01", v) for row in rows for v in row[-2:])
        assert not page.dialogs  # no script in the inputs ran
        full_screenshot(page, "positions-probe.png")
    finally:
        page.close()
