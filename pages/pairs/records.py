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
