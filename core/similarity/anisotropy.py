"""How alike unrelated vectors are at each stage (anisotropy), and cosines read against it.

A raw cosine is hard to read on its own: in the upper layers even unrelated tokens point roughly
the same way (anisotropy, Ethayarajh 2019), and a few "rogue" dimensions with large values
dominate the dot product (Timkey & van Schijndel 2021). So each cosine can be read in one of
three MODES, all measured against the small built-in corpus (core.corpus) at the same stage:

    raw           the cosine of the vectors as the model gives them.
    adjusted      (raw - b) / (1 - b), where b is the mean cosine between tokens of two different
                  corpus sentences. 0 means "as alike as two unrelated tokens"; dividing by
                  (1 - b), rather than only subtracting b, keeps identical vectors at exactly 1,
                  so the diagonal of a matrix still reads 1. Negative values are less alike than
                  unrelated tokens; the scale can go below -1.
    standardised  the cosine after z-scoring each dimension with the corpus mean and standard
                  deviation at that stage, so no single dimension can dominate.

Every cosine here is scikit-learn's ``cosine_similarity``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.preprocessing import normalize

from core.analysis import embedding_stages
from core.corpus import CORPUS
from core.models import ModelBundle, model_run
from core.similarity.choices import similarity_stages

MODES = ("raw", "adjusted", "standardised")


# ---------------------------------------------------------------------------------------------
# The corpus baseline


@dataclass(frozen=True)
class StageStats:
    """What the corpus says about one stage: how alike unrelated vectors are there."""

    mean: np.ndarray           # (h,) mean of each dimension over the corpus word tokens
    std: np.ndarray            # (h,) population std of each dimension; 1 where it is constant
    baseline: float            # mean raw cosine between word tokens of two different sentences
    baseline_standardised: float   # the same after standardising every dimension
    contributions: np.ndarray  # (h,) each dimension's part of `baseline`; sums to it
    sentence_baseline: float   # mean cosine between mean-pooled vectors of two corpus sentences
    cls_baseline: float        # mean cosine between the [CLS] vectors of two corpus sentences


@dataclass(frozen=True)
class CorpusStats:
    model_name: str
    n_sentences: int
    n_tokens: int      # word tokens (no [CLS]/[SEP]) over the whole corpus
    n_pairs: int       # unordered pairs of word tokens from two different sentences
    stages: dict[str, StageStats]

    def stage(self, name: str) -> StageStats:
        if name not in self.stages:
            raise ValueError(f"No corpus statistics for stage {name!r}.")
        return self.stages[name]


def _off_diagonal_mean(matrix: np.ndarray) -> float:
    n = matrix.shape[0]
    return float((matrix.sum() - np.trace(matrix)) / (n * (n - 1)))


@dataclass(frozen=True)
class CorpusVectors:
    """Every corpus sentence's vectors at every stage, real tokens only."""

    stages: dict[str, list[np.ndarray]]   # stage -> one (T_s, h) array per sentence
    words: list[np.ndarray]               # per sentence, the rows that are word tokens


@torch.inference_mode()
def corpus_vectors(bundle: ModelBundle, sentences: Sequence[str] = CORPUS) -> CorpusVectors:
    """Run the corpus through the model in one padded batch (one pass instead of one per
    sentence), with the same stage names as ``core.analysis``."""
    batch = bundle.tokenize(
        list(sentences),
        padding=True,
        truncation=True,
        return_tensors="pt",
        return_token_type_ids=True,
        return_special_tokens_mask=True,
    )
    n, t = batch["input_ids"].shape
    inputs = {
        "input_ids": batch["input_ids"],
        "token_type_ids": batch["token_type_ids"],
        "position_ids": torch.arange(t).expand(n, t),
        "attention_mask": batch["attention_mask"],
    }
    tensors = embedding_stages(bundle, inputs)  # (n, t, h) each
    with model_run():
        out = bundle.model(**inputs, output_hidden_states=True, return_dict=True)
    for k, hidden in enumerate(out.hidden_states[1:], start=1):
        tensors[f"layer_{k}"] = hidden
    lengths = batch["attention_mask"].sum(dim=1).tolist()
    special = batch["special_tokens_mask"].numpy()
    return CorpusVectors(
        stages={
            name: [tensors[name][k, :length].float().numpy() for k, length in enumerate(lengths)]
            for name in similarity_stages(tensors)
        },
        words=[np.flatnonzero(special[k, :length] == 0) for k, length in enumerate(lengths)],
    )


def corpus_statistics(bundle: ModelBundle, sentences: Sequence[str] = CORPUS) -> CorpusStats:
    """Per-stage mean, std and anisotropy baselines of the built-in corpus (one run per model).

    The baseline is the exact mean over every pair of word tokens taken from two different
    sentences, which is what sampling random pairs estimates, without the sampling noise.
    """
    vectors = corpus_vectors(bundle, sentences)
    sentence_of = np.concatenate([np.full(len(w), k) for k, w in enumerate(vectors.words)])
    other = (sentence_of[:, None] != sentence_of[None, :]).astype(np.float64)  # (N, N) pair mask
    n_other = other.sum()
    stages: dict[str, StageStats] = {}
    for stage, per_sentence in vectors.stages.items():
        x = np.concatenate([v[w] for v, w in zip(per_sentence, vectors.words, strict=True)])
        x = x.astype(np.float64)  # (N, h) word tokens of all sentences
        mean = x.mean(axis=0)
        std = x.std(axis=0)
        std = np.where(std > 0, std, 1.0)
        unit = normalize(x)
        # per dimension d: mean over pairs (p, q) from different sentences of unit[p,d]*unit[q,d]
        contributions = ((other @ unit) * unit).sum(axis=0) / n_other
        pooled = np.stack([v.astype(np.float64).mean(axis=0) for v in per_sentence])
        cls = np.stack([v[0] for v in per_sentence]).astype(np.float64)
        stages[stage] = StageStats(
            mean=mean,
            std=std,
            baseline=float((cosine_similarity(x) * other).sum() / n_other),
            baseline_standardised=float(
                (cosine_similarity((x - mean) / std) * other).sum() / n_other
            ),
            contributions=contributions,
            sentence_baseline=_off_diagonal_mean(cosine_similarity(pooled)),
            cls_baseline=_off_diagonal_mean(cosine_similarity(cls)),
        )
    return CorpusStats(
        model_name=bundle.name,
        n_sentences=len(sentences),
        n_tokens=len(sentence_of),
        n_pairs=int(n_other) // 2,
        stages=stages,
    )


def anisotropy_table(stats: CorpusStats, stages: Sequence[str]) -> pd.DataFrame:
    """One row per stage: the three corpus baselines."""
    return pd.DataFrame(
        {
            "stage": list(stages),
            "random tokens, raw": [stats.stage(s).baseline for s in stages],
            "random tokens, standardised": [stats.stage(s).baseline_standardised for s in stages],
            "random sentences, mean pooling": [stats.stage(s).sentence_baseline for s in stages],
            "random sentences, [CLS]": [stats.stage(s).cls_baseline for s in stages],
        }
    )


def rogue_dimensions(stats: CorpusStats, stage: str, k: int = 5) -> pd.DataFrame:
    """The k dimensions that make up most of the corpus baseline at ``stage``."""
    st_ = stats.stage(stage)
    order = np.argsort(-np.abs(st_.contributions))[:k]
    return pd.DataFrame(
        {
            "dimension": order,
            "part of the baseline": st_.contributions[order],
            "share": st_.contributions[order] / st_.baseline,
            "corpus mean": st_.mean[order],
            "corpus std": st_.std[order],
        }
    )


# ---------------------------------------------------------------------------------------------
# Cosines in the three modes


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose one of {', '.join(MODES)}.")


def prepare(x: np.ndarray, stage: str, mode: str, stats: CorpusStats) -> np.ndarray:
    """The vectors a cosine is taken of: standardised with corpus statistics, or as they are."""
    _check_mode(mode)
    if mode == "standardised":
        s = stats.stage(stage)
        return (np.asarray(x, dtype=np.float64) - s.mean) / s.std
    return np.asarray(x)


def adjust(cosines: np.ndarray, stage: str, mode: str, stats: CorpusStats) -> np.ndarray:
    """Baseline-adjust raw cosines, (raw - b) / (1 - b); other modes pass through."""
    _check_mode(mode)
    if mode == "adjusted":
        b = stats.stage(stage).baseline
        return (np.asarray(cosines, dtype=np.float64) - b) / (1.0 - b)
    return cosines


def token_cosines(
    x: np.ndarray, y: np.ndarray | None, stage: str, mode: str, stats: CorpusStats
) -> np.ndarray:
    """Cosines between the rows of x and of y (or of x with itself) at ``stage`` in ``mode``."""
    px = prepare(x, stage, mode, stats)
    py = None if y is None else prepare(y, stage, mode, stats)
    return adjust(cosine_similarity(px, py), stage, mode, stats)


def unrelated_level(stats: CorpusStats, stages: Sequence[str], mode: str) -> np.ndarray:
    """(S,) the cosine two unrelated corpus tokens have on average, read in ``mode``: the raw
    baseline, 0 for the adjusted mode (by construction), or the standardised baseline."""
    _check_mode(mode)
    if mode == "adjusted":
        return np.zeros(len(stages))
    if mode == "standardised":
        return np.array([stats.stage(s).baseline_standardised for s in stages])
    return np.array([stats.stage(s).baseline for s in stages])
