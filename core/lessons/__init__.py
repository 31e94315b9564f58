"""The tutorials as lessons: code cells exactly as a student types them, run live.

``EMBEDDING_CELLS`` follows the embedding-layer tutorial, ``PARAMETER_CELLS`` the parameter-count
tutorial, ``PRETRAINING_CELLS`` the one from language models to BERT; ``run_cells`` runs them
notebook-style on a loaded model and returns what each prints.
"""

from core.lessons.cells import EMBEDDING_CELLS, PARAMETER_CELLS, PRETRAINING_CELLS, setup_cell
from core.lessons.runner import CellOutput, run_cells

__all__ = [
    "EMBEDDING_CELLS", "PARAMETER_CELLS", "PRETRAINING_CELLS", "CellOutput", "run_cells",
    "setup_cell",
]
