"""The Checks page's table: built from core.checks' rows, no st. calls."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from components import palette
from components.html_table import row_tint
from components.i18n import _
from core.checks import CheckRow, Verdict, tolerance_text, verdict_text

EXPLAINED_TINT = "#1f77b4"   # blue: a published figure that is off, and exactly why
NOT_RUN_TINT = palette.GRID

TINTS = {
    Verdict.HELD: palette.GOOD,
    Verdict.EXPLAINED: EXPLAINED_TINT,
    Verdict.OFF: palette.HIGHLIGHT,
    Verdict.NEEDS_MODEL: NOT_RUN_TINT,
    Verdict.NEEDS_FILE: NOT_RUN_TINT,
}
MARKS = {Verdict.HELD: "✓ ", Verdict.EXPLAINED: "✓ ", Verdict.OFF: "✗ "}


def check_cell(row: CheckRow) -> str:
    """The model the figure is of, then what is checked (and the row's note)."""
    lines = [row.model, row.text(row.what, _)]
    if row.note:
        lines.append(row.text(row.note, _))
    return "\n".join(lines)


def published_cell(row: CheckRow) -> str:
    """The published value, and its source beside it."""
    return row.published + "\n" + _("source: {source}").format(source=_(row.source))


def ours_cell(row: CheckRow) -> str:
    """Our value, and the tolerance it is held to."""
    if row.ours is not None:
        return row.ours + "\n" + _("tolerance: {tolerance}").format(
            tolerance=tolerance_text(row, _))
    if row.verdict == Verdict.NEEDS_MODEL:
        return _("not run: {model} is not on this machine").format(model=row.model)
    return _("not run: no file given")


def verdict_cell(row: CheckRow) -> str:
    return MARKS.get(row.verdict, "") + verdict_text(row, _)


def checks_frame(rows: Sequence[CheckRow]) -> pd.DataFrame:
    """One row per check: what, published (with its source), ours (with the tolerance),
    verdict."""
    return pd.DataFrame({
        _("check"): [check_cell(r) for r in rows],
        _("published"): [published_cell(r) for r in rows],
        _("ours, live"): [ours_cell(r) for r in rows],
        _("verdict"): [verdict_cell(r) for r in rows],
    })


def row_styles(rows: Sequence[CheckRow]) -> list[str]:
    """Green where held, blue where explained, red where off, grey where not run; the verdict
    column says the same in words."""
    return [row_tint(TINTS[r.verdict], bold=r.verdict == Verdict.OFF) for r in rows]


def counts_line(rows: Sequence[CheckRow]) -> str:
    count = {v: sum(1 for r in rows if r.verdict == v) for v in Verdict}
    return _("{held} held · {explained} explained · {off} off · not run here: {models} "
             "without their model, {files} without a file").format(
        held=count[Verdict.HELD], explained=count[Verdict.EXPLAINED], off=count[Verdict.OFF],
        models=count[Verdict.NEEDS_MODEL], files=count[Verdict.NEEDS_FILE])


def missing_models(rows: Sequence[CheckRow]) -> list[tuple[str, str]]:
    """(model, command) for each model a check needs and this machine lacks, once each."""
    found: dict[str, str] = {}
    for row in rows:
        if row.verdict == Verdict.NEEDS_MODEL and row.command:
            found.setdefault(row.model, row.command)
    return list(found.items())
