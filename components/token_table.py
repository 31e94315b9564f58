"""The token table: one row per position with every number the tokenizer gives the model."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from components import palette
from components.html_table import draw_grid, row_tint
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
FIELDS = list(HEADERS)
NUMERIC = [f in ("position", "input_id", "token_type_id", "attention_mask") for f in FIELDS]


@dataclass(frozen=True)
class TokenTable:
    """One row per position: ``columns`` the headers in the reader's language, each row's cells
    in the order of ``FIELDS``. Plain rows, not a data frame: /tokens is a fresh server's first
    page, and pandas is not imported on its way (components.html_table)."""

    columns: list[str]
    rows: list[list[Any]]

    def field(self, row: list[Any], name: str) -> Any:
        return row[FIELDS.index(name)]

    def csv(self) -> str:
        """The table as the download gives it: a header line, then a line per row."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(self.rows)
        return out.getvalue()


def token_table(encoding: Encoding, unk_token: str | None) -> TokenTable:
    """One row per position, headers and kinds in the reader's language."""
    rows = []
    for pos, (tok, tid, seg, mask, special) in enumerate(
        zip(encoding.tokens, encoding.input_ids, encoding.token_type_ids,
            encoding.attention_mask, encoding.special_tokens_mask, strict=True)
    ):
        rows.append([pos, tok, tid, seg, SEGMENT_NAMES.get(seg, str(seg)) if mask else "-", mask,
                     _(token_kind(tok, bool(special), not mask, unk_token))])
    return TokenTable([_(h) for h in HEADERS.values()], rows)


def row_style(token_type_id: int, attention_mask: int, bold: bool) -> str:
    """A token's row tint: segment A blue, B orange with a bar at its start; padding grey."""
    if attention_mask == 0:
        return f"color:{palette.PADDING_TEXT};background:{palette.PADDING_FILL}"
    return row_tint(SEGMENT_COLOURS.get(int(token_type_id), palette.MUTED), bold=bold)


def row_styles(table: TokenTable) -> list[str]:
    """Each row's tint, specials and [UNK] bold (by their kind, in the reader's language)."""
    bold = {_(kind) for kind in BOLD_KINDS}
    return [row_style(table.field(row, "token_type_id"), table.field(row, "attention_mask"),
                      table.field(row, "kind") in bold) for row in table.rows]


def draw_token_table(table: TokenTable) -> None:
    """The table: rows tinted by segment (A blue, B orange), padding grey, specials and [UNK] bold.

    HTML (components.html_table) rather than the interactive data grid: its cells are page
    text, so they can be read out, copied and found with Ctrl+F, stay sharp on a projector and
    arrive with the rerun. Long inputs scroll inside a fixed height.
    """
    styles = row_styles(table)
    height = None if len(table.rows) <= TABLE_ROWS_SHOWN else TABLE_HEIGHT_PX
    draw_grid(table.columns, table.rows, NUMERIC, styles, "tokens", height)
