"""Sentences for the benchmark: exact token counts, and a fresh marker word per sentence.

Every word comes from the model's own vocabulary (lowercase whole words, one token each), so a
pair of ``n`` words tokenises to exactly ``n + 3`` tokens with [CLS] and two [SEP]. Each browser
sentence starts with a *marker*: a word used by no earlier sentence and by none of the app's own
text, so "the new content is visible" can be checked by looking for the marker on the page.
"""

from __future__ import annotations

import random
import re
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


def app_words() -> set[str]:
    """Every lowercase word in the app's source, so a marker never matches the page's own text."""
    words: set[str] = set()
    for folder in ("pages", "components", "core"):
        for path in (ROOT / folder).glob("*.py"):
            words.update(w.lower() for w in re.findall(r"[A-Za-z]+", path.read_text()))
    return words


class SentenceFactory:
    """Deterministic sentences from the vocabulary; markers are never reused within a run."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, seed: int = 7) -> None:
        vocab = sorted(w for w in tokenizer.get_vocab() if _WORD.fullmatch(w))
        rng = random.Random(seed)
        rng.shuffle(vocab)
        excluded = app_words()
        # Long rare words make markers; the rest is filler, so a filler word never equals a marker.
        markers = [w for w in vocab if len(w) >= 7 and w not in excluded]
        self._markers = iter(markers)
        marker_set = set(markers)
        self._filler = [w for w in vocab if w not in marker_set]
        self._rng = rng
        self._tokenizer = tokenizer

    def words(self, n: int) -> str:
        return " ".join(self._rng.choice(self._filler) for _ in range(n))

    def sentence(self, n_words: int) -> Sentence:
        """A sentence of ``n_words`` one-token words whose first word is a fresh marker."""
        marker = next(self._markers)
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
