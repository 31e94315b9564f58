"""A person's own probing set: a CoNLL-U treebank, or a table of text and label.

CoNLL-U (Universal Dependencies' format) is read with the ``conllu`` package, one sentence block
at a time so that a message can name the file's line. A probe reads the syntactic words (lines
whose ID is a whole number) and their UPOS tags: a multiword token's own line (``3-4 don't``,
the surface form) is left out and its words (``do``, ``n't``) kept; an empty node (``8.1``,
enhanced dependencies only) is not a word of the sentence and is left out. ``ConllSet`` counts
both, for the page to say.

A table (CSV, TSV, pasted text: ``core.sentence_files.read_table``, nothing changed) has one
example a row: ``text, label`` for a label per sentence, ``text, word index, label`` for one
marked word (``core.probes.probe.marked_words`` counts the words from 0), or ``words, tags``
(both split at spaces, as many tags as words) for a tag per word.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import conllu
from conllu.exceptions import ParseException

from core.errors import N_, InputError
from core.probes.probe import ProbeTask
from core.sentence_files import read_table

MAX_SENTENCES = 2000   # a probe fits a classifier per layer and fold: more is minutes of work


@dataclass(frozen=True)
class ConllSet:
    """A CoNLL-U file's sentences as (words, UPOS tags) items, and what was left out."""

    items: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    lines: tuple[int, ...]          # each sentence's first line in the file
    multiword_tokens: int = 0       # surface lines (``3-4``) left out; their words kept
    empty_nodes: int = 0            # ``8.1`` lines left out
    beyond: int = 0                 # sentences after MAX_SENTENCES, not read

    @property
    def words(self) -> int:
        return sum(len(words) for words, _ in self.items)


def _blocks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each sentence block: lines between blank lines."""
    blocks: list[tuple[int, str]] = []
    current: list[str] = []
    start = 1
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line)
        elif current:
            blocks.append((start, "\n".join(current)))
            current = []
    if current:
        blocks.append((start, "\n".join(current)))
    return blocks


def read_conllu(text: str) -> ConllSet:
    """A CoNLL-U text as items for ``ProbeTask.WORD_TAGS`` (see the module doc). InputError
    naming the line for a block that is not CoNLL-U or a word with no UPOS tag."""
    items: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    lines: list[int] = []
    multiword = empty = beyond = 0
    for start, block in _blocks(text):
        if all(line.startswith("#") for line in block.split("\n")):
            continue       # comments alone (a file's opening remarks): no sentence
        if len(items) >= MAX_SENTENCES:
            beyond += 1
            continue
        try:
            sentences = conllu.parse(block + "\n\n")
        except ParseException as exc:
            raise InputError(N_("Line {line} and the lines after it are not CoNLL-U (ten "
                                "tab-separated columns a word): {reason}"),
                             line=start, reason=str(exc)[:200]) from exc
        for sentence in sentences:
            words, tags = [], []
            for offset, token in enumerate(sentence):
                ident = token["id"]
                if not isinstance(ident, int):   # (3, "-", 4) a range, (8, ".", 1) empty node
                    if isinstance(ident, tuple) and len(ident) == 3 and ident[1] == "-":
                        multiword += 1
                    else:
                        empty += 1
                    continue
                tag = token["upos"]
                if not tag or tag == "_":
                    raise InputError(N_("Line {line}: the word “{word}” has no part-of-speech "
                                        "tag (UPOS, the fourth column)."),
                                     line=start + _comment_lines(block) + offset,
                                     word=str(token["form"]))
                words.append(str(token["form"]))
                tags.append(str(tag))
            if words:
                items.append((tuple(words), tuple(tags)))
                lines.append(start)
    if not items:
        raise InputError(N_("No sentence with words was found: a CoNLL-U file has one word a "
                            "line (ten tab-separated columns) and a blank line after each "
                            "sentence."))
    return ConllSet(tuple(items), tuple(lines), multiword, empty, beyond)


def _comment_lines(block: str) -> int:
    return sum(1 for line in block.split("\n") if line.startswith("#"))


@dataclass(frozen=True)
class TableSet:
    """A table's rows as items of one task, with the line each came from."""

    task: ProbeTask
    items: tuple[Any, ...]
    lines: tuple[int, ...]
    skipped: int = 0           # rows the table reader left out (blank, unreadable)


def read_labelled_table(data: bytes | str, task: ProbeTask | str, name: str | None = None
                        ) -> TableSet:
    """A table's rows as ``task``'s items (see the module doc); InputError naming the line of
    a row that does not fit."""
    task = ProbeTask(task)
    table = read_table(data, name)
    if table.refused is not None:
        raise InputError(N_("This file could not be read as a table ({reason}): give a CSV or "
                            "tab-separated file, one example a row."), reason=str(table.refused))
    need = 3 if task is ProbeTask.MARKED_WORDS else 2
    items: list[Any] = []
    lines: list[int] = []
    for row in table.rows[:MAX_SENTENCES]:
        cells = [c.strip() for c in row.cells]
        if len(cells) < need or not all(cells[:need]):
            raise InputError(N_("Line {line}: filled columns: {count}; this task needs "
                                "{need}: {form}."), line=row.line,
                             count=sum(bool(c) for c in cells), need=need, form=_FORM[task])
        if task is ProbeTask.WORD_TAGS:
            words, tags = cells[0].split(), cells[1].split()
            if len(words) != len(tags):
                raise InputError(N_("Line {line}: words: {words}, tags: {tags}. Give one tag "
                                    "per word, both separated by spaces."),
                                 line=row.line, words=len(words), tags=len(tags))
            items.append((tuple(words), tuple(tags)))
        elif task is ProbeTask.MARKED_WORDS:
            if not cells[1].lstrip("-").isdigit():
                raise InputError(N_("Line {line}: the word's number “{value}” is not a whole "
                                    "number (the sentence's words are counted from 0)."),
                                 line=row.line, value=cells[1])
            items.append((cells[0], int(cells[1]), cells[2]))
        else:
            items.append((cells[0], cells[1]))
        lines.append(row.line)
    if not items:
        raise InputError(N_("The table has no rows: give one example a row."))
    return TableSet(task, tuple(items), tuple(lines), len(table.skipped))


_FORM = {
    ProbeTask.WORD_TAGS: "words, tags",
    ProbeTask.SENTENCE_LABELS: "text, label",
    ProbeTask.MARKED_WORDS: "text, word number, label",
}
