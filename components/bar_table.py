"""Signed bars as one escaped HTML table: a row per label, a column per measure, each cell a bar
from zero and its value written beside it.

A plotly bar chart is laid out again in the browser each time it is sent: on Pairs, where the
two token-share charts are redrawn with every move of the layer, that was about a third of a
move (README, Performance). These bars are text and boxes the browser draws at once, and the
numbers are on the page, where a projector can show them, not in a hover.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from components import palette

STYLE = f"""<style>
.bars {{ color:{palette.INK}; font-size:16px; }}
.bars .bars-title {{ font-weight:600; margin:0 0 6px 0; white-space:pre-line;
  overflow-wrap:anywhere; }}
.bars table {{ border-collapse:collapse; width:100%; table-layout:auto; }}
.bars th {{ text-align:left; font-weight:600; padding:4px 6px; vertical-align:bottom;
  border-bottom:2px solid {palette.GRID}; }}
.bars td {{ padding:3px 6px; border-bottom:1px solid #e6e6e6; vertical-align:middle; }}
.bars td.label {{ white-space:pre-wrap; overflow-wrap:anywhere; }}
.bars .cell {{ display:flex; align-items:center; gap:6px; }}
.bars .track {{ position:relative; flex:1 1 auto; min-width:48px; height:16px; }}
.bars .zero {{ position:absolute; top:-3px; bottom:-3px; width:1px; background:{palette.EDGE}; }}
.bars .bar {{ position:absolute; top:0; bottom:0; }}
.bars .value {{ flex:0 0 auto; min-width:4.2em; text-align:right;
  font-variant-numeric:tabular-nums; }}
</style>"""


@dataclass(frozen=True)
class Measure:
    """One column of bars: its heading, its values (one per label) and its colour."""

    name: str
    values: Sequence[float]
    colour: str


def _span(measures: Sequence[Measure]) -> tuple[float, float]:
    """The lowest and highest value drawn, zero always included: every column shares one
    scale, so bars of different measures compare by length."""
    finite = [float(v) for m in measures for v in m.values if np.isfinite(v)]
    low, high = min([0.0, *finite]), max([0.0, *finite])
    return (low, high) if high > low else (0.0, 1.0)


def _cell(value: float, low: float, high: float, colour: str) -> str:
    width = high - low
    zero = (0.0 - low) / width * 100
    if not np.isfinite(value):
        bar, text = "", "—"
    else:
        left = (min(value, 0.0) - low) / width * 100
        size = abs(value) / width * 100
        bar = (f'<div class="bar" style="left:{left:.2f}%;width:{size:.2f}%;'
               f'background:{colour}"></div>')
        text = f"{value:.4f}"
    return (f'<td><div class="cell"><div class="track">{bar}'
            f'<div class="zero" style="left:{zero:.2f}%"></div></div>'
            f'<span class="value">{text}</span></div></td>')


def bars_html(labels: Sequence[str], measures: Sequence[Measure], title: str, label_heading: str,
              name: str) -> str:
    """One titled table of bars (with its style); ``data-bars`` names it for tests. Labels,
    headings and the title are escaped."""
    low, high = _span(measures)
    head = "".join(f"<th>{html.escape(m.name)}</th>" for m in measures)
    rows = []
    for k, label in enumerate(labels):
        cells = "".join(_cell(float(m.values[k]), low, high, m.colour) for m in measures)
        rows.append(f'<tr><td class="label">{html.escape(label)}</td>{cells}</tr>')
    return (f'{STYLE}<div class="bars" data-bars="{html.escape(name)}" role="figure">'
            f'<div class="bars-title">{html.escape(title)}</div>'
            f"<table><thead><tr><th>{html.escape(label_heading)}</th>{head}</tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>')
