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


def test_wait_blocks_up_to_its_deadline_and_says_whether_the_job_ended() -> None:
    board = JobBoard(workers=1)
    release = threading.Event()
    job = board.submit("slow", lambda job: release.wait(10) and "here")
    start = time.monotonic()
    assert job.wait(0.3) is False and not job.done()
    assert 0.25 <= time.monotonic() - start < 2.0
    release.set()
    assert job.wait(5) is True and job.result() == "here"
    fast = board.submit("fast", lambda job: 1)
    assert fast.wait(5) is True   # returns as soon as it ends, well before the deadline
    board.shutdown()


def test_failed_is_an_error_or_a_cancel_and_reads_without_the_future() -> None:
    board = JobBoard(workers=1)
    release = threading.Event()
    busy = board.submit("busy", lambda job: release.wait(10))
    queued = board.submit("queued", lambda job: 1)
    assert not queued.failed and not queued.running() and not queued.done()
    queued.cancel()   # still in the queue: ends now, never starts
    assert queued.done() and queued.failed and queued.cancelled
    assert isinstance(queued.exception(), Cancelled)
    with pytest.raises(Cancelled):
        queued.result(1)
    release.set()
    assert busy.result(5) is True and not busy.failed and busy.exception() is None

    def fail(job: Job[int]) -> int:
        raise ValueError("bad list")

    broken = board.submit("broken", fail)
    assert broken.wait(5) and broken.failed and not broken.cancelled
    assert isinstance(broken.exception(), ValueError)
    with pytest.raises(TimeoutError):
        board.submit("late", lambda job: release.wait(0.5) and time.sleep(1)).result(0.05)
    board.shutdown()


def test_take_hands_the_result_over_once_and_the_key_starts_anew() -> None:
    board = JobBoard(workers=1)
    made = []

    def work(job: Job[list[int]]) -> list[int]:
        made.append(1)
        return [len(made)]

    job = board.submit("pass", work)
    assert job.result(5) == [1] and board.submit("pass", work) is job   # a result is shared
    first = job.take()
    assert first == [1] and job.taken and not job.failed
    with pytest.raises(LookupError):
        job.take()
    with pytest.raises(LookupError):
        job.result()
    again = board.submit("pass", work)
    assert again is not job and again.take(5) == [2]

    # Two threads taking at once: exactly one gets it.
    job = board.submit("race", work)
    job.wait(5)
    got, lost = [], []

    def taker() -> None:
        try:
            got.append(job.take())
        except LookupError:
            lost.append(1)

    threads = [threading.Thread(target=taker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert len(got) == 1 and len(lost) == 7
    board.shutdown()


def test_renew_replaces_a_finished_job_and_shares_a_running_one() -> None:
    board = JobBoard(workers=2)
    release = threading.Event()
    runs = []

    def probe(job: Job[int]) -> int:
        runs.append(1)
        release.wait(10)
        return len(runs)

    first = board.submit("probe", probe, renew=Job.done)
    assert board.submit("probe", probe, renew=Job.done) is first   # running: shared
    release.set()
    assert first.result(5) == 1
    second = board.submit("probe", probe, renew=Job.done)             # ended: anew
    assert second is not first and second.result(5) == 2
    assert board.get("probe") is second and board.forget("probe") and board.get("probe") is None
    board.shutdown()


def test_wait_for_wakes_on_the_report_that_makes_it_true_or_on_the_end() -> None:
    """A thread waiting for a phase (a download past asking the hub) is woken by the report
    that reaches it, not by a loop; a job that ends first wakes it too; nothing comes within
    the deadline: False."""
    board = JobBoard(workers=1)
    step, finish = threading.Event(), threading.Event()

    def work(job: Job[str]) -> str:
        job.report(0, None, "connecting")
        step.wait(10)
        job.report(1, 10, "downloading")
        finish.wait(10)
        return "done"

    job = board.submit("phases", work)
    assert job.wait_for(lambda p: p.phase == "connecting", 10)
    assert not job.wait_for(lambda p: p.phase == "downloading", 0.1)   # not yet: its deadline
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(
        job.wait_for(lambda p: p.phase == "downloading", 10)))
    waiter.start()
    step.set()
    waiter.join(10)
    assert woke == [True] and job.progress.done == 1 and not job.done()
    finish.set()
    # A phase that never comes: the job's end wakes the waiter.
    assert job.wait_for(lambda p: p.phase == "never", 10) and job.result(1) == "done"
    board.shutdown()
