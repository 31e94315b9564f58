"""The app frame run before every page: navigation, the language and the shared inputs.

The pages it lists are in frame/page_list.py (add a page there).
"""

from __future__ import annotations

import streamlit as st

from components.i18n import _, language
from components.inputs import draw_language_switch, draw_shared_inputs
from frame.page_imports import import_page
from frame.page_list import HOME, ROOT, available_pages, folder_of
from frame.startup import FIRST_PAGE_DRAWN

# The pages' st.Page objects, made once per language for the process: making them resolves and
# checks every page's file, 2.7 ms a run (measured in AppTest), 5% of a class's rerun on the
# server (bench/HISTORY.md). st.navigation only ever marks one of them the default (Home,
# already) or runnable, so sessions can share them.
_PAGE_GROUPS: dict[str, dict[str, list[st.Page]]] = {}


def page_groups(code: str) -> dict[str, list[st.Page]]:
    """Home, then each available page under its menu's title, in language ``code`` (which the
    run has set: the titles are translated as they are made)."""
    groups = _PAGE_GROUPS.get(code)
    if groups is None:
        home = st.Page(str(ROOT / HOME.path), title=_(HOME.title), icon=HOME.icon, default=True)
        groups = {"": [home]}
        for spec in available_pages():
            groups.setdefault(_(spec.group), []).append(
                st.Page(str(ROOT / spec.path), title=_(spec.title), url_path=spec.url_path,
                        icon=spec.icon))
        _PAGE_GROUPS[code] = groups
    return groups


def run_app() -> None:
    """Set the language, register the pages, draw the shared inputs and run the page asked for."""
    st.set_page_config(page_title="BERT Embedding Explorer", page_icon="🧭", layout="wide")
    draw_language_switch()   # first: every string after it is in the reader's language
    # Grouped, the top bar shows a few menus instead of nine links: at 1024 px nothing hides
    # behind "more".
    page = st.navigation(page_groups(language()), position="top")
    # Its modules imported one thread at a time before it runs (frame.page_imports).
    import_page(folder_of(page.url_path))
    draw_shared_inputs()
    try:
        page.run()
    finally:   # drawn, or stopped: the server's warm-up may now import torch (frame/startup.py)
        FIRST_PAGE_DRAWN.set()
