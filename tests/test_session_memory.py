"""Disconnected sessions past their time to reconnect are let go (serving/session_memory.py).

Streamlit keeps a closed tab's session in a TTLCache for ``server.disconnectedSessionTTL``
seconds, and drops an expired one only on the cache's next write: after a class nothing writes,
and every session stayed with its fragments' arguments (bench/HISTORY.md, 2026-12-07). Here
Streamlit's own session manager and store, with a session that holds an array.
"""

from __future__ import annotations

import gc
import time
import types
import weakref

import numpy as np
import pytest
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.session_manager import SessionInfo
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from serving import session_memory, streamlit_private

TTL_S = 0.2


class Session:
    """What the store reads of a session (its id), holding what a page's fragment would."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.fragment_args = np.zeros((12, 512, 512), dtype=np.float32)   # 12 MB


@pytest.fixture
def runtime(monkeypatch) -> MemorySessionStorage:
    storage = MemorySessionStorage(ttl_seconds=TTL_S)
    manager = WebsocketSessionManager(storage, None, None, None)  # type: ignore[arg-type]
    monkeypatch.setattr(streamlit_private, "_runtime",
                        lambda: types.SimpleNamespace(_session_mgr=manager))
    return storage


def _store(storage: MemorySessionStorage, session_id: str) -> weakref.ref:
    session = Session(session_id)
    storage.save(SessionInfo(client=None, session=session))  # type: ignore[arg-type]
    return weakref.ref(session.fragment_args)


def test_an_expired_session_stays_in_streamlits_store_until_reaped(runtime):
    held = _store(runtime, "closed tab")
    time.sleep(TTL_S * 1.5)
    gc.collect()
    # Streamlit says it is gone, yet holds it (the regression): nothing wrote to the store.
    assert streamlit_private.session_ids() == set()
    assert held() is not None
    assert streamlit_private.reap_expired_sessions() == 1
    gc.collect()
    assert held() is None
    assert streamlit_private.reap_expired_sessions() == 0


def test_a_session_within_its_time_to_reconnect_is_kept(runtime):
    held = _store(runtime, "reconnecting tab")
    assert streamlit_private.reap_expired_sessions() == 0
    assert streamlit_private.session_ids() == {"reconnecting tab"}
    assert held() is not None


def test_the_sweepers_hook_counts_the_sessions_it_let_go(runtime, monkeypatch):
    monkeypatch.setattr(streamlit_private, "media_session_ids", set)
    _store(runtime, "one")
    _store(runtime, "two")
    time.sleep(TTL_S * 1.5)
    _store(runtime, "three")   # a write: Streamlit's store reaps the expired ones itself then
    assert session_memory.forget_ended_sessions() == 0
    _store(runtime, "four")
    time.sleep(TTL_S * 1.5)
    assert session_memory.forget_ended_sessions() == 2   # three and four
