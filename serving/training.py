"""Fine-tuning on a server that keeps serving while it trains (issue 60, item 5).

A training run (``core.fine_tune``) takes seconds to minutes and most of a core, so it never runs
in a page's script run. It runs as a job (serving.jobs) on a board of its own, whose pool has
``training_runs()`` workers (``BERT_EXPLORER_TRAINING_RUNS``, default 1): the board's queue is the
queue of runs, first asked first run, and a run's place in it is the number of runs asked before
it still waiting, plus one (``place``). Downloads, pair lists and corpus passes keep the main
board's workers, so a queued run holds none of them.

- **One run per request.** A run's key is everything that decides its result (``Request``: the
  model, the task, the data's key, the settings, the seed). Every session asking for the same
  key gets the same job: a class that opens the teacher's link follows the teacher's run.
- **Memory before it starts.** A run's memory (``core.finetune.training_bytes``: the weights'
  copy, their gradients, AdamW's two moments and a batch's activations) is counted against the
  training budget (``training_budget_bytes``, ``BERT_EXPLORER_TRAINING_MB``) with the runs
  already training and the tuned copies kept. A run that cannot fit even alone is refused when
  asked (``NotEnoughMemory``); one that would fit alone waits until older tuned copies are
  dropped (the least recently used first).
- **Tuned copies.** A finished run (its tuned model) is kept in a bounded store (``kept_run``)
  within the same budget, shared by every session that asked for its key, and dropped least
  recently used first when a new run needs room: the page then says it was dropped. The job
  itself returns only a small ``Outcome``, so the board's list of finished jobs holds no model.
- **A run nobody watches stops.** The page reads the job's progress while it shows the run; a
  run nobody has read for the board's ``ABANDONED_S`` ends at its next step (``Job.report``
  raises ``Cancelled``), and a queued one never starts.
- **Other sessions keep exploring.** The worker trains on torch's one compute thread, as the
  server's model runs do (frame.startup.set_compute_threads sets it at start-up; the worker sets
  it again where nobody has, a test's process), and ``core.fine_tune`` takes the model-run slot
  (``core.models.MODEL_RUNS``) a step at a time, never for the whole run.
- **Stop.** ``stop(key)`` asks the run to end before its next step: ``fine_tune`` returns the
  partial run (``stopped``), kept and shown like a finished one.

Nothing starts at import: the board is made on the first run asked for.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cachetools

from core import settings
from core.errors import N_, ExplorerError
from core.models import ModelBundle
from serving import jobs

_LOG = logging.getLogger(__name__)
MB = 1024 * 1024


def training_runs() -> int:
    """Runs that train at once on this server; the others wait in line."""
    return max(1, int(os.environ.get("BERT_EXPLORER_TRAINING_RUNS", "1")))


def training_budget_bytes() -> int:
    """Bytes the runs training and the tuned copies kept may hold together: beside the memory
    goal of the explorer itself (serving.budget), as a run's memory is not a per-input result.
    The default fits one run of the embedded MiniLM at batch 16 and 128 tokens (core's estimate
    1.35 GB, measured 1.29 GB; much less on short sentences) and a tuned copy or two (91 MB
    each); batch 32 at 128 tokens (1.59 GB) is refused."""
    return int(float(os.environ.get("BERT_EXPLORER_TRAINING_MB", "1536")) * MB)


def tuned_root() -> Path:
    """Where tuned models are saved for the model picker (``BERT_EXPLORER_TUNED_DIR``, by
    default in the explorer's own cache folder); made when first asked for. It is always one of
    the picker's model roots (core.settings.model_dirs)."""
    root = settings.tuned_dir()
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def compute_threads() -> int:
    """torch's threads for a run: the server's one (BERT_EXPLORER_TORCH_THREADS, as
    frame.startup.set_compute_threads reads it)."""
    return max(1, int(os.environ.get("BERT_EXPLORER_TORCH_THREADS", "1")))


class NotEnoughMemory(ExplorerError):
    """A run that cannot fit the training budget."""


TOO_LARGE = N_("This run would need about {need} MB (the model's copy, its gradients, the "
               "optimiser's two moments and a batch's activations), and this server keeps "
               "{budget} MB for training. Pick a smaller batch, frozen features or a smaller "
               "model.")
NO_ROOM = N_("This run needs about {need} MB and the runs training now hold {held} of the "
             "{budget} MB this server keeps for training. Try again when they end.")


@dataclass(frozen=True)
class Request:
    """Everything that decides a run's result: its key on the board. ``data`` names the items
    (a built-in set, or a hash of a file's items)."""

    model: str
    task: str
    data: str
    freeze_encoder: bool
    epochs: int
    learning_rate: float
    batch_size: int
    seed: int = 0
    max_length: int = 128

    @property
    def key(self) -> tuple[str, ...]:
        return ("fine-tune", self.model, self.task, self.data, str(self.freeze_encoder),
                str(self.epochs), repr(self.learning_rate), str(self.batch_size),
                str(self.seed), str(self.max_length))

    @property
    def run_id(self) -> str:
        """A short name of the key for the page's link (the run a reload looks for)."""
        return hashlib.sha256("\x1f".join(self.key).encode("utf-8")).hexdigest()[:12]

    def frozen_twin(self) -> Request:
        """The same request the other way: frozen features for full fine-tuning, and back."""
        return Request(self.model, self.task, self.data, not self.freeze_encoder, self.epochs,
                       self.learning_rate, self.batch_size, self.seed, self.max_length)


def data_key(items: Sequence[Sequence[Any]]) -> str:
    """A hash of a user's items: the same rows, however the file was written, are one key."""
    payload = json.dumps([list(i) for i in items], ensure_ascii=False, default=str)
    return "file:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Outcome:
    """What a finished job hands every session: the run's key (its tuned model is in the kept
    store under it) and how it ended. No tensors: the board keeps finished jobs a while."""

    key: tuple[str, ...]
    stopped: bool
    steps: int
    seconds: float


@dataclass
class Training:
    """The work of one run (the job's ``work``): its live losses and step rate for the page's
    curve, read through ``live(job)`` from any session."""

    request: Request
    bundle: ModelBundle
    train: tuple[Any, ...]
    held_out: tuple[Any, ...]
    labels: tuple[str, ...] | None
    need: int
    losses: list[float] = field(default_factory=list)
    total: int = 0
    rate: float | None = None
    stop_asked: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, job: jobs.Job[Outcome]) -> Outcome:
        import torch

        from core.finetune import TrainingStep, fine_tune

        if torch.get_num_threads() != compute_threads():
            torch.set_num_threads(compute_threads())
        _LEDGER.admit(self.request.key, self.need)
        try:
            def progress(step: TrainingStep) -> None:
                with self.lock:
                    self.losses.append(float(step.loss))
                    self.total = int(step.total)
                    self.rate = step.step / step.seconds if step.seconds > 0 else None
                job.report(step.step, step.total, rate=self.rate)   # Cancelled: nobody watches

            job.report(0, None)
            r = self.request
            run = fine_tune(self.bundle, r.task, self.train, held_out=self.held_out or None,
                            epochs=r.epochs, batch_size=r.batch_size,
                            learning_rate=r.learning_rate, freeze_encoder=r.freeze_encoder,
                            seed=r.seed, max_length=r.max_length, labels=self.labels,
                            progress=progress, should_stop=self.stop_asked.is_set)
        finally:
            _LEDGER.release(self.request.key)
        _KEPT.put(r.key, run)
        return Outcome(r.key, bool(run.stopped), int(run.steps), float(run.seconds))


@dataclass(frozen=True)
class Live:
    """A run as a page draws it while it trains (or waits)."""

    losses: tuple[float, ...]
    step: int
    total: int
    rate: float | None
    place: int | None        # in the queue (1 = next), None once it trains or ended
    seconds: float

    @property
    def seconds_left(self) -> float | None:
        if not self.rate or not self.total:
            return None
        return max(0.0, (self.total - self.step) / self.rate)


# --- the memory the runs hold --------------------------------------------------------------------

class _Ledger:
    """The training budget: bytes of the runs training now, beside the kept copies'."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[str, ...], int] = {}

    def held(self) -> int:
        with self._lock:
            return sum(self._running.values())

    def check(self, need: int) -> None:
        """Refuse a run that could never fit, whatever is dropped for it."""
        budget = training_budget_bytes()
        if need > budget:
            raise NotEnoughMemory(TOO_LARGE, need=f"{need / MB:,.0f}", budget=f"{budget / MB:,.0f}")

    def admit(self, key: tuple[str, ...], need: int) -> None:
        """Count a starting run, dropping kept copies (oldest first) to make room; refuse it
        when the runs training now leave no room."""
        budget = training_budget_bytes()
        with self._lock:
            held = sum(self._running.values())
            if held + need > budget:
                raise NotEnoughMemory(NO_ROOM, need=f"{need / MB:,.0f}",
                                      held=f"{held / MB:,.0f}", budget=f"{budget / MB:,.0f}")
            self._running[key] = need
        _KEPT.make_room(budget - self.held())

    def release(self, key: tuple[str, ...]) -> None:
        with self._lock:
            self._running.pop(key, None)


def run_bytes(run: Any) -> int:
    """What a kept run holds: its task model's parameters and buffers (the tuned encoder is part
    of it; pair_score's model is the encoder itself)."""
    model = run.model
    tensors = [*model.parameters(), *model.buffers()]
    return int(sum(t.element_size() * t.nelement() for t in tensors))


class _Kept:
    """The tuned runs kept, least recently used dropped first; keys dropped are remembered so a
    page can say its run was dropped rather than never made."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lru: cachetools.LRUCache[tuple[str, ...], Any] = cachetools.LRUCache(
            maxsize=max(1, training_budget_bytes()), getsizeof=run_bytes)
        self.dropped: set[tuple[str, ...]] = set()

    def put(self, key: tuple[str, ...], run: Any) -> None:
        with self._lock:
            self.dropped.discard(key)
            before = set(self._lru)
            try:
                self._lru[key] = run
            except ValueError:   # larger than the whole budget: shown once, not kept
                self.dropped.add(key)
            self.dropped |= before - set(self._lru)

    def get(self, key: tuple[str, ...]) -> Any | None:
        with self._lock:
            return self._lru.get(key)

    def bytes_held(self) -> int:
        with self._lock:
            return int(self._lru.currsize)

    def make_room(self, room: int) -> None:
        """Drop the least recently used copies until they hold at most ``room`` bytes."""
        with self._lock:
            while self._lru and self._lru.currsize > max(0, room):
                key, _run = self._lru.popitem()
                self.dropped.add(key)

    def clear(self) -> None:
        with self._lock:
            self._lru.clear()
            self.dropped.clear()


_LEDGER = _Ledger()
_KEPT = _Kept()
_BOARD: jobs.JobBoard | None = None
_BOARD_LOCK = threading.Lock()


def board() -> jobs.JobBoard:
    """The training runs' own board: ``training_runs()`` workers, its queue the runs' queue."""
    global _BOARD  # noqa: PLW0603 - one per process, made on first use so import starts nothing
    with _BOARD_LOCK:
        if _BOARD is None:
            _BOARD = jobs.JobBoard(training_runs())
        return _BOARD


def shutdown() -> None:
    """Cancel every run and forget the kept copies (tests; a server ends with its process)."""
    global _BOARD  # noqa: PLW0603 - see board()
    with _BOARD_LOCK:
        old, _BOARD = _BOARD, None
    for job in old.jobs() if old is not None else []:
        if isinstance(job.work, Training):
            job.work.stop_asked.set()
    if old is not None:
        old.shutdown(wait=True)
    _KEPT.clear()


def start(request: Request, bundle: ModelBundle, train: Sequence[Any],
          held_out: Sequence[Any] = (), labels: Sequence[str] | None = None,
          again: bool = False, tokens: int | None = None) -> jobs.Job[Outcome]:
    """The run of ``request``: the one already asked for (queued, training, or ended with its
    tuned model still kept), else a new one queued; ``again`` trains an ended one anew (a
    stopped run started again). ``tokens``: the longest input in tokens (a batch is padded to
    its longest, never to more than ``max_length``), for the memory estimate. Raises
    NotEnoughMemory when the run could never fit, before anything is queued."""
    from core.finetune import training_bytes

    need = int(training_bytes(bundle, request.task, batch_size=request.batch_size,
                              max_length=min(tokens or request.max_length,
                                             request.max_length),
                              freeze_encoder=request.freeze_encoder))
    _LEDGER.check(need)
    work = Training(request, bundle, tuple(train), tuple(held_out),
                    tuple(labels) if labels is not None else None, need)

    def renew(job: jobs.Job[Any]) -> bool:
        # An ended run whose tuned model was dropped trains again; one kept is shared.
        return job.done() and (again or _KEPT.get(request.key) is None)

    return board().submit(request.key, work, name=f"fine-tune {request.task} on {request.model}",
                          renew=renew)


def find(request: Request) -> jobs.Job[Outcome] | None:
    """The job of ``request`` if one was asked for on this server (none after a restart)."""
    return board().get(request.key) if _BOARD is not None else None


def kept_run(request: Request) -> Any | None:
    """The tuned run of ``request`` if it is still kept (a FineTuneRun)."""
    return _KEPT.get(request.key)


def was_dropped(request: Request) -> bool:
    """Whether the run of ``request`` ended here and its tuned model was dropped for room."""
    return request.key in _KEPT.dropped and _KEPT.get(request.key) is None


def stop(key: tuple[str, ...]) -> None:
    """Ask the run of ``key`` to end before its next step (a queued one never starts)."""
    job = board().get(key) if _BOARD is not None else None
    if job is None:
        return
    work = job.work
    if isinstance(work, Training):
        work.stop_asked.set()
    if not job.running():
        job.cancel()


def place(job: jobs.Job[Any]) -> int | None:
    """The job's place in the queue (1: next to train), None once it trains or has ended."""
    if job.done() or job.running():
        return None
    waiting = [j for j in board().jobs() if not j.done() and not j.running()]
    return 1 + sum(1 for j in waiting if j.started < job.started)


def live(job: jobs.Job[Outcome]) -> Live:
    """The job's run as it stands (reading it counts as watching it)."""
    progress = job.progress
    work = job.work
    if not isinstance(work, Training):
        return Live((), progress.done, progress.total or 0, None, place(job), job.seconds)
    with work.lock:
        losses, total, rate = tuple(work.losses), work.total, work.rate
    return Live(losses, len(losses), total, rate, place(job), job.seconds)


def memory_words() -> dict[str, str]:
    """The budget and what it holds, in MB, for the page's note."""
    return {"budget": f"{training_budget_bytes() / MB:,.0f}",
            "kept": f"{_KEPT.bytes_held() / MB:,.0f}",
            "training": f"{_LEDGER.held() / MB:,.0f}"}

