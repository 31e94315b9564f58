"""The token table: one row per position with every number the tokenizer gives the model."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from components import palette
from components.i18n import N_, _
from components.labels import (
    SEGMENT_COLOURS,
    SEGMENT_NAMES,
    SPECIAL,
    UNKNOWN,
    token_kind,
)
from core import Encoding

TABLE_ROWS_SHOWN = 18    # up to this many rows the table shows whole; longer inputs scroll
TABLE_HEIGHT_PX = 640
BOLD_KINDS = (SPECIAL, UNKNOWN)   # the tokens the tokenizer adds or gives up on
# Headers: the tokenizer's own field names stay as code; the words around them translate.
HEADERS = {"position": N_("position"), "token": N_("token"), "input_id": "input_id",
           "token_type_id": "token_type_id", "segment": N_("segment"),
           "attention_mask": "attention_mask", "kind": N_("kind")}


def token_frame(encoding: Encoding, unk_token: str | None) -> pd.DataFrame:
    """One row per position, headers and kinds in the reader's language."""
    rows = []
    for pos, (tok, tid, seg, mask, special) in enumerate(
        zip(encoding.tokens, encoding.input_ids, encoding.token_type_ids,
            encoding.attention_mask, encoding.special_tokens_mask, strict=True)
    ):
        rows.append([pos, tok, tid, seg, SEGMENT_NAMES.get(seg, str(seg)) if mask else "-", mask,
                     _(token_kind(tok, bool(special), not mask, unk_token))])
    return pd.DataFrame(rows, columns=[_(h) for h in HEADERS.values()])


def _row_style(row: pd.Series, bold: set[str]) -> str:
    """The row's tint: segment A blue, B orange with a bar at its start; padding grey."""
    if row["attention_mask"] == 0:
        return f"color:{palette.PADDING_TEXT};background:{palette.PADDING_FILL}"
    colour = SEGMENT_COLOURS.get(int(row["token_type_id"]), palette.MUTED)
    weight = ";font-weight:700" if row.iloc[-1] in bold else ""
    return f"background:{colour}22;box-shadow:inset 4px 0 0 {colour}{weight}"


STYLE = f"""<style>
.tok-wrap {{ overflow:auto; border:1px solid {palette.GRID}; border-radius:6px; }}
.tok {{ border-collapse:collapse; width:100%; font-size:16px; color:{palette.INK}; }}
.tok th {{ position:sticky; top:0; background:#ffffff; text-align:left; font-weight:600;
  border-bottom:2px solid {palette.GRID}; padding:6px 8px; vertical-align:bottom; }}
.tok td {{ padding:4px 8px; border-bottom:1px solid #e6e6e6; white-space:pre; }}
.tok td.num {{ text-align:right; font-variant-numeric:tabular-nums; }}
</style>"""


def table_html(frame: pd.DataFrame, bold: set[str], max_height_px: int | None = None) -> str:
    """The table as page text: every cell escaped, so a token reads exactly as the tokenizer
    gave it (no markdown, no HTML). Taller than ``max_height_px``, it scrolls."""
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    # Field names may break after an underscore, so the table fits a 1024 px projector page.
    head = "".join(f"<th>{html.escape(str(c)).replace('_', '_<wbr>')}</th>"
                   for c in frame.columns)
    rows = []
    for _index, row in frame.iterrows():
        cells = "".join(
            f'<td class="num">{value}</td>' if is_number else f"<td>{html.escape(str(value))}</td>"
            for value, is_number in zip(row, numeric, strict=True))
        rows.append(f'<tr style="{_row_style(row, bold)}">{cells}</tr>')
    height = f' style="max-height:{max_height_px}px"' if max_height_px else ""
    return (f'{STYLE}<div class="tok-wrap" data-table="tokens"{height}><table class="tok">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def draw_token_table(frame: pd.DataFrame) -> None:
    """The table: rows tinted by segment (A blue, B orange), padding grey, specials and [UNK] bold.

    Plain HTML rather than st.table or the interactive data grid: its cells are page text, so
    they can be read out, copied and found with Ctrl+F, stay sharp on a projector and arrive
    with the rerun, and the browser has no markdown to parse per cell (st.table's was a fifth of
    a Tokens rerun; README, Performance). Long inputs scroll inside a fixed height, under a
    header that stays in view.
    """
    height = None if len(frame) <= TABLE_ROWS_SHOWN else TABLE_HEIGHT_PX
    st.html(table_html(frame, {_(kind) for kind in BOLD_KINDS}, height))
