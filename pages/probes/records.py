"""The probes page's records: made once here, not on every rerun as in page.py (README,
"Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import ModelBundle


@dataclass(frozen=True)
class Context:
    """What every section reads: the input key, the model of the sidebar and the language of
    its built-in sets by default ("en" or "zh", from its vocabulary)."""

    key: InputKey
    bundle: ModelBundle
    language: str
