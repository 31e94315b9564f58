"""Sentence A against sentence B: sentence vectors at every stage, three ways of making them.

The figure the embedding model itself reports (sentence-transformers' recipe: A and B encoded
separately, the last layer mean-pooled and L2-normalised) is computed here too, so the curves can
be read against it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.preprocessing import normalize

from core.analysis import Analysis
from core.errors import N_, InputError, ModelLoadError
from core.models import local_folder
from core.settings import base_name
from core.similarity.choices import depth_stages, is_pair, real_positions, segment_positions


def mean_pool(analysis: Analysis, stage: str, positions: Sequence[int] | None = None) -> np.ndarray:
    """(h,) mean of the vectors at ``positions`` (default: every real token, [CLS] and [SEP] too,
    as sentence-transformers' mean pooling does with the attention mask)."""
    positions = real_positions(analysis.encoding) if positions is None else list(positions)
    return analysis.stages[stage][positions].astype(np.float64).mean(axis=0)


def sentence_embedding(analysis: Analysis) -> np.ndarray:
    """all-MiniLM's recipe: mean pooling of the last layer over real tokens, L2-normalised."""
    last = analysis.layer_names[-1]
    return normalize(mean_pool(analysis, last)[None])[0]


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(cosine_similarity(u[None], v[None])[0, 0])


@dataclass(frozen=True)
class SentenceComparison:
    """Sentence A vs sentence B at every depth stage, three ways of making a sentence vector."""

    stages: list[str]
    mean_separate: np.ndarray   # (S,) A and B run separately, mean pooling (sentence-transformers)
    cls_separate: np.ndarray    # (S,) A and B run separately, their [CLS] vectors
    mean_in_pair: np.ndarray    # (S,) one pair input, mean of each segment's real tokens
    model_figure: float         # all-MiniLM's recipe on the last layer, A and B run separately

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "stage": self.stages,
                "separately, mean pooling": self.mean_separate,
                "separately, [CLS]": self.cls_separate,
                "pair input, segment means": self.mean_in_pair,
            }
        )


def compare_sentences(pair: Analysis, alone_a: Analysis, alone_b: Analysis) -> SentenceComparison:
    """Cosine between sentence vectors of A and B at every depth stage.

    The figure the embedding model itself reports encodes A and B separately, as
    ``SentenceTransformer.encode`` does; the pair input lets A and B attend to each other.
    """
    if not is_pair(pair.encoding):
        raise InputError(N_("Comparing sentences needs a sentence B."))
    stages = depth_stages(pair.stages)
    seg_a, seg_b = segment_positions(pair.encoding, 0), segment_positions(pair.encoding, 1)
    return SentenceComparison(
        stages=stages,
        mean_separate=np.array(
            [_cosine(mean_pool(alone_a, s), mean_pool(alone_b, s)) for s in stages]
        ),
        cls_separate=np.array(
            [_cosine(alone_a.stages[s][0], alone_b.stages[s][0]) for s in stages]
        ),
        mean_in_pair=np.array(
            [_cosine(mean_pool(pair, s, seg_a), mean_pool(pair, s, seg_b)) for s in stages]
        ),
        model_figure=float(sentence_embedding(alone_a) @ sentence_embedding(alone_b)),
    )


def encoder_max_length(model_name: str) -> int | None:
    """The max_seq_length sentence-transformers uses for this model (256 for all-MiniLM-L6-v2),
    read from sentence_bert_config.json in the model's folder; None when there is none."""
    try:
        # a folder, the shipped model, or the hub's cache (a tuned copy: its base's)
        folder = local_folder(base_name(model_name))
    except (ModelLoadError, OSError, ValueError):
        return None
    if folder is None:
        return None
    config = Path(folder) / "sentence_bert_config.json"
    if not config.is_file():
        return None
    try:
        value = json.loads(config.read_text()).get("max_seq_length")
    except (OSError, ValueError):
        return None
    return int(value) if isinstance(value, int) and value > 3 else None
