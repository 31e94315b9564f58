"""Items to tensors: each task's inputs and training targets, as transformers' task models read
them, with the count of texts the model's positions cut.

    sentence_class  [CLS] text [SEP]                    labels: the class's index
    pair_class      [CLS] a [SEP] b [SEP] (token_type_ids 0 then 1)   labels: the class's index
    token_tags      [CLS] word pieces [SEP]             labels: a word's tag on its first piece,
                                                        -100 (ignored by the loss) elsewhere
    span            [CLS] question [SEP] passage [SEP]  start_positions, end_positions: the
                                                        answer's first and last token
    pair_score      a and b apart                       the score scaled to 0..1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from core.finetune.tasks import FineTuneTask
from core.models import ModelBundle

IGNORED = -100   # the label transformers' cross-entropy leaves out (torch's ignore_index)


@dataclass(frozen=True)
class Batch:
    """One batch: the model's keyword inputs (``inputs``) and, for pair_score, the two sides."""

    inputs: dict[str, torch.Tensor]
    second: dict[str, torch.Tensor] | None = None   # pair_score: sentence B's inputs
    targets: torch.Tensor | None = None              # pair_score: scores scaled to 0..1
    truncated: int = 0                                # texts the model's positions cut
    offsets: tuple = ()                               # span: each token's character span
    passage_tokens: tuple = ()                        # span: which tokens are the passage's


def _cut(bundle: ModelBundle, texts: Sequence[str], max_length: int) -> int:
    """How many of ``texts`` are longer than ``max_length`` tokens with [CLS] and [SEP]."""
    lengths = bundle.tokenize(list(texts), add_special_tokens=True)["input_ids"]
    return sum(len(ids) > max_length for ids in lengths)


def encode_batch(bundle: ModelBundle, task: FineTuneTask, items: Sequence[tuple],
                 label_ids: dict[str, int], max_length: int) -> Batch:
    """``items`` of ``task`` as one padded batch of the model's inputs and targets."""
    common = {"truncation": True, "max_length": max_length, "padding": True,
              "return_tensors": "pt"}
    if task == FineTuneTask.SENTENCE_CLASS:
        texts = [item[0] for item in items]
        inputs = dict(bundle.tokenize(texts, **common))
        inputs["labels"] = torch.tensor([label_ids[item[1]] for item in items])
        return Batch(inputs, truncated=_cut(bundle, texts, max_length))
    if task == FineTuneTask.PAIR_CLASS:
        firsts, seconds = [item[0] for item in items], [item[1] for item in items]
        pairs = [f"{a} {b}" for a, b in zip(firsts, seconds, strict=True)]
        inputs = dict(bundle.tokenize(firsts, seconds, **common))
        inputs["labels"] = torch.tensor([label_ids[item[2]] for item in items])
        return Batch(inputs, truncated=_cut(bundle, pairs, max_length - 1))
    if task == FineTuneTask.TOKEN_TAGS:
        return _tag_batch(bundle, items, label_ids, max_length)
    if task == FineTuneTask.SPAN:
        return _span_batch(bundle, items, max_length)
    firsts, seconds = [item[0] for item in items], [item[1] for item in items]
    return Batch(dict(bundle.tokenize(firsts, **common)),
                 second=dict(bundle.tokenize(seconds, **common)),
                 targets=torch.tensor([float(item[2]) / 5.0 for item in items]),
                 truncated=_cut(bundle, [*firsts, *seconds], max_length))


def _tag_batch(bundle: ModelBundle, items: Sequence[tuple], label_ids: dict[str, int],
               max_length: int) -> Batch:
    words = [list(item[0]) for item in items]
    encoded = bundle.tokenize(words, is_split_into_words=True, truncation=True,
                              max_length=max_length, padding=True, return_tensors="pt")
    labels = torch.full(encoded["input_ids"].shape, IGNORED)
    truncated = 0
    for row, item in enumerate(items):
        word_ids = encoded.word_ids(row)
        seen: set[int] = set()
        for position, word in enumerate(word_ids):
            if word is not None and word not in seen:   # a word's first piece carries its tag
                seen.add(word)
                labels[row, position] = label_ids[item[1][word]]
        truncated += len(seen) < len(item[0])
    inputs = {key: value for key, value in encoded.items()}
    inputs["labels"] = labels
    return Batch(inputs, truncated=truncated)


def _span_batch(bundle: ModelBundle, items: Sequence[tuple], max_length: int) -> Batch:
    questions, passages = [item[0] for item in items], [item[1] for item in items]
    encoded = bundle.tokenize(questions, passages, truncation="only_second",
                              max_length=max_length, padding=True, return_tensors="pt",
                              return_offsets_mapping=True)
    offsets = encoded.pop("offset_mapping")
    starts, ends, truncated, passage_tokens = [], [], 0, []
    for row, item in enumerate(items):
        in_passage = [sid == 1 for sid in encoded.sequence_ids(row)]
        passage_tokens.append(tuple(in_passage))
        first, last = int(item[2]), int(item[2]) + len(item[3])
        start = end = None
        for position, (lo, hi) in enumerate(offsets[row].tolist()):
            if not in_passage[position]:
                continue
            if start is None and lo <= first < hi:
                start = position
            if lo < last <= hi:
                end = position
        if start is None or end is None:   # the answer was cut off: point at [CLS], as SQuAD does
            start = end = 0
            truncated += 1
        starts.append(start)
        ends.append(end)
    inputs = {key: value for key, value in encoded.items()}
    inputs["start_positions"] = torch.tensor(starts)
    inputs["end_positions"] = torch.tensor(ends)
    return Batch(inputs, truncated=truncated, offsets=tuple(o.tolist() for o in offsets),
                 passage_tokens=tuple(passage_tokens))
