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

A worker thread has no Streamlit script-run context: work never calls Streamlit. The work says
where it stands through ``report`` (done, total, a phase, a rate), and that is the job's one
record of progress: a thread that needs a phase waits for it (``wait_for``), woken by the
report. A page shows a job with components/job_progress.py's ``show_job``: it waits a moment in
its run (``job.wait(seconds)``), draws the job's ``progress`` while it runs (an
``st.fragment(run_every=...)`` that stops polling once the job is done), then reads
``job.failed`` and ``job.result()``; a cache reads ``job.take()`` for a result it moves into a
bounded cache (the job lets go of it, and the next ask for the key starts anew). What
else must start anew (a hub probe that ended, a download asked for again) is the caller's
``renew`` of ``submit``: no registry or counter beside the board.
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
from enum import Enum
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_LOG = logging.getLogger(__name__)

JOB_WORKERS = int(os.environ.get("BERT_EXPLORER_JOB_WORKERS", "4"))
ABANDONED_S = float(os.environ.get("BERT_EXPLORER_JOB_ABANDONED_S", "120"))
FINISHED_KEPT = 32


class Cancelled(Exception):
    """Raised inside a job's work when nobody waits for it any more (or it was cancelled)."""


@dataclass(frozen=True)
class Progress:
    """Where a job stands: ``done`` of ``total`` units (``total`` None while unknown), a
    ``phase`` the page names in words (a StrEnum member of the caller's, or "") and the
    ``rate`` in units per second when the work measures one (a download's speed)."""

    done: int = 0
    total: int | None = None
    phase: str = ""
    rate: float | None = None

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)

    @property
    def seconds_left(self) -> float | None:
        """At the reported rate, how long the rest takes (None without a rate or a total)."""
        if not self.rate or self.total is None:
            return None
        return max(0.0, (self.total - self.done) / self.rate)


class _State(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class Job(Generic[T]):
    """One unit of background work, shared by everyone asking for its key: ``work(job)`` run on
    the pool, with progress. ``work`` calls ``report`` as it goes.

    A page reads it without blocking past a deadline: ``wait(s)`` says whether it ended,
    ``failed`` whether it ended without a result (an error, or cancelled), ``progress`` where it
    stands; then ``result()`` (any number of times) or ``take()`` (once: the job lets go of the
    result, and the board starts the key anew when asked again)."""

    def __init__(self, key: Hashable, name: str, work: Callable[[Job[T]], T]) -> None:
        self.key = key
        self.name = name
        # The work itself: a callable object may hold state its readers want (a download's
        # bytes and speed, serving.hub), found again through the board's job for the key.
        self.work = work
        self.started = time.monotonic()
        self.ended: float | None = None
        self._lock = threading.Lock()
        # Told of every report and of the end: a thread waiting for a phase (a download past
        # asking the hub) wakes when it comes, with no loop of its own.
        self._changed = threading.Condition(self._lock)
        self._state = _State.QUEUED
        self._finished = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._taken = False
        self._progress = Progress()
        self._seen = time.monotonic()
        self._cancel = threading.Event()
        self._waiters = 0   # threads blocked in wait(): they wait, however long it takes

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
        """Ended: with a result, an error, or cancelled."""
        return self._finished.is_set()

    def running(self) -> bool:
        """Started on a worker and not ended (False while queued)."""
        with self._lock:
            return self._state is _State.RUNNING

    def wait(self, deadline_s: float | None = None) -> bool:
        """Block until the job ends, for at most ``deadline_s`` seconds (None: however long);
        whether it ended. A thread blocked here keeps the job alive."""
        with self._lock:
            self._waiters += 1
        try:
            return self._finished.wait(deadline_s)
        finally:
            with self._lock:
                self._waiters -= 1
            self.touch()

    def wait_for(self, ready: Callable[[Progress], bool],
                 deadline_s: float | None = None) -> bool:
        """Block until ``ready(progress)`` holds or the job ends, for at most ``deadline_s``
        seconds (None: however long); whether either came. Wakes on each report, never polls.
        A thread blocked here keeps the job alive."""
        with self._changed:
            self._waiters += 1
            try:
                return self._changed.wait_for(
                    lambda: ready(self._progress) or self._state is _State.DONE, deadline_s)
            finally:
                self._waiters -= 1
                self.touch()

    @property
    def failed(self) -> bool:
        """Ended without a result: the work raised, or the job was cancelled."""
        return self.done() and self._error is not None

    @property
    def cancelled(self) -> bool:
        """Ended because it was cancelled (or nobody waited for it any more)."""
        return self.done() and isinstance(self._error, Cancelled)

    @property
    def taken(self) -> bool:
        """Its result was handed over by ``take`` (the job holds it no more)."""
        return self._taken

    def exception(self) -> BaseException | None:
        """What ended the job without a result: the work's error, or ``Cancelled`` (None if it
        succeeded or has not ended). Never blocks."""
        return self._error if self.done() else None

    def result(self, timeout: float | None = None) -> T:
        """The work's return value, waiting at most ``timeout`` seconds (TimeoutError after);
        raises what the work raised, or ``Cancelled``; LookupError once the result was taken."""
        if not self.wait(timeout):
            raise TimeoutError(self.name)
        with self._lock:
            return self._read()

    def take(self, timeout: float | None = None) -> T:
        """The result, handed over once (as ``result``): the job lets go of it, so whoever
        takes it (a bounded cache) is the only one holding it. A second ``take`` or a
        ``result`` after it raises LookupError, and the board starts the key anew."""
        if not self.wait(timeout):
            raise TimeoutError(self.name)
        with self._lock:
            value = self._read()
            self._value, self._taken = None, True
            return value

    @property
    def seconds(self) -> float:
        """How long the job has run (or ran, once finished)."""
        return (self.ended or time.monotonic()) - self.started

    @property
    def abandoned(self) -> bool:
        return self._waiters == 0 and time.monotonic() - self._seen > ABANDONED_S

    def cancel(self) -> None:
        """Stop the job: a queued one ends now (cancelled) and never starts, a running one at
        its next report."""
        self._cancel.set()
        with self._lock:
            if self._state is _State.QUEUED:
                self._end(error=Cancelled(self.name))

    # -- called by the work ---------------------------------------------------------------------
    def report(self, done: int, total: int | None = None, phase: str = "",
               rate: float | None = None) -> None:
        """Record progress; raises Cancelled when the job was cancelled or nobody waits for it."""
        with self._lock:
            self._progress = Progress(done, total, phase or self._progress.phase, rate)
            self._changed.notify_all()
        if self._cancel.is_set() or self.abandoned:
            raise Cancelled(self.name)

    # -- run by the pool ------------------------------------------------------------------------
    def _run(self) -> None:
        with self._lock:
            if self._state is not _State.QUEUED:
                return   # cancelled while it waited for a worker
            self._state = _State.RUNNING
        try:
            if self._cancel.is_set() or self.abandoned:
                raise Cancelled(self.name)
            value = self.work(self)
        except Cancelled:
            _LOG.info("job %s cancelled: nobody waits for it", self.name)
            error: BaseException = Cancelled(self.name)
        except BaseException as exc:  # noqa: BLE001 - the page shows it; the log says why
            _LOG.exception("job %s failed", self.name)
            error = exc
        else:
            with self._lock:
                self._end(value=value)
            return
        with self._lock:
            self._end(error=error)

    def _read(self) -> T:
        """The outcome (the lock held, the job ended)."""
        if self._error is not None:
            raise self._error
        if self._taken:
            raise LookupError(f"{self.name}: its result was taken")
        return self._value  # type: ignore[return-value]  # ended well: the work's value

    def _end(self, value: T | None = None, error: BaseException | None = None) -> None:
        """Record the outcome once (the lock held)."""
        if self._state is _State.DONE:
            return
        self._state, self._value, self._error = _State.DONE, value, error
        self.ended = time.monotonic()
        self._finished.set()
        self._changed.notify_all()


class JobBoard:
    """The process's jobs by key, run on one bounded pool."""

    def __init__(self, workers: int = JOB_WORKERS) -> None:
        self.workers = max(1, workers)
        self._lock = threading.Lock()
        self._jobs: OrderedDict[Hashable, Job[Any]] = OrderedDict()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def submit(self, key: Hashable, work: Callable[[Job[T]], T], name: str = "",
               renew: Callable[[Job[T]], bool] | None = None) -> Job[T]:
        """The job for ``key``: the one already there (queued, running or finished well), or a
        new one running ``work(job)`` on the pool. A failed job, or one whose result was taken,
        is started anew; so is one for which ``renew(job)`` says so (a hub probe that ended, a
        download asked for again): a replaced job still running is cancelled."""
        with self._lock:
            job: Job[T] | None = self._jobs.get(key)
            if job is not None and not (job.failed or job.taken or (renew and renew(job))):
                self._jobs.move_to_end(key)
                job.touch()
                return job
            if job is not None and not job.done():
                job.cancel()
            new: Job[T] = Job(key, name or str(key), work)
            self._jobs[key] = new
            self._jobs.move_to_end(key)
            self._trim()
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    self.workers, thread_name_prefix="job")
            self._pool.submit(new._run)
            return new

    def get(self, key: Hashable) -> Job[Any] | None:
        """The job for ``key`` if there is one (it is not started)."""
        with self._lock:
            return self._jobs.get(key)

    def forget(self, key: Hashable) -> bool:
        """Drop the job for ``key`` if it has ended (tests start from nothing); whether one was
        dropped."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or not job.done():
                return False
            del self._jobs[key]
            return True

    def running(self) -> int:
        """Jobs started and not finished (at most ``workers``)."""
        with self._lock:
            return sum(1 for j in self._jobs.values() if j.running())

    def jobs(self) -> list[Job[Any]]:
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


_BOARD: JobBoard | None = None
_BOARD_LOCK = threading.Lock()


def board() -> JobBoard:
    """The process's one job board (made on first use, not at import)."""
    global _BOARD  # noqa: PLW0603 - one pool per process, made lazily so import starts nothing
    with _BOARD_LOCK:
        if _BOARD is None:
            _BOARD = JobBoard()
        return _BOARD


def submit(key: Hashable, work: Callable[[Job[T]], T], name: str = "",
           renew: Callable[[Job[T]], bool] | None = None) -> Job[T]:
    """``board().submit``: the shared job for ``key``."""
    return board().submit(key, work, name, renew)
