"""Large heatmaps drawn on the server: one PNG pixel per cell, labels and colour bar in HTML.

A plotly heatmap costs the browser about as much as the rest of a page together on every rerun
(bench/HISTORY.md); an image of the same cells costs it almost nothing. So a tokens x
dimensions matrix is drawn here as a PNG the browser scales up without smoothing, with the
row labels, a few column ticks, the colour bar and any marked row boundary as plain page text
around it. The exact values are one toggle away: the same matrix as the interactive plotly
figure, whose hover shows every cell (``draw_heatmap``).

Labels come in escaped for plotly (``labels.plotly_text``); they are unescaped and escaped again
for HTML, so text a user typed reaches the page as text.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import streamlit as st
from PIL import Image
from streamlit.delta_generator import DeltaGenerator

from components import palette
from components.heatmap import show_figure
from components.i18n import _, ngettext

ROW_PX = 22            # a row per label while they fit in TALL_PX, as in the plotly figures
TALL_PX = 900          # taller inputs share this height; labels are thinned to fit
LABEL_PX = 15
MISSING = (204, 204, 204)   # a NaN cell
LUT_SIZE = 256
COLUMNS_PX = 560       # the image's width on a 1024 px projector page, for word columns
WORD_CHARS = 12        # word columns show at most this many characters


@dataclass(frozen=True)
class Scale:
    """A colour scale and the values at its ends."""
    name: str       # a plotly colour scale name, e.g. "RdBu_r"
    low: float
    high: float


# Not a per-input result: a colour scale's table depends only on the scale's name (a handful of
# names in the code, 768 bytes each), the same for every input and session for the process's
# life, so it is a per-process constant, not in the results budget. functools' cache, not
# st.cache_resource: Streamlit's hashes the argument on every call (0.1 ms measured), and a page
# that sends every layer's and head's picture (components.picture_switcher) asks 144 times a run.
# tests/test_page_shape.py allows it, as components/i18n.py's catalogs.
@functools.lru_cache(maxsize=16)
def colour_table(name: str) -> np.ndarray:
    """LUT_SIZE x 3 uint8 colours sampled from plotly's own scale, so an image and its
    interactive figure agree (read-only: every session shares it)."""
    points = np.linspace(0.0, 1.0, LUT_SIZE)
    colours = plotly.colors.sample_colorscale(plotly.colors.get_colorscale(name), list(points))
    rgb = [plotly.colors.unlabel_rgb(c) for c in colours]
    table = np.rint(np.asarray(rgb, dtype=np.float64)).clip(0, 255).astype(np.uint8)
    table.flags.writeable = False
    return table


def colour_indices(values: np.ndarray, scale: Scale) -> np.ndarray:
    """Each value's row of the colour table; values beyond the ends take the end colours."""
    span = scale.high - scale.low or 1.0
    position = (np.asarray(values, dtype=np.float64) - scale.low) / span
    return np.rint(np.nan_to_num(position, nan=0.0).clip(0.0, 1.0) * (LUT_SIZE - 1)).astype(
        np.intp)


def heatmap_png(matrix: np.ndarray, scale: Scale) -> bytes:
    """The matrix as a PNG, one pixel per cell (rows top to bottom), in the colours of
    ``colour_table`` (NaN cells MISSING).

    A palette PNG of the colours the matrix uses: one byte a cell where RGB takes three, so
    about 2.5x smaller for hidden states (5.0 kB against 12.2 kB at 12 x 384) and faster to
    encode; the same colours come out exactly. Only the colours used, not the whole table: a
    PNG palette holds at most 256, the table has 256 and a NaN needs one more; and a small
    image's palette then costs a few hundred bytes, not 768 (7 x 64: 868 bytes against 1,266
    in RGB). A matrix that uses more than 256 colours (every one of the table and NaN) stays
    RGB.
    """
    values = np.asarray(matrix, dtype=np.float32)
    indices = colour_indices(values, scale)
    colours = colour_table(scale.name)
    missing = np.isnan(values)
    if missing.any():
        colours = np.vstack([colours, np.asarray([MISSING], dtype=np.uint8)])
        indices = np.where(missing, LUT_SIZE, indices)
    used, pixels = np.unique(indices, return_inverse=True)
    if len(used) <= 256:
        image = Image.fromarray(pixels.reshape(values.shape).astype(np.uint8), "P")
        image.putpalette(colours[used].tobytes())
    else:
        image = Image.fromarray(np.ascontiguousarray(colours[indices]), "RGB")
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=3)
    return buffer.getvalue()


def row_height(rows: int) -> float:
    """Pixels per row: ROW_PX while everything fits in TALL_PX, then shared."""
    return float(ROW_PX) if rows * ROW_PX <= TALL_PX else TALL_PX / max(rows, 1)


def shown_ticks(count: int, room_px: float, label_px: float) -> list[int]:
    """Every k-th index, so labels ``label_px`` apart fit in ``room_px`` for ``count`` items."""
    if count <= 0:
        return []
    step = max(1, math.ceil(label_px * count / max(room_px, 1.0)))
    return list(range(0, count, step))


def column_ticks(cols: Sequence[object], wanted: int = 8) -> list[int]:
    """About ``wanted`` evenly spread column indices at round numbers of the column labels."""
    n = len(cols)
    if n <= wanted:
        return list(range(n))
    return list(range(0, n, int(round_step(n / wanted))))


def round_step(raw: float, multiples: Sequence[float] = (1, 2, 5, 10)) -> float:
    """The smallest step of at least ``raw`` that is one of ``multiples`` times a power of
    ten: ticks at round numbers."""
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in multiples if m * magnitude >= raw)


def _text(label: object) -> str:
    """A label escaped for plotly, as page text."""
    return html.escape(html.unescape(str(label)))


# A per-process constant like colour_table: plotly's get_colorscale validates every named
# scale on each call (3 ms, measured on every heatmap drawn), for a string fixed by the name.
@functools.lru_cache(maxsize=16)
def colour_gradient(name: str) -> str:
    """The CSS gradient of the colour bar, top to bottom: the high end first."""
    stops = plotly.colors.get_colorscale(name)
    return ", ".join(f"{colour} {(1 - float(at)) * 100:.1f}%" for at, colour in reversed(stops))


def _number(value: float) -> str:
    return f"{value:.3g}"


def _row_labels(labels: Sequence[str], row_px: float, notes: Sequence[str] | None) -> str:
    spans = []
    for i in shown_ticks(len(labels), len(labels) * row_px, ROW_PX):
        top = (i + 0.5) * row_px - ROW_PX / 2
        note = f' title="{_text(notes[i])}"' if notes else ""
        spans.append(f'<div class="hm-row" style="top:{top:.1f}px"{note}>{_text(labels[i])}'
                     "</div>")
    return "".join(spans)


def _column_labels(cols: Sequence[object], words: bool) -> str:
    """Numbered columns get a few round ticks; word columns (tokens) are written upwards, as
    many as fit the narrowest page (COLUMNS_PX), so a tokens x tokens map names its keys."""
    n = len(cols)
    if not words:
        return "".join(
            f'<span style="left:{(i + 0.5) / n * 100:.3f}%">{_text(cols[i])}</span>'
            for i in column_ticks(cols))
    longest = min(max((label_em(html.unescape(str(c))) for c in cols), default=0.55),
                  WORD_CHARS * 0.62)   # the labels' own max-height: longer ones end in "…"
    spans = "".join(
        f'<span class="hm-word" style="left:{(i + 0.5) / n * 100:.3f}%">{_text(cols[i])}</span>'
        for i in shown_ticks(n, COLUMNS_PX, ROW_PX))
    return f'<div class="hm-words" style="height:{longest + 0.5:.1f}em">{spans}</div>'


def label_em(text: str) -> float:
    """About how long ``text`` is when written, in em: a Chinese (wide) character takes about
    1 em, another about 0.55. Reserving 0.55 em for every character let a Chinese word run into
    the axis title under it."""
    return sum(1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.55 for ch in text)


def _overlays(image: HeatmapImage, rows: int, cols: int, row_px: float) -> str:
    """Dotted lines above ``boundary_row`` and left of ``boundary_col``, and the ``frame``
    (rows r0..r1, columns c0..c1, ends excluded) as a box over the cells."""
    parts = []
    if image.boundary_row is not None:
        parts.append(f'<div class="hm-line" style="top:{image.boundary_row * row_px - 1:.1f}px">'
                     "</div>")
    if image.boundary_col is not None:
        parts.append(f'<div class="hm-vline" style="left:{image.boundary_col / cols * 100:.3f}%;'
                     f'height:{rows * row_px:.1f}px"></div>')
    if image.frame is not None:
        r0, r1, c0, c1 = image.frame
        parts.append(
            f'<div class="hm-frame" style="border-color:{image.frame_colour};'
            f'top:{r0 * row_px:.1f}px;'
            f'height:{(r1 - r0) * row_px:.1f}px;left:{c0 / cols * 100:.3f}%;'
            f'width:{(c1 - c0) / cols * 100:.3f}%">'
            + (f'<span class="hm-frame-label" style="color:{image.frame_colour}">'
               f'{_text(image.frame_label)}</span>' if image.frame_label else "")
            + "</div>")
    return "".join(parts)


def _ink_on(rgb: np.ndarray) -> str:
    """Dark text on light cells, white on dark ones (relative luminance)."""
    r, g, b = (float(c) / 255 for c in rgb)
    return "#ffffff" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5 else palette.INK


def _cell_table(image: HeatmapImage, row_px: float) -> str:
    """Small matrices as a table of coloured cells with their values written in them; the
    pointer on a cell names its row and column (and the cell's note, if any)."""
    values = np.asarray(image.matrix, dtype=np.float64)
    colours = colour_table(image.scale.name)[colour_indices(values, image.scale)]
    written = image.cell_format or "{:.4f}"   # only called when it is set
    rows = []
    for i, row in enumerate(values):
        cells = []
        for j, value in enumerate(row):
            rgb = colours[i, j]
            note = image.cell_notes[i][j] if image.cell_notes else ""
            where = _text(f"{image.row_labels[i]} × {image.col_labels[j]}: {value:.4f}") \
                + html.escape(note)
            cells.append(
                f'<td style="background:rgb({rgb[0]},{rgb[1]},{rgb[2]});color:{_ink_on(rgb)}"'
                f' title="{where}">{html.escape(written.format(value))}</td>')
        rows.append(f'<tr style="height:{row_px:.1f}px">{"".join(cells)}</tr>')
    return f'<table class="hm-table">{"".join(rows)}</table>'


def _colour_bar(scale: Scale, height_px: float, title: str) -> str:
    bar = max(120.0, min(height_px, 320.0))
    mid = (scale.low + scale.high) / 2
    return (
        f'<div class="hm-bar"><div class="hm-bar-title">{_text(title)}</div>'
        f'<div class="hm-bar-body"><div class="hm-ramp" style="height:{bar:.0f}px;'
        f'background:linear-gradient(to bottom, {colour_gradient(scale.name)})"></div>'
        f'<div class="hm-bar-ticks" style="height:{bar:.0f}px"><span>{_number(scale.high)}'
        f'</span><span>{_number(mid)}</span><span>{_number(scale.low)}</span></div></div></div>'
    )


STYLE = f"""<style>
.hm {{ font-size:{LABEL_PX}px; line-height:{ROW_PX}px; color:{palette.INK}; }}
.hm-title {{ font-size:18px; font-weight:600; margin:0 0 6px 0; overflow-wrap:anywhere; }}
.hm-grid {{ display:grid; grid-template-columns:max-content minmax(0, 1fr) max-content;
  column-gap:10px; align-items:start; }}
.hm-labels {{ position:relative; min-width:4em; max-width:14em; }}
.hm-row {{ position:absolute; right:0; white-space:nowrap; overflow:hidden;
  text-overflow:ellipsis; max-width:14em; height:{ROW_PX}px; }}
.hm-cells {{ position:relative; }}
.hm-cells img {{ display:block; width:100%; image-rendering:pixelated;
  border:1px solid {palette.GRID}; box-sizing:border-box; }}
.hm-line {{ position:absolute; left:0; right:0; border-top:2px dotted {palette.SOFT_INK}; }}
.hm-vline {{ position:absolute; top:0; border-left:2px dotted {palette.SOFT_INK}; }}
.hm-frame {{ position:absolute; border:4px solid {palette.HIGHLIGHT}; box-sizing:border-box;
  pointer-events:none; }}
.hm-frame-label {{ position:absolute; top:0; right:0; padding:0 4px; font-weight:700;
  background:rgba(255,255,255,0.9); line-height:1.3; }}
.hm-table {{ width:100%; table-layout:fixed; border-collapse:collapse; font-size:12px;
  border:1px solid {palette.GRID}; }}
.hm-table td {{ padding:0; text-align:center; white-space:nowrap; overflow:hidden;
  line-height:1; }}
.hm-cols {{ position:relative; min-height:{ROW_PX}px; margin-top:2px; }}
.hm-cols span {{ position:absolute; transform:translateX(-50%); white-space:nowrap; }}
.hm-cols .hm-words {{ position:relative; }}
.hm-cols span.hm-word {{ top:0; writing-mode:vertical-rl; text-orientation:sideways;
  transform:translateX(-50%) rotate(180deg);
  max-height:{WORD_CHARS * 0.62:.1f}em; overflow:hidden; text-overflow:ellipsis; }}
.hm-axis {{ text-align:center; color:{palette.SOFT_INK}; }}
.hm-bar-title {{ color:{palette.SOFT_INK}; white-space:nowrap; }}
.hm-bar-body {{ display:flex; gap:4px; }}
.hm-ramp {{ width:16px; border:1px solid {palette.GRID}; }}
.hm-bar-ticks {{ display:flex; flex-direction:column; justify-content:space-between;
  line-height:1; }}
</style>"""


@dataclass(frozen=True)
class HeatmapImage:
    """What an image heatmap shows: the cells, their labels, and the scale."""
    matrix: np.ndarray
    row_labels: Sequence[str]     # escaped for plotly, as labels.token_labels gives them
    col_labels: Sequence[object]
    scale: Scale
    title: str
    x_title: str
    boundary_row: int | None = None        # a dotted line above this row (sentence B starts)
    row_notes: Sequence[str] | None = None  # shown when the pointer rests on a row's label
    colour_title: str = ""
    word_columns: bool = False    # columns are tokens (written upwards), not numbers
    boundary_col: int | None = None         # a dotted line left of this column
    frame: tuple[int, int, int, int] | None = None   # rows r0..r1 x columns c0..c1 boxed
    frame_colour: str = palette.HIGHLIGHT
    frame_label: str = ""         # written in the frame's top right corner
    cell_format: str | None = None   # e.g. "{:.2f}": write each value in its cell (small only)
    cell_notes: Sequence[Sequence[str]] | None = None   # added to a cell's pointer text


def heatmap_html(image: HeatmapImage, key: str) -> str:
    """The page fragment: title, labelled image, column ticks, axis title and colour bar.

    ``data-figure`` names the figure, as a plotly chart's key does, for tests and the benchmark.
    """
    rows, cols = np.shape(image.matrix)
    row_px = row_height(rows)
    height = rows * row_px
    if image.cell_format is not None:
        cells = _cell_table(image, row_px)
    else:
        png = base64.b64encode(heatmap_png(image.matrix, image.scale)).decode("ascii")
        alt = ngettext(
            "Heatmap: {rows} row by {cols} columns",
            "Heatmap: {rows} rows by {cols} columns",
            rows).format(rows=rows, cols=cols)
        cells = f'<img alt="{_text(alt)}" style="height:{height:.1f}px" ' \
                f'src="data:image/png;base64,{png}">'
    return (
        f'{STYLE}<div class="hm" data-figure="{_text(key)}">'
        f'<div class="hm-title">{_text(image.title)}</div>'
        '<div class="hm-grid">'
        f'<div class="hm-labels" style="height:{height:.1f}px">'
        f'{_row_labels(image.row_labels, row_px, image.row_notes)}</div>'
        f'<div class="hm-cells">{cells}{_overlays(image, rows, cols, row_px)}'
        f'<div class="hm-cols">{_column_labels(image.col_labels, image.word_columns)}</div>'
        f'<div class="hm-axis">{_text(image.x_title)}</div></div>'
        f'{_colour_bar(image.scale, height, image.colour_title)}'
        "</div></div>"
    )


def exact_toggle(key: str, where: DeltaGenerator | None = None) -> bool:
    """The switch from images to interactive figures, kept in the URL like the page's other
    settings."""
    return bool((where or st).toggle(
        _("Exact values on hover"), key=key, bind="query-params",
        help=_("Draws the heatmaps as interactive figures: hover a cell for its exact value, "
               "drag to zoom, save a picture from the figure's toolbar. They take longer to "
               "redraw after every change.")))


def draw_heatmap(image: HeatmapImage, key: str, exact: bool,
                 interactive: Callable[[], go.Figure]) -> None:
    """The image, or with ``exact`` the figure ``interactive()`` builds (only the one shown is
    built). Both are keyed ``key``."""
    if exact:
        show_figure(interactive(), key, key=key)
    else:
        st.html(heatmap_html(image, key))
