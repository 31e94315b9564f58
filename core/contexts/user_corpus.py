"""A corpus a user brings: pasted lines, or a column of a CSV, TSV, JSON Lines or Parquet file.

Everything is read by ``core.sentence_files.reader``, the pair lists' reader (each cell as written,
stripped of surrounding white space; a quote in tab-separated text is a character; sizes, charsets
and binary files checked there). Pasted text and ``.txt`` files are read with ``lines=True``: one
sentence a line, commas and quotes included; a line ``sentence<TAB>label`` (when at least half of
the lines hold a tab) gives each sentence a label. The sentence and label columns are found by
the reader's ``named_column`` and ``text_columns``. At most ``MAX_SENTENCES`` sentences or
``MAX_TOKENS`` tokens ([CLS] and [SEP] counted), whichever comes first; the rows after are
counted, not read. No row is left out without its line number: the lines the reader skipped and
the rows whose sentence cell is empty are kept with their reasons (``UserCorpus.left_out``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from core.contexts.corpus_data import CorpusRecord
from core.models import ModelBundle
from core.sentence_files.reader import (
    Reason,
    Refusal,
    Skipped,
    Table,
    named_column,
    read_table,
    text_columns,
)
from core.vocabulary import is_cjk

MAX_SENTENCES = 2_000
MAX_TOKENS = 32_000
MAX_LABELS = 12          # distinct labels a map can colour apart
SENTENCE_NAMES = ("sentence", "sentences", "text", "texts", "content", "句子", "文本", "内容")
LABEL_NAMES = ("label", "labels", "sense", "class", "category", "tag", "group", "标签", "类别",
               "词义")


@dataclass(frozen=True)
class UserCorpus:
    """The sentences taken from a table, and what was left out."""

    records: tuple[CorpusRecord, ...] = ()
    lines: tuple[int, ...] = ()      # the line (record) each sentence came from
    tokens: int = 0                  # tokens of the kept sentences, [CLS] and [SEP] included
    empty_lines: tuple[int, ...] = ()   # the lines (records) whose sentence cell was empty
    split_lines: tuple[int, ...] = ()   # lines with more fields than the table's columns
    beyond: int = 0                  # rows with a sentence left out by the limits
    beyond_from: int = 0             # the first such row's line
    by_tokens: bool = False          # the token limit (not the sentence limit) cut the corpus
    truncated: int = 0               # sentences longer than the model reads (cut)
    labels: tuple[str, ...] = ()     # distinct labels, in order of appearance
    refused: Refusal | None = None   # why nothing could be read
    read: int = 0                    # rows read from the table
    skipped: tuple[Skipped, ...] = ()   # lines the reader skipped (Skipped.reason says why)

    @property
    def labelled(self) -> bool:
        return bool(self.labels)

    @property
    def empty(self) -> int:
        """How many rows had an empty sentence cell."""
        return len(self.empty_lines)

    def left_out(self) -> tuple[Skipped, ...]:
        """Every line of the table not read as a sentence, in line order, with its reason: the
        reader's skips (``skipped``), the rows with an empty sentence cell (``Reason.EMPTY``)
        and those with more fields than the columns (``Reason.EXTRA``), so a page can name each
        line and say why. The rows beyond the limits are not in it (``beyond`` and
        ``beyond_from`` say where they start)."""
        empty = (Skipped(line, Reason.EMPTY) for line in self.empty_lines)
        split = (Skipped(line, Reason.EXTRA) for line in self.split_lines)
        return tuple(sorted((*self.skipped, *empty, *split), key=lambda s: s.line))

    def key(self) -> str:
        """A hash of the sentences and labels: the same corpus, however it came, is one key."""
        payload = json.dumps([[r.sentence, r.sense] for r in self.records], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def table_of_text(text: str) -> Table:
    """Pasted text: one sentence a line, or ``sentence<TAB>label`` lines."""
    return read_table(text, lines=True)


def table_of_file(data: bytes, name: str) -> Table:
    """An uploaded file: ``.txt`` one sentence a line (or tab and label); others as the table
    they are (CSV, TSV, JSON Lines, Parquet)."""
    return read_table(data, name, lines=name.lower().endswith(".txt"))


def _cells(table: Table, k: int) -> list[str]:
    return [row.cells[k] if k < len(row.cells) else "" for row in table.rows]


def sentence_column(table: Table) -> int:
    """The column named like a sentence (sentence, text, 句子 ...), else the one with the
    longest cells on average."""
    named = named_column(table, SENTENCE_NAMES)
    if named is not None:
        return named
    longest = text_columns(table)
    return longest[0] if longest else 0


def label_column(table: Table, sentence: int) -> int | None:
    """A column named like a label (label, sense, 标签 ...) other than the sentence's, else a
    column with 2 to ``MAX_LABELS`` distinct values (1 to, when it is the only other column:
    ``sentence<TAB>label`` lines); None when there is none."""
    named = named_column(table, LABEL_NAMES, [sentence])
    if named is not None:
        return named
    for k in range(table.width):
        least = 1 if table.width == 2 else 2
        if k != sentence and least <= len(set(_cells(table, k)) - {""}) <= MAX_LABELS:
            return k
    return None


def language_of(sentence: str) -> str:
    """"zh" when a third or more of the letters are Chinese characters, else "en"."""
    letters = [ch for ch in sentence if ch.isalpha()]
    return "zh" if letters and sum(map(is_cjk, letters)) * 3 >= len(letters) else "en"


def corpus_from(bundle: ModelBundle, table: Table, sentence: int,
                label: int | None = None) -> UserCorpus:
    """The sentences of column ``sentence`` (labels from column ``label``), up to the limits."""
    if table.refused:
        return UserCorpus(refused=table.refused, skipped=table.skipped)
    # A row with more fields than the columns had a separator inside a cell (a tab in a
    # sentence): its sentence is not the cell as written, so it is left out with its line.
    split = tuple(row.line for row in table.rows if row.extra)
    rows = [(row.line, row.cells[sentence] if sentence < len(row.cells) else "",
             (row.cells[label] if label is not None and label < len(row.cells) else "") or None)
            for row in table.rows if not row.extra]
    texts = [r for r in rows if r[1]]
    empty = tuple(line for line, text, _ in rows if not text)
    head = texts[:MAX_SENTENCES]
    lengths = [len(ids) for ids in bundle.tokenize(
        [t for _, t, _ in head], add_special_tokens=True, truncation=False,
        return_attention_mask=False, return_token_type_ids=False)["input_ids"]] if head else []
    limit = int(bundle.config.max_position_embeddings)
    kept, total = 0, 0
    for n in lengths:
        if total + min(n, limit) > MAX_TOKENS:
            break
        total += min(n, limit)
        kept += 1
    by_tokens = kept < len(head)
    used = head[:kept]
    beyond = len(texts) - kept + table.beyond
    beyond_from = texts[kept][0] if kept < len(texts) else table.beyond_from
    records = tuple(CorpusRecord(t, None, lab, language_of(t)) for _, t, lab in used)
    labels = tuple(dict.fromkeys(r.sense for r in records if r.sense))
    if not records:
        return UserCorpus(empty_lines=empty, split_lines=split, refused=Refusal.NOTHING,
                          read=len(rows), skipped=table.skipped)
    return UserCorpus(records=records, lines=tuple(line for line, _, _ in used), tokens=total,
                      empty_lines=empty, split_lines=split, beyond=beyond,
                      beyond_from=beyond_from,
                      by_tokens=by_tokens,
                      truncated=sum(n > limit for n in lengths[:kept]), labels=labels,
                      read=len(rows), skipped=table.skipped)
