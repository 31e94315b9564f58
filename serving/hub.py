"""Fetching a model from the hub: one background download per model, shared, with progress and a
stall watchdog instead of a total deadline.

A download is a ``DownloadJob``: the work of a job on the process's job board (``serving.jobs``,
keyed on the repository; its ``job`` is that shared ``Job``, whose result is the download's last
``DownloadState``: done with its folder, or failed with its error) that lists the repository,
fetches config.json first (so a model that is not BERT or too large is refused before any weight
moves), then the tokenizer files and the safetensors weights into the Hugging Face cache. Every
caller asking for the same repository gets the same job (``start_download``; the board holds it,
no registry beside it): two students asking start one download, two models download side by
side. Progress (bytes done of total, speed, time left) is read with ``state()`` from any thread
(which also tells the job that someone still waits: a download nobody has looked at for
``serving.jobs.ABANDONED_S`` stops, and resumes when asked for again), and reported on the job's
``Progress`` (MB, its ``DownloadPhase``, the speed), which the page's progress card draws; the job
never calls back into the UI.

Resuming: huggingface_hub 2.4 writes each download to a file unique to that attempt and deletes it
on failure, so it never resumes. The job keeps its own ``<blob>.incomplete`` in the cache and asks
for the rest with a Range request (serving.hub_private: huggingface_hub's ``http_get``), then lets
``hf_hub_download`` link the finished blob into the snapshot as it would its own.

Stalls: no byte for ``HUB_STALL_S`` seconds stops the job with a message that says so and how far
it got. The socket's read timeout is set to the same limit, so a worker blocked on a silent hub
wakes up and ends then; whoever reads the state sees the stall at the limit even earlier.

huggingface_hub is set for this (small chunks, that read timeout, a client refusing a stopped
job's requests) only while a download runs (serving/hub_settings.py), never at import. Every
private name of huggingface_hub this needs is in serving/hub_private.py. The files a
checkpoint needs and the hub's listing are core's (``core.model_files``), shared with a
notebook's plain download.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from core import settings
from core.errors import N_, DownloadStalledError, ModelLoadError
from core.model_files import (
    CONFIG,
    RemoteModel,
    not_on_hub,
    remote_model,
    wanted_files,
)
from core.models import megabytes, stalled
from serving import jobs
from serving.hub_settings import WORKER, Stopped, hub_settings

# huggingface_hub (and serving.hub_private, which reads its private names) is imported where a
# download runs, not with this module: the pages import this module for a download's state, a
# fresh server's first page among them, and a model on this machine needs no hub
# (core.models says what the import cost).

__all__ = ["DownloadJob", "DownloadPhase", "DownloadState", "download_job", "forget_jobs",
           "hub_settings", "megabytes", "start_download", "wanted_files"]

_LOG = logging.getLogger(__name__)
_SPEED_WINDOW_S = 5.0   # speed and time left from the bytes of the last few seconds


class DownloadPhase(StrEnum):
    """Where a download stands. Not shown as a word: components/model_download.py draws
    CONNECTING as "Asking the model hub…" and DOWNLOADING as the progress bar (its catalogs)."""

    CONNECTING = "connecting"     # listing the repository
    DOWNLOADING = "downloading"   # files coming
    DONE = "done"                 # in the cache
    FAILED = "failed"             # its error says why

    @property
    def finished(self) -> bool:
        return self in (DownloadPhase.DONE, DownloadPhase.FAILED)


@dataclass(frozen=True)
class DownloadState:
    """One look at a job, safe to draw: sizes in bytes, speed in bytes per second."""

    repo: str
    phase: DownloadPhase
    done_bytes: int
    total_bytes: int | None
    speed: float | None
    seconds_left: float | None
    error: ModelLoadError | None = None
    folder: Path | None = None

    @property
    def finished(self) -> bool:
        return self.phase.finished

    @property
    def fraction(self) -> float:
        if not self.total_bytes:
            return 0.0
        return min(1.0, self.done_bytes / self.total_bytes)


class _JobBar:
    """The progress bar huggingface_hub makes for a file (its public ``tqdm_class``): every
    chunk goes to the download this thread works for."""

    def __init__(self, *, initial: int = 0, **_ignored: Any) -> None:
        self.job: DownloadJob = WORKER.job
        # A hub that ignored our Range request sends the whole file: huggingface_hub empties the
        # partial copy and starts the bar at 0, so what was credited for it counts no more.
        if initial != self.job.resumed:
            self.job.credit(initial - self.job.resumed)
            self.job.resumed = initial

    def __enter__(self) -> _JobBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int | float | None = 1) -> None:
        self.job.update(int(n or 0))

    def close(self) -> None:
        return None


class DownloadJob:
    """The download of one repository into the Hugging Face cache: the work of a job on the pool
    (``serving.jobs``, keyed on the repository, ``start_download``); ``job`` is that shared
    ``Job`` once started, and the board's job for the repository holds this object as its work.

    ``check_config(path)`` is called on the fetched config.json before anything else is fetched
    and raises a ``ModelLoadError`` to refuse the model (not BERT, too large).
    """

    def __init__(self, repo: str, check_config: Callable[[Path], object],
                 stall_s: float | None = None, timeout_s: float | None = None) -> None:
        self.repo = repo
        self.stall_s = settings.HUB_STALL_S if stall_s is None else stall_s
        self.timeout_s = settings.HUB_TIMEOUT_S if timeout_s is None else timeout_s
        self._check_config = check_config
        self._lock = threading.Lock()   # the download's own figures, read by every session
        self._phase = DownloadPhase.CONNECTING
        self._done = 0
        self._total: int | None = None
        self._error: ModelLoadError | None = None
        self._folder: Path | None = None
        self._last_byte = time.monotonic()
        self.ended_at: float | None = None   # time.monotonic() when it finished or failed
        self._recent: collections.deque[tuple[float, int]] = collections.deque()
        self.resumed = 0   # bytes of the current file credited as already here
        self.job: jobs.Job[DownloadState] | None = None

    # ------------------------------------------------------------------ read from any thread

    def state(self) -> DownloadState:
        """The job as it stands; also the watchdog: a job silent past the stall limit fails.
        Reading it tells the job pool that someone still waits for the download."""
        if self.job is not None:
            self.job.touch()
        with self._lock:
            if self.job is not None and self.job.done() and not self._phase.finished:
                # Ended before it ran: cancelled while queued (nobody looked, or the pool shut
                # down). The work itself always ends with the phase finished.
                self._fail(self._lost(jobs.Cancelled(self.repo)))
            now = time.monotonic()
            if self._phase == DownloadPhase.DOWNLOADING and now - self._last_byte > self.stall_s:
                self._fail(self._stalled())
            speed = self._speed(now)
            left = None
            if speed and self._total is not None:
                left = max(0.0, (self._total - self._done) / speed)
            return DownloadState(self.repo, self._phase, self._done, self._total, speed, left,
                                 self._error, self._folder)

    def wait(self, timeout: float | None = None) -> DownloadState:
        """Block until the download ends (or ``timeout`` seconds pass); the state then. Woken by
        the job's end, or when the stall limit would pass with no byte: the state's watchdog
        then fails a silent download (its worker may sit in a read the hub never answers)."""
        end = None if timeout is None else time.monotonic() + timeout
        while not (state := self.state()).finished and self.job is not None:
            now = time.monotonic()
            if end is not None and now >= end:
                break
            with self._lock:
                quiet = (self._last_byte + self.stall_s - now
                         if self._phase == DownloadPhase.DOWNLOADING else self.stall_s)
            self.job.wait(max(0.05, quiet if end is None else min(quiet, end - now)))
        return state

    def wait_until_started(self) -> DownloadState:
        """Wait while the hub is being asked (at most the hub timeout and a little more): until
        the job reports a phase past connecting, or ends."""
        if self.job is not None:
            self.job.wait_for(lambda p: p.phase not in ("", DownloadPhase.CONNECTING),
                              self.timeout_s + 2.0)
        return self.state()

    # ------------------------------------------------------------------ the work

    @property
    def stopped(self) -> bool:
        """Failed (a stall seen by the watchdog, for one): the worker must stop."""
        with self._lock:
            return self._phase == DownloadPhase.FAILED

    def update(self, n: int) -> None:
        """Bytes arrived (called by huggingface_hub's download loop, through ``_JobBar``)."""
        with self._lock:
            if self._phase == DownloadPhase.FAILED:
                raise Stopped
            self._done += n
            now = self._last_byte = time.monotonic()
            self._recent.append((now, self._done))
            while self._recent and now - self._recent[0][0] > _SPEED_WINDOW_S:
                self._recent.popleft()
            done, total, phase, speed = self._done, self._total, self._phase, self._speed(now)
        if self.job is not None:
            self.job.report(done, total, phase, speed)   # raises jobs.Cancelled if nobody waits

    def credit(self, n: int) -> None:
        """Bytes already here (a finished file, a partial one resumed) count as done, but not
        toward the speed: every sample moves up by ``n``, so their differences stay."""
        with self._lock:
            self._done += n
            self._recent = collections.deque((t, d + n) for t, d in self._recent)

    def _speed(self, now: float) -> float | None:
        if len(self._recent) < 2 or self._phase != DownloadPhase.DOWNLOADING:
            return None
        (t0, d0), (_t1, d1) = self._recent[0], self._recent[-1]
        if now - t0 < 1.0:
            return None   # a rate from a fraction of a second is noise (3 min left, then 2 s)
        return (d1 - d0) / (now - t0) if d1 > d0 else None

    def _fail(self, error: ModelLoadError) -> None:
        if self._phase.finished:
            return
        self._phase, self._error = DownloadPhase.FAILED, error
        self.ended_at = time.monotonic()

    def _stalled(self) -> DownloadStalledError:
        return stalled(self.repo, self._done, self._total, self.stall_s)

    def __call__(self, job: jobs.Job[DownloadState]) -> DownloadState:
        """Run by the job pool: the download's last state (done with its folder, or failed with
        its ``ModelLoadError``), which the Job holds as its result; an expected failure is not an
        error of the pool's (nothing logged as a crash). The worker thread carries the
        download's name while it runs."""
        self.job = job
        thread = threading.current_thread()
        pool_name, thread.name = thread.name, f"download {self.repo}"
        WORKER.job = self
        try:
            self._run()
        finally:
            WORKER.job = None
            thread.name = pool_name
        return self.state()

    def _run(self) -> None:
        import httpx2

        try:
            with hub_settings(self.stall_s):
                folder = self._fetch()
        except Stopped:
            return
        except jobs.Cancelled as exc:   # nobody waits any more: asked again, it resumes
            with self._lock:
                self._fail(self._lost(exc))
            return
        except ModelLoadError as exc:
            with self._lock:
                self._fail(exc)
            return
        except httpx2.TimeoutException:
            with self._lock:
                self._fail(self._stalled())
            return
        except (httpx2.HTTPError, OSError) as exc:
            with self._lock:
                self._fail(self._lost(exc))
            return
        except Exception as exc:  # noqa: BLE001 - an answer we cannot read must still end the job
            _LOG.warning("download of %r failed: %r", self.repo, exc)
            with self._lock:
                self._fail(ModelLoadError(
                    N_("The model hub answered about “{name}” in a way the explorer cannot "
                       "read."), name=self.repo))
            return
        with self._lock:
            if self._phase != DownloadPhase.FAILED:
                self._phase, self._folder = DownloadPhase.DONE, folder
                self.ended_at = time.monotonic()

    def _lost(self, exc: Exception) -> ModelLoadError:
        if self._total is None:   # a hub that gave no sizes: say what came, not "of ? MB"
            return ModelLoadError(
                N_("The download of “{name}” broke off after {done} MB ({reason}). Try again: it "
                   "resumes where it stopped."),
                name=self.repo, done=megabytes(self._done), reason=type(exc).__name__)
        return ModelLoadError(
            N_("The download of “{name}” broke off at {done} of {total} MB ({reason}). Try "
               "again: it resumes where it stopped."),
            name=self.repo, done=megabytes(self._done), total=megabytes(self._total),
            reason=type(exc).__name__)

    def _fetch(self) -> Path:
        if self.job is not None:
            self.job.report(0, None, DownloadPhase.CONNECTING)
        remote = remote_model(self.repo, self.timeout_s)
        with self._lock:
            self._total = remote.total_bytes
            self._phase, self._last_byte = DownloadPhase.DOWNLOADING, time.monotonic()
            done = self._done
        if self.job is not None:
            self.job.report(done, self._total, DownloadPhase.DOWNLOADING)
        config = self._file(remote, CONFIG)
        self._check_config(config)
        for name in remote.sizes:
            if name != CONFIG:
                self._file(remote, name)
        return config.parent

    def _file(self, remote: RemoteModel, name: str) -> Path:
        """One file into the cache, resumed from our partial copy if an earlier try left one."""
        import httpx2
        from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
        from huggingface_hub.errors import RemoteEntryNotFoundError
        from huggingface_hub.file_download import repo_folder_name
        from huggingface_hub.utils import build_hf_headers

        from serving import hub_private

        url = hf_hub_url(remote.repo, name, revision=remote.commit)
        try:
            meta = get_hf_file_metadata(url, timeout=self.timeout_s)
        except RemoteEntryNotFoundError as exc:
            raise not_on_hub(remote.repo) from exc
        storage = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=remote.repo,
                                                                    repo_type="model")
        blob = storage / "blobs" / str(meta.etag)
        if not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True)
            partial = blob.with_name(blob.name + ".incomplete")
            for _attempt in range(5):
                with open(partial, "ab") as out:
                    self.resumed = resume = out.tell()
                    self.credit(resume)   # bytes an earlier try fetched count as done
                    before = self._done
                    try:
                        # Our own bar and no retries inside: a timeout is a stall, decided here.
                        hub_private.get_range(meta.location, out, resume=resume,
                                              expected_size=meta.size,
                                              headers=build_hf_headers(), name=name,
                                              bar=_JobBar)
                        break
                    except (httpx2.ConnectError, httpx2.RemoteProtocolError):
                        if self._done == before:
                            raise   # nothing came this time: not worth another try
                        self.credit(-out.tell())   # counted again on the next try
            else:
                raise OSError(f"{name}: too many interrupted tries")
            if meta.size is not None and partial.stat().st_size != meta.size:
                partial.unlink(missing_ok=True)
                raise OSError(f"{name}: size differs from the hub's")
            os.replace(partial, blob)
        else:
            self.credit(blob.stat().st_size)
        # The blob is in place: hf_hub_download only links it into the snapshot and records the
        # main branch's commit (refs/main), by which the cache finds the copy offline.
        path = hf_hub_download(remote.repo, name, etag_timeout=self.timeout_s)
        return Path(path)


def _key(repo: str) -> tuple[str, str]:
    return ("download", repo)


def _download_of(job: jobs.Job[Any] | None) -> DownloadJob | None:
    """The download a board's job runs (None for another kind of job, or none)."""
    return job.work if job is not None and isinstance(job.work, DownloadJob) else None


def start_download(repo: str, check_config: Callable[[Path], object],
                   again: bool = False) -> DownloadJob:
    """The running or finished download of ``repo`` (one job per repository on the board, shared
    by every session and thread), or a new one: a failed download is started afresh (a retry,
    which resumes the partial file), and with ``again`` a finished one too (its files have left
    the cache since)."""
    def spent(job: jobs.Job[DownloadState]) -> bool:
        download = _download_of(job)
        phase = download.state().phase if download is not None else DownloadPhase.FAILED
        return phase == DownloadPhase.FAILED or (again and phase == DownloadPhase.DONE)

    job = jobs.submit(_key(repo), DownloadJob(repo, check_config), name=f"download {repo}",
                      renew=spent)
    download = _download_of(job)
    assert download is not None   # the key holds downloads only
    download.job = job
    return download


def any_download_moving() -> bool:
    """Whether a download in this process received bytes within its stall limit just now."""
    return any(d.state().phase == DownloadPhase.DOWNLOADING
               for d in map(_download_of, jobs.board().jobs()) if d is not None)


def download_job(repo: str) -> DownloadJob | None:
    """The download of ``repo`` if one was started in this process (and is still on the board)."""
    return _download_of(jobs.board().get(_key(repo)))


def forget_jobs() -> None:
    """Drop ended downloads from the board (tests start each from nothing)."""
    for job in jobs.board().jobs():
        if _download_of(job) is not None:
            jobs.board().forget(job.key)
