"""The Stages page's data: one cached function per live check.

Each check takes the same ``InputKey`` as the analysis, so it reads the very stages the page
draws, [PAD] rows included when padding is on; the analysis behind it is a cache hit, not a second
run of the model. One entry per check, so a section computes only the checks it shows. Results
hold numbers, never translated text.
"""

from __future__ import annotations

from components.cache import get_analysis, get_model, results_cache
from components.input_key import InputKey
from core.stages import embedding_checks, lookup_components, pipeline
from core.stages.embedding_checks import BroadcastDemo, LayerNormCheck, OneHotCheck
from core.stages.lookup_components import LookupComparison, SegmentRows
from core.stages.pipeline import AutogradTrace

SHARE = 0.03   # of the results budget, for each check: small arrays, a few tokens x hidden


@results_cache("stages: autograd trace", SHARE)
def get_autograd_trace(key: InputKey) -> AutogradTrace:
    return pipeline.autograd_trace(get_model(key.model), get_analysis(key))


@results_cache("stages: LayerNorm check", SHARE)
def get_layernorm_check(key: InputKey) -> LayerNormCheck:
    return embedding_checks.layernorm_check(get_model(key.model), get_analysis(key))


@results_cache("stages: one-hot check", SHARE)
def get_one_hot_check(key: InputKey) -> OneHotCheck:
    return embedding_checks.one_hot_check(get_model(key.model), get_analysis(key))


@results_cache("stages: broadcasting", SHARE)
def get_broadcast_demo(key: InputKey) -> BroadcastDemo:
    return embedding_checks.broadcast_demo(get_model(key.model), get_analysis(key))


@results_cache("stages: lookups", SHARE)
def get_lookup_comparison(key: InputKey) -> LookupComparison:
    return lookup_components.compare_lookups(get_analysis(key))


@results_cache("stages: segment rows", SHARE)
def get_segment_rows(key: InputKey) -> SegmentRows:
    return lookup_components.segment_rows(get_model(key.model), get_analysis(key))
