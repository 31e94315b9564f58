"""Signed bars as one escaped HTML table: a row per label, a column per measure, each cell a bar
from zero and its value written beside it.

A plotly bar chart is laid out again in the browser each time it is sent: on Pairs, where the
two token-share charts are redrawn with every move of the layer, that was about a third of a
move (bench/HISTORY.md). These bars are text and boxes the browser draws at once, and the
numbers are on the page, where a projector can show them, not in a hover.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from components import palette

MEASURES_MAX = 4   # the measures one table may hold (a colour variable and a rule each)
STYLE = f"""<style>
.bars {{ color:{palette.INK}; font-size:16px; }}
.bars .bars-title {{ font-weight:600; margin:0 0 6px 0; white-space:pre-line;
  overflow-wrap:anywhere; }}
.bars table {{ border-collapse:collapse; width:100%; }}
.bars th {{ text-align:left; font-weight:600; padding:4px 6px; vertical-align:bottom;
  border-bottom:2px solid {palette.GRID}; }}
.bars td {{ padding:3px 6px; border-bottom:1px solid #e6e6e6; vertical-align:middle; }}
.bars td.l {{ white-space:pre; }}
.bars td.t {{ position:relative; width:24%; min-width:48px; padding:0;
  background:linear-gradient({palette.EDGE}, {palette.EDGE}) no-repeat var(--z) 0 / 1px 100%; }}
.bars td.t i {{ position:absolute; top:50%; height:14px; margin-top:-7px; }}
.bars td.v {{ text-align:right; white-space:nowrap; font-variant-numeric:tabular-nums; }}
{"".join(f".bars td.m{k} i {{ background:var(--c{k}); }}" for k in range(MEASURES_MAX))}
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


def _cells(value: float, low: float, high: float, k: int) -> str:
    """Measure ``k``'s two cells: its bar from the zero line (the table's --z), its value.
    Short markup: a sentence of 512 tokens is a table of 512 rows."""
    if not np.isfinite(value):
        return f'<td class="t m{k}"></td><td class="v">—</td>'
    left = (min(value, 0.0) - low) / (high - low) * 100
    size = abs(value) / (high - low) * 100
    return (f'<td class="t m{k}"><i style="left:{left:.1f}%;width:{size:.1f}%"></i></td>'
            f'<td class="v">{value:.4f}</td>')


def bars_html(labels: Sequence[str], measures: Sequence[Measure], title: str, label_heading: str,
              name: str) -> str:
    """One titled table of bars (with its style); ``data-bars`` names it for tests. Labels,
    headings and the title are escaped."""
    if len(measures) > MEASURES_MAX:
        raise ValueError(f"at most {MEASURES_MAX} measures, not {len(measures)}")
    low, high = _span(measures)
    head = "".join(f'<th colspan="2">{html.escape(m.name)}</th>' for m in measures)
    rows = []
    for k, label in enumerate(labels):
        cells = "".join(_cells(float(m.values[k]), low, high, j) for j, m in enumerate(measures))
        rows.append(f'<tr><td class="l">{html.escape(label)}</td>{cells}</tr>')
    colours = "".join(f";--c{j}:{m.colour}" for j, m in enumerate(measures))
    return (f'{STYLE}<div class="bars" data-bars="{html.escape(name)}" role="figure">'
            f'<div class="bars-title">{html.escape(title)}</div>'
            f'<table style="--z:{(0.0 - low) / (high - low) * 100:.1f}%{colours}">'
            f"<thead><tr><th>{html.escape(label_heading)}</th>{head}</tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>')
