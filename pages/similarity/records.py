"""The records the similarity page passes between its functions: Settings, Context, WordChoice.

Kept out of page.py because Streamlit runs a page's file anew on every rerun, and making a
dataclass costs about 1 ms each time (measured); an imported module makes them once.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Analysis, ModelBundle
from core.similarity.anisotropy import (
    CorpusStats,
)


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
