"""Lists of sentence pairs as people paste or upload them, and the results as a safe CSV.

Reading a file into a table is core.sentence_files.reader's (its docstring says exactly how a
file is read and why no sentence is ever changed); what a table means as pairs is here:
``read_text`` and ``read_file`` read a table, propose the sentence and score columns
(``propose_columns``: by the header's names, else in order, else by what the columns hold) and
take the pairs out (``pairs_from``). Here too: the agreement of the model's cosines with
people's scores, on any scale or as 0/1 labels.

``pairs_from(table, a, b, score, skip_extra=False)`` takes pairs out: a row is skipped when it
lacks a field for sentence A or B (``MISSING``), a sentence cell is empty (``EMPTY``), or its score
is not a number (``SCORE``); a row with extra fields is kept (listed in ``PairList.extra``) or,
with ``skip_extra``, skipped (``EXTRA``); one whose cells do not fit is skipped as ``SHIFTED``
(a delimiter inside a sentence moved the columns after it). A row without a score field is kept
without a score (the score is optional on a pasted line). When most of the score column is not
numbers the column is not scores, and the pairs come without scores (``PairList.score_text``).

The reasons are codes, not sentences: the page that shows them words them in the reader's
language.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from core.sentence_files.reader import (
    MAX_BYTES,
    MAX_ROWS,
    Format,
    Reason,
    Refusal,
    Row,
    Skipped,
    Table,
    column_cells,
    named_column,
    number,
    numeric_share,
    read_table,
    text_columns,
)

MAX_PAIRS = MAX_ROWS

# Why a line was skipped (Skipped.reason), and why a whole input was refused (PairList.refused).
EXTRA, MISSING, EMPTY, SCORE = Reason.EXTRA, Reason.MISSING, Reason.EMPTY, Reason.SCORE
UNREADABLE, HEADER, JSON = Reason.UNREADABLE, Reason.HEADER, Reason.JSON
LONG, DEEP, SHIFTED = Reason.LONG, Reason.DEEP, Reason.SHIFTED
BINARY, TOO_LARGE, NOTHING = Refusal.BINARY, Refusal.TOO_LARGE, Refusal.NOTHING

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

__all__ = ["MAX_BYTES", "PairList", "Proposal", "Skipped", "Table", "pairs_from",
           "propose_columns", "read_file", "read_text"]


# Column names that say which column is sentence A, sentence B and the score (compared as the
# reader compares names: lowercased, without spaces, _ and -).
A_NAMES = ("sentence1", "sentencea", "texta", "text1", "s1", "sent1", "a", "premise",
           "question1", "q1", "query", "anchor", "句子1", "句子a", "句1", "文本1", "文本a")
B_NAMES = ("sentence2", "sentenceb", "textb", "text2", "s2", "sent2", "b", "hypothesis",
           "question2", "q2", "positive", "句子2", "句子b", "句2", "文本2", "文本b")
SCORE_NAMES = ("score", "label", "similarity", "gold", "goldscore", "relatedness", "rating",
               "human", "humanscore", "sim", "分数", "得分", "标签", "相似度", "评分")


@dataclass(frozen=True)
class PairList:
    """The pairs taken out of a table, and what was left out and why."""

    pairs: tuple[tuple[str, str], ...] = ()
    scores: tuple[float | None, ...] = ()     # one per pair; None where the row had none
    lines: tuple[int, ...] = ()               # the line each pair came from
    skipped: tuple[Skipped, ...] = ()
    beyond: int = 0
    beyond_from: int = 0
    refused: Refusal | None = None
    size: int = 0
    charset: str = "utf-8"
    delimiter: str = "\t"
    columns: tuple[int, int, int | None] = (0, 1, None)   # a, b, score: the table's columns
    score_text: bool = False   # the score column holds text, not numbers: no scores read
    extra: tuple[tuple[int, int], ...] = ()   # (line, extra fields) of rows kept despite extras
    width: int = 0             # the table's columns (what "extra" is counted beyond)
    header_line: int | None = None
    format: Format = Format.TEXT

    @property
    def has_scores(self) -> bool:
        return any(s is not None for s in self.scores)

    @property
    def scored(self) -> int:
        """Pairs with a score (what an agreement with the scores is computed over)."""
        return sum(s is not None for s in self.scores)

    def key(self) -> str:
        """A hash of the pairs and scores: the same list, however it was typed, is one key."""
        payload = json.dumps([self.pairs, self.scores], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def skipped_by_reason(self) -> dict[Reason, list[Skipped]]:
        out: dict[Reason, list[Skipped]] = {}
        for item in self.skipped:
            out.setdefault(item.reason, []).append(item)
        return out


@dataclass(frozen=True)
class Proposal:
    """The columns proposed for sentence A, sentence B and the score, and how they were found."""

    a: int
    b: int
    score: int | None
    how: str       # "names", "content" or "order"


def _score_rank(cells: list[str]) -> tuple[int, float] | None:
    """How much a numeric column looks like scores (higher is better), None: not scores."""
    values = [v for v in (number(c) for c in cells) if v is not None]
    if not values or len(values) < 0.9 * len(cells):
        return None
    if min(values) < -10 or max(values) > 100:
        return None                           # a year, an id
    fractional = any(v != int(v) for v in values)
    if not fractional and len(set(values)) > 11:
        return None                           # a running number
    return (2 if fractional else 1, -len(values))


def propose_columns(table: Table) -> Proposal:
    """Sentence A, B and score columns: by the header's names (sentence1 / sentence2 / score,
    text_a / text_b / label, 句子1 / 句子2 / 分数, ...); else, up to three columns, in order
    (A, B, score); else by content: the two text columns with the longest cells, in file order,
    and the numeric column that looks like scores (small numbers, not a running count)."""
    width = table.width
    a = named_column(table, A_NAMES)
    b = named_column(table, B_NAMES, [a] if a is not None else [])
    score = named_column(table, SCORE_NAMES, [x for x in (a, b) if x is not None])
    if a is not None and b is not None:
        return Proposal(a, b, score, "names")
    if width <= 3:
        return Proposal(0, 1, 2 if width == 3 else None, "order")
    ranked = []
    for k in range(width):
        cells = column_cells(table, k)
        rank = _score_rank(cells) if cells else None
        if rank is not None:
            ranked.append((rank, k))
    longest = sorted(text_columns(table)[:2])
    if len(longest) < 2:
        longest = [0, 1]
    if score is None and ranked:
        score = max(ranked)[1]
    return Proposal(longest[0], longest[1], score, "content")


def _pair_of(row: Row, a: int, b: int,
             score: int | None) -> tuple[tuple[str, str], float | None] | Skipped:
    """The row's pair and score, or why it holds none."""
    cells = row.cells
    if max(a, b) >= len(cells):
        return Skipped(row.line, Reason.MISSING, str(len(cells)))
    if not cells[a] or not cells[b]:
        return Skipped(row.line, Reason.EMPTY)
    value = None
    if score is not None and score < len(cells) and cells[score]:
        value = number(cells[score])
        if value is None:
            return Skipped(row.line, Reason.SCORE, cells[score][:40])
    return (cells[a], cells[b]), value


def pairs_from(table: Table, a: int, b: int, score: int | None = None, *,
               skip_extra: bool = False) -> PairList:
    """The pairs of columns ``a`` and ``b`` (0-based), with ``score``'s numbers when given; a
    row with more fields than the columns is kept (its picked cells all come before the extra
    fields) unless ``skip_extra``.

    A sentence is its cell, exactly (the reader stripped only surrounding whitespace)."""
    base = PairList(size=table.size, charset=table.charset, delimiter=table.delimiter,
                    beyond=table.beyond, beyond_from=table.beyond_from, columns=(a, b, score),
                    width=table.width, header_line=table.header_line, format=table.format)
    if table.refused is not None:
        return replace(base, skipped=table.skipped, refused=table.refused)
    if score is not None:
        column = [r.cells[score] for r in table.rows if score < len(r.cells) and r.cells[score]]
        score_text = bool(column) and numeric_share(column) < 0.5
    else:
        score_text = False
    use = score if score is not None and not score_text else None   # the score column read
    pairs: list[tuple[str, str]] = []
    scores: list[float | None] = []
    numbers: list[int] = []
    extra: list[tuple[int, int]] = []
    skipped = list(table.skipped)
    for row in table.rows:
        if row.extra and skip_extra:
            skipped.append(Skipped(row.line, Reason.EXTRA, str(row.extra)))
            continue
        found = _pair_of(row, a, b, use)
        if isinstance(found, Skipped):
            if row.extra and found.reason in (Reason.EMPTY, Reason.SCORE):
                # Extra fields and cells that do not fit: a delimiter inside a sentence shifted
                # the columns after it, the cause worth naming.
                found = Skipped(row.line, Reason.SHIFTED, str(row.extra))
            skipped.append(found)
            continue
        pairs.append(found[0])
        scores.append(found[1])
        numbers.append(row.line)
        if row.extra:
            extra.append((row.line, row.extra))
    skipped.sort(key=lambda s: s.line)
    return replace(base, pairs=tuple(pairs), scores=tuple(scores), lines=tuple(numbers),
                   skipped=tuple(skipped), score_text=score_text, extra=tuple(extra),
                   refused=None if pairs else Refusal.NOTHING)


def proposed_pairs(table: Table) -> PairList:
    """The pairs of the columns ``propose_columns`` picks."""
    proposal = propose_columns(table)
    return pairs_from(table, proposal.a, proposal.b, proposal.score)


def read_file(data: bytes, name: str | None = None) -> PairList:
    """A CSV, TSV, JSON Lines or Parquet file, as uploaded, in its proposed columns."""
    return proposed_pairs(read_table(data, name))


def read_text(text: str) -> PairList:
    """Pasted lines, one pair a line, in the proposed columns."""
    return proposed_pairs(read_table(text))


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
class Labels:
    """For scores that are only 0 and 1 (a paraphrase set): how well the cosine separates them.

    ``auc``: the chance that a pair labelled 1 has a higher cosine than a pair labelled 0 (ROC AUC;
    0.5 is a coin toss). ``accuracy``: the share of pairs labelled right by the best single cut,
    "cosine >= threshold means 1"; ``majority``: the share of the commoner label, what always
    guessing it gets right."""

    auc: float
    threshold: float
    accuracy: float
    majority: float
    positives: int
    negatives: int


def label_scores(cosines: Sequence[float], labels: Sequence[float]) -> Labels | None:
    """ROC AUC and the best threshold's accuracy (sklearn), when the scores are 0/1 labels with
    both labels present; None otherwise."""
    from sklearn.metrics import roc_auc_score, roc_curve

    y = [int(v) for v in labels]
    if set(labels) != {0.0, 1.0}:
        return None
    fpr, tpr, thresholds = roc_curve(y, cosines)
    positives, negatives = sum(y), len(y) - sum(y)
    right = tpr * positives + (1 - fpr) * negatives      # pairs right with "cos >= t means 1"
    best = int(right.argmax())
    threshold = float(thresholds[best])
    if not pd.notna(threshold) or threshold == float("inf"):
        threshold = float(max(cosines)) + 1e-9
    return Labels(auc=float(roc_auc_score(y, cosines)), threshold=threshold,
                  accuracy=float(right[best] / len(y)),
                  majority=max(positives, negatives) / len(y),
                  positives=positives, negatives=negatives)


@dataclass(frozen=True)
class Agreement:
    """How well the model's cosines follow the human scores."""

    n: int
    spearman: float
    pearson: float
    spearman_p: float
    pearson_p: float
    disagree: list[int] = field(default_factory=list)  # row numbers, most disagreeing first
    low: float = 0.0                # the scores' range (0-5, 0-1, 1-7 ...)
    high: float = 0.0
    labels: Labels | None = None    # scores that are only 0 and 1


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
    y = pd.Series([float(s) for s in (scores[i] for i in rows) if s is not None])
    if x.nunique() < 2 or y.nunique() < 2:
        return None
    spearman = stats.spearmanr(x, y)
    pearson = stats.pearsonr(x, y)
    gap = (x.rank(pct=True) - y.rank(pct=True)).abs()
    order = gap.sort_values(ascending=False, kind="stable").index[:k]
    return Agreement(n=len(rows), spearman=float(spearman.statistic),
                     pearson=float(pearson.statistic), spearman_p=float(spearman.pvalue),
                     pearson_p=float(pearson.pvalue), disagree=[rows[i] for i in order],
                     low=float(y.min()), high=float(y.max()),
                     labels=label_scores(x.tolist(), y.tolist()))
