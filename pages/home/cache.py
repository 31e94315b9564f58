"""Home's data: the tokens of the input (no model run) and the model's parameter count."""

from __future__ import annotations

from components.analysis_view import encoding_of
from components.cache import parameter_count
from components.inputs import SharedInputs
from core import Encoding


def encoding(inputs: SharedInputs) -> Encoding:
    """The tokenizer's output alone: Home shows shapes, which need no model run."""
    return encoding_of(inputs)


def model_parameters(inputs: SharedInputs) -> int:
    return parameter_count(inputs.model)
