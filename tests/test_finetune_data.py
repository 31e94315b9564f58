"""The built-in fine-tuning sets: every file of every language parses through the loader into the
task's items, the items are well formed (a span's answer exactly in its passage, a tag per word),
the held-out part is fair (labels seen in training, no training text repeated) and each set has
the size its budget says (core/finetune/builtin.py)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from core.errors import InputError
from core.finetune.builtin import DATA, BuiltinSet, builtin_languages, builtin_set
from core.finetune.tasks import (
    ITEM_TYPES,
    FineTuneTask,
    PairItem,
    ScoredPair,
    SentenceItem,
    SpanItem,
    TaggedWords,
)

# (training items, held-out items) each set should have, within SLACK of it either way.
SIZES = {
    FineTuneTask.SENTENCE_CLASS: (240, 60),
    FineTuneTask.TOKEN_TAGS: (200, 50),
    FineTuneTask.PAIR_CLASS: (240, 60),
    FineTuneTask.SPAN: (160, 40),
    FineTuneTask.PAIR_SCORE: (300, 75),
}
SLACK = 0.2
LABELS = {
    FineTuneTask.SENTENCE_CLASS: None,      # the topics: any 4, balanced
    FineTuneTask.TOKEN_TAGS: {"other", "dest", "time", "origin"},
    FineTuneTask.PAIR_CLASS: {"true", "false", "unknown"},
}


def _files() -> list[tuple[FineTuneTask, str]]:
    """Every set on disk: the English five at least, and whatever other languages have arrived."""
    found = sorted(p.name for p in DATA.glob("*.jsonl"))
    sets = []
    for name in found:
        task, language, _ = name.split(".")
        sets.append((FineTuneTask(task), language))
    return sets


SETS = _files()


def test_english_sets_are_all_there():
    assert {task for task, language in SETS if language == "en"} == set(FineTuneTask)
    for task in FineTuneTask:
        assert "en" in builtin_languages(task)


@pytest.mark.parametrize(("task", "language"), SETS)
def test_every_line_is_an_object_with_a_split(task, language):
    lines = (DATA / f"{task.value}.{language}.jsonl").read_text(encoding="utf-8").splitlines()
    fields = {
        FineTuneTask.SENTENCE_CLASS: {"text", "label"},
        FineTuneTask.TOKEN_TAGS: {"words", "tags"},
        FineTuneTask.PAIR_CLASS: {"a", "b", "label"},
        FineTuneTask.SPAN: {"question", "passage", "answer_start", "answer_text"},
        FineTuneTask.PAIR_SCORE: {"a", "b", "score"},
    }[task]
    for line in lines:
        record = json.loads(line)
        assert set(record) == fields | {"split"}, line
        assert record["split"] in ("train", "held_out")


@pytest.mark.parametrize(("task", "language"), SETS)
def test_items_are_the_tasks_types(task, language):
    data = builtin_set(task, language)
    assert isinstance(data, BuiltinSet)
    assert (data.task, data.language) == (task, language)
    assert data.train and data.held_out
    for item in data.train + data.held_out:
        assert type(item) is ITEM_TYPES[task]
        if isinstance(item, SentenceItem | PairItem):
            assert all(isinstance(v, str) and v.strip() for v in item)
        elif isinstance(item, TaggedWords):
            assert isinstance(item.words, tuple) and isinstance(item.tags, tuple)
            assert len(item.words) == len(item.tags) > 0
            assert all(isinstance(w, str) and w.strip() and w == w.strip() for w in item.words)
        elif isinstance(item, SpanItem):
            assert isinstance(item.answer_start, int) and item.answer_text.strip()
            end = item.answer_start + len(item.answer_text)
            assert item.passage[item.answer_start:end] == item.answer_text
            assert item.question.strip()
        else:
            assert isinstance(item, ScoredPair)
            assert isinstance(item.score, float) and 0 <= item.score <= 5
            assert item.a.strip() and item.b.strip()


@pytest.mark.parametrize(("task", "language"), SETS)
def test_sizes_fit_the_budget(task, language):
    data = builtin_set(task, language)
    train, held = SIZES[task]
    assert (1 - SLACK) * train <= len(data.train) <= (1 + SLACK) * train
    assert (1 - SLACK) * held <= len(data.held_out) <= (1 + SLACK) * held


def _text(item) -> object:
    """What a held-out item must not share with a training item: its whole input."""
    if isinstance(item, SentenceItem):
        return item.text
    if isinstance(item, TaggedWords):
        return item.words
    if isinstance(item, SpanItem):
        return (item.question, item.passage)
    return (item.a, item.b)


@pytest.mark.parametrize(("task", "language"), SETS)
def test_held_out_repeats_no_training_text(task, language):
    data = builtin_set(task, language)
    seen = {_text(item) for item in data.train}
    repeated = [item for item in data.held_out if _text(item) in seen]
    assert not repeated
    if task == FineTuneTask.SPAN:
        # Questions on one passage may share it within a part, never across the two parts.
        assert not {i.passage for i in data.train} & {i.passage for i in data.held_out}
    if task == FineTuneTask.PAIR_CLASS:
        assert not {i.a for i in data.train} & {i.a for i in data.held_out}


def _labels(item) -> tuple[str, ...]:
    return item.tags if isinstance(item, TaggedWords) else (item.label,)


@pytest.mark.parametrize(("task", "language"),
                         [(t, lang) for t, lang in SETS if t in LABELS])
def test_labels_are_fixed_balanced_and_seen_in_training(task, language):
    data = builtin_set(task, language)
    train = Counter(label for item in data.train for label in _labels(item))
    held = Counter(label for item in data.held_out for label in _labels(item))
    assert data.labels == tuple(sorted(train))
    assert set(held) <= set(train)
    if task == FineTuneTask.TOKEN_TAGS:
        # The tutorial's slot-filling tags, "origin" allowed beside them.
        assert {"other", "dest", "time"} <= set(train) <= LABELS[task]
    elif task == FineTuneTask.PAIR_CLASS:
        assert set(train) == LABELS[task]
    else:
        assert len(train) == 4
    if task != FineTuneTask.TOKEN_TAGS:
        # Balanced: each class within 20% of an even share, in both parts.
        for counts, total in ((train, len(data.train)), (held, len(data.held_out))):
            share = total / len(counts)
            assert all(0.8 * share <= n <= 1.2 * share for n in counts.values()), counts


@pytest.mark.parametrize(("task", "language"),
                         [(t, lang) for t, lang in SETS if t == FineTuneTask.PAIR_SCORE])
def test_scores_spread_over_the_range(task, language):
    data = builtin_set(task, language)
    scores = [item.score for item in data.train]
    # Every unit band of 0..5 holds at least a tenth of the pairs, as in the STS benchmark.
    bands = Counter(min(int(score), 4) for score in scores)
    assert all(bands[band] >= 0.1 * len(scores) for band in range(5)), bands
    assert {item.score for item in data.held_out} & {0.0}
    assert max(item.score for item in data.held_out) >= 4.5


def test_labels_are_empty_for_unlabelled_tasks():
    assert builtin_set("span", "en").labels == ()
    assert builtin_set(FineTuneTask.PAIR_SCORE, "en").labels == ()


def test_a_task_named_by_string_or_enum_is_the_same_cached_set():
    assert builtin_set("sentence_class", "en") is builtin_set(FineTuneTask.SENTENCE_CLASS, "en")


def test_tutorial_example_shape_is_in_the_tags():
    words = {item.words: item.tags for item in builtin_set("token_tags", "en").train}
    assert any(w[0] == "arrive" and t[:3] == ("other", "dest", "other") for w, t in words.items())


@pytest.mark.parametrize("task", ["sentence", "", None, 3, "SPAN"])
def test_an_unknown_task_is_a_clear_message(task):
    with pytest.raises(InputError, match="not a fine-tuning task"):
        builtin_set(task, "en")
    with pytest.raises(InputError):
        builtin_languages(task)


@pytest.mark.parametrize("language", ["fr", "", "EN", None, "../data/span"])
def test_an_unknown_language_is_a_clear_message(language):
    with pytest.raises(InputError, match="no built-in data in the language"):
        builtin_set("span", language)
