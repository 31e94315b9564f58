"""The tutorials as lessons: code cells exactly as a student types them, run live.

``EMBEDDING_CELLS`` follows the embedding-layer tutorial, ``PARAMETER_CELLS`` the parameter-count
tutorial; ``run_cells`` runs them notebook-style on a loaded model and returns what each prints.
"""

from core.lessons.cells import EMBEDDING_CELLS, PARAMETER_CELLS, setup_cell
from core.lessons.runner import CellOutput, run_cells

__all__ = ["EMBEDDING_CELLS", "PARAMETER_CELLS", "CellOutput", "run_cells", "setup_cell"]
