"""Tokens' data: the input's words, keyed on the InputKey first."""

from __future__ import annotations

from components.cache import get_encoding, results_cache
from components.input_key import InputKey
from core.words import Word, words_of_encoding


@results_cache("tokens: words", share=0.01, heavy=False)
def get_words(key: InputKey) -> tuple[Word, ...]:
    """The words of the input's encoding (core.words): no model run."""
    return words_of_encoding(get_encoding(key))
