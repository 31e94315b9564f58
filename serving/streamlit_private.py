"""Every use of Streamlit's private or undocumented names, in one place.

Pinned: streamlit 1.67.0 (requirements.txt). tests/test_private_names.py fails, naming the name
and this version, when the installed Streamlit no longer has one of ``PRIVATE_NAMES``; and no
module outside this one (and serving/hub_private.py for huggingface_hub) may touch a private name
of Streamlit (an AST scan in the same test).

The names, and why each remains (no documented API does the job in 1.67):

- ``Runtime._session_mgr.list_sessions()``: which sessions the server still has, *including*
  disconnected ones kept for ``server.disconnectedSessionTTL`` to reconnect. The public
  ``Runtime.is_active_session`` answers for connected sessions only: clearing a disconnected
  session's files with it would break its download buttons when the tab reconnects.
- ``MediaFileManager._lock``, ``._files_by_session_and_coord``, ``._deferred_ids_by_session``:
  which sessions the media manager holds files and deferred download callables for. There is no
  public listing; the public ``clear_session_refs(session_id)`` needs the ids. The lock is the
  manager's own (its fields are changed from Streamlit's threads).
- ``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory``: an undocumented class flag
  that ``st.navigation`` sets to False on its first call; set at start-up so a fresh server's very
  first session does not get "Page not found" for its deep link (frame/startup.py says why).
- ``WebsocketSessionManager._session_storage`` and its ``_storage_lock``,
  ``MemorySessionStorage._cache`` and that cache's ``expire``: a tab that closes leaves its
  session stored for ``server.disconnectedSessionTTL`` seconds for a reconnect, in a TTLCache
  that drops an expired entry only on its next write or length query. After a class has gone
  nothing writes to it, so every session stayed, with its fragments' arguments: a page's
  context, at 512 tokens tens of MB of attention weights each (bench/HISTORY.md, 2026-12-07).
  ``reap_expired_sessions`` asks the cache to drop them, as Streamlit's own next write would,
  under the lock Streamlit takes around its store. There is no public way to.
- ``BidiComponentManager.discover_and_register_components``: the server's Runtime, as it is
  built and before it serves the first page, scans the metadata of every installed package for
  custom components (0.34 s of processor time here, with 163 packages, on the way to a fresh
  server's first answer; more on a machine with more packages). The app's one component (the
  picture switcher) registers itself in code, and the app uses no installed one, so the server
  skips the scan (``skip_installed_component_scan``); there is no setting for it.
- ``AppTest._bidi_component_manager`` (the tests only): each new AppTest scans the metadata of
  every installed package for custom components before its first run, about 0.3 s here, more
  than a page's own run, and the suite opens thousands. ``share_component_scan`` hands every
  AppTest of a process the registry of one scan (the packages do not change during a run);
  AppTest has no public way to pass one in.
- ``ScriptCache`` as named in ``streamlit.testing.v1.app_test`` and ``...local_script_runner``
  (the tests only): every AppTest *run* makes two new script caches, so app.py and the page's
  script are read and compiled again on each run, a tenth of a page's run in the tests' profile
  (a server keeps one cache for its life). ``share_script_cache`` hands every AppTest run of the
  process one cache, as a server has (the scripts do not change during a test run); AppTest has
  no public way to pass one in.
"""

from __future__ import annotations

import logging
from typing import Any

_LOG = logging.getLogger(__name__)

PINNED = "streamlit 1.67.0"

# (module, class, attribute): checked by tests/test_private_names.py against the installed
# library (an attribute set in ``__init__`` is looked for there).
PRIVATE_NAMES: tuple[tuple[str, str, str], ...] = (
    ("streamlit.runtime.runtime", "Runtime", "_session_mgr"),
    ("streamlit.runtime.session_manager", "SessionManager", "list_sessions"),
    ("streamlit.runtime.media_file_manager", "MediaFileManager", "_lock"),
    ("streamlit.runtime.media_file_manager", "MediaFileManager", "_files_by_session_and_coord"),
    ("streamlit.runtime.media_file_manager", "MediaFileManager", "_deferred_ids_by_session"),
    ("streamlit.runtime.pages_manager", "PagesManager", "uses_pages_directory"),
    ("streamlit.runtime.websocket_session_manager", "WebsocketSessionManager",
     "_session_storage"),
    ("streamlit.runtime.websocket_session_manager", "WebsocketSessionManager", "_storage_lock"),
    ("streamlit.runtime.memory_session_storage", "MemorySessionStorage", "_cache"),
    ("streamlit.runtime.caching.ttl_cache", "TTLCache", "expire"),
    ("streamlit.testing.v1.app_test", "AppTest", "_bidi_component_manager"),
    ("streamlit.components.v2.component_manager", "BidiComponentManager",
     "discover_and_register_components"),
    ("streamlit.testing.v1.app_test", "ScriptCache", "get_bytecode"),
    ("streamlit.testing.v1.local_script_runner", "ScriptCache", "get_bytecode"),
)


def _runtime() -> Any | None:
    from streamlit import runtime

    return runtime.get_instance() if runtime.exists() else None


def session_ids() -> set[str] | None:
    """Every session the server still holds, connected or waiting to reconnect; None when no
    Streamlit server runs in this process."""
    rt = _runtime()
    if rt is None:
        return None
    return {info.session.id for info in rt._session_mgr.list_sessions()}


def media_session_ids() -> set[str]:
    """The sessions Streamlit's media manager holds files or deferred downloads for."""
    rt = _runtime()
    if rt is None:
        return set()
    media = rt.media_file_mgr
    with media._lock:
        return set(media._files_by_session_and_coord) | set(media._deferred_ids_by_session)


def reap_expired_sessions() -> int:
    """Drop the stored (disconnected) sessions whose time to reconnect has passed; how many.
    0 when no Streamlit server runs in this process."""
    rt = _runtime()
    if rt is None:
        return 0
    manager = rt._session_mgr
    with manager._storage_lock:
        return len(manager._session_storage._cache.expire())


def forget_session_media(session_ids: set[str]) -> None:
    """Let go of the files and table sources Streamlit keeps for ``session_ids`` (public calls)."""
    rt = _runtime()
    if rt is None or not session_ids:
        return
    for session_id in session_ids:
        rt.media_file_mgr.clear_session_refs(session_id)
        rt.dataframe_source_mgr.clear_all_for_session(session_id)
    rt.media_file_mgr.remove_orphaned_files()


def say_the_app_routes() -> None:
    """Tell Streamlit the app routes with ``st.navigation`` (not a legacy ``pages/`` folder),
    as that call itself would on its first run."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False


def skip_installed_component_scan() -> None:
    """The server's Runtime, built after this, scans no installed package for custom
    components: ``discover_and_register_components`` registers nothing and watches nothing.
    Components registered in code (``st.components.v2.component``) work as before."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    def registers_nothing(_self: Any, *, start_file_watching: bool = True) -> None:
        _LOG.debug("installed custom components not scanned (serving/streamlit_private.py)")

    manager: Any = BidiComponentManager
    manager.discover_and_register_components = registers_nothing


_SHARED_COMPONENTS: list[Any] = []   # the one scan, made on first use


def share_component_scan(at: Any) -> Any:
    """Give the AppTest ``at`` (before its first run) the component registry every AppTest of
    this process shares, scanned once; returns ``at``."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    if not _SHARED_COMPONENTS:
        manager = BidiComponentManager()
        manager.discover_and_register_components(start_file_watching=False)
        _SHARED_COMPONENTS.append(manager)
    at._bidi_component_manager = _SHARED_COMPONENTS[0]
    return at


def share_script_cache() -> None:
    """Make every later AppTest run of this process read compiled scripts from one cache, as a
    server's sessions do, instead of two new caches per run."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    class SharedScriptCache(ScriptCache):
        """A ScriptCache of which the process has one: "making" one returns it."""

        one: ScriptCache | None = None

        def __new__(cls) -> Any:
            if cls.one is None:
                cls.one = super().__new__(cls)
                ScriptCache.__init__(cls.one)
            return cls.one

        def __init__(self) -> None:   # set up once, in __new__: a second call would empty it
            pass

    if app_test.ScriptCache is ScriptCache:   # not shared yet
        app_test.ScriptCache = SharedScriptCache  # type: ignore[misc] # the names AppTest calls
        local_script_runner.ScriptCache = SharedScriptCache  # type: ignore[misc] # as above
