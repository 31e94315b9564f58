"""The same word across many sentences: a corpus run through the model once, its nearest
tokens at any layer, where a word's senses come apart, and maps of many sentences.

    from core import load_model
    from core.contexts import corpus_pass, nearest_tokens, sense_separation
    bundle = load_model()
    corpus = corpus_pass(bundle)            # NEIGHBOUR_CORPUS, every layer, float16
    nearest_tokens(bundle, "I sat on the bank of the river.", 5, 6, corpus=corpus)
    sense_separation(corpus, "bank").accuracy

    core.contexts.corpus_data   the built-in corpus (NEIGHBOUR_CORPUS), written for this explorer
    core.contexts.vectors       the corpus pass (ContextVectors)
    core.contexts.neighbours    nearest_tokens (nearest_to_query: a sentence already run)
    core.contexts.senses        sense_separation, self_similarity, maps (PCA per layer)
    core.contexts.user_corpus   a corpus pasted or uploaded
    core.contexts.first_look    where a look starts: the token, the word, a sentence to try
"""

from core.contexts.corpus_data import NEIGHBOUR_CORPUS, CorpusRecord
from core.contexts.first_look import Found, Start, first_word, start_token, suggestion
from core.contexts.neighbours import (
    Neighbour,
    Query,
    nearest_to,
    nearest_to_query,
    nearest_tokens,
    query_of,
)
from core.contexts.senses import (
    SelfSimilarity,
    SenseSeparation,
    labelled_words,
    mean_separation,
    self_similarity,
    sense_separation,
    sentence_map,
    word_map,
)
from core.contexts.vectors import ContextVectors, corpus_pass

__all__ = [
    "NEIGHBOUR_CORPUS", "ContextVectors", "CorpusRecord", "Found", "Neighbour", "Query",
    "SelfSimilarity", "SenseSeparation", "Start", "corpus_pass", "first_word", "labelled_words",
    "mean_separation", "nearest_to", "nearest_to_query", "nearest_tokens", "query_of",
    "self_similarity", "sense_separation", "sentence_map", "start_token", "suggestion",
    "word_map",
]
