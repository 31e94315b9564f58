"""When a browser last asked the server for one of Streamlit's files, so a fresh server's warm-up
can wait until the first visitor's browser has what it needs to draw the first page.

Streamlit's page loads its element code lazily: once the first script run's messages arrive, the
browser asks for the code of each kind of element on the page (a metric, a code block, ...),
then draws them. Importing torch in the same process holds the interpreter's lock for seconds,
so those files came slowly, and the browser's drawing shared the processor with the import:
with the import started as soon as the script run ended, /tokens showed its tokens 0.4-0.5 s
later than with it started seconds after (bench/HISTORY.md, 2026-12-07).

``FileRequestClock`` (app.py hands it to ``st.App``) notes the time of every request for a file
under ``/static/``; ``wait_for_quiet`` returns once none has come for a while.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]

FILES = "/static/"


class _Clock:
    """``last``: ``time.monotonic()`` of the last request for one of Streamlit's files (of the
    module's import before any). A float read and written whole: no lock is needed."""

    last = time.monotonic()


def last_request() -> float:
    return _Clock.last


def note_request(now: float | None = None) -> None:
    _Clock.last = time.monotonic() if now is None else now


def wait_for_quiet(quiet_s: float, until: float, since: float | None = None) -> bool:
    """Block until no file was asked for in the last ``quiet_s`` seconds, counted from
    ``since`` at the earliest (a ``time.monotonic()`` time; now if not given), or until
    ``until`` has passed; whether it was quiet."""
    since = time.monotonic() if since is None else since
    while True:
        now = time.monotonic()
        left = quiet_s - (now - max(since, last_request()))
        if left <= 0:
            return True
        if now >= until:
            return False
        time.sleep(min(left, until - now, 0.05))


class FileRequestClock:
    """ASGI middleware: notes each request for a file under /static/, then passes it on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and FILES in scope.get("path", ""):
            note_request()
        await self.app(scope, receive, send)
