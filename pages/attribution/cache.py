"""Attribution's data, keyed on the InputKey first. Raw attention, rollout and norm-weighted
attention come from the shared cached analysis (no second forward pass); the blank-out test, flow
and integrated gradients are cached here once computed. Every function raises core's
ExplorerError (not cached) for input core cannot take.

Every figure is what core's public entry point returns for the same input, through the call a
notebook makes: the rollout figure from its page in three calls, page.draw_importance ->
get_importance -> get_part_importance -> core.attribution.attention_methods."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from components.cache import get_analysis, get_model, results_cache
from components.input_key import InputKey
from core.attribution import (
    BlankOut,
    IntegratedGradients,
    Method,
    Target,
    TargetPlan,
    analysis_flow,
    attention_methods,
    blank_out,
    check_flow_length,
    integrated_gradients,
    plan_target,
)
from core.similarity.sentences import encoder_max_length
from core.words import Word, words_of_encoding

SHARE = 0.02   # of the results budget, for each cache here
Progress = Callable[[int, int], None]
ATTENTION_METHODS = (Method.RAW, Method.ROLLOUT, Method.NORM)   # read from one analysis


@results_cache("attribution: targets", SHARE)
def get_plan(key: InputKey, target: Target) -> TargetPlan:
    """What ``target`` means for this input: the sequences the model runs, the tokens kept (no
    model run for the opening view: the blank-out test adds what it needs)."""
    return plan_target(get_model(key.model), target, key.text_a, key.text_b, key.max_length,
                       key.truncation, reference=False)


@results_cache("attribution: words", SHARE, heavy=False)
def get_plan_words(key: InputKey, target: Target) -> tuple[tuple[Word, ...], ...]:
    """The words (core.words) of each part the target runs, over that part's tokens."""
    return tuple(words_of_encoding(part) for part in get_plan(key, target).parts)


def part_keys(key: InputKey, target: Target) -> list[InputKey]:
    """The inputs the target's parts are runs of: A and B on their own (cut where the embedding
    model cuts) for the pair's cosine, else the shared input itself."""
    if target != Target.PAIR_COSINE:
        return [key]
    limit = encoder_max_length(key.model)
    return [InputKey(key.model, text, None, limit, True, False)
            for text in (key.text_a, key.text_b or "")]


@results_cache("attribution: importance", SHARE)
def get_importance(key: InputKey, target: Target, token: int | None,
                   ) -> dict[Method, np.ndarray]:
    """Raw attention, rollout and norm-weighted attention of output token ``token`` (None: the
    mean over tokens): each method's (L, N) rows over ``target``'s runs joined (A's tokens,
    then B's for the pair's cosine); norm-weighted attention as shares, as the other two are."""
    parts = [get_part_importance(k, token) for k in part_keys(key, target)]
    return {method: np.concatenate([p[method] for p in parts], axis=1)
            for method in ATTENTION_METHODS}


@results_cache("attribution: attention methods", SHARE)
def get_part_importance(key: InputKey, token: int | None) -> dict[Method, np.ndarray]:
    """``core.attribution.attention_methods`` of one run, ``key``'s input (the shared
    analysis), read for output token ``token``: (L, N) per method over its real tokens. Kept
    per run, so for the pair's cosine a new sentence A reuses B's rows (at 512 tokens B's
    forward pass and its norms were more than half of a rerun). Only these rows are kept: the
    (L, T, T) matrices behind them are 38 MB at 512 tokens, more than this cache's share."""
    methods = attention_methods(get_model(key.model), get_analysis(key, attentions=True))
    return methods.importance(token)


@results_cache("attribution: blank-out", SHARE)
def get_blank(key: InputKey, target: Target) -> BlankOut:
    return blank_out(get_model(key.model), get_plan(key, target))


def flow_request(key: InputKey, target: Target, token: int | None) -> tuple:
    """What the session remembers it asked for (flow is computed only on a click)."""
    return ("flow", key, target, token)


def check_flow(key: InputKey, target: Target, token: int | None) -> None:
    """InputError when a part is past flow's token limit (before anything runs)."""
    layers = get_model(key.model).config.num_hidden_layers
    for part in get_plan(key, target).parts:
        check_flow_length(len(part.input_ids), layers, all_tokens=token is None)


@results_cache("attribution: flow", SHARE)
def get_flow(key: InputKey, target: Target, token: int | None) -> tuple[np.ndarray, ...]:
    """Per part (L, T, T) attention flow for output token ``token`` (None: every token), as
    ``core.attribution.attention_flow`` gives it, from the shared analysis. InputError (not
    cached) when a part is past flow's token limit, before anything runs."""
    check_flow(key, target, token)
    return tuple(analysis_flow(get_analysis(k, attentions=True), None if token is None
                               else [token]) for k in part_keys(key, target))


def gradient_request(key: InputKey, target: Target, steps: int) -> tuple:
    """What the session remembers it asked for (gradients are computed only on a click)."""
    return ("ig", key, target, steps)


@results_cache("attribution: integrated gradients", SHARE, unkeyed=("progress",))
def get_gradients(key: InputKey, target: Target, steps: int,
                  progress: Progress | None = None) -> IntegratedGradients:
    """Integrated gradients of the target; ``progress`` (not part of the key) hears of each
    batch of steps, only when they are computed, not on a cache hit."""
    return integrated_gradients(get_model(key.model), key.text_a, key.text_b, steps, target,
                                key.max_length, key.truncation, progress)
