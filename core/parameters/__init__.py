"""Parameter counts of a BertModel: from the config (counting), in the model (listing), as
tables (tables), for the published checkpoints and custom sizes (presets), and the path of one
input through the model with its shapes (architecture)."""

from core.parameters.architecture import SketchStep, architecture_steps
from core.parameters.counting import (
    ParameterTerm,
    closed_form_latex,
    count_from_config,
    group_totals,
    hand_formula_terms,
    omitted_terms,
    parameter_terms,
)
from core.parameters.listing import (
    Block,
    NamedParameter,
    Reconciled,
    blocks,
    filter_parameters,
    meta_count,
    model_counts,
    named_parameter_list,
    reconcile,
    tree_nodes,
)
from core.parameters.presets import (
    PRESETS,
    TUTORIAL_MODEL,
    Sizes,
    config_from_sizes,
    preset_config,
    presets_frame,
    sizes_from_config,
    validate_sizes,
)

__all__ = [
    "PRESETS", "TUTORIAL_MODEL", "Block", "NamedParameter", "ParameterTerm", "Reconciled",
    "Sizes", "SketchStep", "architecture_steps", "blocks", "closed_form_latex",
    "config_from_sizes", "count_from_config", "filter_parameters", "group_totals",
    "hand_formula_terms", "meta_count", "model_counts", "named_parameter_list",
    "omitted_terms", "parameter_terms", "preset_config", "presets_frame", "reconcile",
    "sizes_from_config", "tree_nodes", "validate_sizes",
]
