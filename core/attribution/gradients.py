"""Integrated gradients (Sundararajan et al. 2017) of a target with respect to the word embeddings.

The path runs from a baseline to the input: every token's word embedding is replaced by the
[PAD] token's embedding, except the tokens the target needs as they are ([CLS], [SEP] and, for
a [MASK] prediction, that [MASK]); position and token-type embeddings are the input's own. Along
the straight line x(a) = baseline + a (input - baseline), the gradient of the target is averaged
with the trapezoid rule over ``steps`` intervals and multiplied by (input - baseline), summed
over the embedding's dimensions: one attribution per token. Completeness: the attributions sum
to target(input) - target(baseline) up to the quadrature error, which is reported.

Gradients are taken on a private deep copy of the model (made once per loaded model, its
parameters frozen): the shared model, used by every session's thread, never records a graph.
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from transformers import BertModel
from transformers.models.bert.modeling_bert import BertPreTrainingHeads

from core.attribution.targets import (
    PartBatch,
    Target,
    TargetPlan,
    default_target,
    evaluate,
    full_batch,
    pad_id,
    plan_target,
)
from core.errors import N_, InputError
from core.models import ModelBundle

MAX_STEPS = 300
BASELINE = "[PAD]"
_TOKENS_PER_BATCH = 512   # tokens per batched forward pass along the path
_PROGRESS_UPDATES = 10    # at least this many batches, so a progress bar moves

_COPIES: weakref.WeakKeyDictionary[torch.nn.Module, tuple[BertModel, BertPreTrainingHeads | None]]
_COPIES = weakref.WeakKeyDictionary()
_COPY_LOCK = threading.Lock()


@dataclass(frozen=True)
class IntegratedGradients:
    """Per-token attributions of one target for one input."""

    plan: TargetPlan
    attributions: tuple[np.ndarray, ...]   # per part (T,), float64
    target: float                          # the target on the input
    baseline_target: float                 # the target on the baseline
    steps: int
    baseline: str = BASELINE

    @property
    def kind(self) -> Target:
        return self.plan.kind

    @property
    def attributions_a(self) -> np.ndarray:
        """Sentence A's tokens ([CLS] A [SEP] of a pair input)."""
        if len(self.attributions) == 2:
            return self.attributions[0]
        return self.attributions[0][self._segment(0)]

    @property
    def attributions_b(self) -> np.ndarray | None:
        """Sentence B's tokens, None for one sentence."""
        if len(self.attributions) == 2:
            return self.attributions[1]
        segment = self._segment(1)
        return self.attributions[0][segment] if segment.any() else None

    def _segment(self, kind: int) -> np.ndarray:
        return np.asarray(self.plan.parts[0].token_type_ids) == kind

    @property
    def total(self) -> float:
        return float(sum(a.sum() for a in self.attributions))

    @property
    def completeness_gap(self) -> float:
        """|sum of attributions - (target - baseline_target)|."""
        return abs(self.total - (self.target - self.baseline_target))

    @property
    def relative_gap(self) -> float:
        """The gap as a share of |target - baseline_target| (inf when they are equal)."""
        span = abs(self.target - self.baseline_target)
        return self.completeness_gap / span if span > 0 else float("inf")


def gradient_copy(bundle: ModelBundle) -> tuple[BertModel, BertPreTrainingHeads | None]:
    """The bundle's model and heads, deep-copied once (together, so the MLM decoder stays tied
    to the copy's word embeddings), in eval mode, parameters frozen."""
    with _COPY_LOCK:
        found = _COPIES.get(bundle.model)
        if found is None:
            model, heads = copy.deepcopy((bundle.model, bundle.heads))
            for p in model.parameters():
                p.requires_grad_(False)
            if heads is not None:
                for p in heads.parameters():
                    p.requires_grad_(False)
            found = _COPIES[bundle.model] = (model, heads)
        return found


def check_steps(steps: object) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise InputError(
            N_("The number of steps must be a whole number from 1 to {limit}; “{value}” is not."),
            limit=MAX_STEPS, value=str(steps),
        )
    return steps


def trapezoid_weights(steps: int) -> np.ndarray:
    """(steps + 1,) weights of the trapezoid rule on [0, 1]."""
    weights = np.full(steps + 1, 1.0 / steps)
    weights[[0, -1]] *= 0.5
    return weights


def integrated_gradients(
    bundle: ModelBundle,
    text_a: str,
    text_b: str | None = None,
    steps: int = 50,
    target: Target | str | None = None,
    max_length: int | None = None,
    truncation: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> IntegratedGradients:
    """Integrated gradients of ``target`` (default: ``default_target(text_b)``) for the input.

    ``progress(done, total)`` is called after each of the steps + 1 gradient evaluations.
    Raises InputError / NoPretrainingHeadError, with a message, for what the target cannot take.
    """
    steps = check_steps(steps)
    plan = plan_target(bundle, target or default_target(text_b), text_a, text_b, max_length,
                       truncation)
    weights = trapezoid_weights(steps)
    # Grad mode on even when the caller is inside torch.inference_mode: a copy made there would
    # hold inference tensors, which autograd refuses.
    with torch.inference_mode(False), torch.enable_grad():
        model, heads = gradient_copy(bundle)
        inputs = [full_batch(model, plan, p) for p in range(len(plan.parts))]
        pad = model.embeddings.word_embeddings.weight[pad_id(bundle)]
        x = [b.word_embeddings.detach() for b in inputs]
        base = [torch.where(torch.from_numpy(fixed)[None, :, None], xp, pad)
                for xp, fixed in zip(x, plan.fixed, strict=True)]
        summed = [np.zeros(xp.shape[1:], dtype=np.float64) for xp in x]
        alphas = np.linspace(0.0, 1.0, steps + 1)
        values = np.empty(steps + 1)
        # Several points of the path go through the model as one batch (rows are independent),
        # far cheaper than one call each for short inputs; progress is reported per batch.
        chunk = max(1, min(_TOKENS_PER_BATCH // max(len(p.input_ids) for p in plan.parts),
                           -(-(steps + 1) // _PROGRESS_UPDATES)))
        for start in range(0, steps + 1, chunk):
            a = torch.tensor(alphas[start:start + chunk], dtype=torch.float32)[:, None, None]
            point = [(b + a * (xp - b)).requires_grad_(True) for xp, b in zip(x, base, strict=True)]
            batches = [PartBatch(p, i.token_type_ids.expand(len(a), -1),
                                 None if i.mask_positions is None
                                 else i.mask_positions.expand(len(a)))
                       for p, i in zip(point, inputs, strict=True)]
            value = evaluate(model, heads, plan, batches)
            grads = torch.autograd.grad(value.sum(), point)
            w = torch.tensor(weights[start:start + chunk], dtype=torch.float64)[:, None, None]
            for part, g in enumerate(grads):
                summed[part] += (w * g.to(torch.float64)).sum(dim=0).numpy()
            values[start:start + len(a)] = value.detach().to(torch.float64).numpy()
            if progress is not None:
                progress(min(start + chunk, steps + 1), steps + 1)
        attributions = tuple(
            ((xp[0] - b[0]).to(torch.float64).numpy() * g).sum(axis=-1)
            for xp, b, g in zip(x, base, summed, strict=True))
    return IntegratedGradients(plan=plan, attributions=attributions, target=float(values[-1]),
                               baseline_target=float(values[0]), steps=steps)
