"""Comparing sentence pairs: which token pairs make two sentences alike, and many pairs at once.

For a mean-pooling model (all-MiniLM-L6-v2) the sentence vector is the mean of the token vectors,
L2-normalised, so with ā = (1/n) Σ h_i and b̄ = (1/m) Σ g_j the cosine splits exactly into one
term per token pair, at every layer, with no gradients:

    cos(ā, b̄) = Σ_ij c_ij,   c_ij = h_i · g_j / (n · m · ‖ā‖ · ‖b̄‖)

A and B are encoded separately, as ``SentenceTransformer.encode`` does, every real token
([CLS] and [SEP] too) in the mean, cut at sentence-transformers' max_seq_length (256 for
all-MiniLM-L6-v2). A model without that recipe (bert-base-uncased has no pooling of its own) gets
the same mean-pooled recipe, and ``own_recipe`` says it is not the model's own.

    pair_contributions(bundle, "I love this movie", "I do not love this movie").matrix.sum()
    compare_pairs(bundle, [("A man eats.", "A man is eating food.")])["cosine"]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from core.analysis import Analysis, analyze
from core.errors import ModelLoadError
from core.models import ModelBundle, model_run, model_source
from core.similarity.choices import real_positions
from core.similarity.sentences import encoder_max_length

BATCH_SIZE = 64          # sentences per forward pass in compare_pairs
RANKED = 4               # tokens a sentence needs before its two rankings are compared


def own_recipe(model_name: str) -> bool:
    """True when the model's folder says its sentence vector is the mean of its token vectors,
    L2-normalised (sentence-transformers' modules.json with mean pooling and Normalize), as the
    shipped all-MiniLM-L6-v2 does. False for any other model: it still gets that recipe here."""
    try:
        folder = Path(model_source(model_name))
        modules = json.loads((folder / "modules.json").read_text())
        kinds = {str(m.get("type", "")).rsplit(".", 1)[-1]: m.get("path", "") for m in modules}
        if "Pooling" not in kinds or "Normalize" not in kinds:
            return False
        pooling = json.loads((folder / kinds["Pooling"] / "config.json").read_text())
    except (ModelLoadError, OSError, ValueError, TypeError, AttributeError):
        return False
    modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    return pooling.get("pooling_mode_mean_tokens") is True and len(modes) == 1


def sentence_limit(bundle: ModelBundle) -> int:
    """Tokens a sentence keeps: sentence-transformers' max_seq_length, else the position table."""
    table = int(bundle.config.max_position_embeddings)
    return min(encoder_max_length(bundle.name) or table, table)


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


@dataclass(frozen=True)
class PairContributions:
    """The cosine of sentence A and sentence B at one layer, split into one term per token pair.

    Arrays are float64; ``matrix.sum() == cosine`` within float error.
    """

    model_name: str
    own_recipe: bool              # the model's own sentence vector (else the same recipe, lent)
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
        flat = np.argsort(-np.abs(self.matrix), axis=None, kind="stable")[:k]
        rows, cols = np.unravel_index(flat, self.matrix.shape)
        return [(int(i), int(j), float(self.matrix[i, j])) for i, j in zip(rows, cols,
                                                                           strict=True)]

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


def contributions_of(alone_a: Analysis, alone_b: Analysis, layer: int | None = None, *,
                     own: bool = False, unk_id: int | None = None) -> PairContributions:
    """The token-pair split of A's and B's cosine at ``layer``, from A and B each run alone."""
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
    )


def pair_contributions(bundle: ModelBundle, text_a: str, text_b: str,
                       layer: int | None = None) -> PairContributions:
    """Sentence A vs sentence B as the model itself compares them, split per token pair.

    ``layer=None`` is the last layer (the model's own figure), ``layer=k`` is
    ``hidden_states[k]`` (0 = the embedding output). Raises InputError for an empty text.
    """
    limit = sentence_limit(bundle)
    alone_a = analyze(bundle, text_a, max_length=limit, attentions=False)
    alone_b = analyze(bundle, text_b, max_length=limit, attentions=False)
    return contributions_of(alone_a, alone_b, layer, own=own_recipe(bundle.name),
                            unk_id=bundle.tokenizer.unk_token_id)


# ---------------------------------------------------------------------------------------------
# Many pairs at once


def layer_columns(layers: int) -> list[str]:
    """The per-layer columns of ``compare_pairs``: layer_0 (embedding output) .. layer_N."""
    return [f"layer_{k}" for k in range(layers + 1)]


@torch.inference_mode()
def _pooled(bundle: ModelBundle, ids: list[list[int]]) -> np.ndarray:
    """(layers + 1, B, d) mean of each sentence's token vectors at every layer, padding left
    out through the attention mask, as sentence-transformers' mean pooling does."""
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
    states = torch.stack(out.hidden_states)                               # (L+1, B, T, d)
    weights = mask[None, :, :, None].to(states.dtype)
    summed = (states * weights).sum(dim=2)                                # (L+1, B, d)
    return (summed / mask.sum(dim=1)[None, :, None].to(states.dtype)).numpy()


def compare_pairs(bundle: ModelBundle, pairs: Sequence[tuple[str, str]],
                  progress: Callable[[int, int], None] | None = None,
                  batch_size: int = BATCH_SIZE) -> pd.DataFrame:
    """One row per pair: ``a``, ``b``, ``cosine`` (the model's figure: mean pooling of the last
    layer, L2-normalised, A and B encoded separately) and ``layer_0`` .. ``layer_N`` (the same
    recipe at every layer, layer_0 the embedding output).

    Each distinct sentence runs once; sentences of similar length share a batch, so little of a
    batch is padding. ``progress(done, total)`` is called after every batch, in sentences.
    """
    texts = list(dict.fromkeys(s for pair in pairs for s in pair))
    columns = layer_columns(int(bundle.config.num_hidden_layers))
    if not texts:
        return pd.DataFrame(columns=["a", "b", "cosine", *columns])
    # sentence-transformers strips each text before tokenising it (its Transformer module).
    encoded = bundle.tokenize([t.strip() for t in texts], add_special_tokens=True,
                              truncation=True, max_length=sentence_limit(bundle),
                              return_attention_mask=False, return_token_type_ids=False)
    ids = [list(x) for x in encoded["input_ids"]]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    vectors = np.empty((len(columns), len(ids), bundle.config.hidden_size), dtype=np.float64)
    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        vectors[:, batch] = _pooled(bundle, [ids[i] for i in batch])
        if progress is not None:
            progress(min(start + batch_size, len(order)), len(order))
    vectors /= np.linalg.norm(vectors, axis=2, keepdims=True)
    index = {text: i for i, text in enumerate(texts)}
    left = np.array([index[a] for a, _ in pairs])
    right = np.array([index[b] for _, b in pairs])
    cosines = np.einsum("lpd,lpd->lp", vectors[:, left], vectors[:, right])   # (L+1, P)
    frame = pd.DataFrame({"a": [a for a, _ in pairs], "b": [b for _, b in pairs],
                          "cosine": cosines[-1]})
    for k, name in enumerate(columns):
        frame[name] = cosines[k]
    return frame
