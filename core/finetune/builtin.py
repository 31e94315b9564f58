"""The built-in fine-tuning sets, written for this explorer: one per task and language, each with
a training part and a held-out part (core/finetune/data/<task>.<language>.jsonl, README there).

English sets (training + held-out items):

    sentence_class  240 + 60    everyday sentences in 4 balanced topics: sports, food, weather,
                                technology
    token_tags      200 + 50    travel requests tagged word by word: other, origin, dest, time
                                ("arrive Taipei on November 2nd" -> other dest other time time)
    pair_class      240 + 60    premise and hypothesis: true, false or unknown, balanced
    span            160 + 40    a 1-3 sentence passage and a question answered by a span of it
    pair_score      300 + 78    sentence pairs scored 0 (unrelated) to 5 (same meaning)

Why these sizes: one epoch of full fine-tuning of the 6-layer all-MiniLM-L6-v2 on a 2-core CPU
takes about 0.45 s per step of 16 short items, and a class should watch an epoch end in under a
minute, held-out scoring included. 240 items are 15 steps (about 7 s at that rate); a scored pair
runs the encoder twice (21 tokens a pair on average against 11 for a sentence) and a question
with its passage is about three times as long (36 tokens, at most 57), so those sets give fewer
items per second. The held-out part repeats no training text and uses partly new words (other
cities, dates, names, dishes, sports, passages), so its score measures what was learned, not
what was remembered.

What one epoch at fine_tune's defaults (learning rate 2e-5, batch 16, seed 0) did on the English
sets, held-out before -> after (measured once on the shipped model): sentence_class accuracy
0.23 -> 0.57; token_tags word accuracy 0.27 -> 0.68 (macro F1 0.19 -> 0.34); pair_class and span
no change beyond noise (accuracy 0.37 -> 0.35, span F1 0.17 -> 0.17: three-way inference and a
new answer head need more steps than 15 and 10); pair_score Spearman 0.890 -> 0.894 (the model
was trained for sentence similarity already: its cosines start close to the scores, mean gap
0.13 on the 0..1 scale). At learning rate 1e-4 for 3 epochs (45 and 30 steps) the two slow sets
learn too: pair_class accuracy 0.37 -> 0.45 -> 0.63 -> 0.65 epoch by epoch, span exact match
0.00 -> 0.20 (F1 0.17 -> 0.29).

Reading is cached: the files are constant package data, read once per process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from core.errors import N_, InputError
from core.finetune.tasks import (
    LABELLED,
    FineTuneTask,
    Item,
    PairItem,
    ScoredPair,
    SentenceItem,
    SpanItem,
    TaggedWords,
)

DATA = Path(__file__).with_name("data")
SPLITS = ("train", "held_out")


@dataclass(frozen=True)
class BuiltinSet:
    task: FineTuneTask
    language: str                 # "en" or "zh"
    train: tuple[Item, ...]       # the task's item NamedTuples (core.finetune.tasks)
    held_out: tuple[Item, ...]
    labels: tuple[str, ...]       # the classes or tags, sorted (() for span and pair_score)


def _task(task: FineTuneTask | str) -> FineTuneTask:
    if isinstance(task, str) and task in {t.value for t in FineTuneTask}:
        return FineTuneTask(task)
    raise InputError(N_("“{value}” is not a fine-tuning task the explorer knows."),
                     value=str(task))


def _path(task: FineTuneTask, language: str) -> Path:
    return DATA / f"{task.value}.{language}.jsonl"


def builtin_languages(task: FineTuneTask | str) -> tuple[str, ...]:
    """The languages that have a built-in set for ``task``, sorted ("en" before "zh")."""
    task = _task(task)
    suffix = ".jsonl"
    prefix = f"{task.value}."
    return tuple(sorted(p.name[len(prefix):-len(suffix)]
                        for p in DATA.glob(f"{prefix}*{suffix}")))


def builtin_set(task: FineTuneTask | str, language: str) -> BuiltinSet:
    """The built-in set of ``task`` in ``language`` ("en" or "zh"); InputError for a task or a
    language the explorer has no set for."""
    task = _task(task)
    if not isinstance(language, str) or language not in builtin_languages(task):
        raise InputError(N_("The explorer has no built-in data in the language “{language}” "
                            "for this task."), language=str(language))
    return _read(task, language)


@cache
def _read(task: FineTuneTask, language: str) -> BuiltinSet:
    path = _path(task, language)
    parts: dict[str, list[Item]] = {split: [] for split in SPLITS}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            where = f"{path.name}, line {number}"
            split = record.get("split")
            if split not in parts:
                raise ValueError(f"{where}: split must be one of {SPLITS}, not {split!r}")
            parts[split].append(_item(task, record, where))
    train, held_out = tuple(parts["train"]), tuple(parts["held_out"])
    return BuiltinSet(task=task, language=language, train=train, held_out=held_out,
                      labels=_labels(task, train + held_out))


def _text(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {key!r} must be a non-empty string")
    return value


def _item(task: FineTuneTask, record: dict[str, Any], where: str) -> Item:
    """One line's item, checked: a mistake in shipped data must fail here, not mid-run."""
    if task == FineTuneTask.SENTENCE_CLASS:
        return SentenceItem(_text(record, "text", where), _text(record, "label", where))
    if task == FineTuneTask.PAIR_CLASS:
        return PairItem(_text(record, "a", where), _text(record, "b", where),
                        _text(record, "label", where))
    if task == FineTuneTask.TOKEN_TAGS:
        words, tags = record.get("words"), record.get("tags")
        if not (isinstance(words, list) and isinstance(tags, list) and words
                and len(words) == len(tags)
                and all(isinstance(w, str) and w.strip() for w in words + tags)):
            raise ValueError(f"{where}: words and tags must be lists of as many strings")
        return TaggedWords(tuple(words), tuple(tags))
    if task == FineTuneTask.SPAN:
        passage, answer = _text(record, "passage", where), _text(record, "answer_text", where)
        start = record.get("answer_start")
        if (not isinstance(start, int) or isinstance(start, bool)
                or passage[start:start + len(answer)] != answer):
            raise ValueError(f"{where}: the answer is not at answer_start in the passage")
        return SpanItem(_text(record, "question", where), passage, start, answer)
    score = record.get("score")
    if not isinstance(score, int | float) or isinstance(score, bool) or not 0 <= score <= 5:
        raise ValueError(f"{where}: score must be a number from 0 to 5")
    return ScoredPair(_text(record, "a", where), _text(record, "b", where), float(score))


def _labels(task: FineTuneTask, items: tuple[Item, ...]) -> tuple[str, ...]:
    """The classes or tags in sorted order, as fine_tune orders them when none are given."""
    if task not in LABELLED:
        return ()
    if task == FineTuneTask.TOKEN_TAGS:
        return tuple(sorted({tag for item in items
                             if isinstance(item, TaggedWords) for tag in item.tags}))
    return tuple(sorted({item.label for item in items
                         if isinstance(item, SentenceItem | PairItem)}))
