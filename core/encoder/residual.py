"""How much each sub-layer changes a token: the residual stream against its two updates.

A BertLayer adds two updates to the stream it is given: the attention update
(``attention.output.dense``) to the layer input, then the feed-forward update (``output.dense``)
to ``attention.output``; LayerNorm rescales after each sum. Comparing the updates' norms with the
stream's shows how much of a token each layer rewrites: usually little, which is why a token stays
recognisable from layer to layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.encoder.steps import EncoderSteps


@dataclass(frozen=True)
class ResidualShares:
    """Per-token Euclidean norms, each (T,) float64."""

    layer_input: np.ndarray       # ‖x‖, the stream the attention update is added to
    attention_update: np.ndarray  # ‖attention.output.dense‖
    attention_output: np.ndarray  # ‖attention.output‖, the stream the FFN update is added to
    ffn_update: np.ndarray        # ‖output.dense‖

    @property
    def attention_residual_share(self) -> np.ndarray:
        """‖x‖ / (‖x‖ + ‖attention update‖): near 1 when attention barely changes the token."""
        return _share(self.layer_input, self.attention_update)

    @property
    def ffn_residual_share(self) -> np.ndarray:
        """‖attention.output‖ / (that + ‖FFN update‖), the same for the feed-forward block."""
        return _share(self.attention_output, self.ffn_update)

    def shares(self) -> np.ndarray:
        """(T, 3): layer input, attention update, FFN update, each over the sum of the three."""
        stacked = np.stack([self.layer_input, self.attention_update, self.ffn_update], axis=1)
        total = stacked.sum(1, keepdims=True)
        return np.divide(stacked, total, out=np.zeros_like(stacked), where=total > 0)


def residual_shares(steps: EncoderSteps) -> ResidualShares:
    """The norms of one layer's residual stream and of the two updates added to it."""
    s = steps.steps
    return ResidualShares(
        layer_input=_norm(steps.layer_input),
        attention_update=_norm(s["attention.output.dense"]),
        attention_output=_norm(s["attention.output"]),
        ffn_update=_norm(s["output.dense"]),
    )


def _norm(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x.astype(np.float64), axis=-1)


def _share(stream: np.ndarray, update: np.ndarray) -> np.ndarray:
    total = stream + update
    return np.divide(stream, total, out=np.zeros_like(total), where=total > 0)
