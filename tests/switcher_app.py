"""The picture switcher alone (components/picture_switcher), with no model and no page of the app:
a slider over five pictures that turns into a server slider and a figure with exact values on
(components.value_picture), and a grid of two sliders. tests/test_picture_switcher_alone.py
serves it with `streamlit run` and drives it in Chromium."""

from __future__ import annotations

import streamlit as st

from components.picture_switcher import Axis, picture_grid
from components.value_picture import value_picture

MISSING = "There is no {asked} here: the values run from {first} to {last}. Showing {n}."


def picture(what: str, i: int) -> str:
    """A picture of its own height, marked as the pages' pictures are (``data-figure``)."""
    return (f'<div data-figure="{what}-{i}" style="height:{100 + 30 * i}px;'
            f'background:#dde">{what} {i}</div>')


def axis(key: str, word: str, count: int) -> Axis[int]:
    values = list(range(count))
    return Axis(key, values, word.title(), [f"{word} {n}" for n in values], MISSING)


@st.fragment
def one_slider() -> None:
    exact = st.toggle("Exact values", key="alone_exact", bind="query-params")
    level = value_picture(axis("alone_level", "level", 5), lambda i: picture("level", i),
                          lambda n: st.markdown(f"figure of level {n}"), exact=exact)
    st.markdown(f"the server has level {level}")


@st.fragment
def two_sliders() -> None:
    row, column = picture_grid([axis("alone_row", "row", 2), axis("alone_col", "column", 3)],
                               lambda i: picture("cell", i))
    st.markdown(f"the server has row {row}, column {column}")


st.title("Picture switcher")
one_slider()
two_sliders()
