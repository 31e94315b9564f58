"""Attribution's data, keyed on the InputKey first. Raw attention, rollout and norm-weighted
attention come from the shared cached analysis (no second forward pass); the blank-out test, flow
and integrated gradients are cached here once computed. Every function raises core's
ExplorerError (not cached) for input core cannot take."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from components.cache import get_analysis, get_model, results_cache
from components.input_key import InputKey
from core.attribution import (
    NORM,
    PAIR_COSINE,
    RAW,
    ROLLOUT,
    BlankOut,
    IntegratedGradients,
    TargetPlan,
    attention_methods,
    blank_out,
    check_flow_length,
    flow_of,
    integrated_gradients,
    plan_target,
    shares,
    token_importance,
)
from core.attribution.rollout import real_attentions
from core.similarity.sentences import encoder_max_length
from core.words import Word, words_of_encoding
from core.words import Word, words_of_encoding
from serving.budget import ResultStore

SHARE = 0.02   # of the results budget, for each cache here
Progress = Callable[[int, int], None]
_FLOWS = ResultStore("attribution: flow", SHARE)
_GRADIENTS = ResultStore("attribution: integrated gradients", SHARE)


@results_cache("attribution: targets", SHARE)
def get_plan(key: InputKey, target: str) -> TargetPlan:
    """What ``target`` means for this input: the sequences the model runs, the tokens kept (no
    model run for the opening view: the blank-out test adds what it needs)."""
    return plan_target(get_model(key.model), target, key.text_a, key.text_b, key.max_length,
                       key.truncation, reference=False)


@results_cache("attribution: words", SHARE, heavy=False)
def get_plan_words(key: InputKey, target: str) -> tuple[tuple[Word, ...], ...]:
    """The words (core.words) of each part the target runs, over that part's tokens."""
    return tuple(words_of_encoding(part) for part in get_plan(key, target).parts)


@results_cache("attribution: words", SHARE, heavy=False)
def get_plan_words(key: InputKey, target: str) -> tuple[tuple[Word, ...], ...]:
    """The words (core.words) of each part the target runs, over that part's tokens."""
    return tuple(words_of_encoding(part) for part in get_plan(key, target).parts)


def part_keys(key: InputKey, target: str) -> list[InputKey]:
    """The inputs the target's parts are runs of: A and B on their own (cut where the embedding
    model cuts) for the pair's cosine, else the shared input itself."""
    if target != PAIR_COSINE:
        return [key]
    limit = encoder_max_length(key.model)
    return [InputKey(key.model, text, None, limit, True, False)
            for text in (key.text_a, key.text_b or "")]


@results_cache("attribution: attention methods", SHARE)
def get_part_importance(key: InputKey, token: int | None) -> dict[str, np.ndarray]:
    """Raw attention, rollout and norm-weighted attention of output token ``token`` (None: the
    mean over tokens) in one run, ``key``'s input: (L, N) per method over its real tokens. Kept
    per run, so for the pair's cosine a new sentence A reuses B's rows (at 512 tokens B's
    forward pass and its norms were more than half of a rerun). Only these rows are kept: the
    (L, T, T) matrices behind them are 38 MB at 512 tokens, more than this cache's share."""
    methods = attention_methods(get_model(key.model), get_analysis(key, attentions=True))
    return {RAW: token_importance(methods.raw, token),
            ROLLOUT: token_importance(methods.rollout, token),
            NORM: token_importance(methods.norm, token)}


def layer_importance(key: InputKey, target: str, token: int | None) -> dict[str, np.ndarray]:
    """Each method's (L, N) rows of ``target``'s runs joined (A's tokens, then B's for the
    pair's cosine); norm-weighted attention as shares, as the other two are."""
    parts = [get_part_importance(k, token) for k in part_keys(key, target)]
    return {name: np.concatenate([shares(p[name]) if name == NORM else p[name] for p in parts],
                                 axis=1)
            for name in (RAW, ROLLOUT, NORM)}


@results_cache("attribution: blank-out", SHARE)
def get_blank(key: InputKey, target: str) -> BlankOut:
    return blank_out(get_model(key.model), get_plan(key, target))


def flow_request(key: InputKey, target: str, token: int | None) -> tuple:
    return ("flow", key, target, token)


def check_flow(key: InputKey, target: str, token: int | None) -> None:
    """InputError when a part is past flow's token limit (before anything runs)."""
    layers = get_model(key.model).config.num_hidden_layers
    for part in get_plan(key, target).parts:
        check_flow_length(len(part.input_ids), layers, all_tokens=token is None)


def flow(key: InputKey, target: str, token: int | None) -> tuple:
    """Per part (L, T, T) attention flow for output token ``token`` (None: every token)."""
    check_flow(key, target, token)

    def compute() -> tuple:
        return tuple(
            flow_of(real_attentions(get_analysis(k, attentions=True).attentions,
                                    len(part.input_ids)),
                    None if token is None else [token])
            for k, part in zip(part_keys(key, target), get_plan(key, target).parts, strict=True))

    return _FLOWS.get_or_compute(flow_request(key, target, token), compute)


def gradient_request(key: InputKey, target: str, steps: int) -> tuple:
    return ("ig", key, target, steps)


def gradients(key: InputKey, target: str, steps: int,
              progress: Progress | None = None) -> IntegratedGradients:
    """Integrated gradients of the target; ``progress`` hears of each batch of steps (only when
    it is computed, not on a cache hit)."""
    return _GRADIENTS.get_or_compute(
        gradient_request(key, target, steps),
        lambda: integrated_gradients(get_model(key.model), key.text_a, key.text_b, steps,
                                     target, key.max_length, key.truncation, progress))
