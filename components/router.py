"""The app frame: page list, navigation and the shared inputs, run before every page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from components.inputs import draw_shared_inputs

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageSpec:
    path: str
    title: str
    url_path: str
    icon: str


HOME = PageSpec("pages/home.py", "Home", "", ":material/home:")
PAGES = (
    PageSpec("pages/tokens.py", "Tokens", "tokens", ":material/segment:"),
    PageSpec("pages/stages.py", "Stages", "stages", ":material/stacks:"),
    PageSpec("pages/positions.py", "Positions", "positions", ":material/timeline:"),
    PageSpec("pages/similarity.py", "Similarity", "similarity", ":material/compare_arrows:"),
    PageSpec("pages/parameters.py", "Parameters", "parameters", ":material/calculate:"),
)


def available_pages() -> list[PageSpec]:
    """The pages that exist: no placeholder is listed for a page not written yet."""
    return [spec for spec in PAGES if (ROOT / spec.path).is_file()]


def run_app() -> None:
    """Register the pages, draw the shared inputs and run the page the URL asks for."""
    st.set_page_config(page_title="BERT Embedding Explorer", page_icon="🧭", layout="wide")
    pages = [st.Page(str(ROOT / HOME.path), title=HOME.title, icon=HOME.icon, default=True)]
    pages += [
        st.Page(str(ROOT / s.path), title=s.title, url_path=s.url_path, icon=s.icon)
        for s in available_pages()
    ]
    page = st.navigation(pages, position="top")
    draw_shared_inputs()
    page.run()


def ensure_router() -> None:
    """Hand a page run over to the router when Streamlit ran the page file on its own.

    Because a ``pages/`` folder sits next to app.py, a freshly started server runs the first
    session in legacy mode: a deep link such as ``/stages?a=...`` executes pages/stages.py without
    app.py (no shared inputs). ``st.navigation`` switches that mode off for good, so the first such
    run calls the router, which runs this page again properly, and stops the legacy run.
    """
    if PagesManager.uses_pages_directory:
        run_app()
        st.stop()
