"""The token table: one row per position with every number the tokenizer gives the model."""

from __future__ import annotations

import pandas as pd

from components import palette
from components.html_table import draw_table, row_tint
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
    return row_tint(colour, bold=row.iloc[-1] in bold)


def draw_token_table(frame: pd.DataFrame) -> None:
    """The table: rows tinted by segment (A blue, B orange), padding grey, specials and [UNK] bold.

    HTML (components.html_table) rather than the interactive data grid: its cells are page
    text, so they can be read out, copied and found with Ctrl+F, stay sharp on a projector and
    arrive with the rerun. Long inputs scroll inside a fixed height.
    """
    bold = {_(kind) for kind in BOLD_KINDS}
    styles = [_row_style(row, bold) for _index, row in frame.iterrows()]
    height = None if len(frame) <= TABLE_ROWS_SHOWN else TABLE_HEIGHT_PX
    draw_table(frame, styles, "tokens", height)
