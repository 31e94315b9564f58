"""Fetching a model from the hub: one background download per model, shared, with progress and a
stall watchdog instead of a total deadline.

A download is a ``DownloadJob``: a thread that lists the repository, fetches config.json first
(so a model that is not BERT or too large is refused before any weight moves), then the tokenizer
files and the safetensors weights into the Hugging Face cache. Every caller asking for the same
repository gets the same job (``start_download``): two students asking start one download, two
models download side by side. Progress (bytes done of total, speed, time left) is read with
``job.state()`` from any thread; the job never calls back into the UI.

Resuming: huggingface_hub 2.4 writes each download to a file unique to that attempt and deletes it
on failure, so it never resumes. The job keeps its own ``<blob>.incomplete`` in the cache and asks
for the rest with a Range request (huggingface_hub's ``http_get(resume_size=...)``), then lets
``hf_hub_download`` link the finished blob into the snapshot as it would its own.

Stalls: no byte for ``HUB_STALL_S`` seconds stops the job with a message that says so and how far
it got. The socket's read timeout is set to the same limit, so a worker blocked on a silent hub
wakes up and ends then; whoever reads the state sees the stall at the limit even earlier.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx2
from huggingface_hub import (
    HfApi,
    constants,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
    set_client_factory,
)
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.file_download import http_get, repo_folder_name, try_to_load_from_cache
from huggingface_hub.utils import build_hf_headers
from huggingface_hub.utils._http import default_client_factory

from core import settings
from core.errors import (
    N_,
    DownloadStalledError,
    ModelLoadError,
    ModelNotOnHubError,
    ModelUnavailableError,
    NotSafetensorsError,
    VocabularyError,
)

# What the explorer reads from a checkpoint; everything else in a repository (TensorFlow, Flax,
# ONNX, pickled weights) stays on the hub. bert-base-uncased's repository holds several GB.
CONFIG = "config.json"
VOCABULARIES = ("vocab.txt", "tokenizer.json")
TOKENIZER_EXTRAS = ("tokenizer_config.json", "special_tokens_map.json")
WEIGHTS, WEIGHTS_INDEX = "model.safetensors", "model.safetensors.index.json"
_SHARD = re.compile(r"^model-\d{5}-of-\d{5}\.safetensors$")

# huggingface_hub reads the body in 10 MB chunks and reports progress once per chunk: at a school
# connection's 200 KB/s that is one sign of life every 50 s, which a stall watchdog would mistake
# for a stall. 64 KB chunks report many times a second at no measurable cost.
constants.DOWNLOAD_CHUNK_SIZE = 64 * 1024
_LOG = logging.getLogger(__name__)
_SPEED_WINDOW_S = 5.0   # speed and time left from the bytes of the last few seconds

# The job a download thread works for. huggingface_hub retries a timed-out body up to five times
# (and counts again from five whenever a byte came), so a job stopped as stalled would linger for
# minutes: every request a stopped job's thread makes is refused instead, and the thread ends.
_WORKER = threading.local()


def _refuse_stopped_job(request: httpx2.Request) -> None:
    job = getattr(_WORKER, "job", None)
    if job is not None and job.stopped:
        raise _Stopped


def _client() -> httpx2.Client:
    client = default_client_factory()
    client.event_hooks["request"].append(_refuse_stopped_job)
    return client


set_client_factory(_client)


def wanted_files(names: list[str]) -> list[str]:
    """The files of a repository the explorer reads, config first, weights last."""
    order = [CONFIG, *VOCABULARIES, *TOKENIZER_EXTRAS, WEIGHTS_INDEX, WEIGHTS]
    picked = [n for n in order if n in names]
    if WEIGHTS not in names and WEIGHTS_INDEX in names:
        picked += sorted(n for n in names if _SHARD.match(n))
    return picked


@dataclass(frozen=True)
class RemoteModel:
    """What the hub says about a repository: its commit, and the sizes of the files we fetch."""

    repo: str
    commit: str
    sizes: dict[str, int | None]   # only the wanted files

    @property
    def total_bytes(self) -> int | None:
        if any(size is None for size in self.sizes.values()):
            return None
        return sum(s for s in self.sizes.values() if s is not None)


def remote_model(repo: str, timeout: float | None = None) -> RemoteModel:
    """The hub's listing of ``repo``; raises a ``ModelLoadError`` saying what went wrong."""
    timeout = settings.HUB_TIMEOUT_S if timeout is None else timeout
    try:
        info = HfApi(endpoint=constants.ENDPOINT).model_info(repo, files_metadata=True,
                                                             timeout=timeout)
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        raise _not_on_hub(repo) from exc
    except GatedRepoError as exc:
        raise ModelNotOnHubError(
            N_("The model hub holds “{name}” but gives it only to signed-in users who accepted "
               "its terms; this explorer does not sign in."), name=repo) from exc
    except HfHubHTTPError as exc:
        raise _hub_refused(repo, exc) from exc
    except (httpx2.HTTPError, OSError) as exc:
        raise unavailable(repo) from exc
    names = [s.rfilename for s in info.siblings or []]
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    check_listing(repo, names)
    wanted = {n: sizes.get(n) for n in wanted_files(names)}
    return RemoteModel(repo, str(info.sha or "main"), wanted)


def check_listing(repo: str, names: list[str]) -> None:
    """A repository must hold a config, a vocabulary and safetensors weights to be fetched."""
    if CONFIG not in names:
        raise ModelNotOnHubError(
            N_("The model hub has “{name}”, but it is not a model (it has no config.json)."),
            name=repo)
    if WEIGHTS not in names and WEIGHTS_INDEX not in names:
        raise NotSafetensorsError(
            N_("“{name}” has no safetensors weights on the model hub, only other formats; the "
               "explorer reads safetensors weights only (pickled weights can run code)."),
            name=repo)
    if not any(v in names for v in VOCABULARIES):
        raise VocabularyError(
            N_("“{name}” comes without a vocabulary (vocab.txt or tokenizer.json), so its text "
               "cannot be turned into tokens."), name=repo)


def unavailable(name: str) -> ModelUnavailableError:
    return ModelUnavailableError(
        N_("“{name}” is not on this machine and the model hub cannot be reached (it did not "
           "answer). To use {name} offline, download it once on a connected machine into the "
           "Hugging Face cache or a model folder this explorer is allowed to read."),
        name=name,
    )


def _not_on_hub(name: str) -> ModelNotOnHubError:
    return ModelNotOnHubError(
        N_("The model hub answered, but it has no model named “{name}”. Check the spelling "
           "(for example bert-base-chinese)."), name=name)


def _hub_refused(name: str, exc: HfHubHTTPError) -> ModelLoadError:
    status = getattr(exc.response, "status_code", None) if exc.response is not None else None
    return ModelLoadError(
        N_("The model hub refused to give “{name}” (it answered with error {status})."),
        name=name, status=str(status or "?"))


def cached_snapshot(repo: str) -> Path | None:
    """The cache folder holding a complete copy of ``repo`` (config, a vocabulary and every
    safetensors file), or None. Reads only the local cache."""
    def cached(filename: str) -> Path | None:
        found = try_to_load_from_cache(repo, filename)
        return Path(found) if isinstance(found, str) else None

    config = cached(CONFIG)
    if config is None or not any(cached(v) for v in VOCABULARIES):
        return None
    folder = config.parent
    if cached(WEIGHTS) is not None:
        return folder
    index = cached(WEIGHTS_INDEX)
    if index is None:
        return None
    try:
        shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
    except (OSError, ValueError, AttributeError):
        return None
    return folder if shards and all((folder / s).is_file() for s in shards) else None


@dataclass(frozen=True)
class DownloadState:
    """One look at a job, safe to draw: sizes in bytes, speed in bytes per second."""

    repo: str
    phase: str                  # "connecting", "downloading", "done" or "failed"
    done_bytes: int
    total_bytes: int | None
    speed: float | None
    seconds_left: float | None
    error: ModelLoadError | None = None
    folder: Path | None = None

    @property
    def finished(self) -> bool:
        return self.phase in ("done", "failed")

    @property
    def fraction(self) -> float:
        if not self.total_bytes:
            return 0.0
        return min(1.0, self.done_bytes / self.total_bytes)


class _Stopped(Exception):
    """Raised inside the worker when the job was stopped from outside (the watchdog)."""


def megabytes(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:,.0f}" if n >= 10e6 else f"{n / 1e6:,.1f}"


class DownloadJob:
    """The download of one repository into the Hugging Face cache, in a thread of its own.

    ``check_config(path)`` is called on the fetched config.json before anything else is fetched
    and raises a ``ModelLoadError`` to refuse the model (not BERT, too large).
    """

    def __init__(self, repo: str, check_config: Callable[[Path], None],
                 stall_s: float | None = None, timeout_s: float | None = None) -> None:
        self.repo = repo
        self.stall_s = settings.HUB_STALL_S if stall_s is None else stall_s
        self.timeout_s = settings.HUB_TIMEOUT_S if timeout_s is None else timeout_s
        self._check_config = check_config
        self._cond = threading.Condition()
        self._phase = "connecting"
        self._done = 0
        self._total: int | None = None
        self._error: ModelLoadError | None = None
        self._folder: Path | None = None
        self._last_byte = time.monotonic()
        self.ended_at: float | None = None   # time.monotonic() when it finished or failed
        self._recent: collections.deque[tuple[float, int]] = collections.deque()
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"download {repo}")

    # ------------------------------------------------------------------ read from any thread

    def state(self) -> DownloadState:
        """The job as it stands; also the watchdog: a job silent past the stall limit fails."""
        with self._cond:
            now = time.monotonic()
            if self._phase == "downloading" and now - self._last_byte > self.stall_s:
                self._fail(self._stalled())
            speed = self._speed(now)
            left = None
            if speed and self._total is not None:
                left = max(0.0, (self._total - self._done) / speed)
            return DownloadState(self.repo, self._phase, self._done, self._total, speed, left,
                                 self._error, self._folder)

    def wait(self, timeout: float | None = None) -> DownloadState:
        """Block until the job ends (or ``timeout`` seconds pass); the state at that point."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.state()
            if state.finished or (end is not None and time.monotonic() >= end):
                return state
            with self._cond:
                self._cond.wait(0.25)

    def wait_until_started(self) -> DownloadState:
        """Wait while the hub is being asked (at most the hub timeout and a little more)."""
        end = time.monotonic() + self.timeout_s + 2.0
        while True:
            state = self.state()
            if state.phase != "connecting" or time.monotonic() >= end:
                return state
            with self._cond:
                self._cond.wait(0.1)

    # ------------------------------------------------------------------ the worker

    def start(self) -> DownloadJob:
        self.thread.start()
        return self

    @property
    def stopped(self) -> bool:
        """Failed (a stall seen by the watchdog, for one): the worker must stop."""
        with self._cond:
            return self._phase == "failed"

    def update(self, n: int) -> None:
        """Bytes arrived (called by huggingface_hub's download loop, as a progress bar)."""
        with self._cond:
            if self._phase == "failed":
                raise _Stopped
            self._done += n
            now = self._last_byte = time.monotonic()
            self._recent.append((now, self._done))
            while self._recent and now - self._recent[0][0] > _SPEED_WINDOW_S:
                self._recent.popleft()
            self._cond.notify_all()

    def _credit(self, n: int) -> None:
        """Bytes already here (a finished file, a partial one resumed) count as done, but not
        toward the speed: every sample moves up by ``n``, so their differences stay."""
        with self._cond:
            self._done += n
            self._recent = collections.deque((t, d + n) for t, d in self._recent)

    def _speed(self, now: float) -> float | None:
        if len(self._recent) < 2 or self._phase != "downloading":
            return None
        (t0, d0), (_t1, d1) = self._recent[0], self._recent[-1]
        if now - t0 < 1.0:
            return None   # a rate from a fraction of a second is noise (3 min left, then 2 s)
        return (d1 - d0) / (now - t0) if d1 > d0 else None

    def _fail(self, error: ModelLoadError) -> None:
        if self._phase in ("done", "failed"):
            return
        self._phase, self._error = "failed", error
        self.ended_at = time.monotonic()
        self._cond.notify_all()

    def _stalled(self) -> DownloadStalledError:
        return DownloadStalledError(
            N_("The download of “{name}” stalled at {done} of {total} MB: the model hub sent "
               "nothing for {seconds} seconds. Try again: it resumes where it stopped."),
            name=self.repo, done=megabytes(self._done), total=megabytes(self._total),
            seconds=f"{self.stall_s:g}")

    def _run(self) -> None:
        _WORKER.job = self
        try:
            folder = self._fetch()
        except _Stopped:
            return
        except ModelLoadError as exc:
            with self._cond:
                self._fail(exc)
            return
        except httpx2.TimeoutException:
            with self._cond:
                self._fail(self._stalled())
            return
        except (httpx2.HTTPError, OSError) as exc:
            with self._cond:
                self._fail(self._lost(exc))
            return
        except Exception as exc:  # noqa: BLE001 - an answer we cannot read must still end the job
            _LOG.warning("download of %r failed: %r", self.repo, exc)
            with self._cond:
                self._fail(ModelLoadError(
                    N_("The model hub answered about “{name}” in a way the explorer cannot "
                       "read."), name=self.repo))
            return
        with self._cond:
            if self._phase != "failed":
                self._phase, self._folder = "done", folder
                self.ended_at = time.monotonic()
            self._cond.notify_all()

    def _lost(self, exc: Exception) -> ModelLoadError:
        return ModelLoadError(
            N_("The download of “{name}” broke off at {done} of {total} MB ({reason}). Try "
               "again: it resumes where it stopped."),
            name=self.repo, done=megabytes(self._done), total=megabytes(self._total),
            reason=type(exc).__name__)

    def _fetch(self) -> Path:
        # The read timeout of every download request: a socket that gets nothing for this long
        # has stalled. Process-wide, as huggingface_hub reads it at each request.
        constants.HF_HUB_DOWNLOAD_TIMEOUT = max(1, round(self.stall_s))
        remote = remote_model(self.repo, self.timeout_s)
        with self._cond:
            self._total = remote.total_bytes
            self._phase, self._last_byte = "downloading", time.monotonic()
        config = self._file(remote, CONFIG)
        self._check_config(config)
        for name in remote.sizes:
            if name != CONFIG:
                self._file(remote, name)
        return config.parent

    def _file(self, remote: RemoteModel, name: str) -> Path:
        """One file into the cache, resumed from our partial copy if an earlier try left one."""
        url = hf_hub_url(remote.repo, name, revision=remote.commit)
        try:
            meta = get_hf_file_metadata(url, timeout=self.timeout_s)
        except RemoteEntryNotFoundError as exc:
            raise _not_on_hub(remote.repo) from exc
        storage = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=remote.repo,
                                                                    repo_type="model")
        blob = storage / "blobs" / str(meta.etag)
        if not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True)
            partial = blob.with_name(blob.name + ".incomplete")
            for _attempt in range(5):
                with open(partial, "ab") as out:
                    resume = out.tell()
                    self._credit(resume)   # bytes an earlier try fetched count as done
                    before = self._done
                    try:
                        # Our own bar and no retries inside: a timeout is a stall, decided here.
                        http_get(meta.location, out, resume_size=resume,
                                 expected_size=meta.size, headers=build_hf_headers(),
                                 displayed_filename=name, _nb_retries=0, _tqdm_bar=self)
                        break
                    except (httpx2.ConnectError, httpx2.RemoteProtocolError):
                        if self._done == before:
                            raise   # nothing came this time: not worth another try
                        self._credit(-out.tell())   # counted again on the next try
            else:
                raise OSError(f"{name}: too many interrupted tries")
            if meta.size is not None and partial.stat().st_size != meta.size:
                partial.unlink(missing_ok=True)
                raise OSError(f"{name}: size differs from the hub's")
            os.replace(partial, blob)
        else:
            self._credit(blob.stat().st_size)
        # The blob is in place: hf_hub_download only links it into the snapshot and records the
        # main branch's commit (refs/main), by which the cache finds the copy offline.
        path = hf_hub_download(remote.repo, name, etag_timeout=self.timeout_s)
        return Path(path)


# One job per repository for the whole process: every session and thread asking shares it.
_JOBS: dict[str, DownloadJob] = {}
_JOBS_LOCK = threading.Lock()


def start_download(repo: str, check_config: Callable[[Path], None],
                   again: bool = False) -> DownloadJob:
    """The running or finished job for ``repo``, or a new one; a failed job is started afresh
    (a retry, which resumes the partial file), and with ``again`` a finished one too (its files
    have left the cache since)."""
    with _JOBS_LOCK:
        job = _JOBS.get(repo)
        phase = None if job is None else job.state().phase
        if phase in (None, "failed") or (again and phase == "done"):
            job = _JOBS[repo] = DownloadJob(repo, check_config).start()
        return job


def download_job(repo: str) -> DownloadJob | None:
    """The job for ``repo`` if one was started in this process."""
    with _JOBS_LOCK:
        return _JOBS.get(repo)


def forget_jobs() -> None:
    """Drop finished jobs (tests start each from nothing)."""
    with _JOBS_LOCK:
        for repo in [r for r, j in _JOBS.items() if j.state().finished]:
            del _JOBS[repo]
