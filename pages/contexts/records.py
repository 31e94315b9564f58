"""The contexts page's records (Context): made once here, not on every rerun as in page.py
(README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import ModelBundle


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
