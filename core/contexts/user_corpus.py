"""A corpus a user brings: pasted lines, or a column of a CSV, TSV, JSON Lines or Parquet file.

Files are read by ``core.sentence_files.reader`` (each cell as written, stripped of surrounding
white space; a quote in tab-separated text is a character). Pasted text and ``.txt`` files are one
sentence a line, commas and quotes included; a line ``sentence<TAB>label`` (when at least half of
the lines hold one tab) gives each sentence a label. At most ``MAX_SENTENCES`` sentences or
``MAX_TOKENS`` tokens ([CLS] and [SEP] counted), whichever comes first; the rows after are
counted, not read.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from core.contexts.corpus_data import CorpusRecord
from core.models import ModelBundle
from core.sentence_files.reader import (
    Refusal,
    Row,
    Table,
    column_key,
    decode,
    looks_binary,
    read_table,
    size_refusal,
)

MAX_SENTENCES = 2_000
MAX_TOKENS = 32_000
MAX_LABELS = 12          # distinct labels a map can colour apart
SENTENCE_NAMES = ("sentence", "sentences", "text", "texts", "content", "句子", "文本", "内容")
LABEL_NAMES = ("label", "labels", "sense", "class", "category", "tag", "group", "标签", "类别",
               "词义")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class UserCorpus:
    """The sentences taken from a table, and what was left out."""

    records: tuple[CorpusRecord, ...] = ()
    lines: tuple[int, ...] = ()      # the line (record) each sentence came from
    tokens: int = 0                  # tokens of the kept sentences, [CLS] and [SEP] included
    empty: int = 0                   # rows whose sentence cell was empty
    beyond: int = 0                  # rows with a sentence left out by the limits
    beyond_from: int = 0             # the first such row's line
    by_tokens: bool = False          # the token limit (not the sentence limit) cut the corpus
    truncated: int = 0               # sentences longer than the model reads (cut)
    labels: tuple[str, ...] = ()     # distinct labels, in order of appearance
    refused: str | None = None       # a core.sentence_files.reader Refusal
    read: int = 0                    # rows read from the table

    @property
    def labelled(self) -> bool:
        return bool(self.labels)

    def key(self) -> str:
        """A hash of the sentences and labels: the same corpus, however it came, is one key."""
        payload = json.dumps([[r.sentence, r.sense] for r in self.records], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _lines_table(text: str) -> Table:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    rows = tuple(Row(k, (line.strip(),)) for k, line in enumerate(lines, start=1) if line.strip())
    return Table(columns=("",), rows=rows, lines=len(rows),
                 size=len(text.encode("utf-8", errors="replace")))


def _tabbed(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()][:200]
    return bool(lines) and sum(line.count("\t") == 1 for line in lines) * 2 >= len(lines)


def table_of_text(text: str) -> Table:
    """Pasted text: one sentence a line, or ``sentence<TAB>label`` lines."""
    if looks_binary(text):
        return Table(refused=Refusal.BINARY, charset="binary")
    if _tabbed(text):
        return read_table(text)
    return _lines_table(text)


def table_of_file(data: bytes, name: str) -> Table:
    """An uploaded file: ``.txt`` one sentence a line (or tab and label); others through the
    table reader (CSV, TSV, JSON Lines, Parquet)."""
    if name.lower().endswith(".txt"):
        too_large = size_refusal(len(data))
        if too_large is not None:
            return too_large
        text, charset = decode(data)
        if text is None or looks_binary(text):
            return Table(refused=Refusal.BINARY, size=len(data), charset="binary")
        return table_of_text(text)
    return read_table(data, name)


def _cells(table: Table, k: int) -> list[str]:
    return [row.cells[k] if k < len(row.cells) else "" for row in table.rows]


def sentence_column(table: Table) -> int:
    """The column named like a sentence (sentence, text, 句子 ...), else the one with the
    longest cells on average."""
    keys = [column_key(c) for c in table.columns]
    for name in SENTENCE_NAMES:
        if column_key(name) in keys:
            return keys.index(column_key(name))
    if table.width <= 1:
        return 0
    return max(range(table.width), key=lambda k: sum(len(c) for c in _cells(table, k)))


def label_column(table: Table, sentence: int) -> int | None:
    """A column named like a label (label, sense, 标签 ...) other than the sentence's, else a
    column with 2 to ``MAX_LABELS`` distinct values (1 to, when it is the only other column:
    ``sentence<TAB>label`` lines); None when there is none."""
    keys = [column_key(c) for c in table.columns]
    for name in LABEL_NAMES:
        if column_key(name) in keys and keys.index(column_key(name)) != sentence:
            return keys.index(column_key(name))
    for k in range(table.width):
        least = 1 if table.width == 2 else 2
        if k != sentence and least <= len(set(_cells(table, k)) - {""}) <= MAX_LABELS:
            return k
    return None


def language_of(sentence: str) -> str:
    """"zh" when a third or more of the letters are Chinese characters, else "en"."""
    letters = [ch for ch in sentence if ch.isalpha()]
    return "zh" if letters and len(_CJK.findall(sentence)) * 3 >= len(letters) else "en"


def corpus_from(bundle: ModelBundle, table: Table, sentence: int,
                label: int | None = None) -> UserCorpus:
    """The sentences of column ``sentence`` (labels from column ``label``), up to the limits."""
    if table.refused:
        return UserCorpus(refused=table.refused)
    rows = [(row.line, row.cells[sentence] if sentence < len(row.cells) else "",
             (row.cells[label] if label is not None and label < len(row.cells) else "") or None)
            for row in table.rows]
    texts = [r for r in rows if r[1]]
    empty = len(rows) - len(texts)
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
        return UserCorpus(empty=empty, refused=Refusal.NOTHING, read=len(rows))
    return UserCorpus(records=records, lines=tuple(line for line, _, _ in used), tokens=total,
                      empty=empty, beyond=beyond, beyond_from=beyond_from, by_tokens=by_tokens,
                      truncated=sum(n > limit for n in lengths[:kept]), labels=labels,
                      read=len(rows))
