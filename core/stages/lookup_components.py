"""The three lookups of the embedding layer compared token by token.

- per token, how large each of the three lookups is and how they point relative to each other;
- the distinct rows of the token-type lookup (one per segment).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics.pairwise import paired_cosine_distances

from core.analysis import Analysis
from core.models import ModelBundle

LOOKUPS = ("word_embeddings", "token_type_embeddings", "position_embeddings")
PAIRS = (  # the three pairs of lookups, in the order the cosine columns are reported
    ("word_embeddings", "token_type_embeddings"),
    ("word_embeddings", "position_embeddings"),
    ("token_type_embeddings", "position_embeddings"),
)


# ---------------------------------------------------------------------------------------------
# Per token: how much of the sum is word, segment and position
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LookupComparison:
    """Per token (rows), for the three lookups in LOOKUPS order and the pairs in PAIRS order."""

    norms: np.ndarray        # (T, 3) L2 norm of each lookup
    sum_norms: np.ndarray    # (T,) L2 norm of their sum
    cosines: np.ndarray      # (T, 3) cosine between the two lookups of each pair
    shares: np.ndarray       # (T, 3) c . s / |s|^2: each lookup's part of the sum; rows add to 1

    def table(self) -> np.ndarray:
        return np.column_stack([self.norms, self.sum_norms, self.cosines, self.shares]).astype(
            np.float32
        )


COMPONENT_COLUMNS = (
    "|word|", "|token_type|", "|position|", "|sum|",
    "cos(word, token_type)", "cos(word, position)", "cos(token_type, position)",
    "share word", "share token_type", "share position",
)


def compare_lookups(analysis: Analysis) -> LookupComparison:
    """Norms, pairwise cosines and shares of the three lookups for every token.

    The share of a lookup c in the sum s is its projection on s, c . s / |s|^2: the three shares
    add up to exactly 1 (their dot products with s add up to s . s) and a negative share means
    the lookup points away from the sum.
    """
    parts = {name: analysis.stages[name].astype(np.float64) for name in LOOKUPS}
    total = sum(parts.values())
    norms = np.column_stack([np.linalg.norm(parts[name], axis=1) for name in LOOKUPS])
    cosines = np.column_stack([1.0 - paired_cosine_distances(parts[a], parts[b]) for a, b in PAIRS])
    total_sq = np.einsum("th,th->t", total, total)
    safe = np.where(total_sq > 0, total_sq, 1.0)
    shares = np.column_stack(
        [np.einsum("th,th->t", parts[name], total) / safe for name in LOOKUPS]
    )
    return LookupComparison(
        norms=norms.astype(np.float32),
        sum_norms=np.sqrt(total_sq).astype(np.float32),
        cosines=cosines.astype(np.float32),
        shares=shares.astype(np.float32),
    )


# ---------------------------------------------------------------------------------------------
# Segments: the token-type lookup has one distinct row per segment
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SegmentRows:
    n_distinct: int                  # distinct rows of the token-type stage
    segments: list[int]              # token_type_id of each distinct row, ascending
    counts: list[int]                # tokens per distinct row
    table_error: float               # max |distinct row - token_type_embeddings.weight[segment]|


def segment_rows(bundle: ModelBundle, analysis: Analysis) -> SegmentRows:
    """Group the rows of the token-type stage; each distinct row is one row of the 2 x h table."""
    rows, first, counts = np.unique(
        analysis.stages["token_type_embeddings"], axis=0, return_index=True, return_counts=True
    )
    segments = [analysis.token_type_ids[i] for i in first]
    table = bundle.model.embeddings.token_type_embeddings.weight.detach().numpy()
    error = float(np.abs(rows - table[segments]).max()) if segments else 0.0
    order = np.argsort(segments)
    return SegmentRows(
        n_distinct=int(len(rows)),
        segments=[int(segments[i]) for i in order],
        counts=[int(counts[i]) for i in order],
        table_error=error,
    )
