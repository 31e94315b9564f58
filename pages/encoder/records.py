"""The encoder page's records (Pick, Context): made once here, not on every rerun as in
page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.analysis_view import analysis_of
from components.input_key import InputKey
from core import Analysis, Encoding, ModelBundle
from core.encoder import EncoderSteps, HeadView
from core.words import Word


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
    exact: bool = False          # interactive figures instead of images (the tab's switch)

    @property
    def encoding(self) -> Encoding:
        return self.steps.encoding if self.steps else self.analysis().encoding

    @property
    def layer_steps(self) -> EncoderSteps:
        """The picked layer's steps: the tabs that pick a layer always have them."""
        if self.steps is None:
            raise ValueError("this tab picks no layer")
        return self.steps

    @property
    def head_view(self) -> HeadView:
        """The picked head's slice of the layer: the tabs that pick a head always have it."""
        if self.view is None:
            raise ValueError("this tab picks no head")
        return self.view

    def analysis(self) -> Analysis:
        """The whole model's run of the input (cached, shared with the other pages), for the
        tabs that need more than one layer."""
        return analysis_of(self.key, notices=False)   # shown with the steps


@dataclass(frozen=True)
class WordAttention:
    """One layer's attention by word: the words drawn and (heads, W, W) float32."""
    words: tuple[Word, ...]
    probs: np.ndarray


@dataclass(frozen=True)
class AttentionRows:
    """The rows (and columns) of an attention map: each token, or word, keeps its position in
    the input ("3 name" is the same token on every tab). ``labels`` as the map shows them,
    ``rows`` the downloads' row names, ``boundary`` the first row of sentence B (None without
    one)."""
    labels: tuple[str, ...]
    rows: tuple[str, ...]
    boundary: int | None


@dataclass(frozen=True)
class AttentionMaps:
    """Every layer's attention of one input as the Attention tab draws it: by token or by word,
    with or without [CLS], [SEP] and padding. ``probs`` (layers, heads, n, n) float32;
    ``labels`` the rows' and columns' labels, ``rows`` the downloads' row names, ``boundary``
    the first row of sentence B (None without one)."""
    labels: tuple[str, ...]
    rows: tuple[str, ...]
    boundary: int | None
    probs: np.ndarray
