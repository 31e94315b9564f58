"""The PCA tab as pictures: each table's path through its principal components, and the scree,
as an SVG image and page text the browser draws at once (no plotly). Pure functions (no Streamlit).

An interactive plotly figure costs the browser and the server about as much as the rest of a
page on every rerun (bench/HISTORY.md); this picture costs almost nothing. The points are an
SVG image (st.html keeps images, not inline SVG), with axes of equal scale as the interactive
figure's ``scaleanchor``; the input's rings and token labels are page text on top of it, placed
in percent of the picture, so text stays 15 px whatever the column's width. The exact
coordinates are one toggle away ("Exact values on hover", the interactive figure); here the
pointer on a ring names its position and token.

Token texts come in escaped for plotly (``labels.plotly_text``); they are unescaped and escaped
again for HTML, so text a user typed reaches the page as text.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence

import numpy as np

from components import palette
from components.heatmap_image import colour_table
from components.i18n import _
from core.positions import Projection, TableKind
from pages.positions.figures import (
    MAX_TEXT_LABELS,
    SCREE_COMPONENTS,
    TABLE_COLOURS,
    InputMarks,
    spaced_labels,
)

ASPECT = 4 / 3          # width / height of a PCA picture, as the interactive figure's plot
BOX = 1000.0            # the inner view box's width, in its own units
DOT_PX = 6              # a position's dot
RING_PX = 7             # radius of an input's ring
LABEL_PX = 15           # token labels, legible from the back of a classroom
PICTURE_LABEL_GAP = 0.125   # printed labels keep this share of the picture's width apart
SCREE_PX = 260          # the scree's plot height
DOT_COLOURS = 64        # steps of the dots' colour scale: neighbours of one colour share a path

STYLE = f"""<style>
.pp {{ color:{palette.INK}; font-size:15px; line-height:1.35; }}
.pp-title {{ font-size:18px; font-weight:600; overflow-wrap:anywhere; }}
.pp-sub {{ font-size:14px; color:{palette.SOFT_INK}; margin-bottom:4px; }}
.pp-grid {{ display:grid; grid-template-columns:1.6em minmax(0, 1fr); column-gap:4px; }}
.pp-ytitle {{ writing-mode:vertical-rl; text-orientation:sideways;
  transform:rotate(180deg); text-align:center;
  color:{palette.SOFT_INK}; white-space:nowrap; }}
.pp-plot {{ position:relative; width:100%; border:1px solid {palette.GRID};
  box-sizing:border-box; }}
.pp-plot img {{ position:absolute; inset:0; width:100%; height:100%; }}
.pp-ring {{ position:absolute; width:{2 * RING_PX}px; height:{2 * RING_PX}px;
  margin:-{RING_PX}px 0 0 -{RING_PX}px; border:2.5px solid; border-radius:50%;
  box-sizing:border-box; }}
.pp-label {{ position:absolute; transform:translate(-50%, -100%); margin-top:-{RING_PX}px;
  font-size:{LABEL_PX}px; line-height:1.1; white-space:nowrap; pointer-events:none;
  text-shadow:0 0 3px #fff, 0 0 3px #fff, 0 0 2px #fff; }}
.pp-xtitle {{ text-align:center; color:{palette.SOFT_INK}; margin-top:2px; }}
.pp-bar {{ display:grid; grid-template-columns:max-content minmax(0, 1fr) max-content;
  column-gap:6px; align-items:center; margin:6px 8% 0 8%; }}
.pp-ramp {{ height:10px; border:1px solid {palette.GRID}; }}
.pp-bar-title {{ text-align:center; color:{palette.SOFT_INK}; }}
.pp-legend {{ display:flex; flex-wrap:wrap; gap:4px 16px; margin-top:6px; }}
.pp-key {{ display:inline-block; width:14px; height:14px; vertical-align:-2px;
  margin-right:5px; }}
.pp-key-line {{ display:inline-block; width:22px; border-top:3px dotted; vertical-align:4px;
  margin-right:5px; }}
.pp-scree {{ display:grid; grid-template-columns:max-content minmax(0, 1fr); column-gap:6px; }}
.pp-yticks {{ position:relative; height:{SCREE_PX}px; min-width:2.6em; }}
.pp-yticks span {{ position:absolute; right:0; transform:translateY(-50%); line-height:1; }}
.pp-bars {{ position:relative; height:{SCREE_PX}px; display:flex; align-items:flex-end;
  border-bottom:1px solid {palette.GRID}; }}
.pp-slot {{ flex:1 1 0; display:flex; align-items:flex-end; justify-content:center;
  height:100%; gap:1px; }}
.pp-slot div {{ width:38%; }}
.pp-pair {{ display:grid; grid-template-columns:repeat(2, minmax(0, 1fr)); column-gap:1rem;
  margin-bottom:1rem; }}
.pp-pcs {{ display:flex; }}
.pp-pcs span {{ flex:1 1 0; text-align:center; font-size:14px; white-space:nowrap; }}
</style>"""


def _text(label: object) -> str:
    """A label escaped for plotly, as page text."""
    return html.escape(html.unescape(str(label)))


def _hex(rgb: np.ndarray) -> str:
    r, g, b = (int(c) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def _viridis(positions: np.ndarray, steps: int | None = None) -> list[str]:
    """Each position's colour on the interactive figure's scale (plotly's Viridis), in
    ``steps`` steps (the table's own when None)."""
    table = colour_table("Viridis")
    span = max(float(positions.max() - positions.min()), 1.0)
    share = (positions - positions.min()) / span
    if steps:
        share = np.rint(share * (steps - 1)) / (steps - 1)
    rows = np.rint(share * (len(table) - 1)).astype(np.intp)
    return [_hex(table[r]) for r in rows]


def _dots(points: np.ndarray, colours: Sequence[str]) -> str:
    """One round dot per point, consecutive dots of one colour in one path: the browser draws
    an SVG image's elements each time it shows it (a count's picture switched in), and 64
    paths cost it less than 512."""
    runs: list[tuple[str, list[str]]] = []
    for (x, y), colour in zip(points, colours, strict=True):
        if not runs or runs[-1][0] != colour:
            runs.append((colour, []))
        runs[-1][1].append(f"M{x:.0f} {y:.0f}h0")
    return "".join(f'<path d="{"".join(moves)}" stroke="{colour}"/>' for colour, moves in runs)


def _gradient() -> str:
    table = colour_table("Viridis")
    stops = [table[int(i)] for i in np.linspace(0, len(table) - 1, 9)]
    return ", ".join(_hex(rgb) for rgb in stops)


def _svg_image(svg: str, alt: str) -> str:
    """An SVG drawing as an image: st.html keeps images but drops inline SVG."""
    data = base64.b64encode(svg.encode()).decode("ascii")
    return f'<img alt="{_text(alt)}" src="data:image/svg+xml;base64,{data}">'


def _frame(coords: np.ndarray) -> tuple[float, float, float, float]:
    """x0, y0 (top), width, height of the data's box, widened so that its two axes have one
    scale and its shape is ASPECT, with a margin of 6% on every side."""
    lo, hi = coords.min(axis=0).astype(np.float64), coords.max(axis=0).astype(np.float64)
    centre, size = (lo + hi) / 2, np.maximum(hi - lo, 1e-9) * 1.12
    width, height = max(size[0], size[1] * ASPECT), max(size[1], size[0] / ASPECT)
    return centre[0] - width / 2, centre[1] + height / 2, width, height


def picture_xy(proj: Projection, pcs: Sequence[int]) -> np.ndarray:
    """Each position of the range in the picture, as shares (0..1) of its width and height
    from the top left corner: the chosen two components on one scale (y upwards)."""
    coords = proj.coords[:, [pc - 1 for pc in pcs[:2]]].astype(np.float64)
    x0, top, width, height = _frame(coords)
    return np.stack([(coords[:, 0] - x0) / width, (top - coords[:, 1]) / height], axis=1)


def pca_base(proj: Projection, pcs: Sequence[int], title: str, subtitle: str,
             x_title: str, y_title: str) -> tuple[str, str]:
    """The picture of one table's range without the input's marks, as (head, tail): the marks
    (pca_marks) go between them. Built once per model, range, components and language."""
    height = BOX / ASPECT
    points = picture_xy(proj, pcs) * [BOX, height]
    # Whole units of a 1000-wide box are finer than the picture's pixels, and half the bytes.
    path = " ".join(f"{x:.0f},{y:.0f}" for x, y in points)
    positions = proj.positions.astype(np.int64)
    dots = _dots(points, _viridis(positions, DOT_COLOURS))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {BOX:.0f} {height:.0f}">'
           f'<polyline points="{path}" fill="none" stroke="rgba(120,120,120,0.35)" '
           'stroke-width="1.5"/>'
           f'<g stroke-width="{DOT_PX * 1.6}" stroke-linecap="round">{dots}</g></svg>')
    head = (
        f'<div class="pp-title">{_text(title)}</div><div class="pp-sub">{_text(subtitle)}</div>'
        f'<div class="pp-grid"><div class="pp-ytitle">{_text(y_title)}</div><div>'
        f'<div class="pp-plot" style="aspect-ratio:{ASPECT:.4f}">{_svg_image(svg, title)}'
    )
    tail = (
        f'</div><div class="pp-xtitle">{_text(x_title)}</div></div></div>'
        f'<div class="pp-bar"><span>{positions.min()}</span>'
        f'<div class="pp-ramp" style="background:linear-gradient(to right, {_gradient()})">'
        f'</div><span>{positions.max()}</span></div>'
        f'<div class="pp-bar-title">{_text(_("position"))}</div>'
    )
    return STYLE + head, tail


def pca_marks(proj: Projection, pcs: Sequence[int], marks: InputMarks | None) -> str:
    """The input's positions, ringed in their segment's colour and labelled with their tokens
    where there is room (as the interactive figure: figures.spaced_labels), in page pixels;
    the pointer on a ring names its position and token."""
    if marks is None or not marks.positions:
        return ""
    coords = proj.coords[:, [pc - 1 for pc in pcs[:2]]].astype(np.float64)
    unit = picture_xy(proj, pcs)
    rows = np.asarray(marks.positions) - proj.start
    # A label is ~30-40 px wide at 15 px type on a ~230 px picture (1024 px screen): keep
    # printed labels an eighth of the picture apart, or they overprint each other.
    texts = spaced_labels(coords, rows, marks.tokens, min_gap=PICTURE_LABEL_GAP)
    show_text = len(rows) <= MAX_TEXT_LABELS
    rings, labels = [], []
    for row, text, hover, colour in zip(rows, texts, marks.labels, marks.colours(), strict=True):
        x, y = unit[row] * 100
        where = f"left:{x:.2f}%;top:{y:.2f}%"
        rings.append(f'<span class="pp-ring" style="{where};border-color:{colour}" '
                     f'title="{_text(hover)}"></span>')
        if show_text and text:
            labels.append(f'<span class="pp-label" style="{where}">{_text(text)}</span>')
    return "".join(rings) + f'<div data-labels="input">{"".join(labels)}</div>'


def pca_picture(base: tuple[str, str], marks_html: str, key: str) -> str:
    """A cached base with this run's marks; ``data-figure`` names it for tests and the bench."""
    head, tail = base
    return f'<div class="pp" data-figure="{_text(key)}">{head}{marks_html}{tail}</div>'


def scree_picture(projections: Mapping[TableKind, Projection], names: Mapping[TableKind, str],
                  key: str, n: int = SCREE_COMPONENTS) -> str:
    """Share of the variance per component (bars, one per table) and the running totals
    (dotted lines), as figures.scree_figure draws them; the pointer on a bar names its value."""
    kinds = list(projections)
    ratios = {k: projections[k].explained_variance_ratio[:n].astype(np.float64) for k in kinds}
    count = max(len(r) for r in ratios.values())
    colours = {k: TABLE_COLOURS.get(k, palette.SOFT_INK) for k in kinds}
    slots = []
    for c in range(count):
        bars = "".join(
            f'<div style="height:{ratios[k][c] * 100:.2f}%;background:{colours[k]}" '
            f'title="{_text(names.get(k, k))}: PC{c + 1} {ratios[k][c]:.1%}"></div>'
            for k in kinds if c < len(ratios[k]))
        slots.append(f'<div class="pp-slot">{bars}</div>')
    lines = "".join(
        '<polyline points="' + " ".join(
            f"{(c + 0.5) / count * 100:.3f},{100 - t * 100:.3f}"
            for c, t in enumerate(np.cumsum(ratios[k]))) + f'" fill="none" stroke="{colours[k]}" '
        'stroke-width="2.5" stroke-dasharray="4 4" vector-effect="non-scaling-stroke"/>'
        for k in kinds)
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" '
           f'preserveAspectRatio="none">{lines}</svg>')
    ticks = "".join(f'<span style="top:{(1 - v) * SCREE_PX:.0f}px">{v:.0%}</span>'
                    for v in (0, 0.25, 0.5, 0.75, 1.0))
    step = 1 if count <= 10 else 2
    pcs = "".join(f"<span>{f'PC{c + 1}' if c % step == 0 else ''}</span>" for c in range(count))
    legend = "".join(
        f'<span><span class="pp-key" style="background:{colours[k]}"></span>'
        f'{_text(names.get(k, k))}</span>'
        f'<span><span class="pp-key-line" style="border-color:{colours[k]}"></span>'
        f'{_text(_("{table}, running total").format(table=names.get(k, k)))}</span>'
        for k in kinds)
    title = _("Explained variance per component (scree)")
    return (
        f'{STYLE}<div class="pp" data-figure="{_text(key)}">'
        f'<div class="pp-title">{_text(title)}</div>'
        f'<div class="pp-sub">{_text(_("share of the variance"))}</div>'
        f'<div class="pp-scree"><div class="pp-yticks">{ticks}</div><div>'
        f'<div class="pp-bars">{"".join(slots)}'
        f'<div class="pp-plot" style="position:absolute;inset:0;border:0">'
        f'{_svg_image(svg, title)}</div></div>'
        f'<div class="pp-pcs">{pcs}</div></div></div>'
        f'<div class="pp-legend">{legend}</div></div>'
    )


def range_picture(pca_pictures: Sequence[str], scree: str, key: str) -> str:
    """Both tables' PCA pictures side by side (as the tab's two columns) over the scree, as one
    picture for components.picture_switcher: the style once, first (the switcher sends it once
    for all values), and one ``data-figure`` (``key``) for the whole, the parts' own names kept
    as ``data-part``: a reader's tools find the one picture shown."""
    pairs = "".join(f"<div>{_part(p)}</div>" for p in pca_pictures)
    return (f'{STYLE}<div class="pp-range" data-figure="{_text(key)}">'
            f'<div class="pp-pair">{pairs}</div>{_part(scree)}</div>')


def _part(picture: str) -> str:
    """A picture of this module without its style block, its name as a part's."""
    return picture.replace(STYLE, "").replace(' data-figure="', ' data-part="', 1)
