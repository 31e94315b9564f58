"""Lists of sentence pairs as people paste or upload them, and the results as a safe CSV.

Reading is core.sentence_files.reader's (its docstring says exactly how a file is read and why no
sentence is ever changed): ``read_text`` and ``read_file`` read a table, propose the sentence and
score columns (``propose_columns``) and take the pairs out (``pairs_from``). Here too: the
agreement of the model's cosines with people's scores, on any scale or as 0/1 labels.

The reasons are codes, not sentences: the page that shows them words them in the reader's
language.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from core.sentence_files.reader import (
    MAX_BYTES,
    MAX_ROWS,
    PairList,
    Reason,
    Refusal,
    Skipped,
    Table,
    pairs_from,
    propose_columns,
    read_table,
)

MAX_PAIRS = MAX_ROWS

# Why a line was skipped (Skipped.reason), and why a whole input was refused (PairList.refused).
EXTRA, MISSING, EMPTY, SCORE = Reason.EXTRA, Reason.MISSING, Reason.EMPTY, Reason.SCORE
UNREADABLE, HEADER, JSON = Reason.UNREADABLE, Reason.HEADER, Reason.JSON
LONG, DEEP, SHIFTED = Reason.LONG, Reason.DEEP, Reason.SHIFTED
BINARY, TOO_LARGE, NOTHING = Refusal.BINARY, Refusal.TOO_LARGE, Refusal.NOTHING

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

__all__ = ["MAX_BYTES", "PairList", "Skipped", "Table", "read_file", "read_text"]


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
