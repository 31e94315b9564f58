"""The Similarity page: AppTest runs checked against the core's numbers, and one Chromium look.

The page is four sections shown as tabs and only the open one runs, so each test opens the
section it checks through the URL (``?sim_section=<tab label>``), as a shared link would.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlencode, urlsplit

import numpy as np
import pytest

from core import analyze, encode
from core.similarity.anisotropy import CorpusStats, anisotropy_table, corpus_statistics
from core.similarity.choices import default_tokens, depth_stages, token_options
from core.similarity.cosines import TokenRef, token_curve, token_matrix, top_dimensions
from core.similarity.sentences import compare_sentences
from pages.similarity import cache as similarity_cache
from pages.similarity.page import SECTION_KEY, SECTIONS
from tests.conftest import (
    ARTIFACTS,
    ImageHeatmap,
    assert_clean,
    image_heatmaps,
    open_app,
    open_in_browser,
    plotly_values,
    scale_colours,
    wait_for_app,
)
from tests.switcher import switchers

PAGE = "pages/similarity/page.py"
CJK = re.compile(r"[\u4e00-\u9fff]")
RIVER = "I sat on the bank of the river."
MONEY = "I deposited money at the bank."
SINGLE = "The cat saw the dog and the dog saw the cat."

# The tabs as a user reads them, and the figures (by their ``meta`` tag) each one draws.
TOKENS, SENTENCES, WORDS, ANISOTROPY = "Tokens", "Sentences", "Word in context", "Anisotropy"
SECTION_FIGURES = {
    TOKENS: {"sim_matrix"},
    SENTENCES: {"sim_sentences"},
    WORDS: {"sim_words", "sim_dims"},
    ANISOTROPY: {"sim_anisotropy"},
}


EXACT = {"sim_exact": "true"}   # the token matrix as the interactive figure, with its values


def figures(at) -> dict[str, dict | ImageHeatmap]:
    """The page's figures by the ``meta`` tag each one carries; the token matrix drawn as a
    picture (its key "sim_matrix_chart") counts as "sim_matrix"."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    found: dict[str, dict | ImageHeatmap] = {spec["layout"]["meta"]: spec for spec in specs}
    # As images, every stage's matrix is sent to the stage slider (the one it opens on shown).
    switcher = switchers(at).get("sim_stage")
    shown = switcher.heatmaps() if switcher else image_heatmaps(at)
    picture = shown.get("sim_matrix_chart")
    if picture is not None:
        found["sim_matrix"] = picture
    return found


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t.get("name") == name)


def widget(at, kind: str, key: str):
    return next(w for w in getattr(at, kind) if w.key == key)


def keys(at) -> set[str]:
    """Keys of the widgets on the page (the shared inputs' and the open section's)."""
    kinds = ("selectbox", "radio", "slider", "select_slider")
    return {w.key for kind in kinds for w in getattr(at, kind)} | set(switchers(at))


def open_tab(view: str, **query: str):
    """The page with tab ``view`` open, as ``/similarity?sim_section=<view>&...`` opens it."""
    return open_app(PAGE, sim_section=view, **query)


def click_tab(at, view: str) -> None:
    """Switch tabs as a click does: the tab's value and the URL change together. (AppTest has no
    tab clicks, and it sends the URL again on every run, so the URL must change too.)"""
    at.session_state["sim_section"] = view
    at.query_params["sim_section"] = view
    at.run()


def cache_entries(function) -> int:
    """How many results of one per-input cached function are held (components.cache)."""
    return len(function.store)


@pytest.fixture(scope="module")
def stats(bundle) -> CorpusStats:
    return corpus_statistics(bundle)


def test_default_run_draws_only_the_first_section():
    # The section functions' caches start empty, so an entry afterwards means it was computed.
    computed_elsewhere = (similarity_cache.get_sentence_comparison,
                          similarity_cache.get_token_curve, similarity_cache.get_top_dimensions)
    for function in computed_elsewhere:
        function.clear()
    at = open_app(PAGE, a=RIVER, b=MONEY)
    assert_clean(at)
    assert [tab.label for tab in at.get("tab")] == list(SECTION_FIGURES)
    assert set(figures(at)) == SECTION_FIGURES[TOKENS]
    assert not at.metric and not at.dataframe   # the Sentences and Anisotropy sections' elements
    assert not {"sim_i", "sim_j", "sim_context"} & keys(at)   # the word pickers
    assert "sim_section" not in at.query_params    # the first tab is the default: a clean URL
    # Nothing the closed sections need was computed: the sentence comparison alone is a second
    # and a third model run (A and B on their own).
    assert [cache_entries(f) for f in computed_elsewhere] == [0, 0, 0]

    sentences = open_tab(SENTENCES, a=RIVER, b=MONEY)   # and opening a tab does compute it
    assert_clean(sentences)
    assert cache_entries(similarity_cache.get_sentence_comparison) == 1


@pytest.mark.parametrize("view", list(SECTION_FIGURES))
def test_each_tab_draws_its_own_section(view):
    at = open_tab(view, a=RIVER, b=MONEY)
    assert_clean(at)
    assert set(figures(at)) == SECTION_FIGURES[view]
    assert at.query_params.get("sim_section", TOKENS) == view
    # The stage and the mode are above the tabs: every section has them.
    assert {"sim_stage", "sim_mode"} <= keys(at)
    assert ({"sim_i", "sim_j", "sim_context"} <= keys(at)) == (view == WORDS)
    assert bool(at.metric) == (view == SENTENCES)
    assert bool(at.dataframe) == (view == ANISOTROPY)


@pytest.mark.parametrize("garbage", ["nope", "", "tokens", "<script>alert(1)</script>", "Word"])
def test_unknown_tab_shows_the_first_section(garbage):
    at = open_tab(garbage, a=RIVER, b=MONEY)
    assert_clean(at)
    assert set(figures(at)) == SECTION_FIGURES[TOKENS]
    assert "sim_section" not in at.query_params   # Streamlit drops what it could not use


def test_single_sentence(bundle, stats):
    query = {"a": SINGLE, "sim_stage": "layer_3", "sim_mode": "standardised"}
    result = analyze(bundle, SINGLE, attentions=False)
    depth = depth_stages(result.stages)

    at = open_tab(TOKENS, **query, **EXACT)
    assert_clean(at)
    figs = figures(at)
    expected = token_matrix(result, "layer_3", "standardised", stats)
    np.testing.assert_allclose(plotly_values(figs["sim_matrix"]["data"][0]["z"]), expected,
                               atol=1e-5)
    assert figs["sim_matrix"]["data"][0]["y"][2] == "2 cat"
    assert not figs["sim_matrix"]["layout"].get("shapes")  # no A x B block for one sentence

    at = open_tab(SENTENCES, **query)
    assert_clean(at)
    assert any("needs sentence B" in info.value for info in at.info)
    assert not figures(at)

    # Word in context defaults to a repeated word, here "cat" at positions 2 and 11.
    at = open_tab(WORDS, **query)
    assert_clean(at)
    figs = figures(at)
    assert (widget(at, "selectbox", "sim_i").value, widget(at, "selectbox", "sim_j").value) == (
        2, 11)
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

    at = open_tab(ANISOTROPY, **query)
    assert_clean(at)
    table = anisotropy_table(stats, depth)
    aniso = figures(at)["sim_anisotropy"]
    np.testing.assert_allclose(plotly_values(trace(aniso, "random tokens, raw")["y"]),
                               table["random tokens, raw"], atol=1e-6)


def test_pair(bundle, stats):
    query = {"a": RIVER, "b": MONEY, "sim_stage": "word_embeddings"}
    pair = analyze(bundle, RIVER, MONEY, attentions=False)
    alone_a = analyze(bundle, RIVER, attentions=False)
    alone_b = analyze(bundle, MONEY, attentions=False)

    # The matrix, and its A x B block framed: rows 0..10 (A) against columns 11..18 (B).
    at = open_tab(TOKENS, **query, **EXACT)
    assert_clean(at)
    matrix = figures(at)["sim_matrix"]
    np.testing.assert_allclose(plotly_values(matrix["data"][0]["z"]),
                               token_matrix(pair, "word_embeddings", "raw", stats), atol=1e-6)
    rect = next(s for s in matrix["layout"]["shapes"] if s["type"] == "rect")
    assert (rect["x0"], rect["x1"], rect["y0"], rect["y1"]) == (10.5, 18.5, -0.5, 10.5)

    # Sentence curves, and the model's own figure as the star on the last layer.
    at = open_tab(SENTENCES, **query)
    assert_clean(at)
    comparison = compare_sentences(pair, alone_a, alone_b)
    sentences = figures(at)["sim_sentences"]
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
    at = open_tab(WORDS, **query)
    assert_clean(at)
    assert (widget(at, "selectbox", "sim_i").value, widget(at, "selectbox", "sim_j").value) == (
        5, 16)
    depth = depth_stages(pair.stages)
    separate = token_curve(TokenRef(alone_a, 5), TokenRef(alone_b, 6), depth, "raw", stats)
    curve = plotly_values(figures(at)["sim_words"]["data"][0]["y"])
    np.testing.assert_allclose(curve, separate, atol=1e-6)
    assert curve[0] == pytest.approx(1.0, abs=1e-6)

    # The same pair read from the one pair input: by the radio, and by a shared link.
    in_pair = token_curve(TokenRef(pair, 5), TokenRef(pair, 16), depth, "raw", stats)
    widget(at, "radio", "sim_context").set_value("as one pair").run()
    assert_clean(at)
    np.testing.assert_allclose(plotly_values(figures(at)["sim_words"]["data"][0]["y"]), in_pair,
                               atol=1e-6)
    linked = open_tab(WORDS, a=RIVER, b=MONEY, sim_context="as one pair", sim_mode="adjusted",
                      sim_i="1 i", sim_j="16 bank")
    assert_clean(linked)
    expected = token_curve(TokenRef(pair, 1), TokenRef(pair, 16), depth, "adjusted", stats)
    np.testing.assert_allclose(plotly_values(figures(linked)["sim_words"]["data"][0]["y"]),
                               expected, atol=1e-6)


def test_bad_choices_fall_back_to_defaults(bundle):
    at = open_tab(WORDS, a=RIVER, b=MONEY, sim_stage="layer_99", sim_mode="cosine",
                  sim_i="99 nope", sim_j="<script>", sim_context="sideways", sim_from="-5")
    assert_clean(at)
    assert widget(at, "select_slider", "sim_stage").value == "layer_6"
    assert widget(at, "radio", "sim_mode").value == "raw"
    assert widget(at, "selectbox", "sim_i").value == 5
    assert widget(at, "radio", "sim_context").value == "separately"
    assert "sim_stage" not in at.query_params  # Streamlit drops what it could not use

    # A token of B given as the first token (a token of A) is not an option either.
    at = open_tab(WORDS, a=RIVER, b=MONEY, sim_i="16 bank")
    assert_clean(at)
    assert widget(at, "selectbox", "sim_i").value == 5

    # The same token twice: said plainly, and the curve is 1 everywhere.
    at = open_tab(WORDS, a=SINGLE, sim_i="2 cat", sim_j="2 cat")
    assert_clean(at)
    assert any("same token" in info.value for info in at.info)
    assert np.allclose(plotly_values(figures(at)["sim_words"]["data"][0]["y"]), 1.0, atol=1e-5)

    # Choices that stop existing when the text changes are reset, not a traceback.
    widget(at, "selectbox", "sim_j").set_value(12).run()
    at.text_area(key="a").set_value("short").run()
    assert_clean(at)
    assert widget(at, "selectbox", "sim_j").value in token_options(encode(bundle, "short"))[1]

    # Markup in the text stays text: the legend shows escaped tokens, never live tags.
    at = open_tab(WORDS, a="<b>x</b> and <b>x</b>", sim_i="1 <", sim_j="5 <")
    assert_clean(at)
    legend = figures(at)["sim_words"]["data"][0]["name"]
    assert legend == "1 &lt; vs 5 &lt;"

    # B without A, and nothing at all: a message, no figure, whichever tab the link opens.
    for view in SECTION_FIGURES:
        for query in ({"a": "", "b": MONEY}, {"a": "   "}):
            at = open_tab(view, **query)
            assert_clean(at)
            assert at.warning and not at.get("plotly_chart"), (view, query)


def test_word_pickers_follow_a_new_text_across_tabs(bundle):
    """A pick is a position in its text: a new text puts the pickers on its own default pair,
    both when it is typed with the word tab open and when it was typed in another tab."""
    single = encode(bundle, SINGLE)
    dog = single.tokens.index("dog")
    at = open_tab(WORDS, a=SINGLE, sim_i="1 the", sim_j=f"{dog} dog")   # a shared link's picks
    assert_clean(at)
    assert [widget(at, "selectbox", k).value for k in ("sim_i", "sim_j")] == [1, dog]

    # Typed with the tab open, including texts with a single token to pick.
    for text in ("Hi", "The dog saw the dog.", RIVER):
        at.text_area(key="a").set_value(text).run()
        assert_clean(at)
        want = list(default_tokens(encode(bundle, text)))
        assert [widget(at, "selectbox", k).value for k in ("sim_i", "sim_j")] == want, text

    # Picks survive a visit to another tab while the text stays the same...
    picked = next(p for p in token_options(encode(bundle, RIVER))[1] if p not in want)
    widget(at, "selectbox", "sim_j").set_value(picked).run()
    click_tab(at, TOKENS)
    assert_clean(at)
    assert not {"sim_i", "sim_j"} & keys(at)
    click_tab(at, WORDS)
    assert [widget(at, "selectbox", k).value for k in ("sim_i", "sim_j")] == [want[0], picked]

    # ...and give way to the new text's defaults when the text changed in the other tab.
    click_tab(at, TOKENS)
    at.text_area(key="a").set_value(SINGLE).run()
    assert_clean(at)
    click_tab(at, WORDS)
    assert_clean(at)
    want = list(default_tokens(single))
    assert [widget(at, "selectbox", k).value for k in ("sim_i", "sim_j")] == want
    assert not any("same token" in info.value for info in at.info)


def test_long_input_is_windowed(bundle, stats):
    """Over 160 tokens the matrix is drawn in a window the user moves; past sentence-transformers'
    256 tokens a token has no "separately" vector, which the page says."""
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)  # 362 tokens
    query = {"a": long_text, "b": MONEY, "sim_from": "100", "sim_i": "298 the"}
    at = open_tab(TOKENS, **query, **EXACT)
    assert_clean(at)
    assert widget(at, "slider", "sim_from").value == 100
    z = plotly_values(figures(at)["sim_matrix"]["data"][0]["z"])
    full = token_matrix(analyze(bundle, long_text, MONEY, attentions=False), "layer_6", "raw",
                        stats)
    np.testing.assert_allclose(z, full[100:260, 100:260], atol=1e-6)

    at = open_tab(WORDS, **query)
    assert_clean(at)
    assert any("cut off when its sentence is run on its own" in w.value for w in at.warning)

    at = open_tab(SENTENCES, **query)
    assert_clean(at)
    assert any("reads the first 256" in m.value for m in at.markdown)


def test_sections_and_keys():
    from core.similarity.anisotropy import MODES
    from pages.similarity.page import MODE_LABELS
    assert MODE_LABELS == MODES
    assert [s.label for s in SECTIONS] == list(SECTION_FIGURES) and SECTION_KEY == "sim_section"


def test_bank_pair_flags_the_dominant_dimension(bundle, stats):
    """The [CLS] cosine of the two bank sentences reads 1.00 up to layer_5: the page says that
    one dimension carries it, with the standardised cosine beside it."""
    at = open_tab(SENTENCES, a=RIVER, b=MONEY)
    assert_clean(at)
    note = next(w.value for w in at.warning if "One dimension makes this number" in w.value)
    assert "identical" in note and "layer_1 to layer_6" in note and "dim 99 carries 72.3%" in note
    assert "standardised" in at.get("plotly_chart")[0].proto.spec
    assert any("apart" in m.value and "together" in m.value for m in at.markdown)
    assert any("Word in context tab" in m.value for m in at.markdown)
    assert bundle.name in figures(at)["sim_sentences"]["layout"]["title"]["text"]


def test_word_in_context_control_and_context(bundle, stats):
    at = open_tab(WORDS, a=RIVER, b=MONEY, sim_stage="layer_3")
    assert_clean(at)
    assert any("ran apart" in m.value for m in at.markdown)
    assert any("Sentences tab" in m.value for m in at.markdown)
    words = figures(at)["sim_words"]
    control = trace(words, "same sense: the control sentence")
    alone_a = analyze(bundle, RIVER, attentions=False)
    ctrl = analyze(bundle, "The boat drifted slowly towards the bank of the stream.",
                   attentions=False)
    depth = depth_stages(alone_a.stages)
    expected = token_curve(TokenRef(alone_a, 5), TokenRef(ctrl, ctrl.tokens.index("bank")),
                           depth, "raw", stats)
    np.testing.assert_allclose(plotly_values(control["y"]), expected, atol=1e-6)
    assert bundle.name in words["layout"]["title"]["text"]
    widget(at, "radio", "sim_context").set_value("as one pair").run()
    assert any("ran together" in m.value for m in at.markdown)


def test_unk_pairs_are_marked(bundle):
    at = open_tab(TOKENS, a="我爱你", **EXACT)   # 我 [UNK] [UNK] in MiniLM's vocabulary
    assert_clean(at)
    assert any("[UNK]" in m.value for m in at.markdown)   # the coverage panel
    matrix = figures(at)["sim_matrix"]
    notes = matrix["data"][0]["customdata"]
    assert "same table row" in notes[2][3] and notes[1][2] == "" and notes[3][3] != ""
    assert bundle.name in matrix["layout"]["title"]["text"]


def test_matrix_says_when_one_dimension_holds_a_token():
    at = open_tab(TOKENS, a=RIVER, b=MONEY, sim_stage="layer_3")
    assert_clean(at)
    assert any("1 of the 19 tokens (mostly dim 99)" in i.value for i in at.info)


@pytest.mark.parametrize("view", list(SECTION_FIGURES))
def test_chinese(view):
    at = open_tab(view, lang="zh", a=RIVER, b=MONEY)
    assert_clean(at)
    assert at.title[0].value == "相似度"
    assert CJK.search(at.markdown[0].value) and "余弦相似度" in at.markdown[0].value
    assert all(CJK.search(tab.label) for tab in at.tabs), [t.label for t in at.tabs]
    assert set(figures(at)) == SECTION_FIGURES[view]


FIGURES = ".js-plotly-plot, [data-figure]"   # interactive figures and pictures (image heatmaps)


def drawn_figures(page) -> int:
    """Interactive figures and pictures (image heatmaps) shown on the page (the stage slider's
    other stages' pictures are in the page, hidden)."""
    return page.locator(f"{FIGURES} >> visible=true").count()


def wait_for_figures(page, count: int, timeout_ms: int = 30_000) -> None:
    """Until the page holds ``count`` figures: on a busy machine a tab's rerun may start after
    wait_for_app has seen the script idle, so its figure arrives a moment later."""
    page.wait_for_function(
        "([sel, n]) => [...document.querySelectorAll(sel)].filter("
        "e => e.checkVisibility({visibilityProperty: true}))"
        ".length === n", arg=[FIGURES, count], timeout=timeout_ms)


@pytest.mark.browser
def test_screenshot_of_the_bank_pair(server, browser, bundle):
    url = f"{server}/similarity?{urlencode({'a': RIVER, 'b': MONEY})}"
    page = open_in_browser(browser, url, height=1600)  # Streamlit scrolls inside the page
    pickers = [page.get_by_role("combobox", name=n) for n in ("Token of A", "Token of B")]

    def open_view(view: str) -> None:
        page.get_by_role("tab", name=view, exact=True).click()
        wait_for_app(page)
        assert page.locator("[data-testid='stException']").count() == 0, view

    def picked_names(a: str, b: str) -> list[str]:
        enc = encode(bundle, a, b)
        return [f"{p} {enc.tokens[p]}" for p in default_tokens(enc)]

    try:
        page.wait_for_selector("[data-figure='sim_matrix_chart'] .hm-table >> visible=true",
                               timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "similarity.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        assert drawn_figures(page) == 1   # only the open tab's figure
        assert page.get_by_text("A × B").count() >= 1

        # Each tab, clicked: its own figures only, and its label in the URL for a shared link
        # (the first tab is the default, which Streamlit leaves out of the URL).
        for view, drawn in [*SECTION_FIGURES.items(), (TOKENS, SECTION_FIGURES[TOKENS])]:
            open_view(view)
            wait_for_figures(page, len(drawn))
            assert drawn_figures(page) == len(drawn), view
            assert parse_qs(urlsplit(page.url).query).get("sim_section", [TOKENS]) == [view]
            if view == WORDS:
                assert [p.input_value() for p in pickers] == picked_names(RIVER, MONEY)

        # A sentence typed while another tab is open: the word pickers, shown again, are on the
        # new input's own default pair, by name, as the browser shows them.
        box = page.get_by_role("textbox", name="Sentence A", exact=True)
        box.fill(SINGLE)
        box.press("Control+Enter")
        wait_for_app(page)
        open_view(WORDS)
        assert [p.input_value() for p in pickers] == picked_names(SINGLE, MONEY)
    finally:
        page.close()


def test_the_matrix_as_it_opens_is_a_table_of_its_cosines(bundle, stats):
    """Up to 20 tokens the matrix is a table of coloured cells with each cosine written in it
    (core's token_matrix, 2 decimals); for a pair the A x B block is framed and the A/B edge
    dotted, at A's length; no interactive figure is sent."""
    at = open_tab(TOKENS, a="The bank of the river.", b="He sat on it.")
    assert_clean(at)
    assert not at.get("plotly_chart")
    pair = analyze(bundle, "The bank of the river.", "He sat on it.", attentions=False)
    expected = token_matrix(pair, "layer_6", "raw", stats)
    picture = figures(at)["sim_matrix"]
    n, n_a = len(pair.tokens), pair.token_type_ids.count(0)
    assert [[float(c) for c in row] for row in picture.cells] == \
        [[round(float(v), 2) + 0.0 for v in row] for row in expected]
    assert picture.rows == [f"{i} {t}" for i, t in enumerate(pair.tokens)]
    assert picture.cols == picture.rows
    assert picture.lines == [n_a * 22 - 1] and picture.vlines == [round(n_a / n * 100, 3)]
    [frame] = picture.frames
    assert frame["top"] == 0 and frame["height"] == n_a * 22
    assert frame["left"] == round(n_a / n * 100, 3) and picture.frame_labels == ["A × B"]
    assert bundle.name in picture.title and "layer_6" in picture.title
    # Each cell's colour is its cosine on plotly's RdBu_r from -1 to 1.
    rgb = np.array([[[int(c) for c in colour[4:-1].split(",")] for colour in row]
                    for row in picture.cell_colours])
    assert np.abs(rgb - scale_colours(expected, -1, 1, "RdBu_r")).max() <= 2


def test_unk_pairs_are_named_in_the_cells_pointer_text(bundle):
    at = open_tab(TOKENS, a="我爱你")
    picture = figures(at)["sim_matrix"]
    titles = picture.cell_titles
    assert "same table row" in titles[2][3] and "same table row" not in titles[1][2]
    assert titles[1][2].startswith("1 我 × 2 [UNK]: ")


def test_a_long_input_is_a_picture_of_its_window(bundle, stats):
    """Over 20 tokens the cells are an image, one pixel per token pair of the window."""
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)  # 362 tokens
    at = open_tab(TOKENS, a=long_text, sim_from="100")
    assert_clean(at)
    picture = figures(at)["sim_matrix"]
    assert picture.rgb.shape == (160, 160, 3) and not picture.cells
    full = token_matrix(analyze(bundle, long_text, attentions=False), "layer_6", "raw", stats)
    expected = scale_colours(full[100:260, 100:260], -1, 1, "RdBu_r")
    assert np.abs(picture.rgb - expected).max() <= 2
    assert picture.image_height == 900 and len(picture.rows) < 160


def test_every_stage_matrix_is_sent_to_the_stage_slider(bundle, stats):
    """As images, the Tokens tab sends each stage's matrix (core's token_matrix in its cells)
    with the stage's corpus baseline above it, and opens on the link's stage; the download under
    it is that stage's. The other tabs keep the server's slider, on the stage the link says."""
    at = open_tab(TOKENS, a="The bank of the river.", b="He sat on it.", sim_stage="layer_2")
    assert_clean(at)
    stages = switchers(at)["sim_stage"]
    assert stages.value == "layer_2" and stages.report
    assert "sim_stage" not in {w.key for w in at.select_slider}
    pair = analyze(bundle, "The bank of the river.", "He sat on it.", attentions=False)
    for i, stage in enumerate(stages.names):
        [picture] = stages.heatmaps(i).values()
        expected = token_matrix(pair, stage, "raw", stats)
        assert [[float(c) for c in row] for row in picture.cells] == \
            [[round(float(v), 2) + 0.0 for v in row] for row in expected], stage
        assert f"{stats.stage(stage).baseline:.3f}" in stages.words(i)
    buttons = [b.proto.id for b in at.get("download_button")]
    assert any("sim_matrix" in b for b in buttons)
    at.query_params["sim_stage"] = "layer_4"   # moved in the browser: the address says so
    click_tab(at, SENTENCES)
    assert_clean(at)
    assert widget(at, "select_slider", "sim_stage").value == "layer_4"


@pytest.mark.parametrize("lang, line", [("en", "There is no stage"), ("zh", "没有阶段")])
def test_a_stage_the_link_names_that_does_not_exist_is_said(lang: str, line: str):
    at = open_tab(TOKENS, a=RIVER, sim_stage="layer_99", lang=lang)
    assert_clean(at)
    [said] = [i.value for i in at.info if "layer_99" in i.value]
    assert line in said
    assert switchers(at)["sim_stage"].value == "layer_6"
