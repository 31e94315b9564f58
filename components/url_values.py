"""Reading a page's own values from a link: the one check every page runs on what a URL asks for.

Streamlit drops a bound widget's link value that is not one of its options, silently. A page
that also takes a label as the link's value (a link made in the other language: "第 3 层" for
layer 3) or wants to say that a value was refused reads the link here first, on a session's
first run, before the widget does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import streamlit as st

T = TypeVar("T")


def _first_run_value(key: str) -> str | None:
    """The link's value for ``key`` while its widget has no state yet (a session's first run)."""
    return None if key in st.session_state else st.query_params.get(key)


def option_in_link(key: str, options: Sequence[T], shown: Callable[[T], set[str]],
                   ) -> tuple[T | None, str | None]:
    """On a session's first run, what the link's value for ``key`` names: ``(option, None)``
    for an option itself (``str(option)``) or any of its labels ``shown(option)``;
    ``(None, text)`` for anything else; ``(None, None)`` when there is nothing to read (no
    value, or the widget already has its state)."""
    asked = _first_run_value(key)
    if asked is None:
        return None, None
    text = asked.strip()
    for option in options:
        if text == str(option) or text in shown(option):
            return option, None
    return None, (text or None)


def number_in_link(key: str, low: float, high: float) -> str | None:
    """On a session's first run, the link's value for ``key`` when it is not a number from
    ``low`` to ``high`` (to say so); None when it is one, or there is nothing to read."""
    asked = _first_run_value(key)
    if asked is None:
        return None
    try:
        ok = math.isfinite(float(asked)) and low <= float(asked) <= high
    except ValueError:
        ok = False
    return None if ok else asked
