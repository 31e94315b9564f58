"""One pass of a corpus through the model: every sentence encoded alone, every layer's token
vectors kept once, in float16.

Sentences of similar length share a batch (sorted by token count, at most ``BATCH_TOKENS``
padded tokens a batch), so little of a batch is padding; each batch holds one of the model-run
slots (``core.models.model_run``) only while it runs, so other work goes on between batches.
Each token's vector is stored as its unit vector in float16 plus its float32 length: a cosine
is then one matrix-vector product, and the raw vector is ``unit * length``. [CLS], [SEP] and
padding are not stored (they are never a neighbour).

Size: (layers + 1) x real tokens x hidden size x 2 bytes, plus 4 bytes per token and layer for
the lengths. The built-in corpus (675 sentences, 6,133 tokens besides [CLS]/[SEP] on
all-MiniLM-L6-v2's vocabulary) is 33.3 MB on all-MiniLM-L6-v2 (7 x 384) and about 123 MB on a
12-layer, 768-wide model (``ContextVectors.nbytes``; bench/contexts_bench.py measures it).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from core.contexts.corpus_data import NEIGHBOUR_CORPUS, CorpusRecord
from core.errors import N_, InputError
from core.models import ModelBundle, model_run

BATCH_TOKENS = 4096      # padded tokens per batch (batch size x longest sentence)
BATCH_SENTENCES = 64
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ContextVectors:
    """A corpus run through one model. Read-only once made (shared by every session)."""

    model_name: str
    records: tuple[CorpusRecord, ...]
    layers: tuple[int, ...]    # the hidden_states kept (every one, 0 .. L, unless asked fewer)
    units: np.ndarray          # (layers, N, d) float16: each stored token's unit vector
    lengths: np.ndarray        # (layers, N) float32: its length
    sentence_of: np.ndarray    # (N,) int32: the record it belongs to
    position_of: np.ndarray    # (N,) int32: its position in the sentence's own encoding
    token_ids: np.ndarray      # (N,) int32
    offsets: np.ndarray        # (N, 2) int32: its characters in the sentence, [start, end)
    first_token: np.ndarray    # (S+1,) int64: record s's tokens are first[s]:first[s+1]
    word_span: np.ndarray      # (S, 2) int64: the labelled word's tokens (-1, -1 when none)
    truncated: np.ndarray      # (S,) int32: tokens cut from each sentence at the model's limit
    seconds: float = 0.0       # how long the pass took

    @property
    def n_layers(self) -> int:
        """hidden_states entries kept (every layer: the embedding output and each layer)."""
        return len(self.layers)

    def row(self, layer: int) -> int:
        """Where ``hidden_states[layer]`` is kept; InputError when it is not."""
        if layer not in self.layers:
            raise InputError(N_("Layer {layer} is not kept for this corpus: pick one of "
                                "{layers}."), layer=layer,
                             layers=", ".join(str(k) for k in self.layers))
        return self.layers.index(layer)

    @property
    def n_tokens(self) -> int:
        return int(self.units.shape[1])

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (
            self.units, self.lengths, self.sentence_of, self.position_of, self.token_ids,
            self.offsets, self.first_token, self.word_span, self.truncated)))

    def raw(self, layer: int, tokens: np.ndarray | slice) -> np.ndarray:
        """(n, d) float32 vectors of ``tokens`` at ``layer`` as the model gave them (to float16
        precision)."""
        row = self.row(layer)
        return self.units[row, tokens].astype(np.float32) * self.lengths[row, tokens, None]

    def tokens_of(self, record: int) -> slice:
        return slice(int(self.first_token[record]), int(self.first_token[record + 1]))

    def occurrence(self, layer: int, record: int) -> np.ndarray | None:
        """(d,) the labelled word's vector in ``record`` (the mean of its tokens when the word
        is several), or None when the record has no word found."""
        start, end = (int(x) for x in self.word_span[record])
        if start < 0:
            return None
        return self.raw(layer, slice(start, end)).mean(axis=0)

    def sentence_vector(self, layer: int, record: int) -> np.ndarray:
        """(d,) the mean of the sentence's stored token vectors ([CLS]/[SEP] left out)."""
        return self.raw(layer, self.tokens_of(record)).mean(axis=0)


def word_characters(record: CorpusRecord) -> tuple[int, int] | None:
    """Where the record's word is in its sentence: the first whole-word match (any case) in a
    text with spaces between words, the first occurrence in Chinese; None if absent."""
    if not record.word:
        return None
    if re.search(r"[\u3400-\u9fff]", record.word):
        start = record.sentence.find(record.word)
        return None if start < 0 else (start, start + len(record.word))
    found = re.search(rf"(?<!\w){re.escape(record.word)}(?!\w)", record.sentence, re.IGNORECASE)
    return None if found is None else found.span()


def encode_records(bundle: ModelBundle, records: Sequence[CorpusRecord]) -> dict:
    """Every sentence tokenised alone ([CLS] ... [SEP]), cut at the model's position limit."""
    limit = int(bundle.config.max_position_embeddings)
    sentences = [r.sentence for r in records]
    full = bundle.tokenize(sentences, add_special_tokens=True, truncation=False,
                           return_attention_mask=False, return_token_type_ids=False)
    enc = bundle.tokenize(sentences, add_special_tokens=True, truncation=True, max_length=limit,
                          return_offsets_mapping=True, return_special_tokens_mask=True,
                          return_attention_mask=False, return_token_type_ids=False)
    return {"input_ids": enc["input_ids"], "offsets": enc["offset_mapping"],
            "special": enc["special_tokens_mask"],
            "truncated": [len(f) - len(e) for f, e in zip(full["input_ids"], enc["input_ids"],
                                                           strict=True)]}


def batches(lengths: Sequence[int], max_tokens: int = BATCH_TOKENS,
            max_sentences: int = BATCH_SENTENCES) -> list[list[int]]:
    """Sentence indices grouped by length: sorted, then cut so that a batch's size times its
    longest sentence stays within ``max_tokens``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) + 1 > max_sentences
                        or (len(current) + 1) * lengths[i] > max_tokens):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def padded(bundle: ModelBundle, ids: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
    """One batch of token ids as model inputs, padding masked out."""
    width = max(len(x) for x in ids)
    pad = bundle.tokenizer.pad_token_id or 0
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for row, sentence in enumerate(ids):
        input_ids[row, :len(sentence)] = torch.tensor(list(sentence))
        mask[row, :len(sentence)] = 1
    return {"input_ids": input_ids, "attention_mask": mask,
            "token_type_ids": torch.zeros_like(input_ids)}


@torch.inference_mode()
def corpus_pass(bundle: ModelBundle, records: Sequence[CorpusRecord] = NEIGHBOUR_CORPUS,
                progress: Progress | None = None,
                layers: Sequence[int] | None = None) -> ContextVectors:
    """Run every record's sentence alone through the model, batched by length, and keep every
    layer's token vectors ([CLS]/[SEP] left out), or those of ``layers`` only (indices of
    ``hidden_states``). ``progress(done, total)`` is called after every batch, in sentences (it
    may raise to stop the pass)."""
    started = time.perf_counter()
    records = tuple(records)
    enc = encode_records(bundle, records)
    keep = [[k for k, s in enumerate(special) if not s] for special in enc["special"]]
    counts = np.array([len(k) for k in keep], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(counts)])
    kept = tuple(range(int(bundle.config.num_hidden_layers) + 1)) if layers is None \
        else tuple(sorted(set(int(k) for k in layers)))
    n, d = int(first[-1]), int(bundle.config.hidden_size)
    units = np.empty((len(kept), n, d), dtype=np.float16)
    lengths = np.empty((len(kept), n), dtype=np.float32)
    groups = batches([len(x) for x in enc["input_ids"]])
    done = 0
    if progress is not None:
        progress(0, len(records))
    for group in groups:
        inputs = padded(bundle, [enc["input_ids"][i] for i in group])
        with model_run():
            out = bundle.model(**inputs, output_hidden_states=True, return_dict=True)
        # The batch's stored tokens, row by row (no [CLS]/[SEP]/padding), and where they go.
        mask = torch.zeros(inputs["input_ids"].shape, dtype=torch.bool)
        for row, i in enumerate(group):
            mask[row, keep[i]] = True
        dest = np.concatenate([np.arange(first[i], first[i + 1]) for i in group])
        for row_of_layer, k in enumerate(kept):
            tokens = out.hidden_states[k][mask]                   # (n, d) float32
            norm = torch.linalg.vector_norm(tokens, dim=-1)       # (n,)
            lengths[row_of_layer, dest] = norm.numpy()
            units[row_of_layer, dest] = (tokens / norm.clamp_min(1e-12)[:, None]).half().numpy()
        done += len(group)
        if progress is not None:
            progress(done, len(records))
    sentence_of = np.repeat(np.arange(len(records), dtype=np.int32), counts)
    position_of = np.concatenate([np.array(k, dtype=np.int32) for k in keep]) if n else \
        np.zeros(0, dtype=np.int32)
    token_ids = np.concatenate([np.asarray(ids, dtype=np.int32)[k]
                                for ids, k in zip(enc["input_ids"], keep, strict=True)]) \
        if n else np.zeros(0, dtype=np.int32)
    offsets = np.concatenate([np.asarray(o, dtype=np.int32).reshape(-1, 2)[k]
                              for o, k in zip(enc["offsets"], keep, strict=True)]) \
        if n else np.zeros((0, 2), dtype=np.int32)
    spans = np.full((len(records), 2), -1, dtype=np.int64)
    for s, record in enumerate(records):
        chars = word_characters(record)
        if chars is None:
            continue
        lo, hi = int(first[s]), int(first[s + 1])
        inside = np.flatnonzero((offsets[lo:hi, 0] < chars[1]) & (offsets[lo:hi, 1] > chars[0]))
        if len(inside):
            spans[s] = (lo + inside[0], lo + inside[-1] + 1)
    for array in (units, lengths, sentence_of, position_of, token_ids, offsets, first, spans):
        array.flags.writeable = False
    truncated = np.asarray(enc["truncated"], dtype=np.int32)
    truncated.flags.writeable = False
    return ContextVectors(bundle.name, records, kept, units, lengths, sentence_of, position_of,
                          token_ids, offsets, first, spans, truncated,
                          time.perf_counter() - started)


def bytes_per_layer(bundle: ModelBundle, n_tokens: int) -> int:
    """What one kept layer of ``n_tokens`` stored tokens takes (float16 vectors, float32
    lengths)."""
    return n_tokens * (int(bundle.config.hidden_size) * 2 + 4)


def layers_within(bundle: ModelBundle, n_tokens: int, budget_bytes: int) -> tuple[int, ...]:
    """Every layer when ``n_tokens`` tokens fit ``budget_bytes`` at every layer; else as many
    as fit (at least the embedding output and the last layer), evenly spaced."""
    last = int(bundle.config.num_hidden_layers)
    fit = max(2, budget_bytes // max(1, bytes_per_layer(bundle, n_tokens)))
    if fit >= last + 1:
        return tuple(range(last + 1))
    return tuple(sorted({int(round(x)) for x in np.linspace(0, last, int(fit))}))


@torch.inference_mode()
def sentence_states(bundle: ModelBundle, text: str) -> tuple[np.ndarray, list[str]]:
    """``text`` alone through the model: (L+1, T, d) float32 hidden states (0 = the embedding
    output, [CLS] at position 0) and its tokens. Cut at the model's position limit."""
    enc = bundle.tokenize(text, add_special_tokens=True, truncation=True,
                          max_length=int(bundle.config.max_position_embeddings),
                          return_tensors="pt")
    with model_run():
        out = bundle.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                           token_type_ids=torch.zeros_like(enc["input_ids"]),
                           output_hidden_states=True, return_dict=True)
    states = torch.stack(out.hidden_states)[:, 0].numpy()
    return states, bundle.ids_to_tokens(enc["input_ids"][0].tolist())
