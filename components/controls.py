"""Widgets shared by the pages' controls, safe for whatever a link puts in the URL."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.i18n import _


def whole_number(
    where: DeltaGenerator | ModuleType,   # a container, or st itself (the main area)
    label: str,
    *,
    min_value: int,
    max_value: int,
    value: int,
    key: str,
    step: int = 1,
    **kwargs: Any,
) -> int:
    """An integer box bound to the URL that any value in a link leaves usable.

    A float box shown without decimals: Streamlit's integer box converts the link's value with
    ``int()`` before checking it, so ``inf``, ``1e309`` or 400 nines raise OverflowError on every
    reload. The float box drops a non-finite or out-of-range value and shows the default instead.
    """
    number = where.number_input(
        label, min_value=float(min_value), max_value=float(max_value), value=float(value),
        step=float(step), format="%.0f", key=key, bind="query-params", **kwargs,
    )
    return int(round(number if number is not None else value))


def by_word_toggle(key: str, where: DeltaGenerator | None = None) -> bool:
    """The "By word" switch of a view, kept in the URL like the page's other settings: word
    pieces ("st ##rum ##ming") and a Chinese word's characters (北京) shown as one word."""
    return bool((where or st).toggle(
        _("By word"), key=key, bind="query-params",
        help=_("Groups the tokens into words: the pieces of a split word, and the characters "
               "of a Chinese word (found by a word segmenter), become one row. Attention to a "
               "word is the sum over its pieces, attention from a word the mean over them, so "
               "each row still sums to 1; importances and shares add up over the pieces.")))
