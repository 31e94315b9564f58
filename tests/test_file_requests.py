"""The clock of requests for Streamlit's files, which a fresh server's warm-up waits on before it
imports torch (frame/file_requests.py, frame/startup.py)."""

from __future__ import annotations

import threading
import time

from frame import file_requests
from frame.file_requests import FileRequestClock, wait_for_quiet


def test_no_request_since_then_is_quiet_after_the_quiet_time_alone():
    file_requests.note_request(time.monotonic() - 60)
    started = time.monotonic()
    assert wait_for_quiet(0.2, until=started + 5) is True
    # Counted from ``since`` (now): a request a minute ago does not make it quiet at once.
    assert 0.2 <= time.monotonic() - started < 1.0


def test_requests_keep_it_waiting_until_they_stop():
    stop = threading.Event()

    def browser() -> None:   # a request every 20 ms for 0.4 s
        end = time.monotonic() + 0.4
        while time.monotonic() < end:
            file_requests.note_request()
            time.sleep(0.02)
        stop.set()

    started = time.monotonic()
    thread = threading.Thread(target=browser)
    thread.start()
    assert wait_for_quiet(0.15, until=started + 5) is True
    assert stop.is_set()
    assert time.monotonic() - file_requests.last_request() >= 0.15
    assert time.monotonic() - started >= 0.4 + 0.15 - 0.03
    thread.join()


def test_requests_that_never_stop_end_the_wait_at_its_limit():
    stop = threading.Event()

    def browser() -> None:
        while not stop.is_set():
            file_requests.note_request()
            time.sleep(0.02)

    thread = threading.Thread(target=browser)
    thread.start()
    try:
        started = time.monotonic()
        assert wait_for_quiet(0.5, until=started + 0.3) is False
        assert 0.3 <= time.monotonic() - started < 0.5
    finally:
        stop.set()
        thread.join()


def _served(path: str) -> tuple[float, list[str]]:
    """The clock's reading after the middleware passed one request for ``path`` on."""
    passed: list[str] = []

    async def inner(scope, _receive, _send) -> None:
        passed.append(scope["path"])

    file_requests.note_request(0.0)
    # Driven by hand, not asyncio.run: the suite may already run an event loop in this thread.
    call = FileRequestClock(inner)({"type": "http", "path": path}, None, None)
    try:
        call.send(None)
    except StopIteration:
        return file_requests.last_request(), passed
    raise AssertionError("the middleware waited on something")


def test_the_middleware_notes_streamlit_files_and_passes_every_request_on():
    before = time.monotonic()
    noted, passed = _served("/static/js/index.DormvYxC.js")
    assert noted >= before and passed == ["/static/js/index.DormvYxC.js"]
    noted, passed = _served("/tokens")   # a page, not a file: not noted
    assert noted == 0.0 and passed == ["/tokens"]
    noted, passed = _served("/_stcore/health")
    assert noted == 0.0 and passed == ["/_stcore/health"]
