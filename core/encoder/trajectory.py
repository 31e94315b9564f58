"""One token's path through the encoder: how long its vector is and how much each layer turns it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.analysis import Analysis
from core.errors import N_, InputError

INPUT_STAGE = "LayerNorm"  # the embeddings' output, hidden_states[0]: what layer 1 reads


@dataclass(frozen=True)
class TokenTrajectory:
    """Per stage (the input embedding, then layer_1..layer_N), each array (N + 1,) float64."""

    position: int
    token: str
    stages: tuple[str, ...]  # "LayerNorm", "layer_1", ..., "layer_N"
    norm: np.ndarray         # ‖h‖
    cos_prev: np.ndarray     # cos(h, h one stage earlier); NaN for the input embedding
    cos_input: np.ndarray    # cos(h, input embedding); 1 for the input embedding itself


def token_trajectory(analysis: Analysis, position: int) -> TokenTrajectory:
    """The norm of one token's vector at every stage and its cosines to the stage before and to
    its input embedding: a cosine near 1 means the layer kept the direction it was given."""
    n_tokens = len(analysis.tokens)
    if isinstance(position, bool) or not isinstance(position, int | np.integer) \
            or not 0 <= position < n_tokens:
        raise InputError(
            N_("There is no token at position {pos}: this input has positions 0 to {last}."),
            pos=position, last=n_tokens - 1,
        )
    stages = (INPUT_STAGE, *analysis.layer_names)
    vectors = np.stack([analysis.stages[s][position] for s in stages]).astype(np.float64)
    norm = np.linalg.norm(vectors, axis=1)  # (N + 1,)
    cos_prev = np.full(len(stages), np.nan)
    cos_prev[1:] = _cosine(vectors[1:], vectors[:-1], norm[1:], norm[:-1])
    cos_input = _cosine(vectors, vectors[:1], norm, norm[:1])
    return TokenTrajectory(
        position=int(position),
        token=analysis.tokens[position],
        stages=stages,
        norm=norm,
        cos_prev=cos_prev,
        cos_input=cos_input,
    )


def _cosine(a: np.ndarray, b: np.ndarray, norm_a: np.ndarray, norm_b: np.ndarray) -> np.ndarray:
    """Row-wise cosine; NaN where a vector is zero (no direction to compare)."""
    denom = norm_a * norm_b
    dots = (a * b).sum(-1)
    return np.divide(dots, denom, out=np.full_like(dots, np.nan), where=denom > 0)
