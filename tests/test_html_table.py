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
