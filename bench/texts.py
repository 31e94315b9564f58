"""Sentences for the benchmark: exact token counts, and a fresh marker word per sentence.

Every word comes from the model's own vocabulary (lowercase whole words, one token each), so a
pair of ``n`` words tokenises to exactly ``n + 3`` tokens with [CLS] and two [SEP]. Each browser
sentence starts with a *marker*: a word in none of the app's own text and not on the page the
sentence is typed into, so "the new content is visible" can be checked by looking for the marker
on the page (bench/browser.py, bench/ws_client.py's ``expect``).

Markers never run out (``MarkerSupply``). A marker must stay one token, or the exact token counts
and the page's printed tokens would break, and the vocabulary has only about 10,000 such words
(7 letters or more, none of the app's): a full run with 100 students types more sentences than
that, and the old supply, one pass over the words, ran dry 28 minutes in (StopIteration inside
a coroutine). So the supply goes round the same shuffled words again and again, counted: any
``len(words)`` markers in a row are all different, and a word comes back only after every other
word has been used. That is all a marker needs: a page shows one sentence, its latest, and no tab
or session of the bench types 10,000 sentences of others' between two of its own. A sentence is
still new every time (the filler words after the marker are drawn at random), so a cache never
hits on it.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from transformers import PreTrainedTokenizerBase

ROOT = Path(__file__).resolve().parent.parent
SENTENCE_WORDS = 12   # a classroom sentence: 12 words, 14 tokens
_WORD = re.compile(r"[a-z]{4,12}")


@dataclass(frozen=True)
class Sentence:
    text: str
    marker: str   # a word that appears on the page only once this sentence has been analysed


APP_FOLDERS = ("pages", "components", "core", "frame", "serving")   # where on-screen text lives
MIN_MARKERS = 1000   # far more than the sessions of a class: a word is not back while on a page


def app_words() -> set[str]:
    """Every lowercase word in the app's source (pages live in subfolders: the whole tree), so a
    marker never matches the page's own text."""
    words: set[str] = set()
    for folder in APP_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            words.update(w.lower() for w in re.findall(r"[A-Za-z]+", path.read_text()))
    return words


class MarkerSupply(Iterator[str]):
    """Marker words without end: ``words`` in their order, then again from the first, by a
    counter (thread-safe in CPython: ``itertools.count`` advances under the GIL)."""

    def __init__(self, words: Sequence[str]) -> None:
        if len(set(words)) != len(words):
            raise ValueError("marker words must all be different")
        if len(words) < MIN_MARKERS:
            raise ValueError(f"{len(words)} marker words: at least {MIN_MARKERS} are needed, so "
                             "a word is not used again while a page may still show it")
        self.words = tuple(words)
        self._count = itertools.count()

    def __next__(self) -> str:
        return self.words[next(self._count) % len(self.words)]


class SentenceFactory:
    """Deterministic sentences from the vocabulary; a marker comes back only after every other
    marker word has been used (``MarkerSupply``)."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, seed: int = 7) -> None:
        vocab = sorted(w for w in tokenizer.get_vocab() if _WORD.fullmatch(w))
        rng = random.Random(seed)
        rng.shuffle(vocab)
        excluded = app_words()
        # Long rare words make markers; the rest is filler, so a filler word never equals a marker.
        markers = [w for w in vocab if len(w) >= 7 and w not in excluded]
        self.markers = MarkerSupply(markers)
        marker_set = set(markers)
        self._filler = [w for w in vocab if w not in marker_set]
        self._rng = rng
        self._tokenizer = tokenizer

    def words(self, n: int) -> str:
        return " ".join(self._rng.choice(self._filler) for _ in range(n))

    def sentence(self, n_words: int) -> Sentence:
        """A sentence of ``n_words`` one-token words whose first word is a fresh marker."""
        marker = next(self.markers)
        rest = self.words(n_words - 1)
        return Sentence(f"{marker} {rest}".strip(), marker)

    def pair(self, n_tokens: int) -> tuple[Sentence, str]:
        """Sentence A (with a marker) and sentence B that tokenise to ``n_tokens`` together."""
        n_words = n_tokens - 3
        a = self.sentence(n_words - n_words // 2)
        b = self.words(n_words // 2)
        self.check_length(a.text, b, n_tokens)
        return a, b

    def check_length(self, a: str, b: str | None, n_tokens: int) -> None:
        got = len(self._tokenizer(a, b)["input_ids"])
        if got != n_tokens:
            raise AssertionError(f"benchmark text has {got} tokens, expected {n_tokens}")
