"""The pair's cosine at every layer as a page fragment: a line drawn as an image, its points,
ticks and titles as page text.

The same figure as an interactive plotly chart was laid out again in the browser on every move
of the layer, which marks a new point on it: about a quarter of a move (bench/HISTORY.md).
Here the line is an SVG image stretched to the plot (its stroke keeps its width), each point a
dot placed in percent of the plot, the layer shown ringed with its value written beside it, and
the pointer on a dot names its layer and cosine. Text is escaped once, here.
"""

from __future__ import annotations

import base64
import html
import math

import numpy as np

from components import palette
from components.heatmap_image import round_step
from components.i18n import _
from components.labels import SEGMENT_COLOURS
from core.similarity.pairs import PairContributions

PLOT_PX = 230          # the plot's height
MAX_X_LABELS = 9       # more layers than this: every other (or third) layer is numbered

STYLE = f"""<style>
.pc {{ color:{palette.INK}; font-size:15px; line-height:1.35; }}
.pc-title {{ font-size:16px; font-weight:600; white-space:pre-line; overflow-wrap:anywhere;
  margin-bottom:6px; }}
.pc-grid {{ display:grid; grid-template-columns:1.5em max-content minmax(0, 1fr);
  column-gap:4px; }}
.pc-ytitle {{ writing-mode:vertical-rl; text-orientation:sideways;
  transform:rotate(180deg); text-align:center;
  color:{palette.SOFT_INK}; white-space:nowrap; height:{PLOT_PX}px; }}
.pc-yticks {{ position:relative; height:{PLOT_PX}px; min-width:2.4em; }}
.pc-yticks span {{ position:absolute; right:0; transform:translateY(-50%); line-height:1;
  font-size:14px; font-variant-numeric:tabular-nums; }}
.pc-plot {{ position:relative; height:{PLOT_PX}px; border:1px solid {palette.GRID};
  box-sizing:border-box; }}
.pc-plot img {{ position:absolute; inset:0; width:100%; height:100%; }}
.pc-dot {{ position:absolute; width:10px; height:10px; margin:-5px 0 0 -5px; border-radius:50%;
  background:{SEGMENT_COLOURS[0]}; }}
.pc-shown {{ position:absolute; width:22px; height:22px; margin:-11px 0 0 -11px;
  border:3px solid {palette.HIGHLIGHT}; border-radius:50%; box-sizing:border-box; }}
.pc-value {{ position:absolute; transform:translate(-50%, -150%); white-space:nowrap;
  font-weight:600; color:{palette.HIGHLIGHT}; pointer-events:none;
  text-shadow:0 0 3px #fff, 0 0 3px #fff, 0 0 2px #fff; }}
.pc-xticks {{ display:flex; }}
.pc-xticks span {{ flex:1 1 0; text-align:center; font-size:14px; white-space:nowrap; }}
.pc-xtitle {{ text-align:center; color:{palette.SOFT_INK}; margin-top:2px; }}
</style>"""


def _text(value: object) -> str:
    return html.escape(str(value))


def nice_ticks(low: float, high: float, most: int = 5) -> np.ndarray:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten apart) covering [low, high]."""
    step = round_step((high - low) / max(1, most - 1), (1, 2, 2.5, 5, 10))
    first = math.floor(low / step) * step
    return np.arange(first, high + step * 0.5, step)


def _x(layer: int, count: int) -> float:
    """A layer's place across the plot, in percent: the middle of its slot."""
    return (layer + 0.5) / count * 100


def curve_picture(contrib: PairContributions, key: str = "pairs_curve") -> str:
    """The fragment; ``data-figure`` names it for tests, as a plotly chart's key does."""
    curve = contrib.curve.astype(np.float64)
    count = len(curve)
    pad = max(float(np.ptp(curve)) * 0.12, 0.02)
    ticks = nice_ticks(float(curve.min()) - pad, float(curve.max()) + pad)
    low, high = float(ticks[0]), float(ticks[-1])

    def top(value: float) -> float:
        return (high - value) / (high - low) * 100

    line = " ".join(f"{_x(k, count):.3f},{top(v):.3f}" for k, v in enumerate(curve))
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" '
           f'preserveAspectRatio="none"><polyline points="{line}" fill="none" '
           f'stroke="{SEGMENT_COLOURS[0]}" stroke-width="3" '
           'vector-effect="non-scaling-stroke"/></svg>')
    # Babel reads no call inside an f-string: every text is looked up first.
    what, point = _("A vs B at every layer"), _("layer {k}: {value}")
    y_title, x_title = _("cosine"), _("layer (0 = embedding output)")
    image = (f'<img alt="{_text(what)}" '
             f'src="data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}">')
    dots = "".join(
        f'<span class="pc-dot" data-layer="{k}" data-value="{v:.6f}" '
        f'style="left:{_x(k, count):.3f}%;top:{top(v):.3f}%" '
        f'title="{_text(point.format(k=k, value=f"{v:.4f}"))}"></span>'
        for k, v in enumerate(curve))
    shown = contrib.layer
    where = f"left:{_x(shown, count):.3f}%;top:{top(curve[shown]):.3f}%"
    marked = (f'<span class="pc-shown" data-shown="{shown}" style="{where}"></span>'
              f'<span class="pc-value" style="{where}">{curve[shown]:.3f}</span>')
    digits = max(0, -math.floor(math.log10(ticks[1] - ticks[0]) + 1e-9))
    yticks = "".join(f'<span style="top:{top(t):.3f}%">{t:.{digits}f}</span>' for t in ticks)
    every = math.ceil(count / MAX_X_LABELS)
    xticks = "".join(f"<span>{k if k % every == 0 else ''}</span>" for k in range(count))
    title = contrib.model_name + "\n" + what
    return (
        f'{STYLE}<div class="pc" data-figure="{_text(key)}">'
        f'<div class="pc-title">{_text(title)}</div>'
        f'<div class="pc-grid"><div class="pc-ytitle">{_text(y_title)}</div>'
        f'<div class="pc-yticks">{yticks}</div>'
        f'<div><div class="pc-plot">{image}{dots}{marked}</div>'
        f'<div class="pc-xticks">{xticks}</div>'
        f'<div class="pc-xtitle">{_text(x_title)}</div>'
        "</div></div></div>"
    )
