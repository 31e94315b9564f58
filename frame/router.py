"""The app frame run before every page: navigation, the language and the shared inputs.

The pages it lists are in frame/page_list.py (add a page there).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.i18n import _, language
from components.inputs import draw_language_switch, draw_shared_inputs
from frame.page_imports import import_page
from frame.page_list import HOME, ROOT, available_pages, folder_of
from frame.startup import FIRST_PAGE_DRAWN

PAGES_KEY = "router_pages"


@dataclass(frozen=True)
class SessionPages:
    """The session's st.Page objects, titled in ``language``, under their menus' titles."""

    language: str
    groups: dict[str, list[st.Page]]


def session_pages(code: str) -> SessionPages:
    """The pages' st.Page objects, made once per session and language, not on every run: making
    them resolves and checks every page's file, 2.7 ms a run in AppTest (bench/HISTORY.md).

    Per session, never per process: st.navigation marks the page it picks as one a run may
    call, and page.run() clears the mark; objects shared by sessions raced, and a page run
    failed with "This page cannot be called directly". A session's runs come one at a time.
    """
    kept = st.session_state.get(PAGES_KEY)
    if isinstance(kept, SessionPages) and kept.language == code:
        return kept
    home = st.Page(str(ROOT / HOME.path), title=_(HOME.title), icon=HOME.icon, default=True)
    groups: dict[str, list[st.Page]] = {"": [home]}
    for spec in available_pages():
        groups.setdefault(_(spec.group), []).append(
            st.Page(str(ROOT / spec.path), title=_(spec.title), url_path=spec.url_path,
                    icon=spec.icon))
    st.session_state[PAGES_KEY] = made = SessionPages(code, groups)
    return made


def run_app() -> None:
    """Set the language, register the pages, draw the shared inputs and run the page asked for."""
    st.set_page_config(page_title="BERT Embedding Explorer", page_icon="🧭", layout="wide")
    draw_language_switch()   # first: every string after it is in the reader's language
    # Grouped, the top bar shows a few menus instead of nine links: at 1024 px nothing hides
    # behind "more".
    page = st.navigation(session_pages(language()).groups, position="top")
    # Its modules imported one thread at a time before it runs (frame.page_imports).
    import_page(folder_of(page.url_path))
    draw_shared_inputs()
    try:
        page.run()
    finally:   # drawn, or stopped: the server's warm-up may now import torch (frame/startup.py)
        FIRST_PAGE_DRAWN.set()
