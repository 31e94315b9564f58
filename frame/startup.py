"""What the server does when it starts, before any visitor: the first visitor of a fresh server
neither waits for the model nor sees Streamlit's "Page not found" dialog.

app.py hands ``lifespan`` to ``st.App``, which ``streamlit run app.py`` serves.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from frame import file_requests, welcome
from frame.boot_screen import PAGE_SENT
from frame.page_imports import import_page
from frame.page_list import page_folders
from serving import budget, jobs, session_memory, streamlit_private

_LOG = logging.getLogger(__name__)

# Set once a session has drawn its first page (frame.router). The warm-up imports torch and
# loads the model after it, or after FIRST_PAGE_WAIT_S: importing torch and transformers holds
# the interpreter's lock for seconds, and the first visitor's page, run in another thread, then
# drew its tokens at half speed.
FIRST_PAGE_DRAWN = threading.Event()
FIRST_PAGE_WAIT_S = 3.0
# Then until the browser has asked for no file of Streamlit's for FILES_QUIET_S (it asks for the
# first page's element code after the script run, and draws it; frame.file_requests), at most
# FILES_WAIT_S: with no visitor nothing is asked for, and the model loads at once.
FILES_QUIET_S = 0.8
FILES_WAIT_S = 3.0
# The first page's modules are imported once its HTML has gone (the loading card's tokens first),
# at most after PAGE_SENT_WAIT_S: the page's script runs a second later, once its browser code
# has loaded.
PAGE_SENT_WAIT_S = 1.0
# The pages a first visitor most often opens (Home, Tokens): their modules, the router's and the
# cache layer's import no torch (tests/test_startup.py), and are imported first.
FIRST_PAGES = ("home", "tokens")


@functools.cache   # once per process: a second lifespan in the same process sets nothing again
def prepare_process() -> dict[str, int]:
    """What the server's process sets for itself, once, before its first model run: glibc's
    allocator (``serving.budget.tune_malloc``: large arrays by mmap, two arenas; the environment's
    own MALLOC_* settings win) and the results-cache sweep's clean-up of ended sessions' download
    callables (``serving.session_memory``). Returns what was tuned.

    Here, in the server's start-up, and not as components.cache is imported: importing the cache
    layer in a notebook or a test then changes nothing in that process (tests/test_startup.py).
    The sweeper thread itself starts with the first cached result (serving.budget), never at an
    import.
    """
    budget.on_sweep(session_memory.forget_ended_sessions)
    return budget.tune_malloc()


def import_page_modules() -> None:
    """Every page's module (the warm-up does this once the default model is loaded)."""
    for folder in page_folders():
        import_page(folder)


def warm_page_tables(model_name: str) -> None:
    """The per-model tables the pages open with, computed into their shared caches: each page's
    cache.py may define ``warm(model_name)``."""
    for folder in page_folders():
        if importlib.util.find_spec(f"pages.{folder}.cache") is None:   # a page with no cache
            continue
        cache = importlib.import_module(f"pages.{folder}.cache")
        warm = getattr(cache, "warm", None)
        if warm is not None:
            warm(model_name)


def set_compute_threads() -> int:
    """One CPU thread per model run, and per numpy product, unless BERT_EXPLORER_TORCH_THREADS
    says otherwise.

    Parallelism on a server comes from sessions (BERT_EXPLORER_MODEL_RUNS runs at once), not
    from splitting one short sentence's matrix products: with torch's default of a thread per
    core, two runs at once oversubscribed this machine's two cores, and with a browser on the
    same machine a Stages or Encoder rerun took 1.4-1.8x as long (bench/HISTORY.md). numpy's
    BLAS (the Encoder's float64 live checks) had the same default: on the server its two-thread
    product of 16 tokens by a 384 x 384 matrix waited for a second core the browser and the
    server's event loop held, 26 ms a check against 0.1 ms (bench/HISTORY.md). threadpoolctl
    sets the BLAS library numpy loaded, for the whole process.
    """
    import torch
    from threadpoolctl import threadpool_limits

    threads = max(1, int(os.environ.get("BERT_EXPLORER_TORCH_THREADS", "1")))
    torch.set_num_threads(threads)
    threadpool_limits(limits=threads, user_api="blas")
    return threads


def warm_first_page() -> None:
    """What a first page needs before the model (no torch): the default tokenizer read from its
    files (the loading card's tokens wait for it), then, once a page's HTML has gone, the
    router's and the first pages' modules and the default sentence's tokens."""
    from components.cache import get_encoding, get_tokenizer_files
    from components.input_key import InputKey
    from core.settings import DEFAULT_MODEL, DEFAULT_SENTENCE

    get_tokenizer_files(DEFAULT_MODEL)   # first: the loading card's tokens read it too
    PAGE_SENT.wait(PAGE_SENT_WAIT_S)
    importlib.import_module("frame.router")
    for folder in FIRST_PAGES:
        import_page(folder)
    get_encoding(InputKey(DEFAULT_MODEL, DEFAULT_SENTENCE, None))


def warm_up() -> None:
    """Load the default model and the tables every page asks for first, into the shared caches.

    Runs as a background job (serving.jobs): the server answers (and shows its loading state)
    while this runs, and a visitor who comes early waits on the same cache entry instead of
    loading it twice. First what a first page shows without the model (``warm_first_page``: a
    fresh server's first page shows its tokens from the tokenizer's files); then, once that page
    is drawn, the model; then every page and the per-model tables behind them (the PCA of the
    position table, the corpus statistics, ...).
    """
    from components.cache import get_analysis, get_model
    from components.input_key import InputKey
    from core.settings import DEFAULT_MODEL, DEFAULT_SENTENCE

    try:
        warm_first_page()
    except Exception:  # noqa: BLE001 - the first visitor's page reads them itself
        _LOG.exception("warming the first page failed")
    FIRST_PAGE_DRAWN.wait(FIRST_PAGE_WAIT_S)
    file_requests.wait_for_quiet(FILES_QUIET_S, until=time.monotonic() + FILES_WAIT_S)
    from serving.models import quiet_libraries

    quiet_libraries()   # transformers' bars and warnings are not the visitor's (nor at import)
    # In this thread, not in the lifespan: the lifespan runs on the server's event loop, and
    # importing torch there held up the server's first answer by a second.
    set_compute_threads()
    try:
        get_model(DEFAULT_MODEL)
        get_analysis(InputKey(DEFAULT_MODEL, DEFAULT_SENTENCE, None))
        import_page_modules()
        warm_page_tables(DEFAULT_MODEL)
    except Exception:  # noqa: BLE001 - a failed warm-up only means the first visitor waits
        _LOG.exception("warm-up failed; the first visitor will load the model")


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """Start-up: tune the process (``prepare_process``), say the app routes with st.navigation,
    and warm the caches in the background.

    A ``pages/`` folder beside app.py makes Streamlit treat a fresh server's sessions as the
    legacy multipage layout until the first ``st.navigation`` call; the very first session then
    gets a "Page not found" message for its deep link, although the router draws the right page.
    Every page here lives in ``pages/<name>/page.py`` and app.py always routes, so the flag is
    set to what that first ``st.navigation`` call would set it to.
    """
    prepare_process()   # before the warm-up's model run
    # Outside a session (the warm-up, the loading card's tokens) Streamlit's caches warn that
    # there is no script context: expected there.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    streamlit_private.say_the_app_routes()
    jobs.submit("warm-up", lambda _job: warm_up(), name="warm-up")
    welcome.print_welcome()   # Streamlit's own lines are off (frame/welcome.py says why)
    yield
    # The server stops: every job is cancelled (a download stops at its next chunk), so the
    # pool's workers, which the interpreter joins at exit, do not hold the process.
    jobs.board().shutdown(wait=False)
