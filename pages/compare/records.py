"""The compare page's records: made once here, not on every rerun as in page.py (README,
"Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.input_key import InputKey
from core import ModelBundle
from core.compare import PairsComparison
from core.similarity.pairs import PairContributions
from core.similarity.recipe import Recipe


@dataclass(frozen=True)
class Context:
    """What every section reads: the input key, model A (the sidebar's) and model B (this
    page's), B's cache name and both names as shown."""

    key: InputKey
    bundle_a: ModelBundle
    bundle_b: ModelBundle
    name_b: str          # B's cache name (a random-weights copy's starts with its prefix)
    label_a: str
    label_b: str         # "all-MiniLM-L6-v2 with random weights", in the reader's language
    same: bool           # B is A itself, trained weights and all


@dataclass(frozen=True)
class PairOnBoth:
    """Sentence A against sentence B on each model, by each model's own recipe."""

    curve_a: np.ndarray                  # (layers of A + 1,) the cosine at every layer
    curve_b: np.ndarray                  # (layers of B + 1,)
    recipe_a: Recipe
    recipe_b: Recipe
    split_a: PairContributions | None    # token pairs at the last layer, when both mean-pool
    split_b: PairContributions | None



@dataclass(frozen=True)
class PairsOnBoth:
    """A list of pairs scored on both models, each by its own recipe."""

    cosines_a: np.ndarray                   # (pairs,)
    cosines_b: np.ndarray
    comparison: PairsComparison | None      # against people's scores, when the list has them
    disagree: tuple[int, ...]               # pairs the two models rank furthest apart
