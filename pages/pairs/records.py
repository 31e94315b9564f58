"""The pairs page's records (Context, the list's source, the table's orders): made once here,
not on every rerun as in page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from components.input_key import InputKey
from core import Encoding, ModelBundle


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
    encoding: Encoding | None   # the sidebar's input as every page tokenises it (None: refused)


@dataclass(frozen=True)
class ListSource:
    """What a list was read from: the box's text, or a file's bytes and name. Hashed by its
    data (a str or bytes object caches its own hash)."""

    data: str | bytes
    name: str | None = None


class SortOrder(StrEnum):
    """How the results table is ordered (its labels: pages.pairs.page.SORT_LABELS)."""

    LINE = "line"
    COSINE_HIGH = "cosine_high"
    COSINE_LOW = "cosine_low"
    SCORE_HIGH = "score_high"
    GAP = "gap"


@dataclass(frozen=True)
class Picked:
    """The columns a list is read in (0-based; score None: no score column), and whether lines
    with more fields than the columns are skipped rather than read."""

    a: int = 0
    b: int = 1
    score: int | None = None
    skip_extra: bool = False
    how: str = "order"       # how the columns were found: names, content, order, yours

    @property
    def columns(self) -> tuple[int, int, int | None]:
        return self.a, self.b, self.score


@dataclass
class PairsState:
    """What the Many pairs tab keeps between runs: one object in the session, read and written
    through pages.pairs.page.state(). The widgets bound to the link (the column pickers, the
    skip switch, the order, the row) keep their values under their own keys, as Streamlit needs;
    each run copies what they hold here, so the rest of the page reads one typed object. The
    uploaded file is components.kept_upload's."""

    text: str | None = None          # the box's list, kept while another tab is open
    proposed_for: tuple[object, ...] | None = None   # the table the pickers were proposed for
    picked: Picked = Picked()        # this run's columns and skip switch
    shown_lines: tuple[int, ...] = ()   # the lines of the table's page on screen (row clicks)
    row: int = 0                     # the line opened token by token (0: none)
