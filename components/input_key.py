"""The one key every per-input cached function takes first: what was typed, on which model, and
how it is tokenised. Plain values only, so it hashes and compares by value across sessions."""

from __future__ import annotations

from typing import NamedTuple


class InputKey(NamedTuple):
    """The model in use, the text, and how it is tokenised (made once per run by
    ``components.inputs.shared_inputs()``)."""

    model: str               # the model actually in use (may differ from the one asked for)
    text_a: str
    text_b: str | None       # None: one sentence
    max_length: int | None = None   # None: the model's own limit (its position table)
    truncation: bool = True
    padding: bool = False    # pad to max_length, as the tutorials' padding="max_length"

    @property
    def is_pair(self) -> bool:
        return self.text_b is not None

    def with_texts(self, text_a: str, text_b: str | None = None) -> InputKey:
        """The same model and tokenizer options on other text (a sentence on its own, say)."""
        return self._replace(text_a=text_a, text_b=text_b)

    def pair(self) -> tuple[str, str]:
        """Sentences A and B, for the views that compare them (ValueError for one sentence:
        such a view is only drawn for a pair)."""
        if self.text_b is None:
            raise ValueError("this input is one sentence, not a pair")
        return self.text_a, self.text_b
