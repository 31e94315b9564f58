"""What the similarity views can compare: which stages, which token positions, which default pair.

Positions are read from the encoding alone (attention mask, special-token mask, token types), so
the views and the core agree on them without running the model.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.tokens import Encoding

# A token-type vector is one of two rows (its cosine matrix is 1 within a segment) and dropout
# only happens in training; both are on the Stages page, not worth a similarity view.
SKIPPED_STAGES = ("token_type_embeddings", "dropout")

# The path a token's vector takes from the lookup to the last layer, for the per-layer curves.
DEPTH_PREFIX = ("word_embeddings", "sum", "LayerNorm")


def similarity_stages(stage_names: Iterable[str]) -> list[str]:
    """The stages a cosine view offers, in pipeline order (lookups, sum, LayerNorm, layers)."""
    return [name for name in stage_names if name not in SKIPPED_STAGES]


def depth_stages(stage_names: Iterable[str]) -> list[str]:
    """word_embeddings, sum, LayerNorm, layer_1..N: one vector's path through the model."""
    names = list(stage_names)
    return [n for n in DEPTH_PREFIX if n in names] + [n for n in names if n.startswith("layer_")]


def real_positions(encoding: Encoding) -> list[int]:
    """Positions of real (not padding) tokens."""
    return [p for p, m in enumerate(encoding.attention_mask) if m]


def word_positions(encoding: Encoding) -> list[int]:
    """Positions of real tokens that are not [CLS], [SEP] or another special token."""
    return [
        p
        for p, (m, special) in enumerate(
            zip(encoding.attention_mask, encoding.special_tokens_mask, strict=True)
        )
        if m and not special
    ]


def is_pair(encoding: Encoding) -> bool:
    """True when the input has a sentence B (real tokens of segment 1)."""
    return bool(segment_positions(encoding, 1))


def segment_positions(encoding: Encoding, segment: int) -> list[int]:
    """Real positions of segment 0 ([CLS] A [SEP]) or segment 1 (B [SEP])."""
    return [
        p
        for p, (t, m) in enumerate(zip(encoding.token_type_ids, encoding.attention_mask,
                                       strict=True))
        if m and t == segment
    ]


def token_options(encoding: Encoding) -> tuple[list[int], list[int]]:
    """Positions offered for the first and the second token: A and B for a pair, A and A else."""
    if is_pair(encoding):
        return segment_positions(encoding, 0), segment_positions(encoding, 1)
    positions = real_positions(encoding)
    return positions, positions


def default_tokens(encoding: Encoding) -> tuple[int, int]:
    """A telling pair of positions to compare before the user picks one.

    For a pair: a word of A that also occurs in B (the "bank" of a river sentence and of a money
    sentence), else the first word of each. For one sentence: a word that occurs twice, else its
    first two words. Among shared words the longest wins, then the one with the larger id (in
    BERT's vocabularies later ids are rarer words), so "bank" beats "the" and "i".
    """
    first, second = token_options(encoding)
    words = set(word_positions(encoding))
    first_words = [p for p in first if p in words] or first
    second_words = [p for p in second if p in words] or second
    ids, tokens = encoding.input_ids, encoding.tokens
    shared = [(i, j) for i in first_words for j in second_words if i < j and ids[i] == ids[j]]
    if shared:
        return max(shared, key=lambda ij: (len(tokens[ij[0]].lstrip("#")), ids[ij[0]]))
    if is_pair(encoding):
        return first_words[0], second_words[0]
    if len(first_words) >= 2:
        return first_words[0], first_words[1]
    return first[0], first[-1]


# A same-sense control for the word the Word in context view opens on: a second sentence using
# the word as sentence A of the tutorial pair does (a river bank), so a same-sense cosine can be
# read beside the other-sense one.
CONTROL_SENTENCES = {"bank": "The boat drifted slowly towards the bank of the stream."}


def control_sentence(word: str) -> str:
    """The built-in same-sense sentence for ``word`` ("" when there is none)."""
    return CONTROL_SENTENCES.get(word.lower(), "")


def matching_position(encoding: Encoding, token_id: int) -> int | None:
    """The first real position holding ``token_id``, or None."""
    for p in word_positions(encoding):
        if encoding.input_ids[p] == token_id:
            return p
    return None
