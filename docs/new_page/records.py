"""The new_page page's records (Context): made once here, not on every rerun as in
page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Analysis, ModelBundle


@dataclass(frozen=True)
class Context:
    """What every section reads: the input key, the model and the analysis of the input."""

    key: InputKey
    bundle: ModelBundle
    result: Analysis
