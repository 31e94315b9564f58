"""The records the encoder page passes between its functions: Pick, Context.

Kept out of page.py because Streamlit runs a page's file anew on every rerun, and making a
dataclass costs about 1 ms each time (measured); an imported module makes them once.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.analysis_view import (
    analysis_of,
)
from components.input_key import InputKey
from core import Analysis, Encoding, ModelBundle
from core.encoder import (
    EncoderSteps,
    HeadView,
)


@dataclass(frozen=True)
class Pick:
    layer: int
    head: int


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
    steps: EncoderSteps | None   # None on the tabs that pick no layer
    view: HeadView | None

    @property
    def encoding(self) -> Encoding:
        return self.steps.encoding if self.steps else self.analysis().encoding

    def analysis(self) -> Analysis:
        """The whole model's run of the input (cached, shared with the other pages), for the
        tabs that need more than one layer."""
        return analysis_of(self.key, notices=False)   # shown with the steps
