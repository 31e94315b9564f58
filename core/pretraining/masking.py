"""BERT's masked-language-model corruption of one input, as transformers trains it.

The procedure is ``DataCollatorForLanguageModeling.torch_mask_tokens`` (transformers 5), draw for
draw, on a private ``torch.Generator`` seeded with ``seed`` (the global RNG is never touched, so
sessions cannot disturb each other and a seed always gives the same picture):

1. every position that is not special is *picked* with probability ``probability``
   (``torch.bernoulli``); the label of a picked position is its original id, -100 elsewhere, so
   the loss only counts picked positions;
2. 80% of the picked positions become [MASK];
3. half of the remaining picked positions (10% of all picked) become a random vocabulary id
   (``torch.randint(len(tokenizer))``, as the collator draws it: it may by chance be the original
   id or a special token);
4. the rest (10%) keep their token, and still have to be predicted.

"Special" is the collator's own rule when it is given no mask: every id in the tokenizer's
``all_special_ids`` ([CLS], [SEP], [PAD], and also a typed [MASK] or an [UNK]) is never picked.

``whole_word=True`` is whole-word masking, as Google's whole-word-masking BERT (2019) and the
Chinese BERT-wwm family (Cui et al. 2019) were pretrained: the words are ``core.words``' (a first
WordPiece and the "##" pieces after it; for Chinese, the word segmenter's words, one character a
token), and every step draws once per word, on its first candidate piece, so all pieces of a
word are picked, masked, randomised or kept together, and the 15% and 80/10/10 are shares of
words. (A randomised word gets a random id in each piece.) A word's special pieces (an [UNK]
among them) are never picked; a word with no other piece is no candidate. The draws are the
per-token procedure's, read at the words' first pieces: for text whose words are separated by
spaces the picked pieces are transformers 5's ``whole_word_mask=True`` for the same seed (that
one finds words from character offsets, so "test." is one word, where "##" makes "." a word of
its own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from core.errors import N_, InputError
from core.models import ModelBundle, tokenizer_lock
from core.tokens import Encoding, encode
from core.words import Word, words_of_encoding

MASK_SHARE = 0.8      # of the picked positions, replaced by [MASK]
RANDOM_SHARE = 0.1    # of the picked positions, replaced by a random id; the rest are kept
MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed takes any 64-bit value; this fits every int64

KINDS = ("mask", "random", "kept")


@dataclass(frozen=True)
class Masking:
    """One corrupted input. Every list has one entry per position of ``encoding``."""

    encoding: Encoding                # the original input (tokens, token_type_ids, ...)
    original_ids: list[int]
    input_ids: list[int]              # what the model reads: the corrupted ids
    labels: list[int]                 # the original id where picked, -100 elsewhere
    kinds: list[str | None]           # None (not picked), "mask", "random" or "kept"
    tokens: list[str]                 # the original tokens
    corrupted_tokens: list[str]       # the tokens of input_ids
    candidates: list[bool]            # positions that could be picked (not special)
    seed: int
    probability: float
    whole_word: bool
    words: tuple[Word, ...] = ()      # the encoding's words (core.words)

    @property
    def candidate_words(self) -> list[Word]:
        """The words that could be picked: those with a candidate piece."""
        return [w for w in self.words if any(self.candidates[p] for p in w.positions)]

    def word_kind(self, word: Word) -> str | None:
        """What happened to a word: its first candidate piece's kind (with ``whole_word`` every
        candidate piece of the word has that kind)."""
        return next((self.kinds[p] for p in word.positions if self.candidates[p]), None)

    def word_counts(self) -> dict[str | None, int]:
        """Candidate words by kind: None (not picked), "mask", "random", "kept"."""
        counts: dict[str | None, int] = dict.fromkeys((None, *KINDS), 0)
        for word in self.candidate_words:
            counts[self.word_kind(word)] += 1
        return counts

    @property
    def picked(self) -> list[int]:
        """The picked positions, in order."""
        return [i for i, kind in enumerate(self.kinds) if kind is not None]

    @property
    def n_candidates(self) -> int:
        return sum(self.candidates)

    @property
    def n_picked(self) -> int:
        return sum(kind is not None for kind in self.kinds)

    @property
    def n_mask(self) -> int:
        return self.kinds.count("mask")

    @property
    def n_random(self) -> int:
        return self.kinds.count("random")

    @property
    def n_kept(self) -> int:
        return self.kinds.count("kept")


def check_seed(seed: object) -> int:
    """``seed`` as an int, or an InputError: a whole number from 0 to ``MAX_SEED``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise InputError(
            N_("The seed must be a whole number from 0 to {limit}; “{value}” is not."),
            limit=f"{MAX_SEED:,}", value=str(seed),
        )
    return seed


def check_probability(probability: object) -> float:
    """``probability`` as a float, or an InputError: more than 0 and at most 1."""
    if (isinstance(probability, bool) or not isinstance(probability, (int, float))
            or not (math.isfinite(probability) and 0 < probability <= 1)):
        raise InputError(
            N_("The masking probability must be more than 0 and at most 1 (BERT uses 0.15); "
               "“{value}” is not."),
            value=str(probability),
        )
    return float(probability)


def mask_tokens(
    bundle: ModelBundle,
    text_a: str,
    text_b: str | None = None,
    seed: int = 0,
    probability: float = 0.15,
    whole_word: bool = False,
    max_length: int | None = None,
    truncation: bool = True,
    padding: bool = False,
) -> Masking:
    """Corrupt one sentence (or a pair) for masked-language-model training (see the module doc).

    The text is tokenised as ``core.tokens.encode`` does with ``max_length``, ``truncation`` and
    ``padding`` (padding is special, so never picked). The same text, options, seed, probability
    and whole_word always give the same Masking. Raises
    InputError for a seed that is not a whole number >= 0, a probability outside (0, 1], or text
    ``core.tokens.encode`` refuses.
    """
    seed = check_seed(seed)
    probability = check_probability(probability)
    encoding = encode(bundle, text_a, text_b, max_length, truncation, padding)
    with tokenizer_lock(bundle.tokenizer):
        special_ids = set(bundle.tokenizer.all_special_ids)
        mask_id = bundle.tokenizer.mask_token_id
        n_vocab = len(bundle.tokenizer)
    # An id the embedding table lacks (a tokenizer with added tokens) would crash the model.
    n_vocab = min(n_vocab, bundle.config.vocab_size)
    original = torch.tensor([encoding.input_ids], dtype=torch.long)
    candidates = [i not in special_ids for i in encoding.input_ids]
    words = words_of_encoding(encoding)
    starts = word_first_pieces(words, candidates, len(candidates)) if whole_word else None
    # Whole words: one draw per word, on its first candidate piece.
    drawn = candidates if starts is None else [s == i for i, s in enumerate(starts)]
    generator = torch.Generator().manual_seed(seed)

    # The collator's torch_mask_tokens, draw for draw (shapes (1, T) as in its batch of one).
    probabilities = torch.full(original.shape, probability)
    probabilities.masked_fill_(~torch.tensor([drawn]), value=0.0)
    picked = by_word(torch.bernoulli(probabilities, generator=generator).bool(), starts)
    labels = original.clone()
    labels[~picked] = -100
    corrupted = original.clone()
    to_mask = by_word(torch.bernoulli(torch.full(original.shape, MASK_SHARE),
                                      generator=generator).bool(), starts) & picked
    corrupted[to_mask] = mask_id
    to_random = (by_word(torch.bernoulli(torch.full(original.shape,
                                                    RANDOM_SHARE / (1 - MASK_SHARE)),
                                         generator=generator).bool(), starts)
                 & picked & ~to_mask)
    random_ids = torch.randint(n_vocab, original.shape, dtype=torch.long, generator=generator)
    corrupted[to_random] = random_ids[to_random]

    kinds: list[str | None] = [
        None if not p else "mask" if m else "random" if r else "kept"
        for p, m, r in zip(picked[0].tolist(), to_mask[0].tolist(), to_random[0].tolist(),
                           strict=True)
    ]
    corrupted_ids = corrupted[0].tolist()
    return Masking(
        encoding=encoding,
        original_ids=list(encoding.input_ids),
        input_ids=corrupted_ids,
        labels=labels[0].tolist(),
        kinds=kinds,
        tokens=list(encoding.tokens),
        corrupted_tokens=bundle.ids_to_tokens(corrupted_ids),
        candidates=candidates,
        seed=seed,
        probability=probability,
        whole_word=whole_word,
        words=words,
    )


def word_first_pieces(words: tuple[Word, ...], candidates: list[bool], n: int) -> list[int]:
    """For each position, the first candidate piece of its word (-1 for non-candidates): every
    draw of whole-word masking is read there."""
    starts = [-1] * n
    for word in words:
        pieces = [p for p in word.positions if candidates[p]]
        for p in pieces:
            starts[p] = pieces[0]
    return starts


def by_word(draw: torch.Tensor, starts: list[int] | None) -> torch.Tensor:
    """(1, T) bool: each candidate piece takes the draw of its word's first piece (``starts``
    from ``word_first_pieces``); with None, the draw itself (per-token masking)."""
    if starts is None:
        return draw
    first = draw[0].tolist()
    return torch.tensor([[s >= 0 and first[s] for s in starts]])
