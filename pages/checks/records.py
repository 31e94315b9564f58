"""The Checks page's records (the outcome of a benchmark file): made once here, not on every
rerun as in page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import CheckRow
from core.errors import ExplorerError
from core.similarity.pair_lists import PairList


@dataclass(frozen=True)
class StsOutcome:
    """A benchmark file, read and compared: the pairs read (and what was skipped), then the STS
    row, or the error that stopped it. Never mutated."""

    parsed: PairList
    row: CheckRow | None = None
    error: ExplorerError | None = None
