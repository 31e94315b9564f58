"""The blank-out test: leave each token out in turn and measure how much the target moves; then
ask how well each attribution method's token importance ranks the tokens the same way.

Each word token is left out (the input one token shorter, later positions moving up by one);
[CLS], [SEP] and the [MASK] a target predicts stay, as the model cannot do without them. Leaving
out rather than writing [MASK] is the one convention that fits every model here: the embedding
model was never trained on [MASK]. change[j] = target(input) - target(input without token j):
positive when the token helped the target. Agreement is Spearman's rank correlation
(scipy.stats.spearmanr) between a method's importance and that change over the word tokens, as
Abnar & Zuidema (2020) measured it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch
from scipy.stats import spearmanr
from transformers import PretrainedConfig

from core.attribution.targets import (
    PartBatch,
    TargetPlan,
    evaluate,
    full_batch,
    with_reference,
)
from core.errors import N_, InputError
from core.models import ModelBundle

K = TypeVar("K", bound=str)   # a method's name: a str or a Method (a StrEnum)
_TOKENS_PER_BATCH = 2048   # tokens per batched forward pass of the left-out variants
# Work budget: (tokens)^2 x layers x hidden, that of 128 tokens on the embedded model (6 layers,
# 384 wide: about a second here). bert-base (12 x 768) gets 64 tokens.
BLANK_OUT_BUDGET = 128**2 * 6 * 384

# Abnar & Zuidema (2020), Spearman with blank-out importance, their own models (not ours).
ABNAR_ZUIDEMA_2020: dict[str, str] = {
    "raw attention": "L1 .69, L3 -.11, L6 .29",
    "rollout": ".32 (L1) rising to .71 (L6)",
    "flow": "about .70",
    "fine-tuned DistilBERT (SST-2), all three": ".08 to .14",
}


@dataclass(frozen=True)
class BlankOut:
    """How much the target moves when each token is left out."""

    plan: TargetPlan
    full: float                       # the target on the whole input
    changes: tuple[np.ndarray, ...]   # per part (T,): full - target without token j; NaN: kept

    @property
    def change(self) -> np.ndarray:
        """Every part's changes, one after another (the order of ``plan.tokens``)."""
        return np.concatenate(self.changes)


def blank_out_token_limit(config: PretrainedConfig) -> int:
    """The longest input (all parts together) the blank-out test runs for with this model."""
    return max(8, int((BLANK_OUT_BUDGET / (config.num_hidden_layers * config.hidden_size))
                      ** 0.5 + 1e-9))


def check_blank_out_length(bundle: ModelBundle, plan: TargetPlan) -> None:
    limit = blank_out_token_limit(bundle.config)
    count = len(plan.tokens)
    if count > limit:
        raise InputError(
            N_("The blank-out test runs for inputs of up to {limit} tokens with {model}; this "
               "input has {count}. It runs the model once more for every token left out, so its "
               "cost grows with the square of the length. Shorten the text to see it."),
            limit=limit, model=bundle.name, count=count,
        )


@torch.inference_mode()
def blank_out(bundle: ModelBundle, plan: TargetPlan) -> BlankOut:
    """Leave out each word token of every part in turn (batched forward passes). Raises
    InputError past ``blank_out_token_limit``."""
    check_blank_out_length(bundle, plan)
    plan = with_reference(bundle, plan)
    model, heads = bundle.model, bundle.heads
    whole = [full_batch(model, plan, p) for p in range(len(plan.parts))]
    full = float(evaluate(model, heads, plan, whole)[0])
    changes = []
    for p, fixed in enumerate(plan.fixed):
        change = np.full(len(fixed), np.nan)
        left_out = np.flatnonzero(~fixed)
        t = len(fixed)
        chunk = max(1, _TOKENS_PER_BATCH // t)
        for start in range(0, len(left_out), chunk):
            drop = left_out[start:start + chunk]
            batches = list(whole)
            batches[p] = _without(whole[p], drop)
            change[drop] = full - evaluate(model, heads, plan, batches).to(torch.float64).numpy()
        changes.append(change)
    return BlankOut(plan=plan, full=full, changes=tuple(changes))


def _without(batch: PartBatch, drop: np.ndarray) -> PartBatch:
    """A batch of len(drop) copies of a one-sequence batch, copy r without token drop[r]."""
    t = batch.word_embeddings.shape[1]
    keep = torch.tensor([[i for i in range(t) if i != j] for j in drop])        # (B, T - 1)
    positions = None
    if batch.mask_positions is not None:
        m = int(batch.mask_positions[0])
        positions = torch.tensor([m - 1 if j < m else m for j in drop])
    return PartBatch(word_embeddings=batch.word_embeddings[0][keep],
                     token_type_ids=batch.token_type_ids[0][keep],
                     mask_positions=positions)


def spearman(importance: np.ndarray, change: np.ndarray) -> float:
    """Spearman's rho over the tokens with a change (not NaN); NaN for under 3 tokens or a
    constant side."""
    ok = np.isfinite(change) & np.isfinite(importance)
    if ok.sum() < 3 or np.ptp(importance[ok]) == 0 or np.ptp(change[ok]) == 0:
        return float("nan")
    return float(spearmanr(importance[ok], change[ok]).statistic)


def agreement(importances: Mapping[K, np.ndarray], change: np.ndarray) -> dict[K, np.ndarray]:
    """For each method's (L, N) importance (one row per layer), Spearman with the change per
    layer; a (N,) importance (no layers, integrated gradients) gives one value."""
    return {name: np.array([spearman(row, change) for row in np.atleast_2d(values)])
            for name, values in importances.items()}


@dataclass(frozen=True)
class Best:
    """The method (and layer) whose importance agrees best with blank-out on one input."""

    method: str
    layer: int | None     # 1-based; None for a method without layers
    rho: float


def best_agreement(table: Mapping[K, np.ndarray]) -> Best | None:
    """The highest rho in an ``agreement`` table; None when no method has one."""
    best: Best | None = None
    for name, rhos in table.items():
        for k, rho in enumerate(rhos):
            if np.isfinite(rho) and (best is None or rho > best.rho):
                best = Best(name, k + 1 if len(rhos) > 1 else None, float(rho))
    return best
