"""The parameters page's records:
Context, FormulaSettings, CustomSettings.

Made once here, not on every rerun as in page.py (README, "Adding a page").
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Encoding, ModelBundle
from core.parameters.listing import NamedParameter
from core.parameters.presets import Sizes


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
