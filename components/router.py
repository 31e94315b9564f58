"""The app frame: page list, navigation, the language and the shared inputs, run before every page.

Every page lives in its own folder, ``pages/<name>/page.py``, and nothing sits at the top of
``pages/``: Streamlit's legacy page discovery (which globs ``pages/*.py`` when a ``pages/`` folder
is next to app.py) then finds no page, so every session, a fresh server's first deep link
included, runs app.py and this router.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from components.i18n import N_, _
from components.inputs import draw_language_switch, draw_shared_inputs
from components.startup import import_page

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageSpec:
    folder: str        # pages/<folder>/page.py
    title: str         # English; shown through _()
    url_path: str
    icon: str

    @property
    def path(self) -> str:
        return f"pages/{self.folder}/page.py"


HOME = PageSpec("home", N_("Home"), "", ":material/home:")
PAGES = (
    PageSpec("tokens", N_("Tokens"), "tokens", ":material/segment:"),
    PageSpec("stages", N_("Stages"), "stages", ":material/stacks:"),
    PageSpec("positions", N_("Positions"), "positions", ":material/timeline:"),
    PageSpec("similarity", N_("Similarity"), "similarity", ":material/compare_arrows:"),
    PageSpec("encoder", N_("Encoder"), "encoder", ":material/hub:"),
    PageSpec("pretraining", N_("Pretraining"), "pretraining", ":material/school:"),
    PageSpec("parameters", N_("Parameters"), "parameters", ":material/calculate:"),
    PageSpec("lesson", N_("Lesson"), "lesson", ":material/menu_book:"),
)

# The navigation's menus: the embedding layer, the model around it, the guided lessons.
GROUPS = {
    "tokens": N_("Embeddings"), "stages": N_("Embeddings"), "positions": N_("Embeddings"),
    "similarity": N_("Embeddings"), "encoder": N_("Model"), "pretraining": N_("Model"),
    "parameters": N_("Model"), "lesson": N_("Lessons"),
}


def available_pages() -> list[PageSpec]:
    """The pages that exist: no placeholder is listed for a page not written yet."""
    return list(_existing_pages())


@functools.cache
def _existing_pages() -> tuple[PageSpec, ...]:
    # Looked up once per process: a file check per page on every run was a tenth of a short
    # rerun on a busy server.
    return tuple(spec for spec in PAGES if (ROOT / spec.path).is_file())


def run_app() -> None:
    """Set the language, register the pages, draw the shared inputs and run the page asked for."""
    st.set_page_config(page_title="BERT Embedding Explorer", page_icon="🧭", layout="wide")
    draw_language_switch()   # first: every string after it is in the reader's language
    home = st.Page(str(ROOT / HOME.path), title=_(HOME.title), icon=HOME.icon, default=True)
    groups: dict[str, list[st.Page]] = {"": [home]}
    for spec in available_pages():
        groups.setdefault(_(GROUPS[spec.folder]), []).append(
            st.Page(str(ROOT / spec.path), title=_(spec.title), url_path=spec.url_path,
                    icon=spec.icon))
    # Grouped, the top bar shows a few menus instead of nine links: at 1024 px nothing hides
    # behind "more".
    page = st.navigation(groups, position="top")
    # Its modules imported one thread at a time before it runs (components.startup).
    import_page(folder_of(page.url_path))
    draw_shared_inputs()
    page.run()


def folder_of(url_path: str) -> str:
    """The page folder behind a URL path ("" is Home)."""
    return next((spec.folder for spec in PAGES if spec.url_path == url_path), HOME.folder)
