"""The treemap and the table layouts of the Parameters page.

The tables' rows come from core.parameter_tables and core.presets; here is only how they look:
which columns are shown, how wide, how numbers are written. The widths keep every table inside a
1280-pixel projector with the sidebar open.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.parameter_listing import TreeNodes

COUNT = st.column_config.NumberColumn(format="localized")
SMALL = st.column_config.Column(width="small")
LONG_TABLE = 20  # rows: a longer table scrolls instead of pushing the page down

BREAKDOWN_COLUMNS = {
    # The module path is in the CSV, the treemap's hover and the list of named parameters.
    "group": None,
    "module": None,
    "stage": st.column_config.Column(width=95),
    "block": st.column_config.Column(width=160),
    "tensors": st.column_config.Column(width=220),
    "per_instance": st.column_config.NumberColumn("each", format="localized", width=90),
    "instances": st.column_config.NumberColumn("×", width=36),
    "parameters": st.column_config.NumberColumn(format="localized", width=100),
    "share": st.column_config.NumberColumn("share", format="%.3f %%", width=75),
}
RECONCILE_COLUMNS = {"each": COUNT, "times": SMALL, "equal": SMALL, "from config": COUNT,
                     "in the model": COUNT}
TERMS_COLUMNS = {"total": COUNT}
LIST_COLUMNS = {"numel": COUNT}

_SYMBOLS = {"N": "layers", "h": "hidden size", "i": "intermediate size", "V": "vocabulary",
            "P": "positions", "S": "token types (segments)"}
_SYMBOL_WIDTHS = {"N": 42, "h": 55, "i": 55, "V": 72, "P": 45, "S": 38}
PRESET_COLUMNS = {
    "model": st.column_config.Column(width=195),
    "heads": st.column_config.Column(width=50),
    "equal": None,  # said once below the table
    **{k: st.column_config.NumberColumn(k, help=v, width=_SYMBOL_WIDTHS[k], format="localized")
       for k, v in _SYMBOLS.items()},
    "from config": st.column_config.NumberColumn(format="localized", width=105),
    "on meta device": st.column_config.NumberColumn(format="localized", width=115),
}


def show_table(frame: pd.DataFrame, columns: Mapping | None = None) -> None:
    """A table without index: whole when short, scrolling when long."""
    height = "content" if len(frame) <= LONG_TABLE else 600
    st.dataframe(frame, hide_index=True, width="stretch", height=height,
                 column_config=dict(columns or {}))


def treemap_figure(nodes: TreeNodes) -> go.Figure:
    """Root -> group -> (layer ->) block, each rectangle's area its share of the parameters."""
    tree = go.Figure(
        go.Treemap(
            ids=nodes.ids,
            labels=nodes.labels,
            parents=nodes.parents,
            values=nodes.values,
            customdata=nodes.paths,
            branchvalues="total",
            textinfo="label+value+percent root",
            texttemplate="%{label}<br>%{value:,}<br>%{percentRoot:.1%}",
            hovertemplate="%{label}<br>%{customdata}<br>%{value:,} parameters<br>"
            "%{percentRoot:.2%} of the model<extra></extra>",
            maxdepth=-1,
            sort=False,  # keep the model's order: embeddings, layer_1 ... layer_N, pooler
        )
    )
    tree.update_layout(height=520, margin={"l": 4, "r": 4, "t": 4, "b": 4}, font={"size": 15})
    return tree
