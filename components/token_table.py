"""The token table: one row per position with every number the tokenizer gives the model."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.labels import SEGMENT_COLOURS, SEGMENT_NAMES, token_kind
from core import Encoding


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
    weight = "font-weight: 700;" if row["kind"] != "word piece" else ""
    return [f"background-color: {colour}22; border-left: 4px solid {colour}; {weight}"] * len(row)


def draw_token_table(frame: pd.DataFrame) -> None:
    """The table, rows tinted by segment (A blue, B orange), padding greyed, specials in bold."""
    height = min(42 + 35 * len(frame), 640)
    st.dataframe(
        frame.style.apply(_row_style, axis=1),
        hide_index=True,
        height=height,
        width="stretch",
        column_config={
            "position": st.column_config.NumberColumn("position", help="position_ids"),
            "token": st.column_config.TextColumn("token", help="WordPiece token"),
            "input_id": st.column_config.NumberColumn("input_id", format="%d"),
            "token_type_id": st.column_config.NumberColumn("token_type_id", help="segment 0 or 1"),
            "attention_mask": st.column_config.NumberColumn("attention_mask", help="1 real, 0 pad"),
        },
    )
