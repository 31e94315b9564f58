"""Two models on the same texts: every hidden state of A against every hidden state of B.

Each text is encoded alone by each model as ``core.tokens.encode`` does (its default settings:
[CLS] text [SEP], cut at the model's position table), and run through the model batched by
length. The rows are every token of every text except [CLS], [SEP] and padding, in order. Two
tokenizers that split every text into the same pieces (the same characters each) give matching
rows token for token. When they split a text differently (a Chinese vocabulary and an English
one, a cased and an uncased one), both sides are grouped into words (``core.words``: a word's
vector is the mean of its pieces) for every text, and ``LayerSimilarity.unit`` says so. A text
whose words still differ (one model cut it at its position limit, say) is refused with a clear
error: rows are never compared out of order.

    from core import load_model, layer_similarity
    result = layer_similarity(load_model(), load_model(), ["A heron stood on the bank."])
    result.cka.diagonal()        # all 1: a model against itself
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import torch

from core.compare.cka import cka_matrix, linear_cka
from core.contexts.vectors import batches, padded
from core.errors import N_, InputError, N_plural
from core.models import ModelBundle, model_run
from core.tokens import Encoding, encode
from core.words import words_of_encoding

Progress = Callable[[int, int], None]


class RowUnit(StrEnum):
    TOKEN = "token"    # the two tokenizers split every text into the same pieces
    WORD = "word"      # they did not: rows are words, each the mean of its pieces


CHECK_SEED = 0
CHECK_SCALE = 3.7


@dataclass(frozen=True)
class MapChecks:
    """The properties a reader can check the map by, computed on the map's own rows.

    ``self_diagonal``: CKA of each layer of A with itself (1 each). The others are the map's
    cell of A's last layer against B's last layer (``cell``), recomputed with B's vectors
    rotated by a random orthogonal matrix, scaled, and with B's rows shuffled."""

    self_diagonal: np.ndarray     # (layers of A + 1,)
    cell: float                   # cka[-1, -1]
    rotated: float                # the same with B's vectors times a random orthogonal matrix
    scaled: float                 # the same with B's vectors times CHECK_SCALE
    shuffled: float               # the same with B's rows in a random order


def map_checks(states_a: Sequence[np.ndarray], states_b: Sequence[np.ndarray],
               seed: int = CHECK_SEED) -> MapChecks:
    """The three checks on the two models' rows (every layer's (rows, d) arrays)."""
    rng = np.random.default_rng(seed)
    x, y = states_a[-1], states_b[-1].astype(np.float64)
    rotation, _ = np.linalg.qr(rng.standard_normal((y.shape[1], y.shape[1])))
    return MapChecks(
        self_diagonal=np.array([linear_cka(layer, layer) for layer in states_a]),
        cell=linear_cka(x, y),
        rotated=linear_cka(x, y @ rotation),
        scaled=linear_cka(x, CHECK_SCALE * y),
        shuffled=linear_cka(x, y[rng.permutation(len(y))]),
    )


@dataclass(frozen=True)
class LayerSimilarity:
    """Linear CKA of every hidden state of A against every hidden state of B (float64)."""

    model_a: str
    model_b: str
    cka: np.ndarray            # (layers of A + 1, layers of B + 1); [0, 0]: the embedding outputs
    unit: RowUnit              # what a row is
    rows: int                  # tokens (or words) compared
    texts: int                 # texts they came from
    split_differently: int     # texts the two tokenizers split into different pieces
    seconds: float = 0.0
    checks: MapChecks | None = None    # the three checks, on these rows (``with_checks``)

    @property
    def diagonal(self) -> np.ndarray:
        """CKA of layer k of A with layer k of B, as far as both go."""
        return np.diagonal(self.cka).copy()

    @property
    def best_match(self) -> np.ndarray:
        """(layers of A + 1,) for each layer of A, the layer of B most like it."""
        return np.nanargmax(np.nan_to_num(self.cka, nan=-1.0), axis=1)


@dataclass(frozen=True)
class Side:
    """One model's encodings of the texts, and which positions make each text's rows."""

    encodings: tuple[Encoding, ...]
    groups: tuple[tuple[tuple[int, ...], ...], ...]   # per text: each row's positions
    spans: tuple[tuple[tuple[int, int], ...], ...]    # per text: each row's characters


def _token_rows(enc: Encoding) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, int], ...]]:
    keep = [p for p, (m, s) in enumerate(zip(enc.attention_mask, enc.special_tokens_mask,
                                             strict=True)) if m and not s]
    return tuple((p,) for p in keep), tuple((enc.offsets[p][1], enc.offsets[p][2]) for p in keep)


def _word_rows(enc: Encoding) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, int], ...]]:
    words = [w for w in words_of_encoding(enc) if not w.special and w.real]
    return (tuple(w.positions for w in words),
            tuple((enc.offsets[w.positions[0]][1], enc.offsets[w.positions[-1]][2])
                  for w in words))


def texts_of(texts: Sequence[str]) -> list[str]:
    """The texts with something in them (blank lines are no input); InputError when none is."""
    kept = [t for t in texts if (t or "").strip()]
    if not kept:
        raise InputError(N_("There are no sentences to compare the two models on: give at "
                            "least one."))
    return kept


def match_rows(bundle_a: ModelBundle, bundle_b: ModelBundle, texts: Sequence[str]
               ) -> tuple[Side, Side, RowUnit, int]:
    """Both models' encodings of ``texts`` and rows that match one to one: tokens when every
    text is split into the same pieces, else words. InputError naming the first text whose
    rows still differ."""
    enc_a = tuple(encode(bundle_a, t) for t in texts)
    enc_b = enc_a if bundle_b.tokenizer is bundle_a.tokenizer \
        and bundle_b.config.max_position_embeddings == bundle_a.config.max_position_embeddings \
        else tuple(encode(bundle_b, t) for t in texts)
    rows_a = [_token_rows(e) for e in enc_a]
    rows_b = rows_a if enc_b is enc_a else [_token_rows(e) for e in enc_b]
    differ = sum(ra[1] != rb[1] for ra, rb in zip(rows_a, rows_b, strict=True))
    unit = RowUnit.TOKEN
    if differ:
        unit = RowUnit.WORD
        rows_a = [_word_rows(e) for e in enc_a]
        rows_b = [_word_rows(e) for e in enc_b]
        for k, (ra, rb) in enumerate(zip(rows_a, rows_b, strict=True)):
            if ra[1] != rb[1]:
                raise InputError(
                    N_plural("Sentence {number} (“{text}”) is read as {count_a} word by "
                             "{model_a} but {count_b} by {model_b}, so its vectors cannot be "
                             "matched one to one. Leave it out or shorten it, and compare again.",
                             "Sentence {number} (“{text}”) is read as {count_a} words by "
                             "{model_a} but {count_b} by {model_b}, so its vectors cannot be "
                             "matched one to one. Leave it out or shorten it, and compare again."),
                    how_many=len(ra[1]), number=k + 1, text=_short(texts[k]), count_a=len(ra[1]),
                    model_a=bundle_a.label, count_b=len(rb[1]), model_b=bundle_b.label)
    side_a = Side(enc_a, tuple(r[0] for r in rows_a), tuple(r[1] for r in rows_a))
    side_b = Side(enc_b, tuple(r[0] for r in rows_b), tuple(r[1] for r in rows_b))
    return side_a, side_b, unit, differ


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@torch.inference_mode()
def hidden_rows(bundle: ModelBundle, side: Side, progress: Progress | None = None
                ) -> list[np.ndarray]:
    """Every hidden state's rows: a list of (rows, d) float32 arrays, 0 = the embedding output.
    A row of several positions (a word) is the mean of their vectors."""
    counts = np.array([len(g) for g in side.groups], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(counts)])
    n, d = int(first[-1]), int(bundle.config.hidden_size)
    layers = int(bundle.config.num_hidden_layers) + 1
    out = np.empty((layers, n, d), dtype=np.float32)
    ids = [e.input_ids for e in side.encodings]
    done = 0
    for group in batches([len(x) for x in ids]):
        inputs = padded(bundle, [ids[i] for i in group])
        with model_run():
            hidden = bundle.model(**inputs, output_hidden_states=True,
                                  return_dict=True).hidden_states
        width = hidden[0].shape[1]
        # Each row's positions in the batch flattened to B*T, consecutive within a row, so a
        # row's mean is one reduceat over them.
        flat = torch.tensor([row * width + p for row, i in enumerate(group)
                             for g in side.groups[i] for p in g], dtype=torch.long)
        sizes = [len(g) for i in group for g in side.groups[i]]
        dest = np.concatenate([np.arange(first[i], first[i + 1]) for i in group])
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        for k, states in enumerate(hidden):                         # (B, T, d) each
            picked = states.reshape(-1, d)[flat].numpy()             # (positions, d)
            if max(sizes, default=1) == 1:
                out[k, dest] = picked
            else:
                out[k, dest] = np.add.reduceat(picked.astype(np.float64), starts, axis=0) \
                    / np.asarray(sizes, dtype=np.float64)[:, None]
        done += len(group)
        if progress is not None:
            progress(done, len(ids))
    return list(out)


def layer_similarity(model_a: ModelBundle, model_b: ModelBundle, texts: Sequence[str],
                     progress: Progress | None = None, with_checks: bool = False
                     ) -> LayerSimilarity:
    """Linear CKA between every hidden state of ``model_a`` and every one of ``model_b`` over
    the rows of ``texts`` (see the module's doc). ``progress(done, total)`` counts texts run,
    both models together; ``with_checks`` adds ``map_checks`` on the same rows. Raises
    InputError for no texts or rows that cannot be matched."""
    started = time.perf_counter()
    texts = texts_of(texts)
    side_a, side_b, unit, differ = match_rows(model_a, model_b, texts)
    total = 2 * len(texts)

    def report(offset: int) -> Progress | None:
        if progress is None:
            return None
        return lambda done, _total: progress(offset + done, total)

    states_a = hidden_rows(model_a, side_a, report(0))
    same = model_b is model_a
    states_b = states_a if same else hidden_rows(model_b, side_b, report(len(texts)))
    if same and progress is not None:
        progress(total, total)
    rows = len(states_a[0])
    if rows < 2:
        raise InputError(N_("The sentences give {rows} token to compare: CKA needs at least "
                            "two. Give longer sentences."), rows=rows)
    cka = cka_matrix(states_a, states_b)
    checks = map_checks(states_a, states_b) if with_checks else None
    return LayerSimilarity(model_a.name, model_b.name, cka, unit, rows, len(texts), differ,
                           time.perf_counter() - started, checks)
