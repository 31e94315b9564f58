"""The same pairs on two models: which model's cosines follow people's scores better, and
whether the difference is more than the luck of which pairs were picked.

Each model scores every pair by its own recipe (``core.similarity.pairs.compare_pairs``); here
the two columns of cosines meet the scores. The statistic is Spearman's rank correlation (ROC
AUC when the scores are only 0 and 1), each model's and their difference, B minus A. Its 95%
interval is a paired bootstrap (Efron & Tibshirani 1993): the pairs are drawn again with
replacement, the same draw for both models, ``BOOTSTRAP_ROUNDS`` times, with a fixed generator
so a page shows the same interval every time; the interval is the middle 95% of the differences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy import stats

BOOTSTRAP_ROUNDS = 1000
BOOTSTRAP_SEED = 0
CHUNK = 100               # bootstrap rounds ranked at once (their ranks are rounds x pairs)


class Statistic(StrEnum):
    SPEARMAN = "spearman"
    AUC = "auc"


@dataclass(frozen=True)
class PairsComparison:
    """Two models' cosines against the same scores."""

    n: int                      # pairs with a score
    statistic: Statistic        # what ``a``, ``b`` and the difference measure
    a: float                    # model A's Spearman (or AUC)
    b: float
    pearson_a: float
    pearson_b: float
    low: float                  # the 95% interval of b - a
    high: float
    rounds: int
    disagree: tuple[int, ...]   # pairs whose ranks by A's and B's cosines are furthest apart
    between: float              # Spearman of A's cosines with B's: how alike the two rank

    @property
    def difference(self) -> float:
        return self.b - self.a

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis (ties share their mean rank, as Spearman's needs)."""
    return stats.rankdata(x, axis=-1)


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(rounds,) Spearman of each row of x with the same row of y: Pearson of their ranks."""
    rx, ry = _ranks(x), _ranks(y)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(-1) / np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1))


def _auc_rows(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(rounds,) ROC AUC of each row of x against the same row of 0/1 labels (Mann-Whitney:
    the chance a pair labelled 1 outranks one labelled 0, ties counting half)."""
    ranks = _ranks(x)
    positives = labels.sum(-1)
    negatives = labels.shape[-1] - positives
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((ranks * labels).sum(-1) - positives * (positives + 1) / 2) / (
            positives * negatives)


def _statistic(kind: Statistic, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _auc_rows(x, y) if kind == Statistic.AUC else _spearman_rows(x, y)


def compare_on_pairs(cosines_a: Sequence[float], cosines_b: Sequence[float],
                     scores: Sequence[float | None], rounds: int = BOOTSTRAP_ROUNDS,
                     seed: int = BOOTSTRAP_SEED, k: int = 10) -> PairsComparison | None:
    """Each model's agreement with the scores and the paired bootstrap interval of B minus A,
    over the pairs that have a score; None with fewer than 3 of them or constant values."""
    rows = np.array([i for i, s in enumerate(scores) if s is not None], dtype=np.int64)
    if len(rows) < 3:
        return None
    a = np.asarray(cosines_a, dtype=np.float64)[rows]
    b = np.asarray(cosines_b, dtype=np.float64)[rows]
    y = np.array([float(s) for s in scores if s is not None])
    if len(np.unique(y)) < 2 or len(np.unique(a)) < 2 or len(np.unique(b)) < 2:
        return None
    kind = Statistic.AUC if set(np.unique(y)) == {0.0, 1.0} else Statistic.SPEARMAN
    rng = np.random.default_rng(seed)
    differences = []
    for start in range(0, rounds, CHUNK):
        draw = rng.integers(0, len(rows), size=(min(CHUNK, rounds - start), len(rows)))
        differences.append(_statistic(kind, b[draw], y[draw]) - _statistic(kind, a[draw],
                                                                           y[draw]))
    found = np.concatenate(differences)
    found = found[np.isfinite(found)]      # a draw of one label only has no AUC
    low, high = np.percentile(found, [2.5, 97.5]) if len(found) else (np.nan, np.nan)
    return PairsComparison(
        n=len(rows), statistic=kind,
        a=float(_statistic(kind, a[None], y[None])[0]),
        b=float(_statistic(kind, b[None], y[None])[0]),
        pearson_a=float(stats.pearsonr(a, y).statistic),
        pearson_b=float(stats.pearsonr(b, y).statistic),
        low=float(low), high=float(high), rounds=len(found),
        disagree=disagreements(cosines_a, cosines_b, k),
        between=float(stats.spearmanr(cosines_a, cosines_b).statistic))


def disagreements(cosines_a: Sequence[float], cosines_b: Sequence[float], k: int = 10
                  ) -> tuple[int, ...]:
    """The k pairs whose ranks by A's and by B's cosines are furthest apart (no scores needed)."""
    gap = np.abs(_ranks(np.asarray(cosines_a, dtype=np.float64)) - _ranks(
        np.asarray(cosines_b, dtype=np.float64)))
    return tuple(int(i) for i in np.argsort(-gap, kind="stable")[:k])
