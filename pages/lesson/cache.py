"""The lesson's data: every cell of a lesson run once per model and sentence, shared by all
sessions (the outputs are PyTorch's own printouts, the same in every language)."""

from __future__ import annotations

import streamlit as st

from components.cache import get_model
from core.lessons import EMBEDDING_CELLS, PARAMETER_CELLS, CellOutput, run_cells

LESSON_CELLS = {"embedding": EMBEDDING_CELLS, "parameters": PARAMETER_CELLS}


def lesson_cells(lesson: str, sentence: str) -> list[str]:
    """The lesson's cells with the sentence filled in, as the student types them."""
    return [cell.format(sentence=sentence) if "{sentence" in cell else cell
            for cell in LESSON_CELLS[lesson]]


@st.cache_data(max_entries=32, show_spinner=False)
def lesson_outputs(model_name: str, lesson: str, sentence: str) -> list[CellOutput]:
    """Every cell's output, run in order in one namespace on the loaded model."""
    return run_cells(get_model(model_name), lesson_cells(lesson, sentence))
