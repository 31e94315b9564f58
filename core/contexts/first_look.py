"""Where a look at one word across many sentences starts: which token of a sentence to search
from first, which labelled word to show first in a language, and a sentence to suggest when the
one typed gives little to see.

A sentence's first token is often a function word ("this", "the", 的): its nearest corpus
tokens are copies of itself whatever the layer, which teaches nothing. So the start is the first
token that is a word the corpus holds in two senses, else the first content word the corpus
holds at all, else the first function word it holds, else the first word token.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from core.contexts.corpus_data import NEIGHBOUR_CORPUS, CorpusRecord
from core.contexts.neighbours import Query
from core.contexts.vectors import ContextVectors
from core.models import ModelBundle

# Words that carry grammar more than meaning (English, and common Chinese particles, pronouns
# and measure words): searched from, their neighbours are copies of themselves at every layer.
FUNCTION_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves
的 了 是 在 我 你 他 她 它 们 这 那 和 与 就 都 也 很 个 一 不 吗 呢 吧 啊 着 过 把 被 给 对 从 到
""".split())
# Sentences not in the corpus, each holding a word it has in two senses (a shareable first look).
SUGGESTIONS = {
    "en": "We walked along the bank of the river.",
    "zh": "公园里的花很好看。",
}
_WORDLIKE = re.compile(r"\w", re.UNICODE)


class Found(IntEnum):
    """How good a start the chosen token is, best last."""

    NO_WORD = 0        # the sentence has no word token at all
    NOT_IN_CORPUS = 1  # no token of the sentence occurs in the corpus: its first word token
    FUNCTION_WORD = 2  # only function words of the sentence occur in the corpus
    CONTENT_WORD = 3   # a content word the corpus holds
    TWO_SENSES = 4     # a word the corpus holds in two senses (a labelled word)


@dataclass(frozen=True)
class Start:
    """The token to search from first: its position in the sentence's own encoding ([CLS] =
    0; None when there is no word token) and how good a start it is."""

    position: int | None
    found: Found


def _piece(token: str) -> str:
    return token[2:] if token.startswith("##") else token


def _labelled_at(tokens: Sequence[str], position: int, labelled: set[str]) -> bool:
    """Does a labelled word start at ``position``: its token alone, or with the pieces after it
    (a Chinese word read one character a token, an English word cut into pieces)?"""
    text = ""
    for token in tokens[position:position + 4]:
        text += _piece(token).lower()
        if text in labelled:
            return True
    return False


def start_token(bundle: ModelBundle, query: Query, corpus: ContextVectors,
                labelled: Collection[str]) -> Start:
    """The first token of ``query`` that is a word of ``labelled`` (a word the corpus holds in
    two senses); else its first content word whose token occurs in ``corpus``; else its first
    function word that does; else its first word token. [CLS], [SEP], [UNK], punctuation and a
    word's later pieces (##...) are never chosen before a word."""
    options = [p for p, special in enumerate(query.special) if not special]
    if not options:
        return Start(None, Found.NO_WORD)
    words = {w.lower() for w in labelled}
    unk = bundle.tokenizer.unk_token
    in_corpus = set(bundle.ids_to_tokens(np.unique(corpus.token_ids).tolist()))

    def wordlike(p: int) -> bool:
        token = query.tokens[p]
        return token != unk and not token.startswith("##") and bool(_WORDLIKE.search(token))

    candidates = [p for p in options if wordlike(p)]
    for p in candidates:
        if _labelled_at(query.tokens, p, words):
            return Start(p, Found.TWO_SENSES)
    held = [p for p in candidates if query.tokens[p] in in_corpus]
    content = [p for p in held if query.tokens[p].lower() not in FUNCTION_WORDS]
    if content:
        return Start(content[0], Found.CONTENT_WORD)
    if held:
        return Start(held[0], Found.FUNCTION_WORD)
    return Start((candidates or options)[0], Found.NOT_IN_CORPUS)


def first_word(bundle: ModelBundle, language: str,
               records: Sequence[CorpusRecord] = NEIGHBOUR_CORPUS) -> str | None:
    """The first labelled word of ``language`` that ``bundle`` reads without [UNK] (so its
    vectors can differ by sense from the first layer on), else the language's first labelled
    word; None when the corpus has none in that language."""
    words = list(dict.fromkeys(r.word for r in records if r.word and r.language == language))
    unk = bundle.tokenizer.unk_token
    for word in words:
        ids = bundle.tokenize(word, add_special_tokens=False)["input_ids"]
        if ids and unk not in bundle.ids_to_tokens(ids):
            return word
    return words[0] if words else None


def suggestion(language: str) -> str:
    """A sentence to try in ``language`` (English where there is none in that language)."""
    return SUGGESTIONS.get(language, SUGGESTIONS["en"])
