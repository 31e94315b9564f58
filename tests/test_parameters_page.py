"""The Parameters page in AppTest (figures and tables against the model) and in Chromium."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, quote, urlparse

import pandas as pd
import pytest
import torch

from components.inputs import DEFAULT_SENTENCE
from core import analyze
from pages.parameters.figures import TRUE_FALSE
from pages.parameters.page import SECTION_KEY, SECTIONS
from tests.conftest import (
    ARTIFACTS,
    assert_clean,
    html_tables,
    open_app,
    open_in_browser,
    wait_for_app,
)
from tests.test_parameters_core import (
    DESIGN_COUNTS,
    HAND_FORMULA_CHINESE,
    HAND_GAP_CHINESE,
    SHIPPED_COUNT,
    numel,
)

PAGE = "pages/parameters/page.py"
WHERE, FORMULA, PRESETS_TAB, CUSTOM, SKETCH = (s.label for s in SECTIONS)


def tables(at) -> list:
    """The page's tables: the grids' frames, then the HTML tables' cells read back (a count
    written "1,234" as the number, ✓ / ✗ as True / False)."""
    frames = [df.value for df in at.dataframe]
    for frame in html_tables(at):
        for column in frame.columns:
            cells = frame[column]
            if not pd.api.types.is_string_dtype(cells):
                continue
            if cells.str.fullmatch(r"-?\d{1,3}(,\d{3})*").all():
                frame[column] = cells.str.replace(",", "").astype(int)
            elif cells.isin(TRUE_FALSE).all():
                frame[column] = cells == TRUE_FALSE[0]
        frames.append(frame)
    return frames


def frame_with(at, column: str):
    """The first table on the page that has ``column``."""
    for frame in tables(at):
        if column in frame.columns:
            return frame
    raise AssertionError(f"no table with a {column!r} column")


def frames_with(at, column: str) -> list:
    return [frame for frame in tables(at) if column in frame.columns]


def open_section(label: str, **query: str):
    return open_app(PAGE, **{SECTION_KEY: label}, **query)


def headline(at) -> str:
    """The count in large type above the tabs, and the line of numbers under it."""
    return "\n".join([h.value for h in at.subheader] + [m.value for m in at.markdown])


def page_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in (*at.error, *at.warning, *at.info, *at.success)]
    return "\n".join(parts)


def test_page_shows_live_counts_and_the_four_preset_figures(bundle):
    at = open_section(PRESETS_TAB)
    assert_clean(at)
    assert at.title[0].value == "Parameters"
    total = sum(p.numel() for p in bundle.model.parameters())
    assert total == SHIPPED_COUNT
    assert at.subheader[0].value == f"{bundle.name}: {total:,} parameters"
    text = headline(at)
    assert f"Trainable: **{total:,}**" in text
    assert f"**{len(list(bundle.model.named_parameters()))}**" in text
    presets = frame_with(at, "on meta device").set_index("model")
    for name, figure in DESIGN_COUNTS.items():
        assert presets.loc[name, "from config"] == figure
        assert presets.loc[name, "on meta device"] == figure
    assert "the count from the formula equals sum(p.numel())" in page_text(at)
    # The sizes' table names its symbols under it, where a projector shows them.
    sizes = frame_with(at, "V").set_index("model")
    assert sizes.loc["bert-base-uncased", "V"] == 30522   # published configs' sizes
    assert sizes.loc["bert-large-uncased", "N"] == 24
    assert any(m.value.startswith("N: layers · h: hidden size") for m in at.markdown)


def treemap_boxes(at) -> dict[str, dict]:
    """The treemap picture's rectangles by node id: value, and position and size as drawn."""
    boxes = {}
    for element in at.get("html"):
        for match in re.finditer(r'<div class="tm-box [^"]+" style="left:([\d.]+)%;top:([\d.]+)px;'
                                 r'width:([\d.]+)%;height:([\d.]+)px;[^"]*" title="[^"]*" '
                                 r'data-node="([^"]+)" data-value="(\d+)"', element.proto.body):
            left, top, width, height = map(float, match.groups()[:4])
            boxes[html.unescape(match[5])] = {"value": int(match[6]), "area": width * height,
                                              "x": left, "y": top, "w": width, "h": height}
    return boxes


def test_the_treemap_opens_as_a_picture_of_the_models_modules(bundle):
    """As it opens, the tab draws the treemap as a picture (no plotly figure): a rectangle per
    module holding the model's own count, the three top groups' areas in proportion to their
    counts, and the layers in reading order."""
    at = open_app(PAGE)
    assert_clean(at)
    assert not at.get("plotly_chart")
    boxes = treemap_boxes(at)
    model = bundle.model
    assert boxes["embeddings"]["value"] == numel(model.embeddings)
    assert boxes["encoder"]["value"] == numel(model.encoder)
    assert boxes["pooler"]["value"] == numel(model.pooler)
    for k, layer in enumerate(model.encoder.layer):
        assert boxes[f"encoder/layer_{k + 1}"]["value"] == numel(layer)
        assert boxes[f"encoder/layer_{k + 1}/intermediate.dense"]["value"] == \
            numel(layer.intermediate)
    total = sum(p.numel() for p in model.parameters())
    groups = ("embeddings", "encoder", "pooler")
    area = sum(boxes[g]["area"] for g in groups)
    for group in groups:
        assert boxes[group]["area"] / area == pytest.approx(boxes[group]["value"] / total,
                                                            abs=1e-3)
    layers = [boxes[f"encoder/layer_{k + 1}"] for k in range(len(model.encoder.layer))]
    assert layers == sorted(layers, key=lambda b: (round(b["y"]), b["x"]))
    assert f"{bundle.name}: {total:,} parameters" in at.get("html")[0].proto.body


def test_treemap_values_are_the_models_modules(bundle):
    at = open_app(PAGE, par_zoom="true")
    assert_clean(at)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    trace = spec["data"][0]
    assert trace["type"] == "treemap" and trace["branchvalues"] == "total"
    values = dict(zip(trace["ids"], trace["values"], strict=True))
    model = bundle.model
    assert values["BertModel"] == sum(p.numel() for p in model.parameters())
    assert values["embeddings"] == numel(model.embeddings)
    assert values["encoder"] == numel(model.encoder)
    assert values["pooler"] == numel(model.pooler)
    for k, layer in enumerate(model.encoder.layer):
        assert values[f"encoder/layer_{k + 1}"] == numel(layer)
        assert values[f"encoder/layer_{k + 1}/intermediate.dense"] == numel(layer.intermediate)
    assert values["embeddings/word_embeddings"] == model.embeddings.word_embeddings.weight.numel()


def test_breakdown_table_and_per_layer_toggle(bundle):
    at = open_app(PAGE)
    summed = frame_with(at, "share")
    assert int(summed["parameters"].sum()) == SHIPPED_COUNT
    assert len(summed) == 13
    at.toggle(key="par_per_layer").set_value(True).run()
    assert_clean(at)
    apart = frame_with(at, "share")
    assert len(apart) == 4 + 8 * bundle.config.num_hidden_layers + 1
    for module, count in zip(apart["module"], apart["parameters"], strict=True):
        assert count == numel(bundle.model.get_submodule(module)), module


def test_formula_panel_reconciles_with_the_loaded_model_and_shows_the_tutorials_case():
    at = open_section(FORMULA)
    assert_clean(at)
    exact = frame_with(at, "in the model")
    assert exact["equal"].all()
    assert int(exact["from config"].sum()) == int(exact["in the model"].sum()) == SHIPPED_COUNT
    assert any(f"{SHIPPED_COUNT:,}" in s.value and "Exactly equal" in s.value for s in at.success)
    assert f"= {SHIPPED_COUNT:,}" in at.latex[0].value.replace("{,}", ",")
    # Beside it, by default, the tutorial's hand count of bert-base-chinese, term by term.
    assert at.radio(key="par_seed").value == "bert-base-chinese"
    hand, left_out = frames_with(at, "term")
    assert int(hand["total"].sum()) == HAND_FORMULA_CHINESE
    assert int(left_out["total"].sum()) == HAND_GAP_CHINESE
    assert len(left_out) == 5  # embeddings LayerNorm, 4 biases, FFN biases, 2 LayerNorms, pooler
    assert "= **102,267,648** = the exact count" in page_text(at)


def test_hand_count_of_the_loaded_model(bundle):
    at = open_section(FORMULA, par_seed="the config above")
    assert_clean(at)
    hand, left_out = frames_with(at, "term")
    assert int(hand["total"].sum()) + int(left_out["total"].sum()) == SHIPPED_COUNT
    linear_and_embedding_weights = sum(
        m.weight.numel() for m in bundle.model.modules()
        if isinstance(m, torch.nn.Linear | torch.nn.Embedding)
    )
    assert int(hand["total"].sum()) == linear_and_embedding_weights
    assert "= the exact count" in page_text(at)


def test_tutorial_model_term_by_term_from_the_url():
    at = open_section(FORMULA, par_formula="bert-base-chinese", par_seed="the config above")
    assert_clean(at)
    assert at.selectbox(key="par_formula").value == "bert-base-chinese"
    exact = frame_with(at, "in the model")
    assert exact["equal"].all()
    assert int(exact["in the model"].sum()) == DESIGN_COUNTS["bert-base-chinese"]
    hand, left_out = frames_with(at, "term")
    assert int(hand["total"].sum()) == HAND_FORMULA_CHINESE
    assert int(left_out["total"].sum()) == HAND_GAP_CHINESE
    assert "= the exact count" in page_text(at)


def test_custom_form_counts_live_and_refuses_bad_values():
    at = open_section(CUSTOM)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Parameters (from the config)"] == f"{DESIGN_COUNTS['bert-base-uncased']:,}"
    assert metrics["On the meta device"] == f"{DESIGN_COUNTS['bert-base-uncased']:,}"
    at.button(key="par_from_2").click().run()  # bert-large-uncased
    assert at.text_input(key="par_layers").value == "24"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Parameters (from the config)"] == f"{DESIGN_COUNTS['bert-large-uncased']:,}"
    bad = [
        ("par_hidden", "1000", "not divisible"),
        ("par_hidden", "0", "at least 1"),
        ("par_heads", "-4", "at least 1"),
        ("par_layers", "lots", "whole number"),
        ("par_vocab", "99999999999999999999999", "capped"),
        ("par_pos", "1e9", "whole number"),
    ]
    for key, value, fragment in bad:
        at.button(key="par_from_0").click().run()  # back to valid sizes
        at.text_input(key=key).set_value(value).run()
        assert_clean(at)
        assert at.error and fragment in at.error[0].value, (key, value)
        assert "Parameters (from the config)" not in [m.label for m in at.metric]
    at.button(key="par_from_1").click().run()  # bert-base-chinese
    assert not at.error
    assert {m.label: m.value for m in at.metric}["On the meta device"] == "102,267,648"


def test_garbage_query_values_give_messages_not_tracebacks():
    garbage = dict(
        par_hidden="inf", par_layers="1e400", par_heads="nan", par_inter="-7",
        par_formula="not-a-model", par_per_layer="maybe", par_filter="[(*" * 100, par_seed="x",
    )
    for label in (WHERE, PRESETS_TAB, SKETCH):
        assert_clean(open_section(label, **garbage))
    at = open_section(CUSTOM, **garbage)
    assert_clean(at)
    assert at.error and "whole number" in at.error[0].value and "at least 1" in at.error[0].value
    at = open_section(FORMULA, **garbage)
    assert_clean(at)
    assert at.selectbox(key="par_formula").value == "the loaded model"
    assert at.radio(key="par_seed").value == "bert-base-chinese"


def test_filter_keeps_names_containing_every_word(bundle):
    at = open_app(PAGE)
    assert len(frame_with(at, "numel")) == len(list(bundle.model.named_parameters()))
    at.text_input(key="par_filter").set_value("layer.0. QUERY").run()
    assert_clean(at)
    shown = frame_with(at, "numel")
    expected = [n for n, _ in bundle.model.named_parameters()
                if "layer.0." in n and "query" in n]
    assert shown["name"].tolist() == expected
    shapes = dict(bundle.model.named_parameters())
    assert shown["shape"].tolist() == [str(list(shapes[n].shape)) for n in expected]
    at.text_input(key="par_filter").set_value("[(.*").run()  # regex characters are plain text
    assert_clean(at)
    assert not frames_with(at, "numel")
    assert any("No parameter name" in i.value for i in at.info)


def test_filter_from_the_url(bundle):
    at = open_app(PAGE, par_filter="pooler")
    assert_clean(at)
    assert frame_with(at, "numel")["name"].tolist() == ["pooler.dense.weight", "pooler.dense.bias"]


def test_sketch_shows_the_shapes_of_the_current_input(bundle):
    a, b = "What is your name?", "My name is BERT."
    at = open_section(SKETCH, a=a, b=b)
    assert_clean(at)
    dot = at.get("graphviz_chart")[0].proto.spec
    result = analyze(bundle, a, b, attentions=True)
    T = len(result.tokens)
    assert T == 13
    h = result.stages["sum"].shape[1]
    with torch.inference_mode():
        up = bundle.model.encoder.layer[0].intermediate(torch.zeros(1, T, h))  # (1, T, i)
    for shape in ([1, T], [1, *result.stages["LayerNorm"].shape], [1, *result.attentions.shape[1:]],
                  list(up.shape), [1, *result.pooler_output.shape]):
        assert f"→ {shape}" in dot, shape


def test_sketch_waits_for_text_but_the_counts_do_not():
    at = open_section(SKETCH, a=" ")
    assert_clean(at)
    assert f"{SHIPPED_COUNT:,} parameters" in at.subheader[0].value
    assert at.warning  # the shared input's message about the empty text
    assert not at.get("graphviz_chart")
    at = open_section(PRESETS_TAB, a=" ")
    assert_clean(at)
    assert frame_with(at, "on meta device") is not None


def test_the_headline_count_is_the_one_home_shows(bundle):
    at = open_app(PAGE)
    assert_clean(at)
    home = open_app()
    assert f"{SHIPPED_COUNT:,} parameters" in at.subheader[0].value
    assert f"{SHIPPED_COUNT:,} parameters" in page_text(home)


def test_no_development_words_on_the_page():
    for label in (WHERE, FORMULA, PRESETS_TAB, CUSTOM, SKETCH):
        at = open_section(label)
        assert_clean(at)
        text = page_text(at) + " ".join(h.value for h in (*at.subheader, *at.title))
        text += " ".join(w.label for w in (*at.radio, *at.selectbox, *at.text_input, *at.button))
        assert "seed" not in text.lower(), label
    at = open_section(FORMULA)
    text = page_text(at)
    assert "102,145,536" in text and "122,112" in text and "102,267,648" in text
    assert "biases and LayerNorm" in text


def test_page_in_chinese():
    from components.i18n import _, set_language
    from pages.parameters.page import EXPLANATION, TITLE

    for section in SECTIONS:
        at = open_app(PAGE, lang="zh", **{SECTION_KEY: section.label})
        assert_clean(at)
        set_language("zh")
        try:
            title, explanation = _(TITLE), _(EXPLANATION)
            labels = [_(s.label) for s in SECTIONS]
        finally:
            set_language("en")
        assert title != TITLE and at.title[0].value == title
        assert explanation != EXPLANATION and explanation in [m.value for m in at.markdown]
        assert [t.label for t in at.tabs] == labels
        assert all(label != s.label for label, s in zip(labels, SECTIONS, strict=True))
        assert "参数" in at.subheader[0].value


def open_tab(page, label: str) -> None:
    page.get_by_role("tab", name=label).click()
    wait_for_app(page)


@pytest.mark.browser
def test_parameters_page_in_chromium(server, browser):
    def view(label: str, extra: str = "", width: int = 1024) -> object:
        url = f"{server}/parameters?a={quote(DEFAULT_SENTENCE)}&{SECTION_KEY}={quote(label)}"
        return open_in_browser(browser, url + extra, width=width, height=768)

    page = view(SKETCH)
    page.wait_for_selector("[data-testid='stGraphVizChart'] svg", timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    svg = page.locator("[data-testid='stGraphVizChart'] svg").text_content() or ""
    assert "[1, 7, 384]" in svg and "encoder.layer × 6" in svg
    # The headline count is whole at 1024x768 (no "22,7…").
    head = page.locator("[data-testid='stHeading']").filter(has_text=f"{SHIPPED_COUNT:,}").first
    assert f"{SHIPPED_COUNT:,} parameters" in head.inner_text()
    box = head.bounding_box()
    assert box and box["x"] + box["width"] <= 1024
    assert head.evaluate("e => e.scrollWidth <= e.clientWidth")
    # The next tab: the presets' counts, every cell written out and inside the page.
    open_tab(page, PRESETS_TAB)
    counts = page.locator("[data-table='par_preset_counts'] td").all_inner_texts()
    for figure in DESIGN_COUNTS.values():
        assert counts.count(f"{figure:,}") == 2  # from the config and on the meta device
    page.close()
    page = view(FORMULA, "&par_formula=bert-base-chinese")
    page.locator("[data-table='par_reconcile']").wait_for(timeout=30_000)
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "102,145,536" in body and "122,112" in body
    for name in ("par_reconcile", "par_hand", "par_left_out"):   # nothing runs past 1024 px
        table = page.locator(f"[data-table='{name}']")
        assert table.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), name
        box = table.bounding_box()
        assert box and box["x"] + box["width"] <= 1024, name
    page.set_viewport_size({"width": 1024, "height": 768})
    open_tab(page, WHERE)
    # The picture's names sit inside their rectangles, at the size the page's text has.
    picture = page.locator("[data-figure='parameters-treemap']")
    picture.wait_for(timeout=30_000)
    assert page.locator(".js-plotly-plot").count() == 0
    names = picture.locator(".tm-leaf span").evaluate_all(
        "spans => spans.filter(s => s.textContent).map(s => [s.scrollWidth <= s.parentElement"
        ".clientWidth + 1, s.offsetHeight <= s.parentElement.clientHeight + 1,"
        " parseFloat(getComputedStyle(s).fontSize)])")
    assert len(names) >= 20 and all(w and h and px >= 12 for w, h, px in names)
    page.screenshot(path=str(ARTIFACTS / "parameters.png"), full_page=True)
    # Typing a filter puts it in the URL, so the view is a shareable link.
    box = page.get_by_role("textbox", name="Filter by name")
    box.fill("pooler")
    box.press("Enter")
    wait_for_app(page)
    assert parse_qs(urlparse(page.url).query)["par_filter"] == ["pooler"]
    assert "pooler.dense.bias" in " ".join(page.locator("[role=gridcell]").all_inner_texts())
    page.close()
