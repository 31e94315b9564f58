"""Attention rollout (Abnar & Zuidema 2020, arXiv 2005.00928) and the raw attention it starts from.

Per layer k the heads' attention is averaged, the residual connection is added as an identity
(A_k = 0.5 * mean_heads(attention_k) + 0.5 * I, rows renormalised), and the matrices are multiplied
from the first layer up: rollout[k] = A_k @ A_(k-1) @ ... @ A_1. Row i of rollout[k] says how much
of token i's vector after layer k traces back to each input token, had attention been the only
way information moves.
"""

from __future__ import annotations

import numpy as np

from core.analysis import analyze
from core.models import ModelBundle


def head_mean(attentions: np.ndarray) -> np.ndarray:
    """(L, H, T, T) attention weights -> (L, T, T) averaged over heads, in float64."""
    return np.asarray(attentions, dtype=np.float64).mean(axis=1)


def residual_attention(attentions: np.ndarray) -> np.ndarray:
    """(L, T, T) A_k = 0.5 * head mean + 0.5 * I, each row renormalised to sum to 1."""
    mean = head_mean(attentions)
    augmented = 0.5 * mean + 0.5 * np.eye(mean.shape[-1])
    return augmented / augmented.sum(axis=-1, keepdims=True)


def rollout_of(attentions: np.ndarray) -> np.ndarray:
    """(L, T, T) rollout of one input's (L, H, T, T) attention weights (float64)."""
    a = residual_attention(attentions)
    out = np.empty_like(a)
    product = np.eye(a.shape[-1])
    for k in range(a.shape[0]):
        product = a[k] @ product           # A_k @ (A_(k-1) ... A_1)
        out[k] = product
    return out


def real_attentions(attentions: np.ndarray, n_real: int) -> np.ndarray:
    """The attention among real tokens only. Padding sits at the end and gets exactly zero weight
    as a key (its score is the float minimum), so cutting it off changes no number."""
    return attentions[..., :n_real, :n_real]


def attention_rollout(bundle: ModelBundle, text_a: str, text_b: str | None = None) -> np.ndarray:
    """(L, T, T) attention rollout of one sentence or a pair ([CLS] A [SEP] B [SEP])."""
    analysis = analyze(bundle, text_a, text_b, attentions=True)
    return rollout_of(analysis.attention_weights())
