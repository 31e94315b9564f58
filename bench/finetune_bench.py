"""Fine-tuning's speed: core.fine_tune against a bare torch loop of the same model, batches and
optimizer; what the live loss curve's reports cost it; one epoch of each built-in set and of
1,000 scored pairs; and a page's model run while a run trains in the same process.

- Bare loop: transformers' BertForSequenceClassification on the shipped all-MiniLM-L6-v2's
  weights (core.finetune.training.task_model, the same seed), the batches encoded before the
  clock starts (the same batches as fine_tune's, in its order), AdamW with the same learning
  rate and linear warm-up: what any training costs. fine_tune encodes its batches as it goes
  and takes a model-run slot each step. Both are timed from the first step's end to the last's
  (the task model's building is not a step); the ratio (steps per second of fine_tune / of the
  bare loop) is the median of paired repetitions.
- The live curve: a whole run with a progress callback that does what the page's job does each
  step (appends the step under a lock), against the same run without one.
- Another session while a run trains: core.analyze on a new sentence (the work behind a page's
  new sentence), idle and while fine_tune runs in another thread of the same process, as it
  does on the server (torch on one thread each, as the app sets it).

    python3 -m bench.finetune_bench [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STEPS_GOAL = 0.9      # fine_tune's steps per second / the bare loop's (issue 60)
CURVE_GOAL = 0.05     # the live curve's share of a run
BUSY_GOAL = 1.5       # another session's model run while training / idle
BATCH = 16
STEPS = 12
PAIRS = 1000


@dataclass(frozen=True)
class Figures:
    bare_step_s: float
    tuned_step_s: float
    ratio: float
    curve_share: float
    epochs: dict[str, tuple[int, float]]     # set -> (items, seconds for one epoch)
    idle_s: float
    busy_s: float


def bare_loop(bundle, items, labels, steps: int) -> float:
    """Seconds per step of a plain torch loop over pre-encoded batches."""
    from transformers import get_linear_schedule_with_warmup

    from core.finetune.batches import encode_batch
    from core.finetune.tasks import FineTuneTask
    from core.finetune.training import task_model

    task = FineTuneTask.SENTENCE_CLASS
    ids = {label: i for i, label in enumerate(labels)}
    # The same batches as fine_tune's first epoch at seed 0: its order of the items.
    order = torch.randperm(len(items), generator=torch.Generator().manual_seed(0)).tolist()
    batches = [encode_batch(bundle, task, [items[i] for i in order[k:k + BATCH]], ids,
                            128).inputs for k in range(0, steps * BATCH, BATCH)]
    torch.manual_seed(0)
    model = task_model(bundle, task, labels)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * steps), steps)
    ends = []
    for inputs in batches:
        loss = model(**inputs).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        ends.append(time.perf_counter())
    return (ends[-1] - ends[0]) / (steps - 1)   # from the first step's end, as fine_tune's


def tuned_loop(bundle, items, steps: int, with_curve: bool) -> tuple[float, float]:
    """fine_tune over the same items (no held-out part): seconds per step from the first step's
    end to the last's (its own step times; NaN without the curve's reports), and the whole
    run's seconds (the task model's building included)."""
    from core import fine_tune

    seen, lock = [], threading.Lock()

    def report(step) -> None:
        with lock:
            seen.append(step)

    run = fine_tune(bundle, "sentence_class", items[:steps * BATCH], batch_size=BATCH,
                    progress=report if with_curve else None)
    per_step = ((seen[-1].seconds - seen[0].seconds) / (len(seen) - 1) if seen
                else float("nan"))
    return per_step, run.seconds


def epoch_seconds(bundle) -> dict[str, tuple[int, float]]:
    from core import fine_tune
    from core.finetune import builtin_set
    from core.finetune.tasks import FineTuneTask

    out = {}
    for task in FineTuneTask:
        data = builtin_set(task, "en")
        run = fine_tune(bundle, task, data.train, batch_size=BATCH)
        out[f"built-in {task} (English)"] = (len(data.train), run.seconds)
    pairs = builtin_set(FineTuneTask.PAIR_SCORE, "en").train
    many = [pairs[k % len(pairs)] for k in range(PAIRS)]
    run = fine_tune(bundle, "pair_score", many, batch_size=BATCH)
    out[f"{PAIRS:,} scored pairs"] = (PAIRS, run.seconds)
    return out


def analysis_seconds(bundle, texts: list[str]) -> float:
    from core import analyze

    times = []
    for text in texts:
        start = time.perf_counter()
        analyze(bundle, text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def while_training(bundle, items, texts: list[str]) -> tuple[float, float]:
    from core import fine_tune

    idle = analysis_seconds(bundle, texts[: len(texts) // 2])
    started, stop = threading.Event(), threading.Event()

    def train() -> None:
        fine_tune(bundle, "sentence_class", items, epochs=20, batch_size=BATCH,
                  progress=lambda _: started.set(), should_stop=stop.is_set)

    worker = threading.Thread(target=train, name="bench training")
    worker.start()
    started.wait(120)
    busy = analysis_seconds(bundle, texts[len(texts) // 2:])
    stop.set()
    worker.join()
    return idle, busy


def measure(reps: int) -> Figures:
    from core import load_model
    from core.finetune import builtin_set

    torch.set_num_threads(1)   # as the app runs its model (frame.startup.set_compute_threads)
    bundle = load_model()
    data = builtin_set("sentence_class", "en")
    items = list(data.train) * 2
    bare, tuned, plain, curve = [], [], [], []
    for _ in range(reps):
        bare.append(bare_loop(bundle, items, data.labels, STEPS))
        step_s, with_curve = tuned_loop(bundle, items, STEPS, with_curve=True)
        tuned.append(step_s)
        plain.append(tuned_loop(bundle, items, STEPS, with_curve=False)[1])
        curve.append(with_curve / plain[-1] - 1)
    texts = [f"Sentence number {k} about {word} for the class." for k, word in enumerate(
        ["rivers", "music", "planets", "bread", "trains", "cities", "rain", "chess",
         "paint", "stones", "boats", "clocks"])]
    idle, busy = while_training(bundle, items, texts)
    return Figures(statistics.median(bare), statistics.median(tuned),
                   statistics.median(b / t for b, t in zip(bare, tuned, strict=True)),
                   statistics.median(curve), epoch_seconds(bundle), idle, busy)


def rows(f: Figures) -> list:
    from bench.report import Row, fmt_s

    out = [
        Row("1 Core", "fine_tune steps per second / a bare torch loop (all-MiniLM-L6-v2, "
            f"sentence classes, batch {BATCH}, AdamW), median of paired runs",
            f"{f.ratio:.2f}x ({1 / f.tuned_step_s:.2f} vs {1 / f.bare_step_s:.2f} steps/s)",
            f"≥ {STEPS_GOAL}x", f.ratio >= STEPS_GOAL),
        Row("1 Core", "fine_tune: the live curve's reports, share of a run",
            f"{f.curve_share * 100:+.1f}%", f"≤ {CURVE_GOAL * 100:.0f}%",
            f.curve_share <= CURVE_GOAL),
        Row("1 Core", "a page's model run (analyze, a new sentence) while a run trains / idle, "
            "one process", f"{f.busy_s / f.idle_s:.2f}x ({fmt_s(f.busy_s)} vs "
            f"{fmt_s(f.idle_s)})", f"≤ {BUSY_GOAL}x", f.busy_s / f.idle_s <= BUSY_GOAL),
    ]
    out += [Row("1 Core", f"fine_tune, one epoch (full fine-tuning, batch {BATCH}): {name}",
                f"{seconds:.1f} s ({items:,} items)") for name, (items, seconds)
            in f.epochs.items()]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    from bench import machine
    from bench.report import markdown

    load = machine.load_average()
    table = markdown(rows(measure(args.reps)))
    print(f"Load average (1/5/15 min): {load} at start, {machine.load_average()} at the end\n\n"
          f"{table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
