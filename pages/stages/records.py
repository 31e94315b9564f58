"""The stages page's records:
StagesContext, HeatmapSettings.

Made once here, not on every rerun as in page.py (README, "Adding a page").
"""

from __future__ import annotations

from dataclasses import dataclass

from streamlit.delta_generator import DeltaGenerator

from components.input_key import InputKey
from components.labels import token_labels
from core import Analysis, ModelBundle
from pages.stages import figures as figs


@dataclass(frozen=True)
class StagesContext:
    """What every section reads: the input key, the model and the analysis of the input."""

    key: InputKey
    bundle: ModelBundle
    result: Analysis

    @property
    def stage_names(self) -> list[str]:
        return list(self.result.stages)

    @property
    def labels(self) -> list[str]:
        return token_labels(self.result.tokens)

    @property
    def row_labels(self) -> list[str]:
        return figs.csv_labels(self.result.tokens)

    @property
    def segment_b(self) -> int | None:
        """Row of the first token of sentence B, None for one sentence."""
        ids = self.result.token_type_ids
        return ids.index(1) if 1 in ids else None


@dataclass(frozen=True)
class HeatmapSettings:
    layout: str                 # ONE_AT_A_TIME or STACKED
    picked: tuple[str, ...]     # the stages asked for when stacked
    scale: str                  # PER_STAGE or SHARED
    clip: bool
    window: range               # the hidden dimensions drawn
    exact: bool                 # interactive figures instead of images
    stage_place: DeltaGenerator  # where the stage slider goes in the box when stepping
