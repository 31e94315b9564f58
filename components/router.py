"""The app frame: page list, navigation and the shared inputs, run before every page."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from components.inputs import draw_shared_inputs

ROOT = Path(__file__).resolve().parent.parent
# Set while the router runs a page, in the script thread running it: how a page knows it was
# reached through the router rather than run by Streamlit's legacy pages/ mode.
_routing = threading.local()


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
    _routing.active = True
    try:
        page.run()
    finally:
        _routing.active = False


def ensure_router() -> None:
    """Hand a page run over to the router when Streamlit ran the page file on its own.

    Because a ``pages/`` folder sits next to app.py, a freshly started server runs its first
    sessions in legacy mode: a deep link such as ``/stages?a=...`` executes pages/stages.py without
    app.py (no shared inputs). ``st.navigation`` switches that mode off for good, so such a run
    calls the router, which runs this page again properly, and stops the legacy run.

    The test is whether the router is running this page, not Streamlit's global legacy flag: when
    a class opens the links at once, another session's router can clear that flag while this
    session's legacy run is already under way, which left such a page without its inputs.
    """
    if not getattr(_routing, "active", False):
        run_app()
        st.stop()
