"""Pages split into sections shown as tabs, where only the open tab's section runs.

A page with many figures costs the browser most of a rerun (plotly lays out every figure again).
Streamlit's stateful tabs (``on_change="rerun"``) tell the script which tab is open, so a rerun
computes and sends only that section; the open tab is bound to the URL, so a link opens it.

The open section runs as a Streamlit fragment: a control inside it (a layer, a head, an option)
reruns that section alone, not the sidebar, the header and the page's other work, while a new
sentence, model, language or tab still reruns the whole page. Streamlit names a fragment by its
function's module and name and where it is drawn, so ``_section`` below is one fragment per
tab, the same from run to run; a fragment's own rerun calls it again with the arguments of the
page's last full run (its context, the input key) and runs nothing else: not the router, so the
interface's language is set again here, from the session the router keeps it in.

A section's fragment redraws every element the section holds, and in the browser each costs
about as much as on a whole-page run: a move is cheap only when little is redrawn. So a part of
a section that depends on the control moved most can run as a fragment nested in the section's
(``run_part``), leaving the section's text, diagrams and other controls as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.i18n import _, every_language, set_language
from components.input_key import InputKey
from components.inputs import shared_inputs

Context = TypeVar("Context")
LANGUAGE_KEY = "lang"   # the sidebar's language switch (components.inputs.draw_language_switch)


@dataclass(frozen=True)
class Section(Generic[Context]):
    """One tab of a page: its English label (shown translated) and the function that draws it."""

    label: str
    draw: Callable[[Context], None]


def open_section(labels: Sequence[str], key: str) -> tuple[str, DeltaGenerator]:
    """Draw the tabs; return the open tab's English label and the container to draw it in.

    The tabs show (and the link carries) the labels in the reader's language; a link made in
    the other language opens the same tab. The other tabs stay empty until clicked.
    """
    shown = [_(label) for label in labels]
    # A label in the other language (a link made in it, or the language switched in the
    # sidebar) becomes this language's label in the widget's own state. Not through
    # ``default``: a default that changes from one run to the next (the link's value on the
    # first, none once the address holds this language's label) is a new widget to
    # Streamlit, which then forgets the open tab on the next click.
    current = st.session_state.get(key, st.query_params.get(key))
    if current is not None and current not in shown:
        match = next((s for s, label in zip(shown, labels, strict=True)
                      if current in every_language(label)), None)
        if match is not None:
            # The tabs are bound to the link, so the link follows this state: writing the
            # link too is refused once the tabs have been drawn (the language switched).
            st.session_state[key] = match
    tabs = st.tabs(shown, key=key, bind="query-params", on_change="rerun")
    for label, tab in zip(labels, tabs, strict=True):
        if tab.open:
            return label, tab
    return labels[0], tabs[0]  # not reached: a stateful st.tabs always has one tab open


@st.fragment
def _section(inputs: InputKey, draw: Callable[..., None], *args: object) -> None:
    """``draw(*args)`` as a fragment (see the module's docstring): on its own reruns, the
    language the router set and a whole-page rerun when the shared inputs changed under it
    (a control of the section that puts a sentence in the sidebar)."""
    set_language(st.session_state.get(LANGUAGE_KEY))
    if shared_inputs() != inputs:
        st.rerun()
    draw(*args)


def run_section(area: DeltaGenerator, draw: Callable[..., None], *args: object) -> None:
    """Run ``draw(*args)`` in ``area`` (the open tab) as its own fragment: a control drawn by it
    reruns only it. For a page that draws its open tab itself (``open_section``)."""
    with area:
        _section(shared_inputs(), draw, *args)


def run_part(draw: Callable[..., None], *args: object) -> None:
    """Run ``draw(*args)`` here as a fragment nested in the open section's: a control drawn by
    it reruns it alone, and the section's other controls and figures stay as they are. For the
    control a student moves most, when only part of a section depends on it; what it needs from
    the rest of the section comes in ``args``. It may draw its control into a container of the
    section made before it (Streamlit redraws a fragment's writes there in place)."""
    _section(shared_inputs(), draw, *args)


def draw_sections(sections: Sequence[Section[Context]], key: str, context: Context) -> str:
    """The tabs of ``sections``; runs the open one's ``draw(context)`` as a fragment (a control
    inside it reruns only it); returns its label."""
    label, area = open_section([s.label for s in sections], key)
    run_section(area, next(s for s in sections if s.label == label).draw, context)
    return label
