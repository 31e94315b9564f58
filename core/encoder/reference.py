"""Float64 numpy formulas for the steps of one BertLayer, written out from the paper.

They run beside the torch computation in ``core.encoder.steps`` so every number the Encoder page
shows carries a live check. Each formula takes *our* output of the step before (cast to float64),
so an error shows up at the step that made it instead of spreading down the layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import erf  # scipy comes with scikit-learn, a pinned requirement

# float32's lowest value: what transformers' eager mask adds to a padded key (not -inf).
MASK_VALUE = float(np.finfo(np.float32).min)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# config.hidden_act -> its formula. Names follow transformers' ACT2FN.
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "gelu": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "gelu_python": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "gelu_fast": _gelu_tanh,
    "quick_gelu": lambda x: x * _sigmoid(1.702 * x),
    "relu": lambda x: np.maximum(x, 0.0),
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "tanh": np.tanh,
}


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """nn.Linear: x Wᵀ + b."""
    return x @ weight.T + bias


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, with the population variance as torch uses."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(T, heads * d) -> (heads, T, d)."""
    t, width = x.shape
    return x.reshape(t, heads, width // heads).transpose(1, 0, 2)


def scores(q: np.ndarray, k: np.ndarray, attention_mask: np.ndarray | Sequence[int],
           ) -> np.ndarray:
    """QKᵀ/√d per head, padded keys set to MASK_VALUE: (heads, T, d) x2 -> (heads, T, T)."""
    raw = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    real = np.asarray(attention_mask, dtype=bool)[None, None, :]  # (1, 1, T): keys
    return np.where(real, raw, raw + MASK_VALUE)


def softmax(x: np.ndarray) -> np.ndarray:
    shifted = np.exp(x - x.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def activation(name: object) -> Callable[[np.ndarray], np.ndarray] | None:
    """The formula for ``config.hidden_act``, or None when the explorer knows none for it."""
    return ACTIVATIONS.get(name) if isinstance(name, str) else None
