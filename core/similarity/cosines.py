"""Cosine similarity between token vectors, stage by stage: token x token and word in context.

Every cosine is read in one of the modes of ``core.similarity.anisotropy`` (raw, adjusted,
standardised);
sentence vectors are in ``core.similarity.sentences``, the stage and token choices in
``core.similarity.choices``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.preprocessing import normalize

from core.analysis import Analysis
from core.errors import N_, InputError
from core.similarity.anisotropy import CorpusStats, prepare, token_cosines
from core.similarity.choices import depth_stages, real_positions, segment_positions


def token_matrix(analysis: Analysis, stage: str, mode: str, stats: CorpusStats) -> np.ndarray:
    """(T, T) cosine between every two real tokens of the input at ``stage``."""
    x = analysis.stages[stage][real_positions(analysis.encoding)]
    return token_cosines(x, None, stage, mode, stats)


# ---------------------------------------------------------------------------------------------
# Words in context


@dataclass(frozen=True)
class TokenRef:
    """One token of one analysed input: where to read its vectors."""

    analysis: Analysis
    position: int

    @property
    def token(self) -> str:
        return self.analysis.tokens[self.position]

    def vector(self, stage: str) -> np.ndarray:
        return self.analysis.stages[stage][self.position]


def separate_token(pair: Analysis, pos: int, alone_a: Analysis, alone_b: Analysis) -> TokenRef:
    """The token at pair position ``pos``, read from A or B run through the model on its own."""
    enc = pair.encoding
    real = real_positions(enc)
    if pos not in real:
        raise InputError(N_("There is no token at position {pos}."), pos=pos)
    b_start = len(segment_positions(enc, 0))
    in_a = pos < b_start
    alone = alone_a if in_a else alone_b
    segment_end = (b_start if in_a else len(real)) - 1
    if pos == segment_end:   # the segment's closing [SEP] also closes the sentence run alone
        index = len(real_positions(alone.encoding)) - 1
    else:                    # B's tokens follow A's in the pair, and B's own [CLS] when alone
        index = pos if in_a else pos - b_start + 1
    if not 0 <= index < len(alone.tokens) or alone.tokens[index] != enc.tokens[pos]:
        raise InputError(
            N_("Token {pos} is cut off when its sentence is run on its own (at most {limit} "
               "tokens): compare it in the pair input instead."),
            pos=pos, limit=alone.encoding.max_length,
        )
    return TokenRef(alone, index)


def token_curve(
    first: TokenRef, second: TokenRef, stages: Sequence[str], mode: str, stats: CorpusStats
) -> np.ndarray:
    """(S,) cosine between two tokens at each stage, in ``mode``."""
    values = [
        token_cosines(first.vector(s)[None], second.vector(s)[None], s, mode, stats)[0, 0]
        for s in stages
    ]
    return np.array(values, dtype=np.float64)


def unit_pair(u: np.ndarray, v: np.ndarray, stage: str, mode: str, stats: CorpusStats,
              ) -> np.ndarray:
    """(2, h) u and v as ``mode`` reads them (standardised or not), scaled to length 1."""
    return normalize(np.asarray(prepare(np.stack([u, v]), stage, mode, stats), dtype=np.float64))


def dimension_contributions(
    u: np.ndarray, v: np.ndarray, stage: str, mode: str, stats: CorpusStats
) -> np.ndarray:
    """(h,) each dimension's part of cosine(u, v) in ``mode``; the parts sum to that cosine.

    A cosine is the dot product of the two unit vectors, so dimension d contributes
    unit_u[d] * unit_v[d]. For the adjusted mode the corpus baseline's own per-dimension parts
    are taken off, so the parts sum to (raw - b) / (1 - b).
    """
    return _contributions(unit_pair(u, v, stage, mode, stats), stage, mode, stats)


def _contributions(unit: np.ndarray, stage: str, mode: str, stats: CorpusStats) -> np.ndarray:
    parts = unit[0] * unit[1]
    if mode == "adjusted":
        s = stats.stage(stage)
        parts = (parts - s.contributions) / (1.0 - s.baseline)
    return parts


def top_dimensions(
    u: np.ndarray, v: np.ndarray, stage: str, mode: str, stats: CorpusStats, k: int = 10
) -> pd.DataFrame:
    """The k dimensions with the largest part (either sign) in cosine(u, v), largest first,
    with the two unit vectors' values there (after standardising in that mode)."""
    unit = unit_pair(u, v, stage, mode, stats)
    parts = _contributions(unit, stage, mode, stats)
    order = np.argsort(-np.abs(parts), kind="stable")[:k]
    return pd.DataFrame(
        {
            "dimension": order,
            "contribution": parts[order],
            "first (unit vector)": unit[0, order],
            "second (unit vector)": unit[1, order],
        }
    )


# ---------------------------------------------------------------------------------------------
# When one dimension makes the cosine

DOMINANCE_LIMIT = 0.5   # flag a cosine when one dimension carries more than this share of it


@dataclass(frozen=True)
class Dominance:
    """How much of the dot product u . v (and of each squared norm) the largest dimension holds."""

    dimension: int       # the dimension with the largest |u[d] * v[d]|
    share: float         # u[d] * v[d] / (u . v): its share of the dot product
    norm_share_first: float    # u[d]^2 / |u|^2
    norm_share_second: float   # v[d]^2 / |v|^2

    @property
    def flagged(self) -> bool:
        return self.share > DOMINANCE_LIMIT


def dominance(u: np.ndarray, v: np.ndarray) -> Dominance:
    """Which dimension carries most of u . v, and its share of the dot product and of the norms."""
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    parts = u * v
    d = int(np.argmax(np.abs(parts)))
    dot = float(parts.sum())
    return Dominance(
        dimension=d,
        share=float(parts[d] / dot) if dot else 0.0,
        norm_share_first=float(u[d] ** 2 / (u @ u)) if u.any() else 0.0,
        norm_share_second=float(v[d] ** 2 / (v @ v)) if v.any() else 0.0,
    )


def standardised_cosine(u: np.ndarray, v: np.ndarray, stage: str, stats: CorpusStats) -> float:
    """cos of u and v after subtracting the corpus mean and dividing by the corpus std per
    dimension at ``stage`` (Timkey & van Schijndel 2021)."""
    return float(token_cosines(u[None], v[None], stage, "standardised", stats)[0, 0])


def cls_checks(alone_a: Analysis, alone_b: Analysis, stats: CorpusStats,
               ) -> tuple[list[Dominance], np.ndarray]:
    """Per depth stage, for the [CLS] vectors of A and B each run on its own: the dimension
    that carries most of their dot product (``dominance``), and their standardised cosine
    (``standardised_cosine``): whether a high raw [CLS] cosine is one dimension's doing."""
    stages = depth_stages(alone_a.stages)
    pairs = [(alone_a.stages[s][0], alone_b.stages[s][0]) for s in stages]
    return ([dominance(u, v) for u, v in pairs],
            np.array([standardised_cosine(u, v, s, stats)
                      for s, (u, v) in zip(stages, pairs, strict=True)]))


def norm_dominance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``x`` (T, h): the dimension with the largest |value|, and its share of the
    row's squared length, x[t, d]^2 / |x[t]|^2."""
    x = np.asarray(x, dtype=np.float64)
    dims = np.argmax(np.abs(x), axis=1)
    squared = (x * x).sum(axis=1)
    top = x[np.arange(len(x)), dims] ** 2
    return dims, np.divide(top, squared, out=np.zeros_like(top), where=squared > 0)
