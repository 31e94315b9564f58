"""Read a file of sentences as people have it (pasted text, CSV, TSV, JSON Lines, Parquet)
without changing a single cell: pair lists (core.similarity.pair_lists) and corpora
(core.contexts.user_corpus) both read their tables through here, and each says what its table
means.

No input raises out of the reader: a whole input it cannot use is refused with a code
(``Refusal``), a line it cannot use is skipped with its line number and a code (``Reason``).

What is read, and how (the page shows the choice made):

- **Size first.** Bytes over ``MAX_BYTES`` are refused before anything is decoded; an upload's
  size is checked before its bytes are read (``size_refusal``).
- **What the bytes are.** Parquet by its magic bytes (``PAR1`` at both ends; a file named
  ``.parquet`` without them is refused as not Parquet); an Excel workbook (a zip holding ``xl/``,
  or the old OLE format) is refused whatever its name, with how to save it as CSV; other bytes
  with NUL characters or many control characters are binary and refused. A first line that is a
  JSON object (or a name ending in ``.jsonl`` / ``.json``) makes JSON Lines.
- **Characters.** UTF-8 (a BOM dropped), UTF-16 with its BOM; else GB18030 when the bytes are
  valid GB2312 (a Chinese file saved by an older Windows), else Latin-1. The charset used is
  part of the table, and the page says so when it is not UTF-8.
- **Lines.** ``\\r\\n`` and ``\\r`` end a line as ``\\n`` does; no other character does (a form
  feed or a U+2028 inside a sentence stays in it). Blank lines are counted, never read as rows. A
  line over ``MAX_LINE_CHARS`` characters is skipped (``LONG``): no sentence a model reads is that
  long, and the csv module refuses a field over 131,072 characters.
- **Delimiter.** A tab when at least half of the first 50 lines with text hold one; else a comma
  when they hold commas, a semicolon when they hold semicolons and no commas; else the line is one
  field. ``lines=True`` (a corpus pasted or in a ``.txt`` file, one sentence a line) splits on
  tabs only, so commas and semicolons stay in the sentence.
- **Quoting, tab-separated.** A quote is a character: ``"Hi," she said`` reaches the model as
  written, tabs alone split fields. The file is read with CSV quoting only when it says so: every
  field that holds a ``"`` is wholly quoted the CSV way (starts and ends with ``"``, every quote
  inside doubled) and at least one such field holds a doubled quote, which only a CSV writer
  makes. A quoted field with no quote inside (``"Yes."``) proves nothing and is kept as written.
- **Quoting, comma- or semicolon-separated.** CSV quoting (a field in quotes may hold the
  delimiter; ``""`` is a quote), one line at a time and strict: a line whose quotes do not close
  is skipped with its line number (``UNREADABLE``), never merged with the next line.
- **JSON Lines.** A line that is not a JSON object is skipped (``JSON``); one nested deeper than
  Python's parser goes (it raises RecursionError) is skipped as ``DEEP``. A first line that is an
  object too deep to parse still makes the file JSON Lines, whatever its name.
- **Cells.** Each cell is stripped of surrounding whitespace (``str.strip``), and nothing else is
  done to it. In JSON Lines a string value is the cell; a number or true/false is written as JSON
  writes it; null is an empty cell. In Parquet, text is the cell, numbers as Python writes them.
- **Header.** The first row names the columns when none of its cells is a number and one is a
  known column name (sentence1, text_a, score, label, 句子1, 分数 ...) or holds text in a column
  whose other rows are numbers. JSON Lines and Parquet name their columns themselves.
- **Rows.** Every row keeps its line number (a record's number for Parquet). The table has as
  many columns as its header, or as most rows have. A row with more fields keeps its first
  ``width`` cells and says how many more it had (``Row.extra``, trailing empty fields not
  counted): the STS benchmark's test file, as it ships, has 7 fields on most lines and 9 on 284,
  whose last two name the source. A tab inside a sentence makes an extra field too (and shifts
  the columns after it), so the table's reader decides (pair_lists' ``skip_extra``). At most
  ``MAX_ROWS`` rows are read; the lines after are counted.

Reasons and refusals are codes; the page words them.

Long because reading a file is one path from bytes to rows (size, kind, characters, lines,
delimiter, quoting, JSON Lines, Parquet, header, width), each step a few lines that only make
sense beside the others, and this docstring says every choice; what a table means is its
readers' (pairs, corpora), not here.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

MAX_BYTES = 10_000_000     # a file or pasted text; an upload over this is never read
MAX_ROWS = 20_000          # rows read (pairs compared); the lines after are counted
MAX_LINE_CHARS = 100_000   # a longer line is skipped (Reason.LONG)
SNIFF_LINES = 50
SAMPLE_ROWS = 400          # rows looked at to propose columns


class Format(StrEnum):
    TEXT = "text"          # delimited text: CSV, TSV, pasted lines
    JSONL = "jsonl"
    PARQUET = "parquet"


class Quoting(StrEnum):
    NONE = "none"          # a quote is a character (tab-separated text)
    CSV = "csv"            # CSV quoting


class Reason(StrEnum):
    """Why a line was skipped (``Skipped.reason``)."""

    HEADER = "header"          # the first line names the columns
    EXTRA = "extra"            # more fields than the columns, skipped when asked (detail: how many)
    MISSING = "missing"        # no field for a picked sentence column (detail: fields it has)
    EMPTY = "empty"            # sentence A or B is empty
    SCORE = "score"            # the score is not a number (detail: the cell, cut)
    SHIFTED = "shifted"        # extra fields, and the picked cells do not fit (detail: how many)
    UNREADABLE = "unreadable"  # quotes that break CSV's rules (detail: the csv module's words)
    LONG = "long"              # a line over MAX_LINE_CHARS (detail: its length)
    JSON = "json"              # not a JSON object (detail: why)
    DEEP = "deep"              # a JSON value nested deeper than the parser goes


class Refusal(StrEnum):
    """Why a whole input was refused (nothing could be read)."""

    TOO_LARGE = "too_large"
    BINARY = "binary"
    EXCEL = "excel"
    NOT_PARQUET = "not_parquet"
    NOTHING = "nothing"        # no row with text, or none holds a pair
    HEADER_ONLY = "header_only"


# A first row with one of these (compared lowercased, without spaces, _ and -) names columns:
# the names of pair lists' columns (core.similarity.pair_lists says which is which), then others.
HEADER_NAMES = ("sentence1", "sentencea", "texta", "text1", "s1", "sent1", "a", "premise",
                "question1", "q1", "query", "anchor", "句子1", "句子a", "句1", "文本1", "文本a",
                "sentence2", "sentenceb", "textb", "text2", "s2", "sent2", "b", "hypothesis",
                "question2", "q2", "positive", "句子2", "句子b", "句2", "文本2", "文本b",
                "score", "label", "similarity", "gold", "goldscore", "relatedness", "rating",
                "human", "humanscore", "sim", "分数", "得分", "标签", "相似度", "评分")
OTHER_NAMES = ("sentence", "text", "genre", "filename", "file", "source", "year", "id",
               "index", "idx", "pairid", "句子", "文本", "编号")
_NAME_CHARS = re.compile(r"[\s_\-]+")
_EXCEL_ZIP = (b"xl/", b"[Content_Types].xml")


def column_key(name: str) -> str:
    """A column name as it is compared with the known names."""
    return _NAME_CHARS.sub("", name.strip().lower())


KNOWN_NAMES = frozenset(column_key(n) for n in (*HEADER_NAMES, *OTHER_NAMES))


@dataclass(frozen=True)
class Skipped:
    line: int          # 1-based line of the file (a record's number for Parquet)
    reason: Reason
    detail: str = ""


@dataclass(frozen=True)
class Row:
    line: int
    cells: tuple[str, ...]     # at most the table's width; fewer when the line had fewer fields
    extra: int = 0             # fields after the table's width (at least one of them not empty)


@dataclass(frozen=True)
class Table:
    """Every row read, with its line number, and what was left out and why."""

    columns: tuple[str, ...] = ()    # the header's names ("" where the file names none)
    rows: tuple[Row, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    format: Format = Format.TEXT
    delimiter: str = ""              # "\t", ",", ";" (text), "" for JSON Lines and Parquet
    quoting: Quoting = Quoting.NONE
    charset: str = "utf-8"
    size: int = 0                    # bytes (a file) or UTF-8 bytes (pasted text)
    lines: int = 0                   # lines (records) with text, the header included
    blank: int = 0                   # blank lines, not rows
    header_line: int | None = None
    beyond: int = 0                  # lines with text after the MAX_ROWS-th row, not read
    beyond_from: int = 0
    refused: Refusal | None = None   # nothing could be read, and why
    detail: str = ""                 # what the refusal saw (a parser's words)

    @property
    def width(self) -> int:
        return len(self.columns)

    @property
    def extra_rows(self) -> tuple[Row, ...]:
        """The rows that had more fields than the table's columns."""
        return tuple(r for r in self.rows if r.extra)


# --- bytes to text -------------------------------------------------------------------------------

def size_refusal(size: int | None) -> Table | None:
    """The refusal of an input of ``size`` bytes, before any of it is read (None: not too big)."""
    if size is not None and size > MAX_BYTES:
        return Table(refused=Refusal.TOO_LARGE, size=size)
    return None


def decode(data: bytes) -> tuple[str | None, str]:
    """(text, charset) of a file's bytes; text is None for a binary file."""
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8):].decode("utf-8", errors="replace"), "utf-8"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), "utf-16"
    if b"\x00" in data:
        return None, "binary"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        data.decode("gb2312")     # both bytes of every character in 0xA1-0xFE: Chinese text
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def looks_binary(text: str) -> bool:
    """More than 1 in 100 characters are control characters other than tab and line ends."""
    sample = text[:20000]
    controls = sum(1 for ch in sample
                   if ch not in "\t\n\r" and unicodedata.category(ch) == "Cc")
    return controls > max(2, len(sample) // 100)


def _kind_of_bytes(data: bytes, name: str) -> Format | Refusal | None:
    """Format.PARQUET, Refusal.EXCEL / NOT_PARQUET / BINARY, or None for text."""
    lower = name.lower()
    if data[:4] == b"PAR1" and data[-4:] == b"PAR1":
        return Format.PARQUET
    if data[:4] == b"PK\x03\x04":
        return Refusal.EXCEL if any(m in data[:4096] for m in _EXCEL_ZIP) or lower.endswith(
            (".xlsx", ".xlsm")) else Refusal.BINARY
    if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":   # OLE: an old .xls
        return Refusal.EXCEL
    if lower.endswith((".parquet", ".pq")):
        return Refusal.NOT_PARQUET
    return None


# --- reading -------------------------------------------------------------------------------------

def read_table(data: bytes | str, name: str | None = None, *, lines: bool = False) -> Table:
    """A table from a file's bytes (``name``: the file's name, for its extension) or from pasted
    text. Never raises for bad input: a refused table says why (``refused``). ``lines``: text is
    one sentence a line unless tabs split it (a corpus; the module's docstring)."""
    if isinstance(data, str):
        size = len(data.encode("utf-8", errors="replace"))
        too_large = size_refusal(size)
        if too_large is not None:
            return too_large
        if looks_binary(data):
            return Table(refused=Refusal.BINARY, size=size, charset="binary")
        return replace(_read_text(data, name or "", lines), size=size)
    too_large = size_refusal(len(data))
    if too_large is not None:
        return too_large
    kind = _kind_of_bytes(data, name or "")
    if kind == Format.PARQUET:
        return replace(_read_parquet(data), size=len(data))
    if isinstance(kind, Refusal):
        return Table(refused=kind, size=len(data), charset="binary")
    text, charset = decode(data)
    if text is None or looks_binary(text):
        return Table(refused=Refusal.BINARY, size=len(data), charset="binary")
    return replace(_read_text(text, name or "", lines), size=len(data), charset=charset)


def read_upload(upload: Any, name: str | None = None) -> Table:   # any binary file object
    """A table from an uploaded file object (Streamlit's UploadedFile, an open binary file): its
    size is checked first, so a file over ``MAX_BYTES`` is refused without being read."""
    size = getattr(upload, "size", None)
    if size is None and hasattr(upload, "seek") and hasattr(upload, "tell"):
        here = upload.tell()
        size = upload.seek(0, io.SEEK_END)
        upload.seek(here)
    too_large = size_refusal(size)
    if too_large is not None:
        return too_large
    data = upload.getvalue() if hasattr(upload, "getvalue") else upload.read()
    return read_table(data, name if name is not None else getattr(upload, "name", None))


def _split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _read_text(text: str, name: str, one_a_line: bool = False) -> Table:
    lines = _split_lines(text)
    first = next((line for line in lines if line.strip()), "")
    if name.lower().endswith((".jsonl", ".json", ".ndjson")) or _json_object(first):
        return _read_json_lines(lines)
    delimiter = sniff_delimiter(lines, tabs_only=one_a_line)
    quoting = sniff_quoting(lines, delimiter)
    raw: list[tuple[int, list[str]]] = []
    skipped: list[Skipped] = []
    blank = beyond = beyond_from = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            blank += 1 if number < len(lines) or line else 0   # not the file's last newline
            continue
        if len(raw) > MAX_ROWS:       # one more than MAX_ROWS: the first may be the header
            beyond += 1
            beyond_from = beyond_from or number
            continue
        if len(line) > MAX_LINE_CHARS:
            skipped.append(Skipped(number, Reason.LONG, str(len(line))))
            continue
        fields = split_line(line, delimiter, quoting)
        if isinstance(fields, str):
            skipped.append(Skipped(number, Reason.UNREADABLE, fields[:80]))
        else:
            raw.append((number, [f.strip() for f in fields]))
    return _table(raw, skipped, Format.TEXT, delimiter, quoting, blank, beyond, beyond_from,
                  lines=sum(1 for line in lines if line.strip()),
                  header=not (one_a_line and delimiter == ""))


def sniff_delimiter(lines: Sequence[str], tabs_only: bool = False) -> str:
    """Tab when at least half of the first lines with text hold a tab; else comma, or semicolon
    where there are semicolons and no commas: sentences are full of commas, so csv.Sniffer's
    guess from character counts is often a comma inside a sentence. ``tabs_only``: a tab or
    nothing ("": the line is one field)."""
    sample = [line for line in lines[:SNIFF_LINES * 4] if line.strip()][:SNIFF_LINES]
    if not sample:
        return "" if tabs_only else "\t"
    if sum("\t" in line for line in sample) * 2 >= len(sample):
        return "\t"
    if tabs_only:
        return ""
    commas = sum("," in line for line in sample)
    semicolons = sum(";" in line for line in sample)
    if semicolons * 2 >= len(sample) and not commas:
        return ";"
    return "," if commas else "\t"


def _csv_quoted(cell: str) -> bool:
    """Wholly quoted the CSV way: "...", every quote inside doubled."""
    if len(cell) < 2 or not (cell.startswith('"') and cell.endswith('"')):
        return False
    inner = cell[1:-1]
    return inner.replace('""', "").count('"') == 0


def sniff_quoting(lines: Sequence[str], delimiter: str) -> Quoting:
    """CSV quoting for comma and semicolon; for tabs, only when the file says so (the module's
    docstring): every field holding a quote is CSV-quoted and one holds a doubled quote."""
    if not delimiter:
        return Quoting.NONE      # one field a line: nothing to quote
    if delimiter != "\t":
        return Quoting.CSV
    doubled = False
    for line in lines:
        for field_ in line.split("\t"):
            cell = field_.strip()
            if '"' not in cell:
                continue
            if not _csv_quoted(cell):
                return Quoting.NONE
            doubled = doubled or '""' in cell[1:-1]
    return Quoting.CSV if doubled else Quoting.NONE


def split_line(line: str, delimiter: str, quoting: str) -> list[str] | str:
    """A line's fields, or the csv module's words when its quotes do not close."""
    if not delimiter:
        return [line]
    if quoting == Quoting.NONE:
        return line.split(delimiter)
    try:
        return next(csv.reader([line], delimiter=delimiter, strict=True,
                               skipinitialspace=delimiter != "\t"))
    except csv.Error as exc:
        return str(exc)
    except StopIteration:
        return [""]


def _json_object(line: str) -> bool:
    """Whether a line is a JSON object: one too deep to parse counts (its line is then skipped
    as DEEP, with the file read as JSON Lines, whatever its name)."""
    line = line.strip()
    if not (line.startswith("{") and line.endswith("}")) or len(line) > MAX_LINE_CHARS:
        return False
    try:
        return isinstance(json.loads(line), dict)
    except RecursionError:
        return True
    except ValueError:
        return False


def _json_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _read_json_lines(lines: list[str]) -> Table:
    records: list[tuple[int, dict[str, str]]] = []
    skipped: list[Skipped] = []
    blank = beyond = beyond_from = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            blank += 1 if number < len(lines) or line else 0
            continue
        if len(records) >= MAX_ROWS:
            beyond += 1
            beyond_from = beyond_from or number
            continue
        if len(line) > MAX_LINE_CHARS:
            skipped.append(Skipped(number, Reason.LONG, str(len(line))))
            continue
        try:
            value = json.loads(line)
            # Cells now, inside the try: dumping a nested value recurses as loading it did.
            cells = ({str(k): _json_cell(v) for k, v in value.items()}
                     if isinstance(value, dict) else None)
        except RecursionError:
            skipped.append(Skipped(number, Reason.DEEP))
            continue
        except ValueError as exc:
            skipped.append(Skipped(number, Reason.JSON, str(exc)[:80]))
            continue
        if cells is None:
            skipped.append(Skipped(number, Reason.JSON, type(value).__name__))
            continue
        records.append((number, cells))
    names = list(dict.fromkeys(k for _, record in records for k in record))
    rows = tuple(Row(number, tuple(record.get(k, "") for k in names))
                 for number, record in records)
    return Table(columns=tuple(names), rows=rows, skipped=tuple(skipped), format=Format.JSONL,
                 blank=blank, beyond=beyond, beyond_from=beyond_from,
                 lines=len(records) + len(skipped),
                 refused=None if rows else (Refusal.NOTHING))


def _parquet_cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").strip()
    return str(value)


def _read_parquet(data: bytes) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
        names = tuple(str(n) for n in table.column_names)
        total = table.num_rows
        kept = table.slice(0, MAX_ROWS)
        columns = [kept.column(i).to_pylist() for i in range(len(names))]
        rows = tuple(Row(i + 1, tuple(_parquet_cell(col[i]) for col in columns))
                     for i in range(kept.num_rows))
    # pyarrow raises many kinds (ArrowException and its subclasses, OSError, ValueError,
    # TypeError from a column type with no Python form, RecursionError from a deep nesting): a
    # file it cannot turn into rows is one it could not read.
    except (pa.ArrowException, OSError, ValueError, TypeError, RecursionError) as exc:
        return Table(refused=Refusal.NOT_PARQUET, detail=str(exc)[:120], charset="binary")
    return Table(columns=names, rows=rows, format=Format.PARQUET, charset="binary",
                 lines=total, beyond=max(0, total - MAX_ROWS),
                 beyond_from=MAX_ROWS + 1 if total > MAX_ROWS else 0,
                 refused=None if rows else Refusal.NOTHING)


# --- header and width ----------------------------------------------------------------------------

def number(text: str) -> float | None:
    """A cell as a finite number (a decimal comma allowed), else None."""
    try:
        value = float(text.replace(",", ".")) if text else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _is_header(first: list[str], rest: list[list[str]]) -> bool:
    if any(number(c) is not None for c in first):
        return False                 # a name is never a number
    if any(column_key(c) in KNOWN_NAMES for c in first if c):
        return True
    sample = rest[:SAMPLE_ROWS]
    for k, cell in enumerate(first):
        if not cell or number(cell) is not None:
            continue
        cells = [r[k] for r in sample if k < len(r) and r[k]]
        if len(cells) >= 2 and sum(number(c) is not None for c in cells) >= 0.8 * len(cells):
            return True
    return False


def _table(raw: list[tuple[int, list[str]]], skipped: list[Skipped], fmt: Format, delimiter: str,
           quoting: Quoting, blank: int, beyond: int, beyond_from: int, lines: int,
           header: bool = True) -> Table:
    base = Table(format=fmt, delimiter=delimiter, quoting=quoting, blank=blank, lines=lines)
    if not raw:
        return replace(base, skipped=tuple(skipped),
                       refused=Refusal.NOTHING)
    header_line = None
    names: list[str] = []
    if header and _is_header(raw[0][1], [f for _, f in raw[1:]]):
        header_line, names = raw[0][0], raw[0][1]
        skipped.insert(0, Skipped(header_line, Reason.HEADER))
        raw = raw[1:]
    if len(raw) > MAX_ROWS:        # the row kept for a header that was not one
        extra_line = raw[MAX_ROWS][0]
        beyond, beyond_from = beyond + len(raw) - MAX_ROWS, extra_line
        raw = raw[:MAX_ROWS]
    if not raw:
        return replace(base, columns=tuple(names), skipped=tuple(skipped),
                       header_line=header_line, refused=Refusal.HEADER_ONLY,
                       beyond=beyond, beyond_from=beyond_from)
    if header_line is not None:
        width = len(names)
    else:
        counts = Counter(len(f) for _, f in raw)
        width = max(counts, key=lambda n: (counts[n], n))
        names = [""] * width
    rows = []
    for number_, fields in raw:
        used = len(fields)
        while used > width and not fields[used - 1]:   # a line ending in delimiters
            used -= 1
        rows.append(Row(number_, tuple(fields[:width]), used - min(used, width)))
    skipped.sort(key=lambda s: s.line)
    return replace(base, columns=tuple(names), rows=tuple(rows), skipped=tuple(skipped),
                   header_line=header_line, beyond=beyond, beyond_from=beyond_from,
                   refused=None if rows else Refusal.NOTHING)


# --- columns --------------------------------------------------------------------------------------

def column_cells(table: Table, k: int) -> list[str]:
    """Column ``k``'s cells with text, over the first ``SAMPLE_ROWS`` rows."""
    return [r.cells[k] for r in table.rows[:SAMPLE_ROWS] if k < len(r.cells) and r.cells[k]]


def named_column(table: Table, names: Sequence[str], taken: Sequence[int] = ()) -> int | None:
    """The first column (not in ``taken``) named like one of ``names``, tried in their order;
    names are compared lowercased, without spaces, _ and - (``column_key``)."""
    keys = [column_key(c) for c in table.columns]
    for name in names:
        wanted = column_key(name)
        for k, key in enumerate(keys):
            if key == wanted and k not in taken:
                return k
    return None


def text_columns(table: Table) -> list[int]:
    """The columns that hold text (under a fifth of their cells numbers), longest cells on
    average first (over the first ``SAMPLE_ROWS`` rows)."""
    text = []
    for k in range(table.width):
        cells = column_cells(table, k)
        if cells and numeric_share(cells) < 0.2:
            text.append((-sum(len(c) for c in cells) / len(cells), k))
    return [k for _, k in sorted(text)]


def numeric_share(cells: list[str]) -> float:
    """The share of ``cells`` that are numbers (0 for none)."""
    return sum(number(c) is not None for c in cells) / len(cells) if cells else 0.0
