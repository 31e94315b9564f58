"""Which characters of the input the loaded vocabulary knows, and which became [UNK].

BERT's basic tokenizer puts spaces around every CJK character, so Chinese text is split one
character a token; WordPiece then looks each character up in the vocabulary. An English vocabulary
holds few of them (all-MiniLM-L6-v2's uncased vocabulary has 244 single CJK characters), so most
Chinese characters become [UNK], which all share one row of the word table.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.tokens import Encoding


def is_cjk(ch: str) -> bool:
    """The CJK ranges BERT's tokenizer splits one character a token, as the ``tokenizers``
    library's BertNormalizer (what the app's tokenizers run) has them: the original BERT's, but
    for extension E starting at U+2B920 there, not U+2B820 (tests/test_one_is_cjk.py)."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


@dataclass(frozen=True)
class Coverage:
    """What the vocabulary made of the input's characters."""

    cjk_total: int                 # CJK characters in the input (counted with repeats)
    cjk_known: int                 # of those, how many got a token of their own
    unknown_pieces: list[str]      # the text behind every [UNK] token, in order
    unknown_cjk: list[str]         # distinct CJK characters that became [UNK], in order

    @property
    def has_unknown(self) -> bool:
        return bool(self.unknown_pieces)


def coverage(encoding: Encoding, unk_id: int | None) -> Coverage:
    """Read the [UNK] tokens of ``encoding`` back to the characters they stand for."""
    texts = {0: encoding.texts[0], 1: encoding.texts[1] or ""}
    pieces = [texts.get(seg, "")[start:end]
              for tid, (seg, start, end) in zip(encoding.input_ids, encoding.offsets, strict=True)
              if tid == unk_id and end > start]
    # Only what was kept: characters cut by truncation are not counted.
    kept = "".join(texts[seg][start:end] for (seg, start, end) in encoding.offsets if end > start)
    cjk = [ch for ch in kept if is_cjk(ch)]
    unknown = [ch for piece in pieces for ch in piece if is_cjk(ch)]
    return Coverage(
        cjk_total=len(cjk),
        cjk_known=len(cjk) - len(unknown),
        unknown_pieces=pieces,
        unknown_cjk=list(dict.fromkeys(unknown)),
    )


def visible(piece: str) -> str:
    """An [UNK] piece as readable text: invisible characters named (U+200B ...)."""
    return "".join(ch if unicodedata.category(ch)[0] not in "CZ" else f"U+{ord(ch):04X}"
                   for ch in piece)
