"""Caching for the Contexts page.

The built-in corpus runs through each model once, as a background job on the board
(components.builtin_corpus, shared with the Compare page; the board holds the finished pass).
A user's corpus is keyed on the model, a hash of its sentences and
labels and the layers kept, so every session that brings the same corpus shares one pass; the
finished vectors move from the job into a ``results_cache`` bounded by the bytes they hold.
Per-input results (the sentence's own run, its neighbours, the token a look starts on) are
``results_cache``s keyed on the InputKey first; each is what core's public function returns
(``query_of``, ``nearest_to_query``, ``start_token``), the call a notebook makes.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from components.builtin_corpus import builtin_job, get_corpus_stats
from components.cache import get_model, results_cache
from components.input_key import InputKey
from core.contexts import corpus_pass
from core.contexts.first_look import Start, first_word, start_token
from core.contexts.neighbours import Neighbour, Query, nearest_to_query, query_of
from core.contexts.senses import (
    Projection,
    SenseSeparation,
    mean_separation,
    self_similarity,
    sense_separation,
    sentence_map,
    word_map,
)
from core.contexts.user_corpus import (
    UserCorpus,
    corpus_from,
    label_column,
    sentence_column,
    table_of_file,
    table_of_text,
)
from core.contexts.vectors import ContextVectors
from core.sentence_files.reader import Table
from core.similarity.anisotropy import CorpusStats
from serving import jobs

SHARE = 0.02            # of the results budget: one query's states, ten neighbours
CORPORA_SHARE = 0.6     # a user's corpus: up to (layers x tokens x hidden x 2) bytes


# --- a user's corpus ----------------------------------------------------------------------------

def _user_job_key(model_name: str, digest: str, layers: tuple[int, ...]) -> tuple:
    return ("contexts: your corpus", model_name, digest, layers)


def user_job(model_name: str, corpus: UserCorpus, layers: tuple[int, ...]
             ) -> jobs.Job[ContextVectors]:
    """The job for this corpus on this model: the one running or holding its result, else a
    new one (the board starts the key anew once its result was taken into the bounded cache,
    which has dropped it since, or once it failed)."""
    records = corpus.records
    return jobs.submit(_user_job_key(model_name, corpus.key(), layers),
                       lambda j: corpus_pass(get_model(model_name), records,
                                             progress=j.report, layers=layers),
                       name=f"your corpus of {len(records)} on {model_name}")


def has_user_vectors(model_name: str, corpus: UserCorpus, layers: tuple[int, ...]) -> bool:
    return (model_name, corpus.key(), layers) in get_user_vectors.store


@results_cache("contexts: your corpora", CORPORA_SHARE)
def get_user_vectors(model_name: str, digest: str, layers: tuple[int, ...]) -> ContextVectors:
    """A user's corpus on a model, taken from its finished job. LookupError (not cached) when
    no finished job holds it any more (the job lets go of it here: the cache holds the one
    copy, within its budget)."""
    job = jobs.board().get(_user_job_key(model_name, digest, layers))
    if job is None or not job.done() or job.failed:
        raise LookupError(digest)
    return job.take()   # LookupError when another session took it first


@results_cache("contexts: read corpora", 0.05, heavy=False)
def get_user_corpus(model_name: str, source: tuple[str, str | bytes],
                    columns: tuple[int | None, int | None] = (None, None)
                    ) -> tuple[Table, UserCorpus, int, int | None]:
    """The table read from pasted text (``("text", text)``) or a file (``(name, bytes)``), the
    corpus taken from it, and the sentence and label columns used (proposed where None)."""
    kind, data = source
    table = table_of_text(data) if isinstance(data, str) else table_of_file(data, kind)
    sentence = columns[0] if columns[0] is not None and columns[0] < max(1, table.width) \
        else sentence_column(table)
    label = columns[1] if columns[1] is not None else (
        label_column(table, sentence) if columns[0] is None else None)
    if label is not None and (label >= table.width or label == sentence):
        label = None
    return table, corpus_from(get_model(model_name), table, sentence, label), sentence, label


# --- views --------------------------------------------------------------------------------------

@results_cache("contexts: sentence A alone", SHARE)
def get_query(key: InputKey) -> Query:
    """Sentence A encoded alone ([CLS] = 0), every layer."""
    return query_of(get_model(key.model), key.text_a)


@results_cache("contexts: neighbours", SHARE, unkeyed=("corpus",))
def get_neighbours(key: InputKey, source: tuple, position: int, layer: int, k: int,
                   corpus: ContextVectors) -> list[Neighbour]:
    """``core.contexts.nearest_to_query``: the ``k`` tokens of ``corpus`` nearest to token
    ``position`` of sentence A at ``layer``, sentence A's run shared by every token and layer.
    ``source`` names the corpus in the key (``("built-in",)``, or a user's corpus by its
    digest and layers kept). InputError (not cached) for a position or layer core refuses."""
    return nearest_to_query(get_model(key.model), corpus, get_query(key), position, layer, k)


@results_cache("contexts: first token", SHARE, heavy=False, unkeyed=("corpus",))
def get_start(key: InputKey, source: tuple, labelled: tuple[str, ...],
              corpus: ContextVectors) -> Start:
    """``core.contexts.start_token``: the token of sentence A a look starts on, for ``corpus``
    (named by ``source`` in the key, as in get_neighbours)."""
    return start_token(get_model(key.model), get_query(key), corpus, labelled)


@st.cache_resource(max_entries=16, show_spinner=False)
def get_first_word(model_name: str, language: str) -> str | None:
    """``core.contexts.first_word``: the labelled word shown first in ``language``."""
    return first_word(get_model(model_name), language)


@st.cache_resource(max_entries=128, show_spinner=False)
def get_separation(model_name: str, word: str
                   ) -> tuple[SenseSeparation, np.ndarray, float, list[str]]:
    """On the built-in corpus (its job finished): the word's separation per layer, and the mean
    over the words of its language."""
    corpus = builtin_job(model_name).result()
    sep = sense_separation(corpus, word)
    language = next(r.language for r in corpus.records if r.word == word)
    mean, chance, words = mean_separation(corpus, language)
    return sep, mean, chance, words


@st.cache_resource(max_entries=128, show_spinner=False)
def get_self_similarity(model_name: str, word: str) -> tuple[np.ndarray, np.ndarray]:
    """On the built-in corpus: (layers,) the word's self-similarity and the random-token
    baseline at each layer."""
    corpus = builtin_job(model_name).result()
    stats: CorpusStats = get_corpus_stats(model_name)
    found = [self_similarity(corpus, word, layer, stats) for layer in corpus.layers]
    return np.array([f.value for f in found]), np.array([f.baseline for f in found])


@st.cache_resource(max_entries=256, show_spinner=False)
def get_word_map(model_name: str, word: str, layer: int) -> Projection:
    """On the built-in corpus: the word's occurrences at ``layer`` in 2D."""
    return word_map(builtin_job(model_name).result(), word, layer)


@st.cache_resource(max_entries=64, show_spinner=False)
def get_sentence_map(model_name: str, layer: int) -> Projection:
    """On the built-in corpus: every sentence at ``layer`` in 2D."""
    return sentence_map(builtin_job(model_name).result(), layer)
