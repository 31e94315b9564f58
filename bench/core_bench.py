"""Core speed: core.analyze vs a bare forward, and the cache layer's repeat vs its first call.

The bare forward is what a notebook user would write, ``model(**enc, output_hidden_states=True)``
under ``torch.inference_mode()`` on the already tokenised pair; analyze() also tokenises, runs the
three lookups, LayerNorm and dropout separately, checks the stage identity and copies every stage
to numpy. The two are interleaved (order rotated each repetition) so a change in the machine's load
hits both alike, and the ratio is the median of the per-repetition ratios.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from bench.texts import SentenceFactory
from core import DEFAULT_MODEL, ModelBundle, analyze

WARMUP = 2


@dataclass(frozen=True)
class ForwardFigures:
    n_tokens: int
    attentions: bool
    bare_s: float       # median bare forward (returning attentions too when ``attentions``)
    analyze_s: float    # median core.analyze
    ratio: float        # median of analyze / bare, paired by repetition


@dataclass(frozen=True)
class CacheFigures:
    n_tokens: int
    attentions: bool
    first_s: float      # median first call of components.cache.get_analysis (a miss)
    repeat_s: float     # median repeat of the same call (a hit: hash + lookup)
    ratio: float        # median of repeat / first, paired by input


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def alternating(runs: dict[str, Callable[[], object]], reps: int,
                warmup: int = WARMUP) -> dict[str, list[float]]:
    """Each run's seconds over ``reps`` rounds, after ``warmup`` calls each; every round calls
    them all, a different one first each time, so a noisy moment of the machine falls on all
    of them alike."""
    for fn in runs.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(_timed(runs[name]))
    return times


def bench_forward(
    bundle: ModelBundle, factory: SentenceFactory, n_tokens: int, reps: int
) -> list[ForwardFigures]:
    """Bare forward vs analyze (attentions off and on) on one ``n_tokens`` pair, interleaved.

    analyze with attentions is compared with a bare forward that also returns them, so both
    ratios are the cost of analyze itself, not of the extra output asked of the model.
    """
    a, b = factory.pair(n_tokens)
    enc = bundle.tokenizer(a.text, b, return_tensors="pt")

    @torch.inference_mode()
    def bare(attentions: bool) -> None:
        bundle.model(**enc, output_hidden_states=True, output_attentions=attentions)

    runs: dict[str, Callable[[], object]] = {
        "bare_off": lambda: bare(False),
        "bare_on": lambda: bare(True),
        "off": lambda: analyze(bundle, a.text, b, attentions=False),
        "on": lambda: analyze(bundle, a.text, b, attentions=True),
    }
    times = alternating(runs, reps)
    return [
        ForwardFigures(
            n_tokens,
            attentions=name == "on",
            bare_s=statistics.median(times[f"bare_{name}"]),
            analyze_s=statistics.median(times[name]),
            ratio=statistics.median(
                t / b for t, b in zip(times[name], times[f"bare_{name}"], strict=True)
            ),
        )
        for name in ("off", "on")
    ]


def bench_cache(factory: SentenceFactory, n_tokens: int, reps: int) -> list[CacheFigures]:
    """components.cache.get_analysis, run outside Streamlit: a miss, then a hit of the same input.

    Outside a Streamlit server ``st.cache_resource`` keeps the same in-memory store as in the
    server, so a hit costs what it costs a page: hashing the arguments and a lookup.
    """
    from streamlit.logger import set_log_level

    set_log_level("error")  # "No runtime found" / "missing ScriptRunContext": expected, bare mode
    from components.cache import get_analysis, get_model
    from components.input_key import InputKey

    get_model(DEFAULT_MODEL)  # the first call measures the analysis, not the model load
    figures = []
    for attentions in (False, True):
        # One throwaway miss and hit: the cache machinery's own first-use cost is not the point.
        warm_a, warm_b = factory.pair(n_tokens)
        for _ in range(2):
            get_analysis(InputKey(DEFAULT_MODEL, warm_a.text, warm_b), attentions=attentions)
        first, repeat = [], []
        for _ in range(reps):
            a, b = factory.pair(n_tokens)   # a fresh input each time, so the first call misses
            call = partial(get_analysis, InputKey(DEFAULT_MODEL, a.text, b), attentions=attentions)
            first.append(_timed(call))
            repeat.append(_timed(call))
        figures.append(
            CacheFigures(
                n_tokens,
                attentions,
                first_s=statistics.median(first),
                repeat_s=statistics.median(repeat),
                ratio=statistics.median(r / f for r, f in zip(repeat, first, strict=True)),
            )
        )
    return figures
