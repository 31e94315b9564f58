"""Where a word's senses come apart, layer by layer, and how alike its vectors stay.

``sense_separation``: for every labelled occurrence of a word, leave it out, take the centroid
(mean vector) of each sense over the others, and guess the sense whose centroid has the larger
cosine with it; the share guessed right, at every layer (leave-one-out nearest-centroid
accuracy). Chance is what always guessing the commonest sense scores.

``self_similarity`` (Ethayarajh 2019): the mean cosine between the word's vectors in different
sentences, read against the mean cosine of two random tokens at the same layer, the baseline the
Similarity page computes on its own corpus (core.similarity.anisotropy).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.decomposition import PCA

from core.contexts.vectors import ContextVectors, corpus_pass
from core.errors import N_, InputError
from core.models import ModelBundle
from core.similarity.anisotropy import CorpusStats, corpus_statistics


@dataclass(frozen=True)
class SenseSeparation:
    word: str
    senses: tuple[str, ...]
    counts: tuple[int, ...]     # occurrences of each sense
    layers: tuple[int, ...]     # the hidden_states measured (every layer of the model)
    accuracy: np.ndarray        # (layers,) leave-one-out nearest-centroid accuracy
    chance: float               # the commonest sense's share

    @property
    def peak_layer(self) -> int:
        """The first layer where the accuracy is highest."""
        return self.layers[int(np.argmax(self.accuracy))]


@dataclass(frozen=True)
class SelfSimilarity:
    word: str
    layer: int
    value: float        # mean cosine between the word's vectors in two different sentences
    baseline: float     # mean cosine between two random tokens (two different sentences)
    pairs: int

    @property
    def adjusted(self) -> float:
        """(value - baseline) / (1 - baseline): 0 = as alike as random tokens, 1 = identical."""
        return (self.value - self.baseline) / (1.0 - self.baseline)


def _corpus(source: ModelBundle | ContextVectors) -> ContextVectors:
    return source if isinstance(source, ContextVectors) else corpus_pass(source)


def labelled_words(corpus: ContextVectors) -> list[str]:
    """The corpus's labelled words with at least two senses found, in corpus order."""
    senses: dict[str, set[str]] = {}
    for s, record in enumerate(corpus.records):
        if record.word and record.sense and corpus.word_span[s, 0] >= 0:
            senses.setdefault(record.word, set()).add(record.sense)
    return [w for w, found in senses.items() if len(found) >= 2]


def occurrences(corpus: ContextVectors, word: str) -> list[int]:
    """The records where ``word`` is labelled and found among the tokens."""
    return [s for s, r in enumerate(corpus.records)
            if r.word == word and r.sense and corpus.word_span[s, 0] >= 0]


def occurrence_matrix(corpus: ContextVectors, records: list[int], layer: int) -> np.ndarray:
    """(n, d) the word's vector in each record at ``layer``."""
    found = [corpus.occurrence(layer, s) for s in records]
    # records come from occurrences(): the word was found in every one of them
    return np.stack([v for v in found if v is not None])


def _check_word(corpus: ContextVectors, word: str) -> list[int]:
    found = occurrences(corpus, word)
    if len({corpus.records[s].sense for s in found}) < 2:
        raise InputError(N_("“{word}” is not a labelled word of this corpus (a word with "
                            "sentences in two senses)."), word=word)
    return found


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def leave_one_out_accuracy(vectors: np.ndarray, labels: list[str]) -> float:
    """Share of rows whose label is the one whose centroid (over the other rows) has the
    largest cosine with the row. A label with no other row cannot be guessed for that row."""
    names = sorted(set(labels))
    index = np.array([names.index(x) for x in labels])
    sums = np.stack([vectors[index == j].sum(axis=0) for j in range(len(names))])
    counts = np.array([(index == j).sum() for j in range(len(names))], dtype=np.float64)
    right = 0
    for i, row in enumerate(vectors):
        own = index[i]
        best, best_cos = -1, -np.inf
        for j in range(len(names)):
            n = counts[j] - (j == own)
            if n <= 0:
                continue
            centroid = (sums[j] - (row if j == own else 0)) / n
            cos = float(_unit(centroid) @ _unit(row))
            if cos > best_cos:
                best, best_cos = j, cos
        right += best == own
    return right / len(vectors)


def sense_separation(source: ModelBundle | ContextVectors, word: str) -> SenseSeparation:
    """Leave-one-out nearest-centroid accuracy of ``word``'s senses at every layer (0 = the
    embedding output). ``source``: a finished ``corpus_pass``, or a model (the built-in corpus
    is run through it). InputError when ``word`` has no two labelled senses here."""
    corpus = _corpus(source)
    found = _check_word(corpus, word)
    labels = [corpus.records[s].sense or "" for s in found]
    accuracy = np.array([leave_one_out_accuracy(occurrence_matrix(corpus, found, layer), labels)
                         for layer in corpus.layers])
    names = sorted(set(labels))
    counts = tuple(labels.count(n) for n in names)
    return SenseSeparation(word, tuple(names), counts, corpus.layers, accuracy,
                           max(counts) / len(labels))


def mean_separation(source: ModelBundle | ContextVectors,
                    language: str | None = None) -> tuple[np.ndarray, float, list[str]]:
    """The mean over every labelled word (of ``language`` if given) of the per-layer accuracy
    and of the chance level, and the words it averaged."""
    corpus = _corpus(source)
    words = [w for w in labelled_words(corpus)
             if language is None or corpus.records[occurrences(corpus, w)[0]].language == language]
    if not words:
        raise InputError(N_("This corpus has no labelled word in two senses."))
    results = [sense_separation(corpus, w) for w in words]
    return (np.mean([r.accuracy for r in results], axis=0),
            float(np.mean([r.chance for r in results])), words)


def baseline_stage(layer: int) -> str:
    """The anisotropy statistics' name for ``hidden_states[layer]``."""
    return "LayerNorm" if layer == 0 else f"layer_{layer}"


def self_similarity(source: ModelBundle | ContextVectors, word: str, layer: int,
                    stats: CorpusStats | None = None) -> SelfSimilarity:
    """Ethayarajh's self-similarity of ``word`` at ``layer``: the mean cosine between its
    vectors in every two different sentences of the corpus, with the random-token baseline of
    ``stats`` (the Similarity page's corpus statistics; computed from the model when ``source``
    is one and ``stats`` is None, NaN otherwise)."""
    corpus = _corpus(source)
    if stats is None and isinstance(source, ModelBundle):
        stats = corpus_statistics(source)
    found = _check_word(corpus, word)
    corpus.row(layer)
    unit = _unit(occurrence_matrix(corpus, found, layer).astype(np.float64))
    n = len(unit)
    cos = unit @ unit.T
    value = float((cos.sum() - np.trace(cos)) / (n * (n - 1)))
    baseline = float("nan") if stats is None else stats.stage(baseline_stage(layer)).baseline
    return SelfSimilarity(word, layer, value, baseline, n * (n - 1) // 2)


@dataclass(frozen=True)
class Projection:
    """Points of one layer in 2D (PCA fitted on those points at that layer)."""

    records: np.ndarray         # (n,) the record of each point
    xy: np.ndarray              # (n, 2)
    explained: tuple[float, float]   # share of the variance along each axis


def project(vectors: np.ndarray, records: list[int]) -> Projection:
    """PCA of ``vectors`` to 2D, fitted on them; the sign of each axis fixed (its largest
    loading positive) so the picture does not flip from one layer to the next for nothing."""
    x = np.asarray(vectors, dtype=np.float64)
    if len(x) < 2:
        raise InputError(N_("A map needs at least two points."))
    pca = PCA(n_components=2, svd_solver="full")
    xy = pca.fit_transform(x) if len(x) > 2 else np.c_[x @ np.zeros((x.shape[1], 2))]
    components = pca.components_ if len(x) > 2 else np.zeros((2, x.shape[1]))
    for axis in range(min(2, len(components))):
        if components[axis][np.argmax(np.abs(components[axis]))] < 0:
            xy[:, axis] *= -1
    ratio = pca.explained_variance_ratio_ if len(x) > 2 else np.zeros(2)
    return Projection(np.asarray(records), xy, (float(ratio[0]), float(ratio[1])))


def word_map(corpus: ContextVectors, word: str, layer: int) -> Projection:
    """Every labelled occurrence of ``word`` at ``layer``, in 2D."""
    found = _check_word(corpus, word)
    return project(occurrence_matrix(corpus, found, layer), found)


def sentence_map(corpus: ContextVectors, layer: int, records: list[int] | None = None
                 ) -> Projection:
    """Every sentence's vector (the mean of its tokens, [CLS]/[SEP] left out) at ``layer``."""
    chosen = list(range(len(corpus.records))) if records is None else records
    chosen = [s for s in chosen if corpus.first_token[s + 1] > corpus.first_token[s]]
    return project(np.stack([corpus.sentence_vector(layer, s) for s in chosen]), chosen)
