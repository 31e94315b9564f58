"""The Stages page's core: what it shows beyond the stage arrays of ``core.analysis``.

- ``pipeline``: how each stage is computed (the tutorials' expressions), the autograd node that
  made each one, which dimensions to draw and one colour range for several stages;
- ``printout``: ``print(tensor)`` of a stage, by torch's own rules;
- ``embedding_checks``: LayerNorm taken apart, the lookup as a one-hot product, broadcasting;
- ``lookup_components``: the three lookups compared token by token, and the segment rows.

Each live check is its own function returning its own dataclass. Nothing here imports Streamlit
or changes the shared model.
"""

from core.stages.embedding_checks import (
    LAYERNORM_COLUMNS,
    BroadcastDemo,
    LayerNormCheck,
    OneHotCheck,
    broadcast_demo,
    embeddings_output,
    layernorm_check,
    one_hot_check,
    one_hot_matrix,
)
from core.stages.lookup_components import (
    COMPONENT_COLUMNS,
    LookupComparison,
    SegmentRows,
    compare_lookups,
    segment_rows,
)
from core.stages.pipeline import (
    DEFAULT_DIMS,
    MODULE_OUTPUT,
    AutogradTrace,
    autograd_trace,
    colour_bound,
    dimension_window,
    stage_expression,
)
from core.stages.printout import torch_printout, torch_size

__all__ = [
    "COMPONENT_COLUMNS", "DEFAULT_DIMS", "LAYERNORM_COLUMNS", "MODULE_OUTPUT", "AutogradTrace",
    "BroadcastDemo", "LayerNormCheck", "LookupComparison", "OneHotCheck", "SegmentRows",
    "autograd_trace", "broadcast_demo", "colour_bound", "compare_lookups", "dimension_window",
    "embeddings_output", "layernorm_check", "one_hot_check", "one_hot_matrix", "segment_rows",
    "stage_expression", "torch_printout", "torch_size",
]
