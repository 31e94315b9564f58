"""Reading a page's own values from a link: the one check every page runs on what a URL asks for.

Streamlit drops a bound widget's link value that is not one of its options, silently. A page
that also takes a label as the link's value (a link made in the other language: "第 3 层" for
layer 3) or wants to say that a value was refused reads the link here first, before the widget
does. ``linked_option`` is the reader; the others are it at a session's first run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import streamlit as st

T = TypeVar("T")


def linked_option(key: str, options: Sequence[T], shown: Callable[[T], set[str]],
                  ) -> tuple[T | None, str | None]:
    """What the link's value for ``key`` names now: ``(option, None)`` for an option itself
    (``str(option)``) or any of its labels ``shown(option)``; ``(None, text)`` for anything
    else; ``(None, None)`` when the link has no value for ``key``."""
    asked = st.query_params.get(key)
    if asked is None:
        return None, None
    text = asked.strip()
    for option in options:
        if text == str(option) or text in shown(option):
            return option, None
    return None, (text or None)


def option_in_link(key: str, options: Sequence[T], shown: Callable[[T], set[str]],
                   ) -> tuple[T | None, str | None]:
    """``linked_option`` on a session's first run (while the widget of ``key`` has no state
    yet); ``(None, None)`` after it."""
    if key in st.session_state:
        return None, None
    return linked_option(key, options, shown)


def number_in_link(key: str, low: float, high: float) -> str | None:
    """On a session's first run, the link's value for ``key`` when it is not a number from
    ``low`` to ``high`` (to say so); None when it is one, or there is nothing to read."""
    asked = None if key in st.session_state else st.query_params.get(key)
    if asked is None:
        return None
    try:
        ok = math.isfinite(float(asked)) and low <= float(asked) <= high
    except ValueError:
        ok = False
    return None if ok else asked
