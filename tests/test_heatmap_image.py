"""Image heatmaps (components.heatmap_image): pixels in plotly's colours, labels as page text."""

from __future__ import annotations

import base64
import io

import numpy as np
import torch
from PIL import Image

from components.heatmap_image import (
    MISSING,
    TALL_PX,
    HeatmapImage,
    Scale,
    colour_table,
    heatmap_html,
    heatmap_png,
)
from components.labels import token_labels
from tests.conftest import ImageHeatmap, _HeatmapParser, blank_tab, scale_colours


def read(fragment: str) -> ImageHeatmap:
    parser = _HeatmapParser()
    parser.feed(fragment)
    [figure] = parser.found
    return figure


def test_pixels_are_plotlys_colours_for_every_scale():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(9, 40)).astype(np.float32)
    for name, low, high in (("RdBu_r", -2.0, 2.0), ("Blues", 0.0, 1.0), ("Viridis", -1, 3)):
        image = HeatmapImage(values, [str(i) for i in range(9)], list(range(40)),
                             Scale(name, low, high), "t", "x")
        figure = read(heatmap_html(image, "k"))
        assert figure.rgb.shape == (9, 40, 3)
        # 256 sampled colours against plotly's own interpolation value by value.
        assert np.abs(figure.rgb - scale_colours(values, low, high, name)).max() <= 2, name


def test_values_beyond_the_scale_take_its_end_colours_and_nan_is_grey():
    values = np.array([[-10.0, 10.0, np.nan]], dtype=np.float32)
    figure = read(heatmap_html(HeatmapImage(values, ["a"], [0, 1, 2], Scale("RdBu_r", -1, 1),
                                            "t", "x"), "k"))
    ends = scale_colours(np.array([[-1.0, 1.0]]), -1, 1, "RdBu_r")
    assert np.abs(figure.rgb[0, :2] - ends[0]).max() <= 1
    assert tuple(figure.rgb[0, 2]) == (204, 204, 204)


def test_typed_text_is_shown_as_text_never_as_html():
    tokens = ["<img src=x onerror=alert(1)>", "&amp;", '"quoted"', "<b>bold</b>"]
    image = HeatmapImage(np.zeros((4, 3)), token_labels(tokens), [0, 1, 2],
                         Scale("RdBu_r", -1, 1), "<script>alert(2)</script> & model", "x",
                         row_notes=['a "note" <i>'] * 4)
    fragment = heatmap_html(image, 'key"><script>')
    assert "<img src=x" not in fragment and "<script>" not in fragment and "<b>" not in fragment
    figure = read(fragment)
    assert figure.rows == [f"{i} {t}" for i, t in enumerate(tokens)]   # as typed
    assert figure.title == "<script>alert(2)</script> & model"
    assert figure.key == 'key"><script>'


def test_long_inputs_share_the_tall_height_and_thin_their_labels():
    rows = 512
    image = HeatmapImage(np.zeros((rows, 64)), [f"{i} t" for i in range(rows)], list(range(64)),
                         Scale("RdBu_r", -1, 1), "t", "x", boundary_row=300)
    figure = read(heatmap_html(image, "k"))
    assert figure.image_height == TALL_PX
    assert figure.rgb.shape[:2] == (rows, 64)    # every token still has its pixel row
    assert 20 <= len(figure.rows) <= TALL_PX // 22 + 1
    assert figure.rows[0] == "0 t"
    tops = np.diff(figure.row_tops)
    assert (tops >= 22 - 1e-6).all()             # labels never overlap
    assert figure.lines == [round(300 * TALL_PX / rows - 1, 1)]


def test_short_inputs_label_every_row_and_the_colour_bar_names_its_ends():
    image = HeatmapImage(np.zeros((5, 384)), [f"{i} t" for i in range(5)], list(range(384)),
                         Scale("RdBu_r", -0.25, 0.25), "t", "hidden dimension")
    figure = read(heatmap_html(image, "k"))
    assert len(figure.rows) == 5 and figure.image_height == 5 * 22
    assert figure.row_tops == [i * 22.0 for i in range(5)]
    assert figure.cols == [str(c) for c in range(0, 384, 50)]
    assert figure.bar[1:] == ["0.25", "0", "-0.25"]


def test_the_colour_bar_runs_from_the_scales_high_end_down_to_its_low_end():
    """The bar's gradient, kept once per scale name, is plotly's own stops top to bottom."""
    import plotly.colors

    from components.heatmap_image import colour_gradient

    for name in ("RdBu_r", "Blues", "Viridis"):
        stops = plotly.colors.get_colorscale(name)
        assert len(colour_gradient(name).split("%, ")) == len(stops), name
        assert colour_gradient(name).startswith(f"{stops[-1][1]} 0.0%"), name
        assert colour_gradient(name).endswith(f"{stops[0][1]} 100.0%"), name
        fragment = heatmap_html(HeatmapImage(np.zeros((2, 3), np.float32), ["a", "b"],
                                             [0, 1, 2], Scale(name, -1, 1), "t", "x"), "k")
        assert f"linear-gradient(to bottom, {colour_gradient(name)})" in fragment


def hidden_states(bundle, text: str, layer: int) -> np.ndarray:
    """The shipped model's hidden states after ``layer``, from transformers' own forward."""
    batch = bundle.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        out = bundle.model(**batch, output_hidden_states=True)
    return out.hidden_states[layer][0].numpy()


def expected_colours(values: np.ndarray, low: float, high: float, name: str) -> np.ndarray:
    """Each cell's colour: the table's row at its rounded position on [low, high], NaN grey."""
    position = np.clip((values.astype(np.float64) - low) / (high - low), 0.0, 1.0)
    rows = np.rint(np.nan_to_num(position) * 255).astype(int)
    rgb = colour_table(name)[rows].copy()
    rgb[np.isnan(values)] = MISSING
    return rgb


def decoded(png: bytes) -> tuple[str, np.ndarray]:
    image = Image.open(io.BytesIO(png))
    return image.mode, np.asarray(image.convert("RGB"))


def rgb_png(rgb: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb), "RGB").save(buffer, "PNG", compress_level=3)
    return buffer.getvalue()


def test_the_png_is_a_palette_image_of_exactly_the_tables_colours_and_smaller(bundle):
    """Real hidden states (13 tokens x 384): every pixel is the colour table's row for its
    value, with and without missing cells, in fewer bytes than the same pixels as RGB."""
    states = hidden_states(bundle, "The bank of the river was steep after the rain.", 3)
    assert states.shape == (13, 384)
    bound = float(np.percentile(np.abs(states), 99))
    holes = states.copy()
    holes[np.arange(13), np.arange(13) * 29] = np.nan   # one missing cell a row
    for values in (states, holes):
        png = heatmap_png(values, Scale("RdBu_r", -bound, bound))
        mode, rgb = decoded(png)
        expected = expected_colours(values, -bound, bound, "RdBu_r")
        assert mode == "P"
        np.testing.assert_array_equal(rgb, expected)
        assert len(png) < 0.6 * len(rgb_png(expected))   # measured 0.41x


def test_every_colour_of_the_table_and_a_missing_cell_still_come_out_exact():
    """257 colours do not fit a PNG palette: such a matrix is drawn in RGB, still exact."""
    values = np.linspace(-1.0, 1.0, 256, dtype=np.float32).reshape(1, 256)
    full = heatmap_png(values, Scale("Viridis", -1, 1))
    assert decoded(full)[0] == "P"
    np.testing.assert_array_equal(decoded(full)[1], expected_colours(values, -1, 1, "Viridis"))
    values = np.append(values, np.float32("nan")).reshape(1, 257)
    mode, rgb = decoded(heatmap_png(values, Scale("Viridis", -1, 1)))
    assert mode == "RGB"
    np.testing.assert_array_equal(rgb, expected_colours(values, -1, 1, "Viridis"))


def test_chromium_paints_the_palette_images_colours(browser):
    """What a person sees: each cell of a palette image (a missing one too), scaled up as the
    page scales it, is painted in its table colour."""
    values = np.random.default_rng(1).normal(size=(6, 40)).astype(np.float32)
    values[2, 7] = np.nan
    png = heatmap_png(values, Scale("RdBu_r", -2, 2))
    assert decoded(png)[0] == "P"
    cell = 8   # screen pixels a cell
    source = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    tab = blank_tab(browser, 600, 200)
    try:
        tab.set_content(f'<body style="margin:0"><img src="{source}" style="display:block;'
                        f'width:{40 * cell}px;image-rendering:pixelated"></body>')
        tab.wait_for_function("document.images[0].complete")
        shot = np.asarray(Image.open(io.BytesIO(tab.screenshot())).convert("RGB"))
    finally:
        tab.close()
    centres = shot[cell // 2 : 6 * cell : cell, cell // 2 : 40 * cell : cell]
    np.testing.assert_array_equal(centres, expected_colours(values, -2, 2, "RdBu_r"))
