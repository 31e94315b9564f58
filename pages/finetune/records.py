"""The Fine-tuning page's records: made once here, not on every rerun as in page.py (README,
"Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from components.input_key import InputKey
from core import ModelBundle
from core.finetune.tasks import FineTuneTask
from serving.training import Request


class DataSource(StrEnum):
    """Where the items come from: a built-in set in one language, or the reader's file."""

    ENGLISH = "en"
    CHINESE = "zh"
    FILE = "file"


class Mode(StrEnum):
    FULL = "full"         # every weight trained with the head
    FROZEN = "frozen"     # the head alone on frozen features (ELMo's way)


@dataclass(frozen=True)
class Rows:
    """A user's rows turned into items: what was kept, and the lines left out by reason (the
    reasons of this page's reading; the reader's own are on the table)."""

    train: tuple[tuple, ...] = ()
    held_out: tuple[tuple, ...] = ()
    skipped: dict[str, tuple[int, ...]] = field(default_factory=dict)
    lines: int = 0


@dataclass(frozen=True)
class Data:
    """The items a run trains and is scored on, and their key on the board."""

    source: DataSource
    key: str
    train: tuple[tuple, ...]
    held_out: tuple[tuple, ...]
    labels: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Context:
    """What every section reads: the input key, the base model, the run asked for and its data
    (None: no usable data yet, the reason said above the tabs)."""

    key: InputKey
    bundle: ModelBundle
    task: FineTuneTask
    request: Request | None
    data: Data | None
