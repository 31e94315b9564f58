"""The one way to run work that outlives a script run: a download, a list of pairs, a corpus pass,
the server's warm-up.

One bounded ``concurrent.futures.ThreadPoolExecutor`` for the whole process (``JOB_WORKERS``
threads, default 4). Model runs inside jobs still queue for ``core.models.MODEL_RUNS`` like every
page's, so the pool's size bounds how many jobs are in progress, not the CPU they take: with 2,
two downloads (which mostly wait on the network) held the pool and a list of pairs queued. A
job is keyed: every session that asks for the same key gets the same ``Job`` and so shares one
computation and one progress. A job nobody has looked at for ``ABANDONED_S`` seconds is cancelled:
a queued one never starts, a running one stops at its next ``progress.report`` (the work raises
``Cancelled``, which ends it quietly). Finished jobs stay on the board, at most ``FINISHED_KEPT``,
the oldest finished dropped first; their results are the caller's to cache within the budget.

Nothing starts at import: the pool makes its threads on the first ``submit``, so ``import
serving.jobs`` in a notebook or a test changes nothing.

A worker thread has no Streamlit script-run context: work never calls Streamlit. A page draws a
job's ``progress`` from an ``st.fragment(run_every=...)`` that stops polling once ``job.done()``.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
_LOG = logging.getLogger(__name__)

JOB_WORKERS = int(os.environ.get("BERT_EXPLORER_JOB_WORKERS", "4"))
ABANDONED_S = float(os.environ.get("BERT_EXPLORER_JOB_ABANDONED_S", "120"))
FINISHED_KEPT = 32


class Cancelled(Exception):
    """Raised inside a job's work when nobody waits for it any more (or it was cancelled)."""


@dataclass(frozen=True)
class Progress:
    """Where a job stands: ``done`` of ``total`` units (``total`` None while unknown) and a
    ``phase`` the page names in words (a StrEnum member of the caller's, or "")."""

    done: int = 0
    total: int | None = None
    phase: str = ""

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


class Job(Generic[T]):
    """One unit of background work: a Future with progress, shared by everyone asking for its key.
    Its ``report`` is handed to the work, which calls it as it goes."""

    def __init__(self, key: Hashable, name: str) -> None:
        self.key = key
        self.name = name
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self.started = time.monotonic()
        self.ended: float | None = None
        self._lock = threading.Lock()
        self._progress = Progress()
        self._seen = time.monotonic()
        self._cancel = threading.Event()
        self._waiters = 0   # threads blocked in result(): they wait, however long it takes

    # -- read from any thread -------------------------------------------------------------------
    @property
    def progress(self) -> Progress:
        """The job's progress; reading it counts as someone waiting for the job."""
        self.touch()
        with self._lock:
            return self._progress

    def touch(self) -> None:
        """Say that someone still waits for this job (a page polling it)."""
        self._seen = time.monotonic()

    def done(self) -> bool:
        return self.future.done()

    def result(self, timeout: float | None = None) -> T:
        """The work's return value; raises what the work raised, or CancelledError."""
        with self._lock:
            self._waiters += 1
        try:
            return self.future.result(timeout)
        finally:
            with self._lock:
                self._waiters -= 1
            self.touch()

    def exception(self) -> BaseException | None:
        """What the finished work raised (None if it succeeded or has not finished)."""
        if not self.future.done() or self.future.cancelled():
            return None
        return self.future.exception()

    @property
    def seconds(self) -> float:
        """How long the job has run (or ran, once finished)."""
        return (self.ended or time.monotonic()) - self.started

    @property
    def abandoned(self) -> bool:
        return self._waiters == 0 and time.monotonic() - self._seen > ABANDONED_S

    def cancel(self) -> None:
        """Stop the job: a queued one never starts, a running one at its next report."""
        self._cancel.set()
        self.future.cancel()

    # -- called by the work ---------------------------------------------------------------------
    def report(self, done: int, total: int | None = None, phase: str = "") -> None:
        """Record progress; raises Cancelled when the job was cancelled or nobody waits for it."""
        with self._lock:
            self._progress = Progress(done, total, phase or self._progress.phase)
        if self._cancel.is_set() or self.abandoned:
            raise Cancelled(self.name)

    # -- run by the pool ------------------------------------------------------------------------
    def _run(self, work: Callable[[Job[T]], T]) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            if self._cancel.is_set() or self.abandoned:
                raise Cancelled(self.name)
            self.future.set_result(work(self))
        except Cancelled:
            _LOG.info("job %s cancelled: nobody waits for it", self.name)
            self.future.set_exception(Cancelled(self.name))
        except BaseException as exc:  # noqa: BLE001 - the page shows it; the log says why
            _LOG.exception("job %s failed", self.name)
            self.future.set_exception(exc)
        finally:
            self.ended = time.monotonic()


class JobBoard:
    """The process's jobs by key, run on one bounded pool."""

    def __init__(self, workers: int = JOB_WORKERS) -> None:
        self.workers = max(1, workers)
        self._lock = threading.Lock()
        self._jobs: OrderedDict[Hashable, Job[object]] = OrderedDict()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def submit(self, key: Hashable, work: Callable[[Job[T]], T], name: str = "") -> Job[T]:
        """The job for ``key``: the one already there (running, queued or finished well), or a
        new one running ``work(job)`` on the pool. A failed or cancelled job is started anew."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not _failed(job):
                self._jobs.move_to_end(key)
                job.touch()
                return job  # type: ignore[return-value]  # one key, one kind of work
            new: Job[T] = Job(key, name or str(key))
            self._jobs[key] = new  # type: ignore[assignment]  # the table holds every kind of job
            self._trim()
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    self.workers, thread_name_prefix="job")
            self._pool.submit(new._run, work)
            return new

    def get(self, key: Hashable) -> Job[object] | None:
        """The job for ``key`` if there is one (it is not started)."""
        with self._lock:
            return self._jobs.get(key)

    def running(self) -> int:
        """Jobs started and not finished (at most ``workers``)."""
        with self._lock:
            return sum(1 for j in self._jobs.values() if j.future.running())

    def jobs(self) -> list[Job[object]]:
        with self._lock:
            return list(self._jobs.values())

    def shutdown(self, wait: bool = True) -> None:
        """Cancel every job and stop the pool's threads (tests; a server ends with its process)."""
        with self._lock:
            jobs, pool, self._pool = list(self._jobs.values()), self._pool, None
            self._jobs.clear()
        for job in jobs:
            job.cancel()
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.done()]
        for key in finished[:max(0, len(finished) - FINISHED_KEPT)]:
            del self._jobs[key]


def _failed(job: Job[object]) -> bool:
    return job.done() and (job.future.cancelled() or job.exception() is not None)


_BOARD: JobBoard | None = None
_BOARD_LOCK = threading.Lock()


def board() -> JobBoard:
    """The process's one job board (made on first use, not at import)."""
    global _BOARD  # noqa: PLW0603 - one pool per process, made lazily so import starts nothing
    with _BOARD_LOCK:
        if _BOARD is None:
            _BOARD = JobBoard()
        return _BOARD


def submit(key: Hashable, work: Callable[[Job[T]], T], name: str = "") -> Job[T]:
    """``board().submit``: the shared job for ``key``."""
    return board().submit(key, work, name)
