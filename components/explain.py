"""The short explanation each view carries: what the user sees, in two or three sentences."""

from __future__ import annotations

import streamlit as st


def explain(text: str) -> None:
    """A two-or-three-sentence explanation under a view's title (markdown, our own text only)."""
    st.caption(text)
