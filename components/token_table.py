"""The token table: one row per position with every number the tokenizer gives the model."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.labels import SEGMENT_COLOURS, SEGMENT_NAMES, markdown_text, token_kind
from core import Encoding

TABLE_ROWS_SHOWN = 18    # up to this many rows the table shows whole; longer inputs scroll
TABLE_HEIGHT_PX = 640
BOLD_KINDS = ("special", "unknown ([UNK])")   # the tokens the tokenizer adds or gives up on


def token_frame(encoding: Encoding, unk_token: str | None) -> pd.DataFrame:
    """One row per position: position, token, input_id, segment, attention_mask, kind."""
    rows = []
    for pos, (tok, tid, seg, mask, special) in enumerate(
        zip(
            encoding.tokens,
            encoding.input_ids,
            encoding.token_type_ids,
            encoding.attention_mask,
            encoding.special_tokens_mask,
            strict=True,
        )
    ):
        rows.append(
            {
                "position": pos,
                "token": tok,
                "input_id": tid,
                "token_type_id": seg,
                "segment": SEGMENT_NAMES.get(seg, str(seg)) if mask else "-",
                "attention_mask": mask,
                "kind": token_kind(tok, bool(special), not mask, unk_token),
            }
        )
    return pd.DataFrame(rows)


def _row_style(row: pd.Series) -> list[str]:
    if row["attention_mask"] == 0:
        return ["color: #9e9e9e; background-color: #f3f3f3"] * len(row)
    colour = SEGMENT_COLOURS.get(int(row["token_type_id"]), "#777777")
    weight = "font-weight: 700;" if row["kind"] in BOLD_KINDS else ""
    cell = f"background-color: {colour}22; {weight}"
    # One bar in the segment's colour at the start of the row, not one per cell.
    return [f"{cell} border-left: 4px solid {colour};"] + [cell] * (len(row) - 1)


def draw_token_table(frame: pd.DataFrame) -> None:
    """The table: rows tinted by segment (A blue, B orange), padding grey, specials and [UNK] bold.

    A static table rather than the interactive data grid: its cells are page text, so they can be
    read out, copied and found with Ctrl+F, stay sharp on a projector, and arrive with the rerun
    (the grid paints a canvas first and fills in its text later: about twice as slow per rerun
    in bench/). Long inputs scroll inside a fixed height.
    """
    height = "content" if len(frame) <= TABLE_ROWS_SHOWN else TABLE_HEIGHT_PX
    text_columns = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c])]
    # st.table renders cells as markdown: a token "-" would become a bullet, "$" start maths.
    # Escaping only what is displayed keeps the table's data (and its CSV) the tokens themselves.
    styled = frame.style.apply(_row_style, axis=1).format(markdown_text, subset=text_columns)
    st.table(styled, hide_index=True, height=height)
