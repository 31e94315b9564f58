"""What the server does when it starts, before any visitor: the first visitor of a fresh server
neither waits for the model nor sees Streamlit's "Page not found" dialog.

app.py hands ``lifespan`` to ``st.App``, which ``streamlit run app.py`` serves.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from streamlit.runtime.pages_manager import PagesManager

_LOG = logging.getLogger(__name__)
_IMPORT_LOCK = threading.Lock()
# The pages' core modules, and through them scikit-learn: imported once, by one thread.
PAGE_MODULES = ("core", "core.stages", "core.positions", "core.similarity", "core.parameters",
                "core.lessons", "sklearn.linear_model", "sklearn.decomposition")


def import_page_modules() -> None:
    """Import what the pages need, one thread at a time.

    A class opening links at once on a fresh server had two sessions import scikit-learn in two
    threads; the second saw a partly initialised ``sklearn.base`` (ImportError, an exception box
    on /positions). Python's per-module import locks do not cover that cycle; this lock does.
    """
    with _IMPORT_LOCK:
        for name in PAGE_MODULES:
            importlib.import_module(name)


def set_torch_threads() -> int:
    """One CPU thread per model run unless BERT_EXPLORER_TORCH_THREADS says otherwise.

    Parallelism on a server comes from sessions (BERT_EXPLORER_MODEL_RUNS runs at once), not
    from splitting one short sentence's matrix products: with torch's default of a thread per
    core, two runs at once oversubscribed this machine's two cores, and with a browser on the
    same machine a Stages or Encoder rerun took 1.4-1.8x as long (README, Performance).
    """
    import torch

    threads = max(1, int(os.environ.get("BERT_EXPLORER_TORCH_THREADS", "1")))
    torch.set_num_threads(threads)
    return threads


def warm_up() -> None:
    """Load the default model and the tables every page asks for first, into the shared caches.

    Runs in a thread: the server answers (and shows its loading state) while this runs, and a
    visitor who comes early waits on the same cache entry instead of loading it twice.
    """
    from components.cache import get_analysis, get_encoding, get_model
    from components.inputs import DEFAULT_SENTENCE
    from core import DEFAULT_MODEL

    # Outside a session Streamlit's caches warn that there is no script context: expected here.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    try:
        import_page_modules()
        get_model(DEFAULT_MODEL)
        get_encoding(DEFAULT_MODEL, DEFAULT_SENTENCE, None)
        get_analysis(DEFAULT_MODEL, DEFAULT_SENTENCE, None)
    except Exception:  # noqa: BLE001 - a failed warm-up only means the first visitor waits
        _LOG.exception("warm-up failed; the first visitor will load the model")


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """Start-up: say the app routes with st.navigation, and warm the caches in the background.

    A ``pages/`` folder beside app.py makes Streamlit treat a fresh server's sessions as the
    legacy multipage layout until the first ``st.navigation`` call; the very first session then
    gets a "Page not found" message for its deep link, although the router draws the right page.
    Every page here lives in ``pages/<name>/page.py`` and app.py always routes, so the flag is
    set to what that first ``st.navigation`` call would set it to.
    """
    PagesManager.uses_pages_directory = False
    set_torch_threads()
    threading.Thread(target=warm_up, name="warm-up", daemon=True).start()
    yield
