"""The one executor (serving.jobs): bounded, shared by key, cancelled when nobody waits."""

from __future__ import annotations

import threading
import time

import pytest

from serving import jobs
from serving.jobs import Cancelled, Job, JobBoard


def test_fifty_distinct_jobs_run_at_most_workers_at_a_time() -> None:
    board = JobBoard(workers=2)
    lock = threading.Lock()
    running, peak = 0, 0

    def work(job: Job[int]) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return 1

    submitted = [board.submit(("list", i), work) for i in range(50)]
    assert sum(job.result(timeout=30) for job in submitted) == 50
    assert peak == 2
    board.shutdown()


def test_the_same_key_is_one_shared_job_with_progress() -> None:
    board = JobBoard(workers=1)
    release = threading.Event()
    calls = []

    def work(job: Job[str]) -> str:
        calls.append(1)
        job.report(1, 2, "reading")
        release.wait(5)
        job.report(2, 2)
        return "done"

    first = board.submit("same", work)
    second = board.submit("same", work)
    assert first is second
    deadline = time.monotonic() + 5
    while first.progress.done < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert first.progress == jobs.Progress(1, 2, "reading")
    release.set()
    assert second.result(timeout=5) == "done"
    assert first.progress.fraction == 1.0 and calls == [1]
    board.shutdown()


def test_a_failed_job_is_started_anew() -> None:
    board = JobBoard(workers=1)

    def fail(job: Job[int]) -> int:
        raise ValueError("bad list")

    job = board.submit("k", fail)
    with pytest.raises(ValueError, match="bad list"):
        job.result(timeout=5)
    assert isinstance(job.exception(), ValueError)
    again = board.submit("k", lambda job: 3)
    assert again is not job and again.result(timeout=5) == 3
    board.shutdown()


def test_a_job_nobody_waits_for_stops_at_its_next_report(monkeypatch) -> None:
    board = JobBoard(workers=1)
    monkeypatch.setattr(jobs, "ABANDONED_S", 0.05)
    reports = []

    def work(job: Job[int]) -> int:
        for i in range(1000):
            time.sleep(0.01)
            job.report(i, 1000)
            reports.append(i)
        return 0

    job = board.submit("slow", work)
    deadline = time.monotonic() + 10
    while not job.done() and time.monotonic() < deadline:
        time.sleep(0.02)   # a page that stopped polling: nobody reads the job
    assert isinstance(job.exception(), Cancelled)
    assert len(reports) < 1000


def test_a_blocked_waiter_keeps_its_job_alive(monkeypatch) -> None:
    board = JobBoard(workers=1)
    monkeypatch.setattr(jobs, "ABANDONED_S", 0.02)

    def work(job: Job[int]) -> int:
        for i in range(20):
            time.sleep(0.01)
            job.report(i, 20)
        return 7

    assert board.submit("cli", work).result(timeout=10) == 7
    board.shutdown()


def test_no_thread_starts_at_import_or_is_left_after_shutdown() -> None:
    before = threading.active_count()
    board = JobBoard(workers=2)
    assert threading.active_count() == before
    board.submit("a", lambda job: 1).result(timeout=5)
    board.shutdown(wait=True)
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before
