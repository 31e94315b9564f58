"""Fine-tuning on the reader's own file: the columns each pattern reads, proposed from the
header, and the rows turned into items with every line left out named with its reason.

The file itself is read by core.sentence_files (the same reader as /pairs: CSV, TSV, JSON Lines,
Parquet, a header found, every cell as written); this module only picks cells. No Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from core.finetune.tasks import (
    FineTuneTask,
    PairItem,
    ScoredPair,
    SentenceItem,
    SpanItem,
    TaggedWords,
)
from core.sentence_files import reader
from core.sentence_files.reader import Table
from pages.finetune.records import Rows

# The columns each pattern reads, in order (their words are the page's: ROLE_WORDS).
ROLES: dict[FineTuneTask, tuple[str, ...]] = {
    FineTuneTask.SENTENCE_CLASS: ("text", "label"),
    FineTuneTask.TOKEN_TAGS: ("words", "tags"),
    FineTuneTask.PAIR_CLASS: ("a", "b", "label"),
    FineTuneTask.SPAN: ("question", "passage", "answer"),
    FineTuneTask.PAIR_SCORE: ("a", "b", "score"),
}
# Header names that propose a column for a role (compared as reader.column_key does).
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "text": ("text", "sentence", "sentence1", "文本", "句子"),
    "label": ("label", "class", "category", "gold", "标签", "类别"),
    "words": ("words", "tokens", "text", "sentence", "词"),
    "tags": ("tags", "labels", "ner", "slots", "标注"),
    "a": ("sentence1", "sentence_a", "text_a", "a", "premise", "question1", "句子1", "文本1"),
    "b": ("sentence2", "sentence_b", "text_b", "b", "hypothesis", "question2", "句子2", "文本2"),
    "score": ("score", "similarity", "gold", "relatedness", "rating", "分数", "得分", "相似度"),
    "question": ("question", "query", "q", "问题"),
    "passage": ("passage", "context", "paragraph", "text", "段落", "上下文"),
    "answer": ("answer", "answer_text", "answers", "答案"),
}

# Why a row was left out (the page words each, with the line numbers).
MISSING, EMPTY, SCORE, TAGS, ANSWER = "missing", "empty", "score", "tags", "answer"
HEADER = "header"     # a first line naming this page's columns, which the reader did not know
HELD_OUT_EVERY = 5    # every fifth item is held out to score the run (when there are 10 or more)


def _names(role: str) -> set[str]:
    return {reader.column_key(n) for n in ROLE_NAMES[role]}


def first_line_names(table: Table) -> bool:
    """Whether the table's first row, not taken as a header by the reader (it knows pairs'
    column names), names columns of this page (question, passage, answer, tags ...)."""
    if table.header_line is not None or not table.rows:
        return False
    cells = [reader.column_key(c) for c in table.rows[0].cells]
    known = set().union(*(_names(role) for role in ROLE_NAMES))
    return bool(cells) and all(c in known for c in cells if c)


def with_header(table: Table) -> Table:
    """The table with its first row as the header when it names this page's columns."""
    if not first_line_names(table):
        return table
    first = table.rows[0]
    columns = first.cells + ("",) * max(0, table.width - len(first.cells))
    return replace(table, columns=columns, rows=table.rows[1:], header_line=first.line)


def propose(table: Table, task: FineTuneTask) -> tuple[int, ...]:
    """A column for each of the task's roles: by the header's names, else in order."""
    taken: list[int] = []
    picked = []
    for position, role in enumerate(ROLES[task]):
        found = reader.named_column(table, ROLE_NAMES[role], taken)
        if found is None:
            found = next((k for k in range(max(table.width, position + 1)) if k not in taken),
                         position)
        taken.append(found)
        picked.append(found)
    return tuple(picked)


def items_from(table: Table, task: FineTuneTask, columns: Sequence[int]) -> Rows:
    """The rows of ``table`` as the task's items (cells as written), every fifth held out, and
    the lines left out by reason."""
    items: list[tuple] = []
    skipped: dict[str, list[int]] = {}
    for row in table.rows:
        if any(k >= len(row.cells) for k in columns):
            skipped.setdefault(MISSING, []).append(row.line)
            continue
        cells = [row.cells[k] for k in columns]
        if any(not cell for cell in cells):
            skipped.setdefault(EMPTY, []).append(row.line)
            continue
        item, reason = _item(task, cells)
        if item is None:
            skipped.setdefault(reason, []).append(row.line)
            continue
        items.append(item)
    if len(items) >= 2 * HELD_OUT_EVERY:
        train = tuple(it for i, it in enumerate(items) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1)
        held = tuple(it for i, it in enumerate(items) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1)
    else:
        train, held = tuple(items), ()
    return Rows(train, held, {k: tuple(v) for k, v in skipped.items()}, len(table.rows))


def _item(task: FineTuneTask, cells: list[str]) -> tuple[tuple | None, str]:
    if task is FineTuneTask.SENTENCE_CLASS:
        return SentenceItem(cells[0], cells[1]), ""
    if task is FineTuneTask.PAIR_CLASS:
        return PairItem(cells[0], cells[1], cells[2]), ""
    if task is FineTuneTask.PAIR_SCORE:
        score = reader.number(cells[2])
        return (None, SCORE) if score is None else (ScoredPair(cells[0], cells[1], score), "")
    if task is FineTuneTask.TOKEN_TAGS:
        words, tags = tuple(cells[0].split()), tuple(cells[1].split())
        return (None, TAGS) if len(words) != len(tags) else (TaggedWords(words, tags), "")
    question, passage, answer = cells
    start = passage.find(answer)
    return (None, ANSWER) if start < 0 else (SpanItem(question, passage, start, answer), "")


def item_texts(task: FineTuneTask, item: tuple) -> list[str]:
    """The texts of an item the model reads (labels, tags and scores left out)."""
    if task is FineTuneTask.SENTENCE_CLASS:
        return [str(item[0])]
    if task is FineTuneTask.TOKEN_TAGS:
        return [" ".join(item[0])]
    return [str(item[0]), str(item[1])]
