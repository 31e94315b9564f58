"""components.html_table: numbers written in the format asked for, a missing one as a dash,
every other cell escaped text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from components.html_table import table_html
from tests.conftest import _TableParser


def test_formats_per_column_and_a_dash_for_a_missing_number():
    frame = pd.DataFrame({"A": ["<b>x</b>", "y"], "term": [0.033412, -0.5],
                          "share": [0.0403, np.nan], "n": [3, 4]})
    body = table_html(frame, ["", ""], "demo", formats={"term": ".4f", "share": ".2%"})
    parser = _TableParser()
    parser.feed(body)
    (header, rows), = parser.tables
    assert header == ["A", "term", "share", "n"]
    assert [r for r in rows if r] == [["<b>x</b>", "0.0334", "4.03%", "3"],
                                      ["y", "-0.5000", "–", "4"]]
    assert "<b>x" not in body


def test_the_token_table_drawn_from_plain_rows_is_the_frames_table_and_csv(bundle):
    """/tokens draws its table from plain rows (no pandas on a fresh server's first page): the
    same HTML as ``table_html`` of a data frame of those rows, and the download the same CSV as
    pandas writes, for a pair with [UNK] and padding."""
    from components.html_table import grid_html
    from components.token_table import NUMERIC, token_table
    from core import encode

    enc = encode(bundle, "A heron 🦩 stood", "我爱你", max_length=16, pad_to_max_length=True)
    table = token_table(enc, bundle.tokenizer.unk_token)
    frame = pd.DataFrame(table.rows, columns=table.columns)
    styles = [str(i) for i in range(len(frame))]
    assert NUMERIC == [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    assert grid_html(table.columns, table.rows, NUMERIC, styles, "tokens") == \
        table_html(frame, styles, "tokens")
    assert table.csv() == frame.to_csv(index=False)
    assert "[UNK]" in table.csv() and "[PAD]" in table.csv()
