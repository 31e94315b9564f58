"""The records the parameters page passes between its functions:
Context, FormulaSettings, CustomSettings.

Kept out of page.py because Streamlit runs a page's file anew on every rerun, and making a
dataclass costs about 1 ms each time (measured); an imported module makes them once.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Encoding, ModelBundle
from core.parameters.listing import NamedParameter
from core.parameters.presets import (
    Sizes,
)


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
    rows: tuple[NamedParameter, ...]
    total: int
    encoding: Encoding | None   # None: the text cannot be tokenised (its message is shown)


@dataclass(frozen=True)
class FormulaSettings:
    picked: str       # LOADED or a preset's name


@dataclass(frozen=True)
class CustomSettings:
    sizes: Sizes | None
    problems: tuple[str, ...]   # translated reasons the sizes are refused
