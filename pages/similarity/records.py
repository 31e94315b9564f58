"""The similarity page's records:
Settings, Context, WordChoice.

Made once here, not on every rerun as in page.py (README, "Adding a page").
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Analysis, ModelBundle
from core.similarity.anisotropy import CorpusStats


@dataclass(frozen=True)
class Settings:
    stage: str
    mode: str


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
    result: Analysis
    stats: CorpusStats
    settings: Settings


@dataclass(frozen=True)
class WordChoice:
    first: int
    second: int
    separately: bool
    control: str
