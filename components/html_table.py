"""Tables as escaped HTML: page text a reader can copy and find, with no markdown to parse.

st.table renders every cell as markdown, which made the browser's share of a Tokens rerun a
fifth of it (bench/HISTORY.md); these tables are one HTML fragment instead. Every cell is
escaped, so a token reads exactly as the tokenizer gave it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from components import palette

# pandas is imported where a frame is drawn, not with this module: the token table, on a fresh
# server's first page, is drawn from plain rows (``grid_html``), and importing pandas cost
# 0.4 s of processor time on that page's way (bench/cold_start_bench.py).
if TYPE_CHECKING:
    import pandas as pd

STYLE = f"""<style>
.tab-wrap {{ overflow:auto; border:1px solid {palette.GRID}; border-radius:6px; }}
.tab {{ border-collapse:collapse; width:100%; font-size:16px; color:{palette.INK}; }}
.tab th {{ position:sticky; top:0; background:#ffffff; text-align:left; font-weight:600;
  border-bottom:2px solid {palette.GRID}; padding:6px 6px; vertical-align:bottom; }}
.tab td {{ padding:4px 6px; border-bottom:1px solid #e6e6e6; white-space:pre; }}
.tab th.num {{ text-align:right; }}
.tab td.num {{ text-align:right; font-variant-numeric:tabular-nums; }}
.tab.wrap td {{ white-space:pre-wrap; overflow-wrap:break-word; vertical-align:top; }}
</style>"""


NUMBER = ' class="num"'   # a number cell's class, and its header's


def row_tint(colour: str, bold: bool = False, alpha: str = "22") -> str:
    """A row's CSS: tinted in ``colour`` with a bar of it at the row's start."""
    return (f"background:{colour}{alpha};box-shadow:inset 4px 0 0 {colour}"
            + (";font-weight:700" if bold else ""))


# A numeric column's format: a format spec (".4f", ".2%", "," for thousands) or a function.
Format = str | Callable[[Any], str]


def _missing(value: Any) -> bool:
    """None, NaN, or pandas' NA or NaT (a frame's numeric cell may be any of them)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    if isinstance(value, int | float):
        return False
    # Only a frame's cells get here, so pandas is imported already.
    import pandas as pd

    return bool(pd.isna(value))


def _number(value: float, spec: Format) -> str:
    if callable(spec):
        return spec(value)
    return "–" if spec and _missing(value) else f"{value:{spec}}"


def table_html(frame: pd.DataFrame, row_styles: Sequence[str], name: str,
               max_height_px: int | None = None, wrap: bool = False,
               formats: Mapping[str, Format] | None = None) -> str:
    """The table, each row with its CSS; ``data-table`` names it for tests. Taller than
    ``max_height_px``, it scrolls under a header that stays in view. ``wrap``: long cells wrap
    within the page's width (a line break in a cell's text starts a new line), for tables of
    sentences rather than of tokens. ``formats``: a format spec (".4f", ".2%") or a function
    per numeric column; the others are written as they are."""
    from pandas.api.types import is_numeric_dtype

    return grid_html([str(c) for c in frame.columns], frame.itertuples(index=False),
                     [is_numeric_dtype(frame[c]) for c in frame.columns], row_styles, name,
                     max_height_px, wrap, formats)


def grid_html(columns: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[bool],
              row_styles: Sequence[str], name: str, max_height_px: int | None = None,
              wrap: bool = False, formats: Mapping[str, Format] | None = None) -> str:
    """``table_html`` of plain rows: ``columns`` their headers, ``numeric`` which of them hold
    numbers (written at the right, in ``formats``)."""
    specs: list[Format] = [(formats or {}).get(c, "") for c in columns]
    # Field names may break after an underscore, so a table fits a 1024 px projector page.
    # A number column's header stands over its numbers, at the right.
    head = "".join(f'<th{NUMBER if is_number else ""}>'
                   f"{html.escape(c).replace('_', '_<wbr>')}</th>"
                   for c, is_number in zip(columns, numeric, strict=True))
    lines = []
    for values, style in zip(rows, row_styles, strict=True):
        cells = "".join(
            f"<td{NUMBER}>{_number(value, spec)}</td>" if is_number
            else f"<td>{html.escape(str(value))}</td>"
            for value, is_number, spec in zip(values, numeric, specs, strict=True))
        lines.append(f'<tr style="{html.escape(style)}">{cells}</tr>')
    height = f' style="max-height:{max_height_px}px"' if max_height_px else ""
    kind = "tab wrap" if wrap else "tab"
    return (f'{STYLE}<div class="tab-wrap" data-table="{html.escape(name)}"{height}>'
            f'<table class="{kind}"><thead><tr>{head}</tr></thead><tbody>{"".join(lines)}</tbody>'
            "</table></div>")


def draw_table(frame: pd.DataFrame, row_styles: Sequence[str], name: str,
               max_height_px: int | None = None, wrap: bool = False,
               formats: Mapping[str, Format] | None = None) -> None:
    st.html(table_html(frame, row_styles, name, max_height_px, wrap, formats))


def draw_grid(columns: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[bool],
              row_styles: Sequence[str], name: str, max_height_px: int | None = None) -> None:
    st.html(grid_html(columns, rows, numeric, row_styles, name, max_height_px))
