"""Text to model inputs: tokens, input_ids, token_type_ids, position_ids and attention_mask."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.errors import N_, InputError
from core.settings import MAX_CHARS

# Types only: encoding needs no model (a fresh server tokenises from the files alone,
# core.tokenizer_files), and importing core.models' users would pull in torch.
if TYPE_CHECKING:
    from core.models import ModelBundle
    from core.tokenizer_files import TokenizerFiles


@dataclass(frozen=True)
class Encoding:
    """One (possibly padded) sequence, one entry per position in every list."""

    tokens: list[str]
    input_ids: list[int]
    token_type_ids: list[int]
    position_ids: list[int]
    attention_mask: list[int]
    special_tokens_mask: list[int]
    offsets: list[tuple[int, int, int]] = field(default_factory=list)  # (segment, start, end)
    truncated: int = 0          # tokens cut to fit max_length
    full_length: int = 0        # tokens the text would have without truncation
    chars_cut: int = 0          # characters cut by the MAX_CHARS cap before tokenising
    max_length: int = 512
    warnings: list[str] = field(default_factory=list)
    texts: tuple[str, str | None] = ("", None)   # the texts tokenised, after the character cap

    @property
    def n_real(self) -> int:
        return sum(self.attention_mask)

    @property
    def n_padding(self) -> int:
        return len(self.attention_mask) - self.n_real


def clean_texts(text_a: str | None, text_b: str | None) -> tuple[str, str | None, int]:
    """Check the two texts and cap their length. Returns (a, b or None, characters cut)."""
    a = text_a or ""
    b = text_b or ""
    if not a.strip():
        if b.strip():
            raise InputError(
                N_("Sentence B needs a sentence A: type sentence A first, or move B to A.")
            )
        raise InputError(N_("Type a sentence to see how BERT reads it."))
    cut = 0
    if len(a) > MAX_CHARS:
        cut += len(a) - MAX_CHARS
        a = a[:MAX_CHARS]
    if len(b) > MAX_CHARS:
        cut += len(b) - MAX_CHARS
        b = b[:MAX_CHARS]
    return a, (b if b.strip() else None), cut


def _visible(text: str) -> bool:
    """True if the text holds something other than white space, control or format characters."""
    return any(not ch.isspace() and unicodedata.category(ch)[0] not in "CZ" for ch in text)


def encode(
    bundle: ModelBundle | TokenizerFiles,
    text_a: str,
    text_b: str | None = None,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
) -> Encoding:
    """Tokenise one sentence or a pair as BERT's tokenizer does, and say what was cut.

    ``bundle``: a loaded model, or its tokenizer read from its files alone
    (``core.tokenizer_files.read_files``), which gives the same Encoding."""
    a, b, chars_cut = clean_texts(text_a, text_b)
    limit = bundle.config.max_position_embeddings
    max_length = min(int(max_length or limit), limit)
    if max_length < (4 if b else 3):
        raise InputError(
            N_("Max length {max_length} leaves no room for tokens next to [CLS] and [SEP]."),
            max_length=max_length,
        )
    # Both calls go through the bundle's lock: the tokenizer keeps truncation and padding as
    # shared state (core.models.tokenizer_lock). The first asks for every field: an input that
    # fits unpadded is then complete, and the second call (half a short text's time) is not made.
    fields = {"return_token_type_ids": True, "return_attention_mask": True,
              "return_special_tokens_mask": True, "return_offsets_mapping": True}
    full = bundle.tokenize(a, b, add_special_tokens=True, truncation=False, **fields)
    full_length = len(full["input_ids"])
    if full_length > max_length and not truncation:
        raise InputError(
            N_("The text has {count} tokens but the limit is {limit}. "
               "Turn truncation on, raise the max length, or shorten the text."),
            count=f"{full_length:,}", limit=f"{max_length:,}",
        )
    enc = full if full_length <= max_length and not pad_to_max_length else bundle.tokenize(
        a,
        b,
        add_special_tokens=True,
        truncation="longest_first" if full_length > max_length else False,
        max_length=max_length,
        padding="max_length" if pad_to_max_length else False,
        **fields,
    )
    ids = list(enc["input_ids"])
    kept = sum(enc["attention_mask"])
    warnings = []
    if not _visible(a) or (b is not None and not _visible(b)):
        warnings.append(N_(
            "Part of the text is only spaces, control or zero-width characters: "
            "BERT's tokenizer drops those, so they get no token."
        ))
    return Encoding(
        tokens=bundle.ids_to_tokens(ids),
        input_ids=ids,
        token_type_ids=list(enc["token_type_ids"]),
        position_ids=list(range(len(ids))),
        attention_mask=list(enc["attention_mask"]),
        special_tokens_mask=list(enc["special_tokens_mask"]),
        offsets=[(seg, start, end) for seg, (start, end)
                 in zip(enc["token_type_ids"], enc["offset_mapping"], strict=True)],
        truncated=full_length - kept,
        full_length=full_length,
        chars_cut=chars_cut,
        max_length=max_length,
        warnings=warnings,
        texts=(a, b),
    )
