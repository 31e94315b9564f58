"""Tokens' data: the tokenizer's output alone (this page shows what the model receives, so no
model run is needed)."""

from __future__ import annotations

from components.analysis_view import encoding_of
from components.inputs import SharedInputs
from core import Encoding


def encoding(inputs: SharedInputs) -> Encoding:
    return encoding_of(inputs)
