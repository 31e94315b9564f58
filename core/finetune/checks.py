"""What a run refuses before it starts, each with a message a reader can act on: too few items,
one class only, labels that are numbers in one item and words in another, an answer that is not
in its passage, tags that do not match their words, settings out of range.

Items are named by their place in their part, counted from 1 ("item 12 of the training part"),
so a page can map them back to the lines of a file.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.errors import N_, InputError, N_plural
from core.finetune.tasks import ITEM_TYPES, LABELLED, FineTuneTask

MIN_ITEMS = 8          # fewer, and a batch or a held-out score means nothing
MAX_EPOCHS = 20
MAX_BATCH = 256
PARTS = {"train": N_("the training part"), "held_out": N_("the held-out part")}


def _fail(template: str | tuple[str, str], **params: object) -> InputError:
    return InputError(template, **params)


def check_settings(task: FineTuneTask, *, epochs: int, batch_size: int, learning_rate: float,
                   warmup: float, freeze_encoder: bool, max_length: int) -> None:
    """Raise InputError for a setting no run can use (a longest input past the model's position
    table is cut to the table by ``fine_tune``)."""
    if not isinstance(epochs, int) or not 1 <= epochs <= MAX_EPOCHS:
        raise _fail(N_("Epochs must be a whole number from 1 to {limit}."), limit=MAX_EPOCHS)
    if not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH:
        raise _fail(N_("The batch size must be a whole number from 1 to {limit}."),
                    limit=MAX_BATCH)
    if not (isinstance(learning_rate, int | float) and math.isfinite(learning_rate)
            and 0 < learning_rate <= 1):
        raise _fail(N_("The learning rate must be a number above 0 and at most 1."))
    if not (isinstance(warmup, int | float) and 0 <= warmup < 1):
        raise _fail(N_("The warm-up must be a share of the steps from 0 up to (not including) "
                       "1."))
    if not isinstance(max_length, int) or max_length < 8:
        raise _fail(N_("The longest input must be a whole number of at least 8 tokens."))
    if freeze_encoder and task == FineTuneTask.PAIR_SCORE:
        raise _fail(N_("Tuning a sentence model on scored pairs has no head of its own: with "
                       "the encoder frozen there is nothing to train. Choose full fine-tuning."))


def check_items(task: FineTuneTask, items: Sequence[tuple] | None, *, part: str,
                minimum: int = MIN_ITEMS) -> tuple:
    """``items`` as the task's NamedTuples, or InputError naming the first item that is wrong."""
    items = list(items or [])
    where = PARTS[part]
    if len(items) < minimum:
        raise _fail(N_plural("{part} has {count} item; fine-tuning needs at least {minimum}.",
                             "{part} has {count} items; fine-tuning needs at least {minimum}."),
                    how_many=len(items), part=where, count=len(items), minimum=minimum)
    kind: Any = ITEM_TYPES[task]
    checked = []
    for number, raw in enumerate(items, start=1):
        try:
            item = kind(*raw)
        except TypeError:
            count = len(raw) if hasattr(raw, "__len__") else 1
            raise _fail(N_plural("Item {number} of {part} has {count} field; this task's items "
                                 "have {fields}.",
                                 "Item {number} of {part} has {count} fields; this task's items "
                                 "have {fields}."), how_many=count, number=number, part=where,
                        count=count, fields=", ".join(kind._fields)) from None
        checked.append(_check_item(task, item, number, where))
    return tuple(checked)


def _check_item(task: FineTuneTask, item: Any, number: int, where: str) -> tuple:
    texts = {FineTuneTask.SENTENCE_CLASS: item[:1], FineTuneTask.PAIR_CLASS: item[:2],
             FineTuneTask.PAIR_SCORE: item[:2], FineTuneTask.SPAN: item[:2],
             FineTuneTask.TOKEN_TAGS: ()}[task]
    if any(not isinstance(t, str) or not t.strip() for t in texts):
        raise _fail(N_("Item {number} of {part} has an empty text."), number=number, part=where)
    if task == FineTuneTask.TOKEN_TAGS:
        words, tags = tuple(item[0]), tuple(item[1])
        if not words or any(not isinstance(w, str) or not w.strip() for w in words):
            raise _fail(N_("Item {number} of {part} has an empty word."), number=number,
                        part=where)
        if len(words) != len(tags):
            # Counted by the words: "1 word and 2 tags" / "3 words and 2 tags".
            raise _fail(N_plural("Item {number} of {part} has {words} word but {tags} tags; "
                                 "every word needs exactly one tag.",
                                 "Item {number} of {part} has {words} words but {tags} tags; "
                                 "every word needs exactly one tag."),
                        how_many=len(words), number=number, part=where, words=len(words),
                        tags=f"{len(tags)}")
        return type(item)(words, tuple(str(t) for t in tags))
    if task == FineTuneTask.SPAN:
        start, answer = item[2], item[3]
        if not isinstance(answer, str) or not answer.strip():
            raise _fail(N_("Item {number} of {part} has an empty answer."), number=number,
                        part=where)
        if not isinstance(start, int) or item[1][start:start + len(answer)] != answer:
            raise _fail(N_("Item {number} of {part}: the answer “{answer}” is not in its "
                           "passage at character {start}."), number=number, part=where,
                        answer=answer, start=str(start))
        return item
    if task == FineTuneTask.PAIR_SCORE:
        value = item[2]
        try:
            value = float(value)
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value) or not 0 <= value <= 5:
            raise _fail(N_("Item {number} of {part} has the score “{score}”; scores must be "
                           "numbers from 0 to 5."), number=number, part=where,
                        score=str(item[2]))
        return type(item)(item[0], item[1], value)
    return type(item)(*item[:-1], str(item[-1]).strip())


def _is_number(label: str) -> bool:
    try:
        float(label)
    except ValueError:
        return False
    return True


def _labels_of(task: FineTuneTask, items: Sequence[tuple]) -> list[str]:
    if task == FineTuneTask.TOKEN_TAGS:
        return [tag for item in items for tag in item[1]]
    return [item[-1] for item in items]


def label_set(task: FineTuneTask, train: Sequence[tuple], held: Sequence[tuple],
              labels: Sequence[str] | None) -> tuple[str, ...]:
    """The classes or tags in a fixed order (``labels`` when given, else sorted), checked: two
    at least, all numbers or all words, every held-out label seen in training."""
    if task not in LABELLED:
        return ()
    seen = Counter(_labels_of(task, train))
    numbers = [label for label in seen if _is_number(label)]
    if numbers and len(numbers) < len(seen):
        word = next(label for label in seen if not _is_number(label))
        raise _fail(N_("The labels mix numbers (“{number}”) and words (“{word}”): a file whose "
                       "label column changes kind part-way is usually read from the wrong "
                       "column. Use one kind of label."), number=numbers[0], word=word)
    order = tuple(labels) if labels is not None else tuple(sorted(seen))
    unknown = [label for label in seen if label not in order]
    if unknown:
        raise _fail(N_("The label “{label}” is not one of the labels given."), label=unknown[0])
    if len(seen) < 2:
        raise _fail(N_("Every training item has the label “{label}”: a classifier needs at "
                       "least two classes to learn anything."), label=next(iter(seen), ""))
    for number, item in enumerate(held, start=1):
        for label in _labels_of(task, [item]):
            if label not in order:
                raise _fail(N_("Item {number} of the held-out part has the label “{label}”, "
                               "which no training item has."), number=number, label=label)
    return order
