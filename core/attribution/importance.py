"""One token's importance over the input tokens, per layer, from a method's (L, T, T) matrices.

Row i of a layer's matrix is what output token i draws from each input token; "the mean over
tokens" (``token=None``) averages the rows, the view that fits a mean-pooled sentence vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from core.analysis import Analysis
from core.attribution.norms import norm_weighted_of
from core.attribution.rollout import head_mean, real_attentions, rollout_of
from core.models import ModelBundle


class Method(StrEnum):
    """The attribution methods, in the order they are shown. A value is the method's English
    name, which is also its label's catalog entry (a link names a method by its label)."""

    RAW = "raw attention"
    ROLLOUT = "rollout"
    FLOW = "flow"
    NORM = "norm-weighted"
    GRADIENTS = "integrated gradients"


def token_importance(matrices: np.ndarray, token: int | None) -> np.ndarray:
    """(L, T): row ``token`` of every layer's (T, T) matrix, or the mean of the rows (None)."""
    matrices = np.asarray(matrices, dtype=np.float64)
    return matrices.mean(axis=1) if token is None else matrices[:, token]


def shares(importance: np.ndarray) -> np.ndarray:
    """Each row scaled to sum to 1 (norms are sizes, not shares; ranks are unchanged)."""
    total = importance.sum(axis=-1, keepdims=True)
    return np.divide(importance, total, out=np.zeros_like(importance), where=total > 0)


@dataclass(frozen=True)
class AttentionMethods:
    """The attention-based methods of one input, over its real tokens (float64, (L, T, T))."""

    raw: np.ndarray        # attention averaged over heads
    rollout: np.ndarray
    norm: np.ndarray | None = None   # ||sum_h alpha f(x)||, when asked for

    def matrices(self) -> dict[Method, np.ndarray]:
        out = {Method.RAW: self.raw, Method.ROLLOUT: self.rollout}
        if self.norm is not None:
            out[Method.NORM] = self.norm
        return out

    def importance(self, token: int | None) -> dict[Method, np.ndarray]:
        """(L, T) what output token ``token`` (None: the mean over tokens) draws from each input
        token, per method; norm-weighted attention as shares, as the other two are."""
        return {method: shares(token_importance(m, token)) if method == Method.NORM
                else token_importance(m, token) for method, m in self.matrices().items()}


def attention_methods(bundle: ModelBundle, analysis: Analysis, norm: bool = True,
                      ) -> AttentionMethods:
    """Raw attention, rollout and (``norm``) norm-weighted attention of an analysis made with
    ``attentions=True``, cut to its real tokens."""
    n = analysis.encoding.n_real
    attentions = real_attentions(analysis.attention_weights(), n)
    weighted = None
    if norm:
        weighted = norm_weighted_of(bundle, analysis, per_head=False).layer[:, :n, :n]
        weighted = weighted.astype(np.float64)
    return AttentionMethods(raw=head_mean(attentions), rollout=rollout_of(attentions),
                            norm=weighted)
