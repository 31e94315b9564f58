"""The lesson's data: every cell of a lesson run once per model and sentence, shared by all
sessions (the outputs are PyTorch's own printouts, the same in every language)."""

from __future__ import annotations

from components.cache import get_model, results_cache
from components.input_key import InputKey
from core.lessons import EMBEDDING_CELLS, PARAMETER_CELLS, CellOutput, run_cells

LESSON_CELLS = {"embedding": EMBEDDING_CELLS, "parameters": PARAMETER_CELLS}


def lesson_cells(lesson: str, sentence: str) -> list[str]:
    """The lesson's cells with the sentence filled in, as the student types them."""
    return [cell.format(sentence=sentence) if "{sentence" in cell else cell
            for cell in LESSON_CELLS[lesson]]


@results_cache("lesson: cell outputs", share=0.02)
def lesson_outputs(key: InputKey, lesson: str) -> list[CellOutput]:
    """Every cell's output for the sentence ``key.text_a``, run in order in one namespace on
    the loaded model (the tutorial's code tokenises it its own way)."""
    return run_cells(get_model(key.model), lesson_cells(lesson, key.text_a))
