"""The positions page's records:
PositionsContext, PcaSettings, CosineSettings.

Made once here, not on every rerun as in page.py (README, "Adding a page").
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import ModelBundle
from core.positions import TableKind
from pages.positions import figures as figs


@dataclass(frozen=True)
class PositionsContext:
    """What every section draws from: the inputs, the model and the input's marks."""

    key: InputKey
    bundle: ModelBundle
    marks: figs.InputMarks | None

    @property
    def model(self) -> str:
        return self.key.model   # the exact string the model cache is keyed on

    @property
    def n_positions(self) -> int:
        return self.bundle.config.max_position_embeddings

    @property
    def hidden(self) -> int:
        return self.bundle.config.hidden_size

    @property
    def shape(self) -> str:
        return f"{self.n_positions} × {self.hidden}"

    def names(self) -> dict[TableKind, str]:
        """The two tables' names in this run's language, naming the loaded model."""
        return figs.table_names(self.bundle.name)


@dataclass(frozen=True)
class PcaSettings:
    """The PCA tab's choices: the asked range, the range used, 2D/3D and the components; with
    ``free`` off, the range is the switcher's (the whole table until it is drawn)."""

    asked: tuple[int, int]
    start: int
    stop: int
    view: str
    pcs: tuple[int, ...]
    exact: bool = False   # "Exact values on hover": interactive figures instead of pictures
    free: bool = True     # any range (the two-ended slider), not the first positions' switcher

    @property
    def interactive(self) -> bool:
        """Plotly figures: asked for, or a 3D view (a flat picture of it could not turn)."""
        return self.exact or self.view == "3D"


@dataclass(frozen=True)
class CosineSettings:
    start: int
    stop: int
