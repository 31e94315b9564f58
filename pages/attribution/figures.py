"""Attribution's pictures and tables, no st. calls: token importance as a table of bars (one row
per input token, one column per method) and the blank-out agreement per layer."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from components import palette
from core.attribution import Method

NEGATIVE = palette.HIGHLIGHT
STYLE = f"""<style>
.att-wrap {{ overflow:auto; border:1px solid {palette.GRID}; border-radius:6px; }}
.att {{ border-collapse:collapse; width:100%; font-size:16px; color:{palette.INK};
  table-layout:fixed; }}
.att th {{ position:sticky; top:0; background:#ffffff; text-align:left; font-weight:600;
  border-bottom:2px solid {palette.GRID}; padding:6px 4px; vertical-align:bottom;
  white-space:normal; font-size:14px; }}
.att th.tok, .att td.tok {{ width:6em; }}
.att th.pos, .att td.pos {{ width:2.2em; text-align:right; }}
.att td {{ padding:3px 4px; border-bottom:1px solid #e6e6e6; white-space:nowrap;
  overflow:hidden; text-overflow:ellipsis; }}
.att td.tok {{ font-family:monospace; }}
.att td.bar {{ background:linear-gradient(to right, var(--c) var(--w), transparent var(--w))
  content-box; }}
.att td.sa {{ --c:{palette.SEGMENT_A}55; }}
.att td.sb {{ --c:{palette.SEGMENT_B}55; }}
.att td.neg {{ --c:{NEGATIVE}55; }}
.att .val {{ font-size:14px; line-height:22px; padding-left:4px;
  font-variant-numeric:tabular-nums; color:{palette.INK}; }}
.att tr.special td.tok {{ color:{palette.MUTED}; }}
</style>"""


@dataclass(frozen=True)
class Column:
    """One method's values over the tokens, as a column of bars."""

    title: str                  # shown as given (translated by the page)
    values: np.ndarray          # (N,) float; NaN: not computed for this token
    signed: bool = False        # may be negative (integrated gradients): red bars for < 0


@dataclass(frozen=True)
class Rows:
    """The table's rows: a token or a word each, with its sentence, whether it is special, and
    the position shown in the first column."""

    labels: Sequence[str]
    segments: Sequence[int]
    special: Sequence[bool]
    positions: Sequence[int]


def _cell(value: float, scale: float, colour: str, digits: int) -> str:
    """One value with its bar: the cell's own background, drawn to ``--w`` of its width (one
    element a cell, not three: at 512 tokens a table has 1,500 of them)."""
    if not np.isfinite(value):
        return '<td><span class="val">–</span></td>'
    width = 0.0 if scale <= 0 else min(100.0, 100.0 * abs(value) / scale)
    fill = "neg" if value < 0 else colour
    return (f'<td class="bar {fill}" style="--w:{width:.1f}%">'
            f'<span class="val">{value:.{digits}f}</span></td>')


def importance_html(rows_of: Rows, columns: Sequence[Column], position_title: str,
                    token_title: str, name: str, digits: int = 3, figure: str = "") -> str:
    """The table of bars. Each column's bars are scaled to its own largest |value|, so columns
    are compared by their shape over the tokens, not by their units. ``figure``: a
    ``data-figure`` name for it (a picture switched in the browser, for tests and the bench)."""
    head = (f'<th class="pos">{html.escape(position_title)}</th>'
            f'<th class="tok">{html.escape(token_title)}</th>'
            + "".join(f"<th>{html.escape(c.title)}</th>" for c in columns))
    scales = [float(np.nanmax(np.abs(c.values))) if np.isfinite(c.values).any() else 0.0
              for c in columns]
    rows = []
    for i, (token, segment, is_special, position) in enumerate(zip(
            rows_of.labels, rows_of.segments, rows_of.special, rows_of.positions, strict=True)):
        colour = "sb" if segment == 1 else "sa"
        cells = "".join(_cell(float(c.values[i]), s, colour, digits)
                        for c, s in zip(columns, scales, strict=True))
        rows.append(f'<tr class="{"special" if is_special else ""}">'
                    f'<td class="pos">{position}</td><td class="tok" title="{html.escape(token)}">'
                    f"{html.escape(token)}</td>{cells}</tr>")
    named = f' data-figure="{html.escape(figure)}"' if figure else ""
    return (f'{STYLE}<div class="att-wrap" data-table="{html.escape(name)}"{named} '
            f'style="max-height:640px"><table class="att"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def agreement_frame(table: Mapping[Method, np.ndarray], titles: Mapping[Method, str],
                    layer_title: str, layer_label: str) -> pd.DataFrame:
    """One row per layer, one column per method that has layers (Spearman's rho, signed, two
    decimals; "–" where it is undefined)."""
    layered = {m: r for m, r in table.items() if len(r) > 1}
    layers = max((len(r) for r in layered.values()), default=0)
    return pd.DataFrame(
        [{layer_title: layer_label.format(n=k + 1), **{titles[m]: rho_text(r[k])
                                                       for m, r in layered.items()}}
         for k in range(layers)])


def rho_text(value: float) -> str:
    return f"{value:+.2f}" if np.isfinite(value) else "–"
