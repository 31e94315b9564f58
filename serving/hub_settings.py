"""huggingface_hub set for the app's managed downloads (serving/hub.py), while they run.

huggingface_hub's settings are process-wide; these are set while at least one managed download
runs and put back after the last, never at import, so a notebook that imports the explorer keeps
huggingface_hub as it was: small chunks (``CHUNK_BYTES``), a socket read timeout as long as a
stall, and a client that refuses every request of a stopped job. huggingface_hub itself is
imported when a download starts (a fresh server's first page imports serving.hub).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2


class Stopped(Exception):
    """Raised inside the worker when the job was stopped from outside (the watchdog)."""


# huggingface_hub reads the body in 10 MB chunks and reports progress once per chunk: at a school
# connection's 200 KB/s that is one sign of life every 50 s, which a stall watchdog would mistake
# for a stall. 64 KB chunks report many times a second at no measurable cost.
CHUNK_BYTES = 64 * 1024

# The job a download thread works for. huggingface_hub retries a timed-out body up to five times
# (and counts again from five whenever a byte came), so a job stopped as stalled would linger for
# minutes: every request a stopped job's thread makes is refused instead, and the thread ends.
WORKER = threading.local()


def _refuse_stopped_job(request: httpx2.Request) -> None:
    job = getattr(WORKER, "job", None)
    if job is not None and job.stopped:
        raise Stopped


def _client(previous: Callable[[], httpx2.Client]) -> httpx2.Client:
    client = previous()
    client.event_hooks["request"].append(_refuse_stopped_job)
    return client


# huggingface_hub's settings are process-wide: they are set while at least one managed download
# runs (the first to start saves the old values, the last to end puts them back), never at import,
# so a notebook that imports the explorer keeps huggingface_hub as it was.
_SETTINGS_LOCK = threading.Lock()
_SETTINGS_USERS = 0


@dataclass(frozen=True)
class _Saved:
    """huggingface_hub's settings before the first download running changed them."""

    chunk: int
    read_timeout: int
    factory: Callable[[], httpx2.Client]


_SAVED: list[_Saved] = []   # empty, or the one set of settings to put back


@contextlib.contextmanager
def hub_settings(read_timeout_s: float) -> Iterator[None]:
    """huggingface_hub set for a managed download while the block runs: 64 KB chunks
    (``CHUNK_BYTES``), a socket read timeout of ``read_timeout_s`` (a socket silent that long has
    stalled) and a client that refuses every request of a stopped job. The old values (and the
    client factory in use) come back when the last download running ends."""
    from huggingface_hub import constants, set_client_factory

    from serving import hub_private

    global _SETTINGS_USERS  # noqa: PLW0603 - shared by the downloads that run side by side
    with _SETTINGS_LOCK:
        if _SETTINGS_USERS == 0:
            # huggingface_hub has no public getter for the factory in use; read it so that a
            # factory someone else set (a proxy, certificates) is wrapped, not replaced.
            previous = hub_private.client_factory_in_use()
            _SAVED[:] = [_Saved(constants.DOWNLOAD_CHUNK_SIZE, constants.HF_HUB_DOWNLOAD_TIMEOUT,
                                previous)]
            constants.DOWNLOAD_CHUNK_SIZE = CHUNK_BYTES
            constants.HF_HUB_DOWNLOAD_TIMEOUT = max(1, round(read_timeout_s))
            set_client_factory(functools.partial(_client, previous))
        _SETTINGS_USERS += 1
    try:
        yield
    finally:
        with _SETTINGS_LOCK:
            _SETTINGS_USERS -= 1
            if _SETTINGS_USERS == 0:
                saved = _SAVED.pop()
                constants.DOWNLOAD_CHUNK_SIZE = saved.chunk
                constants.HF_HUB_DOWNLOAD_TIMEOUT = saved.read_timeout
                set_client_factory(saved.factory)
