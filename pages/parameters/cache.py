"""The Parameters page's data: cached parameter lists, shared by every session.

The loaded model's ``named_parameters()`` depend on the model alone, so they live in
``st.cache_resource`` keyed on the model name string and are never mutated. The presets and a
custom config are built on the meta device (every shape, no memory, no weights), keyed on the
preset's name or on the seven sizes, in bounded ``st.cache_data``.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.cache import MODEL_CACHE_ENTRIES, get_model, parameter_count
from components.i18n import LANGUAGES
from core.parameters.listing import (
    Block,
    NamedParameter,
    blocks,
    filter_parameters,
    meta_count,
    meta_model,
    named_parameter_list,
    tree_nodes,
)
from core.parameters.presets import PRESETS, Sizes, config_from_sizes, preset_config
from core.parameters.tables import breakdown_frame, parameters_frame
from pages.parameters.figures import treemap_figure
from pages.parameters.pictures import treemap_html

# A custom count is one int; a class trying sizes on the projector stays far below this.
CUSTOM_ENTRIES = 32


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES)
def get_live_parameters(model_name: str) -> list[NamedParameter]:
    """The loaded model's named_parameters, classified. A per-model table: never mutated."""
    return named_parameter_list(get_model(model_name).model)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES)
def get_model_blocks(model_name: str) -> list[Block]:
    """The loaded model's parameters grouped by module. Never mutated."""
    return blocks(get_live_parameters(model_name))


def warm(model_name: str) -> None:
    """At server start: the model's named parameters, grouped."""
    get_model_blocks(model_name)


# The Where tab depends on the model alone, so a rerun for a new sentence rebuilds none of it.
@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES * len(LANGUAGES))
def get_treemap(model_name: str, language: str) -> go.Figure:
    """The treemap in ``language`` (the run's language, passed as the key). Never mutated:
    st.plotly_chart reads a copy."""
    return treemap_figure(tree_nodes(get_model_blocks(model_name)), get_model(model_name).label,
                          parameter_count(model_name))


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES * len(LANGUAGES))
def get_treemap_picture(model_name: str, language: str) -> str:
    """The treemap as a picture (HTML) in ``language``, what the tab opens with."""
    return treemap_html(tree_nodes(get_model_blocks(model_name)), get_model(model_name).label,
                        parameter_count(model_name), "parameters-treemap")


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES * 2)
def get_breakdown(model_name: str, per_layer: bool) -> pd.DataFrame:
    """The grouped breakdown (English names; the page translates a copy). Never mutated."""
    return breakdown_frame(get_model_blocks(model_name), per_layer=per_layer)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES * 8)
def get_named_list(model_name: str, query: str) -> tuple[list[NamedParameter], pd.DataFrame]:
    """The named parameters whose names hold every word of ``query``, and their table. Never
    mutated."""
    rows = filter_parameters(get_live_parameters(model_name), query)
    return rows, parameters_frame(rows)


@st.cache_data(max_entries=len(PRESETS))
def get_preset_parameters(name: str) -> list[NamedParameter]:
    """A preset's named_parameters, from BertModel(config) built on the meta device."""
    return named_parameter_list(meta_model(preset_config(name)))


@st.cache_data(max_entries=CUSTOM_ENTRIES)
def get_custom_meta_count(
    layers: int, hidden: int, heads: int, intermediate: int, vocab: int, positions: int, types: int
) -> int:
    """sum(p.numel()) of a custom BertModel built on the meta device (sizes already validated)."""
    sizes = Sizes(layers, hidden, heads, intermediate, vocab, positions, types)
    return meta_count(config_from_sizes(sizes))
