"""New page's data: one cached function per result, each taking the InputKey first and bounded
by the bytes it holds; results hold numbers, never translated text, and are never mutated."""

from __future__ import annotations

from components.cache import get_analysis, get_model, results_cache
from components.input_key import InputKey
from core.stages import embedding_checks
from core.stages.embedding_checks import LayerNormCheck

SHARE = 0.01   # of the results budget: one small result per input


@results_cache("new_page: LayerNorm check", SHARE)
def get_layernorm_check(key: InputKey) -> LayerNormCheck:
    """The check on the analysis every page shares (a cache hit, not a second model run)."""
    return embedding_checks.layernorm_check(get_model(key.model), get_analysis(key))


def warm(model_name: str) -> None:
    """Optional: what this page needs for every input, computed when the server starts."""
