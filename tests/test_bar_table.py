"""components.bar_table: signed bars on one scale, values written, every text escaped."""

from __future__ import annotations

import re

import numpy as np

from components.bar_table import Measure, bars_html
from tests.conftest import _TableParser


def geometry(body: str) -> tuple[float, list[tuple[float, float]]]:
    """The zero line's place (% of a bar's cell) and each bar's (left %, width %), in order;
    NaN for a missing value (no bar)."""
    zero = float(re.search(r'<table style="--z:([\d.]+)%', body).group(1))
    bars = [(float(left), float(width)) if left else (np.nan, np.nan)
            for left, width in re.findall(
                r'<td class="t m\d">(?:<i style="left:([\d.]+)%;width:([\d.]+)%"></i>)?</td>',
                body)]
    return zero, bars


def test_signed_bars_share_one_scale_and_write_their_values():
    share, drop = np.array([0.5, -0.25, 0.125]), np.array([0.25, np.nan, -0.5])
    body = bars_html(["0 [CLS]", "1 <b>x</b>", "2 **y**"],
                     [Measure("share", share, "#1f77b4"), Measure("drop", drop, "#595959")],
                     "model <i>\neach token", "token", "demo")
    parser = _TableParser()
    parser.feed(body)
    (header, rows), = parser.tables
    assert header == ["token", "share", "drop"]
    rows = [r for r in rows if r]    # label, then each measure's bar (no text) and value
    assert [r[0] for r in rows] == ["0 [CLS]", "1 <b>x</b>", "2 **y**"]   # as typed, as text
    assert [r[1:] for r in rows] == [["", "0.5000", "", "0.2500"], ["", "-0.2500", "", "—"],
                                     ["", "0.1250", "", "-0.5000"]]
    assert "<b>x" not in body and "<i>" not in body                      # escaped, not markup
    # One scale from -0.5 to 0.5 for both columns: zero in the middle, a bar's length its size.
    low, high = -0.5, 0.5
    zero, bars = geometry(body)
    assert zero == 50.0
    for (left, width), value in zip(bars, np.ravel(np.c_[share, drop]), strict=True):
        if np.isnan(value):
            assert np.isnan(width)
            continue
        np.testing.assert_allclose(width, abs(value) / (high - low) * 100, atol=0.06)
        np.testing.assert_allclose(left, (min(value, 0) - low) / (high - low) * 100, atol=0.06)


def test_all_positive_bars_start_at_the_left_edge():
    body = bars_html(["a", "b"], [Measure("m", np.array([1.0, 3.0]), "#000000")], "t", "x", "p")
    zero, bars = geometry(body)
    assert zero == 0.0
    np.testing.assert_allclose([width for _left, width in bars], [100 / 3, 100], atol=0.06)
