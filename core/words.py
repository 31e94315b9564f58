"""Words, not only word pieces: the tokens of an encoding grouped into the words a reader sees.

A word is one or more consecutive positions of an encoding ([CLS] = position 0), every position
in exactly one word, in order:

- WordPiece: a token starting with "##" joins the word of the token before it
  ("st ##rum ##ming" is one word);
- Chinese: BERT reads one character a token, so the words come from a word segmenter run on the
  text itself (我爱北京天安门 is 我 / 爱 / 北京 / 天安门); the tokens are placed in the
  segmenter's words by the tokenizer's character offsets, so a character the vocabulary lacks
  ([UNK] in the embedded English model) still lands in its word;
- [CLS], [SEP] and [PAD] are words of their own; no word crosses from sentence A into B.

The views by word follow Clark et al. 2019: attention *to* a word is the sum over its pieces,
attention *from* a word the mean over its pieces, so each row still sums to 1
(``attention_by_word``); anything that adds up over tokens (an importance, a share of a cosine)
adds up over a word's pieces (``sum_by_word``).

    from core import load_model
    from core.words import words_of
    [w.text for w in words_of(load_model(), "我爱北京天安门")]
    # ['[CLS]', '我', '爱', '北京', '天安门', '[SEP]']

The segmenter is rjieba (requirements.txt says why that one), imported on first use: importing
this module loads no dictionary, prints nothing and starts no thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.models import ModelBundle
from core.tokens import Encoding, encode
from core.vocabulary import is_cjk

_SEGMENTER_IMPORT = threading.Lock()


@dataclass(frozen=True)
class Word:
    """One word of an encoding: its text and the positions of its tokens (consecutive)."""

    text: str                   # the text it covers (the token itself for [CLS], [SEP], [PAD])
    positions: tuple[int, ...]  # its tokens' positions in the encoding, in order
    segment: int = 0            # 0: sentence A (and [CLS]), 1: sentence B
    special: bool = False       # [CLS], [SEP] or [PAD]
    real: bool = True           # False for padding ([PAD], attention_mask 0)

    @property
    def start(self) -> int:
        return self.positions[0]

    def __len__(self) -> int:
        return len(self.positions)


def segment(text: str) -> list[tuple[str, int, int]]:
    """The segmenter's words of ``text`` as (word, start, end) character offsets, covering the
    whole text in order (spaces and punctuation are words of their own)."""
    with _SEGMENTER_IMPORT:   # the first import builds the dictionary (0.2 s): once
        import rjieba
    return [(w, int(s), int(e)) for w, s, e in rjieba.tokenize(text)]


def _word_of_char(text: str) -> np.ndarray:
    """(len(text),) for each character the index of the segmenter's word holding it, or -1 for
    characters of a word with no CJK character (those follow WordPiece's "##" rule instead)."""
    owner = np.full(len(text), -1, dtype=np.int64)
    if not any(is_cjk(ch) for ch in text):
        return owner   # no Chinese: the segmenter is never asked
    for k, (word, start, end) in enumerate(segment(text)):
        if any(is_cjk(ch) for ch in word):
            owner[start:end] = k
    return owner


def words_of_encoding(encoding: Encoding) -> tuple[Word, ...]:
    """The words of an encoding (one sentence or a pair, padded or not); see the module doc."""
    texts = encoding.texts
    owners = [_word_of_char(t) if t else np.zeros(0, dtype=np.int64) for t in texts]
    groups: list[list[int]] = []
    keys: list[tuple | None] = []     # the segmenter word of each group, when it has one
    for i, token in enumerate(encoding.tokens):
        special = bool(encoding.special_tokens_mask[i]) or not encoding.attention_mask[i]
        seg, start, end = encoding.offsets[i] if i < len(encoding.offsets) else (0, 0, 0)
        key = None
        if not special and end > start:
            owner = owners[seg] if seg < len(owners) else np.zeros(0, dtype=np.int64)
            inside = owner[start:end]
            if len(inside) and inside[0] >= 0:
                key = (seg, int(inside[0]))
        joins = bool(groups) and not special and keys[-1] is not None and key == keys[-1]
        if not joins and not special and token.startswith("##") and groups:
            previous = groups[-1][-1]
            joins = (not encoding.special_tokens_mask[previous]
                     and bool(encoding.attention_mask[previous])
                     and encoding.token_type_ids[previous] == encoding.token_type_ids[i])
        if joins:
            groups[-1].append(i)
            if key is not None:
                keys[-1] = key
        else:
            groups.append([i])
            keys.append(None if special else key)
    return tuple(_word(encoding, g) for g in groups)


def _word(encoding: Encoding, positions: list[int]) -> Word:
    first, last = positions[0], positions[-1]
    special = bool(encoding.special_tokens_mask[first]) or not encoding.attention_mask[first]
    segment_id = int(encoding.token_type_ids[first])
    text = encoding.tokens[first]
    if not special and first < len(encoding.offsets):
        seg, start, _ = encoding.offsets[first]
        end = encoding.offsets[last][2]
        source = encoding.texts[seg] if seg < len(encoding.texts) else None
        if source and end > start:
            text = source[start:end]
        else:
            text = "".join(encoding.tokens[p].removeprefix("##") for p in positions)
    return Word(text=text, positions=tuple(positions), segment=segment_id, special=special,
                real=bool(encoding.attention_mask[first]))


def words_of(
    bundle: ModelBundle,
    text: str,
    text_b: str | None = None,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
) -> tuple[Word, ...]:
    """The words of ``text`` (and ``text_b``, a pair) over their own encoding, tokenised as
    ``core.tokens.encode`` does. Raises InputError for text it refuses."""
    encoding = encode(bundle, text, text_b, max_length, truncation, pad_to_max_length)
    return words_of_encoding(encoding)


def membership(words: Sequence[Word], n_tokens: int | None = None) -> np.ndarray:
    """(W, T) float64: 1 where token j is a piece of word w."""
    n = n_tokens if n_tokens is not None else max(p for w in words for p in w.positions) + 1
    matrix = np.zeros((len(words), n))
    for w, word in enumerate(words):
        matrix[w, list(word.positions)] = 1.0
    return matrix


def sum_by_word(values: np.ndarray, words: Sequence[Word]) -> np.ndarray:
    """(..., T) -> (..., W): each word's value is the sum over its pieces (an importance, a share
    of a cosine), so the total over words equals the total over tokens."""
    values = np.asarray(values, dtype=np.float64)
    return values @ membership(words, values.shape[-1]).T


def attention_by_word(attention: np.ndarray, words: Sequence[Word]) -> np.ndarray:
    """(..., T, T) -> (..., W, W), Clark et al. 2019: attention to a word is the sum over its
    pieces (columns), attention from a word the mean over its pieces (rows), so a row that sums
    to 1 over tokens still sums to 1 over words. Works on (H, T, T) and (L, H, T, T) alike."""
    a = np.asarray(attention, dtype=np.float64)
    member = membership(words, a.shape[-1])                     # (W, T)
    mean_rows = member / member.sum(axis=1, keepdims=True)      # (W, T), each row sums to 1
    return mean_rows @ a @ member.T                             # (..., W, W)


def word_masks(words: Sequence[Word]) -> tuple[list[int], list[int]]:
    """(special mask, attention mask) over words, as the tokenizer gives them over tokens: for
    core.encoder's head atlas and without_specials on word attention."""
    return [int(w.special) for w in words], [int(w.real) for w in words]
