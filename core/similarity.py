"""Cosine similarity between token and sentence vectors, stage by stage, and how to read it.

Every cosine here is scikit-learn's ``cosine_similarity``. A raw cosine is hard to read on its
own: in the upper layers even unrelated tokens point roughly the same way (anisotropy, Ethayarajh
2019), and a few "rogue" dimensions with large values dominate the dot product (Timkey & van
Schijndel 2021). So each cosine can be read in one of three MODES, all measured against the
small built-in corpus (core.corpus) at the same stage:

    raw           the cosine of the vectors as the model gives them.
    adjusted      (raw - b) / (1 - b), where b is the mean cosine between tokens of two different
                  corpus sentences. 0 means "as alike as two unrelated tokens"; dividing by
                  (1 - b), rather than only subtracting b, keeps identical vectors at exactly 1,
                  so the diagonal of a matrix still reads 1. Negative values are less alike than
                  unrelated tokens; the scale can go below -1.
    standardised  the cosine after z-scoring each dimension with the corpus mean and standard
                  deviation at that stage, so no single dimension can dominate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.preprocessing import normalize

from core.analysis import Analysis, embedding_stages
from core.corpus import CORPUS
from core.errors import InputError, ModelLoadError
from core.models import ModelBundle, model_source
from core.tokens import Encoding

MODES = ("raw", "adjusted", "standardised")

# A token-type vector is one of two rows (its cosine matrix is 1 within a segment) and dropout
# only happens in training; both are on the Stages page, not worth a similarity view.
SKIPPED_STAGES = ("token_type_embeddings", "dropout")

# The path a token's vector takes from the lookup to the last layer, for the per-layer curves.
DEPTH_PREFIX = ("word_embeddings", "sum", "LayerNorm")


# ---------------------------------------------------------------------------------------------
# Stages and tokens


def similarity_stages(stage_names: Iterable[str]) -> list[str]:
    """The stages a cosine view offers, in pipeline order (lookups, sum, LayerNorm, layers)."""
    return [name for name in stage_names if name not in SKIPPED_STAGES]


def depth_stages(stage_names: Iterable[str]) -> list[str]:
    """word_embeddings, sum, LayerNorm, layer_1..N: one vector's path through the model."""
    names = list(stage_names)
    return [n for n in DEPTH_PREFIX if n in names] + [n for n in names if n.startswith("layer_")]


def real_positions(encoding: Encoding) -> list[int]:
    """Positions of real (not padding) tokens."""
    return [p for p, m in enumerate(encoding.attention_mask) if m]


def word_positions(encoding: Encoding) -> list[int]:
    """Positions of real tokens that are not [CLS], [SEP] or another special token."""
    return [
        p
        for p, (m, special) in enumerate(
            zip(encoding.attention_mask, encoding.special_tokens_mask, strict=True)
        )
        if m and not special
    ]


def is_pair(encoding: Encoding) -> bool:
    """True when the input has a sentence B (real tokens of segment 1)."""
    return bool(segment_positions(encoding, 1))


def segment_positions(encoding: Encoding, segment: int) -> list[int]:
    """Real positions of segment 0 ([CLS] A [SEP]) or segment 1 (B [SEP])."""
    return [
        p
        for p, (t, m) in enumerate(zip(encoding.token_type_ids, encoding.attention_mask,
                                       strict=True))
        if m and t == segment
    ]


def token_options(encoding: Encoding) -> tuple[list[int], list[int]]:
    """Positions offered for the first and the second token: A and B for a pair, A and A else."""
    if is_pair(encoding):
        return segment_positions(encoding, 0), segment_positions(encoding, 1)
    positions = real_positions(encoding)
    return positions, positions


def default_tokens(encoding: Encoding) -> tuple[int, int]:
    """A telling pair of positions to compare before the user picks one.

    For a pair: a word of A that also occurs in B (the "bank" of a river sentence and of a money
    sentence), else the first word of each. For one sentence: a word that occurs twice, else its
    first two words. Among shared words the longest wins, then the one with the larger id (in
    BERT's vocabularies later ids are rarer words), so "bank" beats "the" and "i".
    """
    first, second = token_options(encoding)
    words = set(word_positions(encoding))
    first_words = [p for p in first if p in words] or first
    second_words = [p for p in second if p in words] or second
    ids, tokens = encoding.input_ids, encoding.tokens
    shared = [(i, j) for i in first_words for j in second_words if i < j and ids[i] == ids[j]]
    if shared:
        return max(shared, key=lambda ij: (len(tokens[ij[0]].lstrip("#")), ids[ij[0]]))
    if is_pair(encoding):
        return first_words[0], second_words[0]
    if len(first_words) >= 2:
        return first_words[0], first_words[1]
    return first[0], first[-1]


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
    batch = bundle.tokenizer(
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


def cosine_matrix(
    x: np.ndarray, y: np.ndarray | None, stage: str, mode: str, stats: CorpusStats
) -> np.ndarray:
    """Cosines between the rows of x and of y (or of x with itself) at ``stage`` in ``mode``."""
    px = prepare(x, stage, mode, stats)
    py = None if y is None else prepare(y, stage, mode, stats)
    return adjust(cosine_similarity(px, py), stage, mode, stats)


def token_matrix(analysis: Analysis, stage: str, mode: str, stats: CorpusStats) -> np.ndarray:
    """(T, T) cosine between every two real tokens of the input at ``stage``."""
    x = analysis.stages[stage][real_positions(analysis.encoding)]
    return cosine_matrix(x, None, stage, mode, stats)


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
        raise InputError(f"There is no token at position {pos}.")
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
            f"Token {pos} is cut off when its sentence is run on its own "
            f"(at most {alone.encoding.max_length} tokens): compare it in the pair input instead."
        )
    return TokenRef(alone, index)


def token_curve(
    first: TokenRef, second: TokenRef, stages: Sequence[str], mode: str, stats: CorpusStats
) -> np.ndarray:
    """(S,) cosine between two tokens at each stage, in ``mode``."""
    values = [
        cosine_matrix(first.vector(s)[None], second.vector(s)[None], s, mode, stats)[0, 0]
        for s in stages
    ]
    return np.array(values, dtype=np.float64)


def dimension_contributions(
    u: np.ndarray, v: np.ndarray, stage: str, mode: str, stats: CorpusStats
) -> np.ndarray:
    """(h,) each dimension's part of cosine(u, v) in ``mode``; the parts sum to that cosine.

    A cosine is the dot product of the two unit vectors, so dimension d contributes
    unit_u[d] * unit_v[d]. For the adjusted mode the corpus baseline's own per-dimension parts
    are taken off, so the parts sum to (raw - b) / (1 - b).
    """
    unit = normalize(np.asarray(prepare(np.stack([u, v]), stage, mode, stats), dtype=np.float64))
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
    parts = dimension_contributions(u, v, stage, mode, stats)
    unit = normalize(np.asarray(prepare(np.stack([u, v]), stage, mode, stats), dtype=np.float64))
    order = np.argsort(-np.abs(parts), kind="stable")[:k]
    return pd.DataFrame(
        {
            "dimension": order,
            "contribution": parts[order],
            "first (unit vector)": unit[0, order],
            "second (unit vector)": unit[1, order],
        }
    )


def unrelated_level(stats: CorpusStats, stages: Sequence[str], mode: str) -> np.ndarray:
    """(S,) the cosine two unrelated corpus tokens have on average, read in ``mode``: the raw
    baseline, 0 for the adjusted mode (by construction), or the standardised baseline."""
    _check_mode(mode)
    if mode == "adjusted":
        return np.zeros(len(stages))
    if mode == "standardised":
        return np.array([stats.stage(s).baseline_standardised for s in stages])
    return np.array([stats.stage(s).baseline for s in stages])


# ---------------------------------------------------------------------------------------------
# Sentence vectors


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
        raise InputError("Comparing sentences needs a sentence B.")
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
        folder = Path(model_source(model_name))
    except ModelLoadError:
        return None
    config = folder / "sentence_bert_config.json"
    if not config.is_file():
        return None
    try:
        value = json.loads(config.read_text()).get("max_seq_length")
    except (OSError, ValueError):
        return None
    return int(value) if isinstance(value, int) and value > 3 else None
