"""Comparing sentence pairs: which token pairs make two sentences alike, and many pairs at once.

For a mean-pooling model (all-MiniLM-L6-v2) the sentence vector is the mean of the token vectors,
L2-normalised, so with ā = (1/n) Σ h_i and b̄ = (1/m) Σ g_j the cosine splits exactly into one
term per token pair, at every layer, with no gradients:

    cos(ā, b̄) = Σ_ij c_ij,   c_ij = h_i · g_j / (n · m · ‖ā‖ · ‖b̄‖)

A and B are encoded separately, as ``SentenceTransformer.encode`` does, every real token
([CLS] and [SEP] too) in the mean, cut at sentence-transformers' max_seq_length (256 for
all-MiniLM-L6-v2). A model without that recipe (bert-base-uncased has no pooling of its own) gets
the same mean-pooled recipe, and ``own_recipe`` says it is not the model's own.

``compare_pairs`` and a pair's headline figure (``PairContributions.model_cosine``) use each
model's own recipe (core.similarity.recipe: [CLS], mean, max, ... pooling, its prompt, its
max_seq_length), so the figure is the one ``SentenceTransformer.encode`` gives on its folder. Only
mean pooling splits exactly into token pairs; for other recipes the split shown is of the mean.

    pair_contributions(bundle, "I love this movie", "I do not love this movie").matrix.sum()
    compare_pairs(bundle, [("A man eats.", "A man is eating food.")])["cosine"]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from core.analysis import Analysis, analyze
from core.errors import ModelLoadError
from core.models import ModelBundle, local_folder, model_run
from core.settings import base_name
from core.similarity.choices import real_positions
from core.similarity.recipe import MEAN_RECIPE, Recipe, pool, read_recipe
from core.similarity.sentences import encoder_max_length
from core.words import Word, membership, words_of_encoding

BATCH_SIZE = 64          # sentences per forward pass in compare_pairs
CHUNK_PAIRS = 1024       # pairs whose sentence vectors compare_pairs holds at once
RANKED = 4               # tokens a sentence needs before its two rankings are compared


def own_recipe(model_name: str) -> bool:
    """True when the model's folder says its sentence vector is the mean of its token vectors
    (sentence-transformers' modules.json with mean pooling alone and no prompt), as the shipped
    all-MiniLM-L6-v2 does: then the token-pair split is of the model's own figure."""
    recipe = recipe_of(model_name)
    return recipe.own and recipe.mean_only


def recipe_of(model_name: str) -> Recipe:
    """The model's own sentence recipe from its folder's sentence-transformers files; mean
    pooling (``own`` False) when it has none or is not on this machine."""
    try:
        return read_recipe(local_folder(base_name(model_name)))
    except (ModelLoadError, OSError, ValueError):
        return MEAN_RECIPE


def sentence_limit(bundle: ModelBundle, recipe: Recipe | None = None) -> int:
    """Tokens a sentence keeps: sentence-transformers' max_seq_length, else the position table."""
    table = int(bundle.config.max_position_embeddings)
    limit = recipe.max_seq_length if recipe is not None else encoder_max_length(bundle.name)
    return min(limit or table, table)


def layer_stage(analysis: Analysis, layer: int | None) -> tuple[int, str]:
    """(k, stage name) of ``hidden_states[k]``: 0 is the embedding output (LayerNorm), k the
    output of encoder layer k, None the last layer."""
    layers = len(analysis.layer_names)
    k = layers if layer is None else int(layer)
    if not 0 <= k <= layers:
        raise ValueError(f"layer {layer} is not in 0..{layers}")
    return k, ("LayerNorm" if k == 0 else f"layer_{k}")


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _leave_one_out(x: np.ndarray, other_mean: np.ndarray) -> np.ndarray:
    """(n,) cosine of the other sentence's mean with this sentence's mean, each token left out
    in turn (NaN for a sentence of one token, which has nothing left)."""
    n = len(x)
    if n < 2:
        return np.full(n, np.nan)
    rest = (x.sum(axis=0)[None] - x) / (n - 1)                       # (n, h)
    return rest @ other_mean / (np.linalg.norm(rest, axis=1) * np.linalg.norm(other_mean))


def largest_terms(matrix: np.ndarray, k: int = 10) -> list[tuple[int, int, float]]:
    """The k cells (row, column, value) of ``matrix`` with the largest absolute values, largest
    first; equal sizes keep reading order (row by row), so a table of them never reshuffles."""
    flat = np.argsort(-np.abs(matrix), axis=None, kind="stable")[:k]
    rows, cols = np.unravel_index(flat, matrix.shape)
    return [(int(i), int(j), float(matrix[i, j])) for i, j in zip(rows, cols, strict=True)]


def share_of_cosine(term: float, cosine: float) -> float:
    """A term's share of the cosine it is part of (term / cosine); NaN when the cosine is 0,
    where a share means nothing (the terms of orthogonal sentences cancel out)."""
    return term / cosine if cosine else float("nan")


@dataclass(frozen=True)
class PairContributions:
    """The cosine of sentence A and sentence B at one layer, split into one term per token pair.

    Arrays are float64; ``matrix.sum() == cosine`` within float error.
    """

    model_name: str
    own_recipe: bool              # mean pooling is the model's own sentence vector
    layer: int                    # k of hidden_states[k]: 0 = embedding output
    layers: int                   # encoder layers of the model
    tokens_a: list[str]           # A's real tokens, [CLS] ... [SEP]
    tokens_b: list[str]
    matrix: np.ndarray            # (n, m) c_ij
    cosine: float                 # cos(mean A, mean B) at this layer
    leave_one_out_a: np.ndarray   # (n,) the cosine with token i of A left out of A's mean
    leave_one_out_b: np.ndarray   # (m,)
    curve: np.ndarray             # (layers + 1,) the cosine at every layer 0..layers
    unknown_a: int                # [UNK] tokens of A
    unknown_b: int
    truncated_a: int              # tokens cut from A (sentence-transformers' limit)
    truncated_b: int
    limit: int                    # that limit, in tokens
    recipe: Recipe = MEAN_RECIPE  # the model's own recipe (the headline figure's)
    model_cosine: float = float("nan")   # the model's own figure: its recipe, last layer
    words_a: tuple[Word, ...] = ()   # A's words over the rows of ``matrix`` (core.words)
    words_b: tuple[Word, ...] = ()   # B's words over its columns

    def by_word(self) -> WordContributions:
        """The same split over A's words x B's words: each cell the sum of its pieces' cells,
        so the word matrix still adds up exactly to the cosine."""
        rows = membership(self.words_a, self.matrix.shape[0])          # (W_a, n)
        cols = membership(self.words_b, self.matrix.shape[1])          # (W_b, m)
        return WordContributions(words_a=self.words_a, words_b=self.words_b,
                                 matrix=rows @ self.matrix @ cols.T, cosine=self.cosine)

    @property
    def shares_a(self) -> np.ndarray:
        """(n,) row sums: how much of the cosine each token of A carries (sums to the cosine)."""
        return self.matrix.sum(axis=1)

    @property
    def shares_b(self) -> np.ndarray:
        """(m,) column sums, the same for B."""
        return self.matrix.sum(axis=0)

    @property
    def effect_a(self) -> np.ndarray:
        """(n,) how much the cosine drops when token i of A is left out (negative: it rises)."""
        return self.cosine - self.leave_one_out_a

    @property
    def effect_b(self) -> np.ndarray:
        return self.cosine - self.leave_one_out_b

    def top(self, k: int = 10) -> list[tuple[int, int, float]]:
        """The k token pairs (i of A, j of B, c_ij) with the largest |c_ij|, largest first."""
        return largest_terms(self.matrix, k)

    def disagreements(self) -> list[tuple[str, int]]:
        """Tokens ("a" or "b", index) the two views rank far apart: among the top third of its
        sentence by share and the bottom third by leave-one-out effect, or the other way round
        (sentences of at least ``RANKED`` tokens). Both views are right: a long token vector
        takes a large share of its own sentence's mean without pulling that mean towards the
        other sentence, so leaving it out changes little."""
        found = []
        for side, shares, effect in (("a", self.shares_a, self.effect_a),
                                     ("b", self.shares_b, self.effect_b)):
            n = len(shares)
            if n < RANKED or np.isnan(effect).any():
                continue
            by_share = np.argsort(np.argsort(-shares, kind="stable"), kind="stable") / (n - 1)
            by_effect = np.argsort(np.argsort(-effect, kind="stable"), kind="stable") / (n - 1)
            found += [(side, int(i)) for i in np.flatnonzero(np.abs(by_share - by_effect)
                                                             >= 2 / 3 - 1e-9)]
        return found


@dataclass(frozen=True)
class WordContributions:
    """PairContributions summed over words (``PairContributions.by_word``): float64,
    ``matrix.sum() == cosine`` within float error."""

    words_a: tuple[Word, ...]
    words_b: tuple[Word, ...]
    matrix: np.ndarray            # (W_a, W_b): Σ c_ij over i in word I of A, j in word J of B
    cosine: float

    @property
    def texts_a(self) -> list[str]:
        return [w.text for w in self.words_a]

    @property
    def texts_b(self) -> list[str]:
        return [w.text for w in self.words_b]

    def top(self, k: int = 10) -> list[tuple[int, int, float]]:
        """The k word pairs (I of A, J of B, their contribution) with the largest absolute
        contributions, largest first (as ``PairContributions.top``)."""
        return largest_terms(self.matrix, k)


def real_words(analysis: Analysis, positions: list[int]) -> tuple[Word, ...]:
    """The words of an analysis over its real tokens ``positions``, renumbered 0..n-1 as the
    rows of a contribution matrix."""
    index = {p: k for k, p in enumerate(positions)}
    return tuple(Word(w.text, tuple(index[p] for p in w.positions), w.segment, w.special, w.real)
                 for w in words_of_encoding(analysis.encoding)
                 if all(p in index for p in w.positions))


def contributions_of(alone_a: Analysis, alone_b: Analysis, layer: int | None = None, *,
                     own: bool = False, unk_id: int | None = None,
                     recipe: Recipe = MEAN_RECIPE,
                     model_cosine: float | None = None) -> PairContributions:
    """The token-pair split of A's and B's cosine at ``layer``, from A and B each run alone.
    ``model_cosine``: the model's own figure when its recipe is not the plain mean (else the
    mean's cosine at the last layer)."""
    k, stage = layer_stage(alone_a, layer)
    pos_a, pos_b = real_positions(alone_a.encoding), real_positions(alone_b.encoding)
    h = alone_a.stages[stage][pos_a].astype(np.float64)                  # (n, d)
    g = alone_b.stages[stage][pos_b].astype(np.float64)                  # (m, d)
    mean_a, mean_b = h.mean(axis=0), g.mean(axis=0)
    n, m = len(h), len(g)
    matrix = (h @ g.T) / (n * m * np.linalg.norm(mean_a) * np.linalg.norm(mean_b))
    depth = len(alone_a.layer_names)
    curve = []
    for j in range(depth + 1):
        name = layer_stage(alone_a, j)[1]
        curve.append(_cosine(alone_a.stages[name][pos_a].astype(np.float64).mean(axis=0),
                             alone_b.stages[name][pos_b].astype(np.float64).mean(axis=0)))
    ids_a = [alone_a.encoding.input_ids[p] for p in pos_a]
    ids_b = [alone_b.encoding.input_ids[p] for p in pos_b]
    return PairContributions(
        model_name=alone_a.model_name,
        own_recipe=own,
        layer=k,
        layers=depth,
        tokens_a=[alone_a.tokens[p] for p in pos_a],
        tokens_b=[alone_b.tokens[p] for p in pos_b],
        matrix=matrix,
        cosine=_cosine(mean_a, mean_b),
        leave_one_out_a=_leave_one_out(h, mean_b),
        leave_one_out_b=_leave_one_out(g, mean_a),
        curve=np.array(curve),
        unknown_a=ids_a.count(unk_id) if unk_id is not None else 0,
        unknown_b=ids_b.count(unk_id) if unk_id is not None else 0,
        truncated_a=alone_a.truncated,
        truncated_b=alone_b.truncated,
        limit=alone_a.encoding.max_length,
        recipe=recipe,
        model_cosine=float(curve[-1]) if model_cosine is None else float(model_cosine),
        words_a=real_words(alone_a, pos_a),
        words_b=real_words(alone_b, pos_b),
    )


def pair_contributions(bundle: ModelBundle, text_a: str, text_b: str,
                       layer: int | None = None, *,
                       recipe: Recipe | None = None) -> PairContributions:
    """Sentence A vs sentence B as the model itself compares them, split per token pair.

    ``layer=None`` is the last layer (the model's own figure), ``layer=k`` is
    ``hidden_states[k]`` (0 = the embedding output). ``recipe``: the sentence recipe to read
    (its token limit, and its own figure when it is not the plain mean); by default the
    model's own (``recipe_of``), and a caller that knows better gives it (a random-weights copy
    takes its trained model's). Raises InputError for an empty text.
    """
    recipe = recipe if recipe is not None else recipe_of(bundle.name)
    limit = sentence_limit(bundle, recipe)
    alone_a = analyze(bundle, text_a, max_length=limit, attentions=False)
    alone_b = analyze(bundle, text_b, max_length=limit, attentions=False)
    return contributions_of(alone_a, alone_b, layer, own=recipe.own and recipe.mean_only,
                            unk_id=bundle.tokenizer.unk_token_id, recipe=recipe,
                            model_cosine=own_cosine(bundle, text_a, text_b, recipe))


def own_cosine(bundle: ModelBundle, text_a: str, text_b: str,
               recipe: Recipe | None = None) -> float | None:
    """The pair's cosine by the model's own recipe; None when that is the plain mean (then the
    split's own last-layer cosine is the figure)."""
    recipe = recipe if recipe is not None else recipe_of(bundle.name)
    if recipe.mean_only:
        return None
    return float(compare_pairs(bundle, [(text_a, text_b)], recipe=recipe)["cosine"].iloc[0])


# ---------------------------------------------------------------------------------------------
# Many pairs at once


def layer_columns(layers: int) -> list[str]:
    """The per-layer columns of ``compare_pairs``: layer_0 (embedding output) .. layer_N."""
    return [f"layer_{k}" for k in range(layers + 1)]


@torch.inference_mode()
def _pooled(bundle: ModelBundle, ids: list[list[int]], recipe: Recipe = MEAN_RECIPE,
            prompt_length: int = 0) -> np.ndarray:
    """(layers + 1, B, d) each sentence's vector at every layer by ``recipe``'s pooling (padding
    left out through the attention mask), as sentence-transformers' Pooling computes it."""
    width = max(len(x) for x in ids)
    pad = bundle.tokenizer.pad_token_id or 0
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for row, sentence in enumerate(ids):
        input_ids[row, :len(sentence)] = torch.tensor(sentence)
        mask[row, :len(sentence)] = 1
    with model_run():
        out = bundle.model(input_ids=input_ids, attention_mask=mask,
                           token_type_ids=torch.zeros_like(input_ids),
                           output_hidden_states=True, return_dict=True)
    return torch.stack([pool(h, mask, recipe, prompt_length)
                        for h in out.hidden_states]).numpy()               # (L+1, B, d)


def prompt_length(bundle: ModelBundle, prompt: str) -> int:
    """The prompt's tokens without a trailing special token, as sentence-transformers counts
    them (its include_prompt=False pooling leaves them out)."""
    if not prompt:
        return 0
    ids = list(bundle.tokenize([prompt], add_special_tokens=True)["input_ids"][0])
    special = set(bundle.tokenizer.all_special_ids)
    return len(ids) - (1 if ids and ids[-1] in special else 0)


def _chunk_cosines(bundle: ModelBundle, pairs: Sequence[tuple[str, str]], texts: list[str],
                   recipe: Recipe, limit: int, skip: int, batch_size: int,
                   report: Callable[[int], None]) -> np.ndarray:
    """(layers + 1, P) cosines of ``pairs``, whose distinct sentences are ``texts``."""
    # The prompt goes before each text, as sentence-transformers' encode puts it.
    encoded = bundle.tokenize([(recipe.prompt + t).strip() for t in texts],
                              add_special_tokens=True, truncation=True, max_length=limit,
                              return_attention_mask=False, return_token_type_ids=False)
    ids = [list(x) for x in encoded["input_ids"]]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    vectors = None
    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        pooled = _pooled(bundle, [ids[i] for i in batch], recipe, skip)     # (L+1, B, d)
        pooled /= np.linalg.norm(pooled, axis=2, keepdims=True)
        if vectors is None:
            vectors = np.empty((pooled.shape[0], len(ids), pooled.shape[-1]), dtype=np.float32)
        vectors[:, batch] = pooled
        report(min(start + batch_size, len(order)))
    assert vectors is not None, "every list has at least one pair (pair_lists checks)"
    index = {text: i for i, text in enumerate(texts)}
    left = np.array([index[a] for a, _ in pairs])
    right = np.array([index[b] for _, b in pairs])
    cosines = np.empty((len(vectors), len(pairs)))
    for k, layer in enumerate(vectors):      # one layer at a time, in float64
        cosines[k] = np.einsum("pd,pd->p", layer[left].astype(np.float64),
                               layer[right].astype(np.float64))
    return cosines


def compare_pairs(bundle: ModelBundle, pairs: Sequence[tuple[str, str]],
                  progress: Callable[[int, int], None] | None = None,
                  batch_size: int = BATCH_SIZE, recipe: Recipe | None = None) -> pd.DataFrame:
    """One row per pair: ``a``, ``b``, ``cosine`` (the model's figure: its own recipe on the last
    layer, ``recipe_of`` its folder, A and B encoded separately; mean pooling for a model with
    none) and ``layer_0`` .. ``layer_N`` (the same recipe at every layer, layer_0 the embedding
    output).

    The pairs go ``CHUNK_PAIRS`` at a time, so memory stays bounded however long the list (each
    chunk's sentence vectors at every layer, float32, then only its cosines are kept). Within a
    chunk each distinct sentence runs once, and sentences of similar length share a batch, so
    little of a batch is padding. ``progress(done, total)`` is called after every batch, in
    sentences (the distinct sentences of each chunk, summed).
    """
    recipe = recipe if recipe is not None else recipe_of(bundle.name)
    columns = layer_columns(int(bundle.config.num_hidden_layers))
    if not pairs:
        return pd.DataFrame(columns=["a", "b", "cosine", *columns])
    chunks = [pairs[k:k + CHUNK_PAIRS] for k in range(0, len(pairs), CHUNK_PAIRS)]
    texts = [list(dict.fromkeys(s for pair in chunk for s in pair)) for chunk in chunks]
    total, done = sum(len(t) for t in texts), 0
    limit, skip = sentence_limit(bundle, recipe), prompt_length(bundle, recipe.prompt)

    def report(n: int) -> None:
        if progress is not None:
            progress(done + n, total)

    parts = []
    for chunk, chunk_texts in zip(chunks, texts, strict=True):
        parts.append(_chunk_cosines(bundle, chunk, chunk_texts, recipe, limit, skip,
                                    batch_size, report))
        done += len(chunk_texts)
    cosines = np.concatenate(parts, axis=1)                                 # (L+1, P)
    frame = pd.DataFrame({"a": [a for a, _ in pairs], "b": [b for _, b in pairs],
                          "cosine": cosines[-1]})
    for k, name in enumerate(columns):
        frame[name] = cosines[k]
    return frame
