"""The corpus tokens nearest to one token of a sentence, at one layer, by exact cosine."""

from __future__ import annotations

import warnings
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import torch

from core.contexts.vectors import ContextVectors, corpus_pass, sentence_states
from core.errors import N_, InputError
from core.models import ModelBundle

RESCORE = 64   # candidates re-scored in float32 after the float16 product picks them


@dataclass(frozen=True)
class Neighbour:
    """One corpus token near the query: its sentence, position in that sentence's own encoding
    ([CLS] = 0), token, the sentence's labelled word and sense (None when unlabelled), cosine."""

    record: int
    sentence: str
    position: int
    token: str
    start: int          # the token's characters in the sentence, [start, end)
    end: int
    word: str | None
    sense: str | None
    language: str
    cosine: float


@dataclass(frozen=True)
class Query:
    """The query sentence alone through the model: (L+1, T, d) states and its tokens."""

    states: np.ndarray
    tokens: list[str]
    special: list[bool]     # [CLS], [SEP]: not a token to search from


def query_of(bundle: ModelBundle, text: str) -> Query:
    """``text`` encoded alone ([CLS] = position 0), every layer's vectors."""
    if not (text or "").strip():
        raise InputError(N_("Type a sentence to see how BERT reads it."))
    states, tokens = sentence_states(bundle, text)
    specials = set(bundle.tokenizer.all_special_tokens)
    return Query(states, tokens, [t in specials and k in (0, len(tokens) - 1)
                                  for k, t in enumerate(tokens)])


def check_position(query: Query, position: int) -> None:
    """InputError unless ``position`` is a real token of the query other than [CLS]/[SEP]."""
    if not 0 <= position < len(query.tokens) or query.special[position]:
        raise InputError(N_("Position {position} is not a word token of the sentence: pick one "
                            "from 1 to {last}."), position=position, last=len(query.tokens) - 2)


def check_layer(corpus: ContextVectors, layer: int) -> int:
    """Where ``layer`` is kept in ``corpus``; InputError when it is not."""
    return corpus.row(layer)


def nearest_to(corpus: ContextVectors, vector: np.ndarray, layer: int, k: int = 10,
               languages: Collection[str] | None = None) -> list[Neighbour]:
    """The ``k`` corpus tokens with the largest cosine to ``vector`` at ``layer``, best first.

    A float16 product over every stored token picks the best ``k + RESCORE``; their cosines are
    then computed again in float32 from the stored vectors, so each cosine is exact to the
    float16 storage (within 3e-4). ``languages`` keeps only sentences of those languages.
    Tokens are left empty (``with_tokens`` names them).
    """
    row = check_layer(corpus, layer)
    q = np.asarray(vector, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    with warnings.catch_warnings():   # read-only storage, only read here
        warnings.simplefilter("ignore", UserWarning)
        units = torch.from_numpy(corpus.units[row])                   # (N, d) float16
    scores = torch.mv(units, torch.from_numpy(q).half()).float()        # (N,)
    if languages is not None:
        allowed = np.array([r.language in languages for r in corpus.records])
        scores[~torch.from_numpy(allowed[corpus.sentence_of])] = -np.inf
    take = min(int(scores.numel()), k + RESCORE)
    if take == 0:
        return []
    candidates = torch.topk(scores, take).indices.numpy()
    exact = corpus.units[row, candidates].astype(np.float32) @ q
    keep = [c for c in candidates[np.argsort(-exact, kind="stable")]
            if np.isfinite(scores[c].item())][:k]
    cosine = dict(zip(candidates.tolist(), exact.tolist(), strict=True))
    out = []
    for c in keep:
        s = int(corpus.sentence_of[c])
        record = corpus.records[s]
        start, end = (int(x) for x in corpus.offsets[c])
        out.append(Neighbour(s, record.sentence, int(corpus.position_of[c]),
                             "", start, end,
                             record.word, record.sense, record.language, float(cosine[int(c)])))
    return out


def nearest_tokens(bundle: ModelBundle, text: str, position: int, layer: int, k: int = 10,
                   corpus: ContextVectors | None = None,
                   languages: Collection[str] | None = None) -> list[Neighbour]:
    """The ``k`` tokens of the corpus nearest, by cosine, to token ``position`` of ``text``.

    ``text`` is encoded alone and ``position`` indexes that encoding ([CLS] = 0); ``layer``
    indexes ``hidden_states`` (0 = the embedding output). Every corpus sentence was encoded
    alone too; [CLS], [SEP] and padding are never candidates. ``corpus`` is a finished
    ``corpus_pass`` (the built-in ``NEIGHBOUR_CORPUS`` through ``bundle`` when None).
    Raises InputError for an empty text, a position on [CLS]/[SEP] or outside the text, or a
    layer the model does not have.
    """
    corpus = corpus_pass(bundle) if corpus is None else corpus
    return nearest_to_query(bundle, corpus, query_of(bundle, text), position, layer, k,
                            languages)


def nearest_to_query(bundle: ModelBundle, corpus: ContextVectors, query: Query, position: int,
                     layer: int, k: int = 10, languages: Collection[str] | None = None,
                     ) -> list[Neighbour]:
    """``nearest_tokens`` for a sentence already run (``query_of``): one model run of the
    sentence serves every token and layer asked of it. Same checks, same result."""
    check_position(query, position)
    check_layer(corpus, layer)
    return with_tokens(bundle, corpus,
                       nearest_to(corpus, query.states[layer, position], layer, k, languages))


def _index(corpus: ContextVectors, n: Neighbour) -> int:
    """The stored token behind a neighbour (its record's token at its position)."""
    span = corpus.tokens_of(n.record)
    return span.start + int(np.flatnonzero(corpus.position_of[span] == n.position)[0])


def _with_token(n: Neighbour, token: str) -> Neighbour:
    return Neighbour(n.record, n.sentence, n.position, token, n.start, n.end, n.word, n.sense,
                     n.language, n.cosine)


def with_tokens(bundle: ModelBundle, corpus: ContextVectors,
                found: list[Neighbour]) -> list[Neighbour]:
    """``found`` with each neighbour's token string filled in."""
    tokens = bundle.ids_to_tokens([int(corpus.token_ids[_index(corpus, n)]) for n in found])
    return [_with_token(n, t) for n, t in zip(found, tokens, strict=True)]
