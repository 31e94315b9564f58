"""Lists of sentence pairs as people paste or upload them, and the results as a safe CSV.

One pair a line: sentence A, sentence B and an optional human score, separated by tabs or by
commas (CSV quoting, so a quoted field may hold commas and quotes). A file is read as UTF-8 (a
BOM is dropped), as UTF-16 when it starts with a UTF-16 BOM, else as Latin-1; a file with NUL
bytes and no UTF-16 BOM is binary and refused. Bad lines are skipped with their line number and
the reason (``Skipped``), the good ones kept; at most ``MAX_PAIRS`` pairs from at most
``MAX_BYTES`` bytes.

The reasons are codes, not sentences: the page that shows them words them in the reader's
language.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

MAX_PAIRS = 2000
MAX_BYTES = 1_000_000
SNIFF_LINES = 50

# Why a line was skipped (Skipped.reason).
COLUMNS = "columns"      # not 2 or 3 fields (Skipped.detail: how many)
EMPTY = "empty"          # sentence A or B is empty
SCORE = "score"          # the third field is not a number (Skipped.detail: the field, cut)
UNREADABLE = "unreadable"  # the csv reader gave up on it (a field over its size limit)
HEADER = "header"        # the first line names the columns; read as a header, not a pair
# Why a whole input was refused (PairList.refused).
BINARY = "binary"
TOO_LARGE = "too_large"
NOTHING = "nothing"      # no line with a pair

# Header words a first line may use instead of a pair (compared lowercased, stripped).
HEADER_WORDS = frozenset({
    "a", "b", "sentence a", "sentence b", "sentence_a", "sentence_b", "sentence1", "sentence2",
    "sentence 1", "sentence 2", "text_a", "text_b", "text1", "text2", "s1", "s2", "score",
    "label", "similarity", "gold", "human", "句子a", "句子b", "分数", "得分",
})
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Skipped:
    line: int          # 1-based line of the list
    reason: str        # COLUMNS, EMPTY, SCORE, UNREADABLE or HEADER
    detail: str = ""


@dataclass(frozen=True)
class PairList:
    """The pairs read from a list, and what was left out and why."""

    pairs: tuple[tuple[str, str], ...] = ()
    scores: tuple[float | None, ...] = ()     # one per pair; None where the line had none
    lines: tuple[int, ...] = ()               # the line each pair came from
    skipped: tuple[Skipped, ...] = ()
    beyond: int = 0            # lines with text after the MAX_PAIRS-th pair, not read
    beyond_from: int = 0       # the first of them
    refused: str | None = None  # BINARY, TOO_LARGE or NOTHING: no pair could be read at all
    size: int = 0              # bytes (a file) or UTF-8 bytes (pasted text)
    charset: str = "utf-8"
    delimiter: str = "\t"

    @property
    def has_scores(self) -> bool:
        return any(s is not None for s in self.scores)

    def key(self) -> str:
        """A hash of the pairs and scores: the same list, however it was typed, is one key."""
        payload = json.dumps([self.pairs, self.scores], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def skipped_by_reason(self) -> dict[str, list[Skipped]]:
        out: dict[str, list[Skipped]] = {}
        for item in self.skipped:
            out.setdefault(item.reason, []).append(item)
        return out


def decode(data: bytes) -> tuple[str | None, str]:
    """(text, charset) of a file's bytes; text is None for a binary file."""
    if data.startswith(codecs.BOM_UTF8):
        return data.decode("utf-8-sig", errors="replace"), "utf-8"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), "utf-16"
    if b"\x00" in data:
        return None, "binary"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _looks_binary(text: str) -> bool:
    """More than 1 in 100 characters are control characters other than tab and line ends."""
    sample = text[:20000]
    controls = sum(1 for ch in sample
                   if ch not in "\t\n\r" and unicodedata.category(ch) == "Cc")
    return controls > max(2, len(sample) // 100)


def read_file(data: bytes) -> PairList:
    """A CSV or TSV file, as uploaded."""
    if len(data) > MAX_BYTES:
        return PairList(refused=TOO_LARGE, size=len(data))
    text, charset = decode(data)
    if text is None or _looks_binary(text):
        return PairList(refused=BINARY, size=len(data), charset="binary")
    parsed = read_text(text)
    return PairList(**{**parsed.__dict__, "size": len(data), "charset": charset})


def read_text(text: str) -> PairList:
    """Pasted lines, one pair a line."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_BYTES:
        return PairList(refused=TOO_LARGE, size=size)
    if _looks_binary(text):
        return PairList(refused=BINARY, size=size, charset="binary")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    delimiter = sniff_delimiter(lines)
    pairs: list[tuple[str, str]] = []
    scores: list[float | None] = []
    numbers: list[int] = []
    skipped: list[Skipped] = []
    beyond, beyond_from = 0, 0
    first = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(pairs) >= MAX_PAIRS:
            beyond += 1
            beyond_from = beyond_from or number
            continue
        outcome = read_line(line, delimiter, number, first)
        first = False
        if isinstance(outcome, Skipped):
            skipped.append(outcome)
        else:
            (a, b), score = outcome
            pairs.append((a, b))
            scores.append(score)
            numbers.append(number)
    return PairList(pairs=tuple(pairs), scores=tuple(scores), lines=tuple(numbers),
                    skipped=tuple(skipped), beyond=beyond, beyond_from=beyond_from,
                    refused=None if pairs else NOTHING, size=size, delimiter=delimiter)


def sniff_delimiter(lines: Sequence[str]) -> str:
    """Tab when most of the first lines with text hold a tab, else comma: sentences are full of
    commas, so csv.Sniffer's guess from character counts is often a comma inside a sentence."""
    sample = [line for line in lines[:SNIFF_LINES * 4] if line.strip()][:SNIFF_LINES]
    tabbed = sum("\t" in line for line in sample)
    return "\t" if sample and tabbed * 2 >= len(sample) else ","


def read_line(line: str, delimiter: str, number: int,
              first: bool = False) -> tuple[tuple[str, str], float | None] | Skipped:
    """One line as ((a, b), score), or why it is skipped."""
    try:
        fields = next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))
    except csv.Error as exc:
        return Skipped(number, UNREADABLE, str(exc)[:80])
    fields = [f.strip() for f in fields]
    if first and fields and all(f.lower() in HEADER_WORDS for f in fields if f):
        return Skipped(number, HEADER)
    if len(fields) == 3 and not fields[2]:
        fields = fields[:2]          # a trailing separator: no score given
    if len(fields) not in (2, 3):
        return Skipped(number, COLUMNS, str(len(fields)))
    if not fields[0] or not fields[1]:
        return Skipped(number, EMPTY)
    score = None
    if len(fields) == 3:
        score = _number(fields[2])
        if score is None:
            if first:
                return Skipped(number, HEADER)
            return Skipped(number, SCORE, fields[2][:40])
    return (fields[0], fields[1]), score


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def line_ranges(numbers: Iterable[int], most: int = 12) -> tuple[str, int]:
    """("3, 5–9, 12", how many numbers are left out) for up to ``most`` runs of line numbers."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = runs[:most]
    left = sum(hi - lo + 1 for lo, hi in runs[most:])
    text = ", ".join(f"{lo}" if lo == hi else f"{lo}–{hi}" for lo, hi in shown)
    return text, left


def csv_cell(value: object) -> object:
    """A text cell a spreadsheet cannot run: one that starts with = + - @ (or a tab or return)
    gets a leading single quote, which spreadsheets show as text. Numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def results_csv(frame: pd.DataFrame) -> bytes:
    """The results table as CSV, UTF-8 with a BOM (so a spreadsheet reads Chinese), its text
    cells neutralised (``csv_cell``)."""
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(csv_cell)
    buffer = io.StringIO()
    safe.to_csv(buffer, index=False, quoting=csv.QUOTE_MINIMAL)
    return buffer.getvalue().encode("utf-8-sig")


@dataclass(frozen=True)
class Agreement:
    """How well the model's cosines follow the human scores."""

    n: int
    spearman: float
    pearson: float
    spearman_p: float
    pearson_p: float
    disagree: list[int] = field(default_factory=list)  # row numbers, most disagreeing first


def score_agreement(cosines: Sequence[float], scores: Sequence[float | None],
                    k: int = 10) -> Agreement | None:
    """Spearman and Pearson of cosine vs score over the pairs that have a score, and the rows
    where the two disagree most: the largest gap between a pair's rank by cosine and its rank by
    score (ranks scaled to 0..1). None with fewer than 3 scored pairs or constant values."""
    from scipy import stats

    rows = [i for i, s in enumerate(scores) if s is not None]
    if len(rows) < 3:
        return None
    x = pd.Series([float(cosines[i]) for i in rows])
    y = pd.Series([float(scores[i]) for i in rows])  # type: ignore[arg-type]
    if x.nunique() < 2 or y.nunique() < 2:
        return None
    spearman = stats.spearmanr(x, y)
    pearson = stats.pearsonr(x, y)
    gap = (x.rank(pct=True) - y.rank(pct=True)).abs()
    order = gap.sort_values(ascending=False, kind="stable").index[:k]
    return Agreement(n=len(rows), spearman=float(spearman.statistic),
                     pearson=float(pearson.statistic), spearman_p=float(spearman.pvalue),
                     pearson_p=float(pearson.pvalue), disagree=[rows[i] for i in order])
