"""The app's pages: where each lives, its title, its address and its menu.

Data only (no Streamlit call, no model): the router draws the navigation from it, and the
server's warm-up walks it before any visitor. Every page lives in ``pages/<folder>/page.py`` and
nothing sits at the top of ``pages/``: Streamlit's legacy page discovery (which globs
``pages/*.py`` when a ``pages/`` folder is next to app.py) then finds no page, so every session
runs app.py and the router.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from components.i18n import N_

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageSpec:
    folder: str        # pages/<folder>/page.py
    title: str         # English; shown through _()
    url_path: str
    icon: str
    group: str = ""    # the navigation menu it is listed under (English; shown through _())

    @property
    def path(self) -> str:
        return f"pages/{self.folder}/page.py"


# The navigation's menus: the embedding layer, the model around it, the guided lessons.
EMBEDDINGS, MODEL, LESSONS = N_("Embeddings"), N_("Model"), N_("Lessons")

HOME = PageSpec("home", N_("Home"), "", ":material/home:")
PAGES = (
    PageSpec("tokens", N_("Tokens"), "tokens", ":material/segment:", EMBEDDINGS),
    PageSpec("stages", N_("Stages"), "stages", ":material/stacks:", EMBEDDINGS),
    PageSpec("positions", N_("Positions"), "positions", ":material/timeline:", EMBEDDINGS),
    PageSpec("similarity", N_("Similarity"), "similarity", ":material/compare_arrows:",
             EMBEDDINGS),
    PageSpec("pairs", N_("Pairs"), "pairs", ":material/join_inner:", EMBEDDINGS),
    PageSpec("contexts", N_("Contexts"), "contexts", ":material/scatter_plot:", EMBEDDINGS),
    PageSpec("encoder", N_("Encoder"), "encoder", ":material/hub:", MODEL),
    PageSpec("attribution", N_("Attribution"), "attribution", ":material/insights:", MODEL),
    PageSpec("pretraining", N_("Pretraining"), "pretraining", ":material/school:", MODEL),
    PageSpec("parameters", N_("Parameters"), "parameters", ":material/calculate:", MODEL),
    PageSpec("checks", N_("Checks"), "checks", ":material/fact_check:", MODEL),
    PageSpec("compare", N_("Compare"), "compare", ":material/difference:", MODEL),
    PageSpec("finetune", N_("Fine-tuning"), "finetune", ":material/model_training:", MODEL),
    PageSpec("probes", N_("Probes"), "probes", ":material/troubleshoot:", MODEL),
    PageSpec("lesson", N_("Lesson"), "lesson", ":material/menu_book:", LESSONS),
)


def available_pages() -> list[PageSpec]:
    """The pages that exist: no placeholder is listed for a page not written yet."""
    return list(_existing_pages())


@functools.cache
def _existing_pages() -> tuple[PageSpec, ...]:
    # Looked up once per process: a file check per page on every run was a tenth of a short
    # rerun on a busy server.
    return tuple(spec for spec in PAGES if (ROOT / spec.path).is_file())


def folder_of(url_path: str) -> str:
    """The page folder behind a URL path ("" is Home)."""
    return next((spec.folder for spec in PAGES if spec.url_path == url_path), HOME.folder)


def page_folders() -> list[str]:
    """Home's folder and every existing page's, in the menu's order."""
    return [HOME.folder, *(spec.folder for spec in available_pages())]
