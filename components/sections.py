"""Pages split into sections shown as tabs, where only the open tab's section runs.

A page with many figures costs the browser most of a rerun (plotly lays out every figure again).
Streamlit's stateful tabs (``on_change="rerun"``) tell the script which tab is open, so a rerun
computes and sends only that section; the open tab is bound to the URL, so a link opens it.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator


def open_section(labels: Sequence[str], key: str) -> tuple[str, DeltaGenerator]:
    """Draw the tabs; return the open tab's label and the container to draw its section in.

    The other tabs stay empty until clicked; clicking one reruns the page with it open.
    """
    tabs = st.tabs(list(labels), key=key, bind="query-params", on_change="rerun")
    for label, tab in zip(labels, tabs, strict=True):
        if tab.open:
            return label, tab
    return labels[0], tabs[0]  # not reached: a stateful st.tabs always has one tab open
