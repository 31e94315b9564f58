"""Background work runs on serving.jobs only, and leaves no thread behind.

The hub probe is a job shared by whoever asks while it runs; with every worker busy it does not
wait for a worker past its timeout; the warm-up is a job; the results-cache sweeper stops when
asked. After ``jobs.board().shutdown()`` no job, download, probe or warm-up thread is left (the
session-end check in tests/conftest.py holds the whole run to the same).
"""

from __future__ import annotations

import http.server
import socketserver
import threading
import time

import huggingface_hub.constants as hub_constants
import pytest

from serving import budget, jobs
from serving.models import hub_reachable
from tests.conftest import CLOSED_ENDPOINT, background_threads


def _gone_within(seconds: float = 5.0) -> list[str]:
    end = time.monotonic() + seconds
    while background_threads() and time.monotonic() < end:
        time.sleep(0.05)
    return background_threads()


@pytest.fixture
def board():
    """A fresh job pool for the test, shut down after it."""
    jobs.board().shutdown()
    yield jobs.board()
    jobs.board().shutdown()
    budget.stop_sweeper()
    assert not _gone_within(), background_threads()


@pytest.fixture
def slow_hub(monkeypatch):
    """A hub that answers every request after 0.5 s, counting them."""
    asked: list[str] = []

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):  # noqa: N802 - http.server's name
            asked.append(self.path)
            time.sleep(0.5)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    serving = threading.Thread(target=server.serve_forever, name="slow hub", daemon=True)
    serving.start()
    monkeypatch.setattr(hub_constants, "ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield asked
    server.shutdown()
    server.server_close()


def test_sessions_asking_at_once_share_one_probe(board, slow_hub):
    answers: list[bool] = []
    askers = [threading.Thread(target=lambda: answers.append(hub_reachable(3.0)))
              for _ in range(4)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(10)
    assert answers == [True] * 4
    assert len(slow_hub) == 1, slow_hub
    assert [j.name for j in board.jobs()] == ["hub probe"]
    assert hub_reachable(3.0) and len(slow_hub) == 2   # a probe that ended is not reused


def test_a_probe_does_not_wait_for_a_busy_pool(board, monkeypatch):
    monkeypatch.setattr(hub_constants, "ENDPOINT", CLOSED_ENDPOINT)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    release = threading.Event()
    busy = [board.submit(("busy", n), lambda _job: release.wait(10)) for n in range(board.workers)]
    start = time.monotonic()
    try:
        assert hub_reachable(0.5) is False
        assert time.monotonic() - start < 3.0
        probe = next(j for j in board.jobs() if j.name == "hub probe")
        assert probe.cancelled and probe.failed   # it never holds a worker later
    finally:
        release.set()
    assert all(job.result(5) for job in busy)


def test_the_closed_hub_probe_runs_under_its_name_and_ends(board, monkeypatch):
    monkeypatch.setattr(hub_constants, "ENDPOINT", CLOSED_ENDPOINT)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert hub_reachable(2.0) is False
    assert not [name for name in background_threads() if name == "hub probe"]


def test_warm_up_is_a_job(board, monkeypatch):
    """The lifespan prepares the process, submits the warm-up to the job pool (the work itself
    is the server's) and shuts the pool down as the server ends."""
    import asyncio

    from frame import startup

    ran = threading.Event()
    monkeypatch.setattr(startup, "warm_up", ran.set)
    prepared: list[bool] = []   # not this worker's allocator: tests/test_startup.py checks it
    monkeypatch.setattr(startup, "prepare_process", lambda: prepared.append(True) or {})
    seen: list[object] = []

    async def serve() -> None:
        async with startup.lifespan(None):
            assert await asyncio.to_thread(ran.wait, 5)
            job = board.get("warm-up")
            seen.append(job is not None and job.result(5))

    # In a thread of its own: a browser test before this one leaves an event loop in this one.
    server = threading.Thread(target=asyncio.run, args=(serve(),), name="lifespan")
    server.start()
    server.join(15)
    assert seen == [None] and prepared == [True]
    assert board.jobs() == []   # the server's end shut the pool down


def test_the_sweeper_stops_when_asked(board):
    store = budget.ResultStore("threads-test", share=0.01)
    try:
        store.put("key", b"x" * 10)
        assert budget.SWEEPER in background_threads()
        budget.stop_sweeper()
        assert budget.SWEEPER not in background_threads()
    finally:
        store.clear()
        budget._ACCOUNTANT.stores.remove(store)


def test_a_download_cancelled_while_queued_says_so(board):
    """A download that never ran (cancelled in the queue: nobody looked, or the server stopped)
    reads as failed, so the next request starts it again instead of waiting on it for ever."""
    from serving import hub

    release = threading.Event()
    busy = [board.submit(("busy", n), lambda _job: release.wait(10)) for n in range(board.workers)]
    try:
        download = hub.start_download("someone/queued", lambda _path: None)
        assert download.state().phase == hub.DownloadPhase.CONNECTING
        assert download.job is not None and not download.job.running()
        assert hub.download_job("someone/queued") is download   # the board's, by repository
        download.job.cancel()
        state = download.state()
        assert state.phase == hub.DownloadPhase.FAILED and state.finished
        assert state.error is not None and "someone/queued" in str(state.error)
        # Asked for again, the board starts it anew (no registry or counter beside it).
        again = hub.start_download("someone/queued", lambda _path: None)
        assert again is not download and again.job is not download.job
        assert hub.download_job("someone/queued") is again
        again.job.cancel()
    finally:
        release.set()
    assert all(job.result(5) for job in busy)
