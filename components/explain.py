"""The words a view carries: its explanation, and the notes beside a number that looks wrong.

Both are body text (the theme's 17 px, full-contrast ink), not Streamlit's caption, whose 60%
grey at ~15 px reads at 3.9:1 and is too faint for a projector.
"""

from __future__ import annotations

import streamlit as st

from components.i18n import _


def page_header(title: str, explanation: str) -> None:
    """A page's title and its two-or-three-sentence explanation, both translated."""
    st.title(_(title))
    explain(_(explanation))


def explain(text: str) -> None:
    """An explanation under a title or a section (markdown, our own text only)."""
    st.markdown(text)
