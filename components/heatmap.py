"""Heatmaps of (rows x columns) matrices: tokens x dimensions, or tokens x tokens.

Figures carry float32 values, rounded for the hover, and only the window of columns asked for,
so a page never ships a 512 x 768 grid of doubles to the browser by accident.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from components.downloads import safe_filename


# The modebar's camera button saves the figure as a PNG named after the view.
def png_config(name: str, scale: int = 2) -> dict:
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": safe_filename(name), "scale": scale},
    }


def heatmap_figure(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | Sequence[int] | None = None,
    *,
    title: str = "",
    zmin: float | None = None,
    zmax: float | None = None,
    colorscale: str = "RdBu_r",
    hover: str = "token %{y}<br>dim %{x}<br>value %{z:.4f}<extra></extra>",
    x_title: str = "hidden dimension",
    height: int | None = None,
) -> go.Figure:
    """A heatmap with labelled rows; symmetric colour range around 0 unless one is given."""
    values = np.asarray(matrix, dtype=np.float32)
    if zmin is None or zmax is None:
        bound = float(np.abs(values).max()) if values.size else 1.0
        zmin, zmax = -bound, bound
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=list(col_labels) if col_labels is not None else None,
            y=list(row_labels),
            zmin=zmin,
            zmax=zmax,
            colorscale=colorscale,
            hovertemplate=hover,
        )
    )
    fig.update_layout(
        title=title or None,
        height=height or max(220, min(900, 60 + 22 * len(row_labels))),
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        xaxis_title=x_title,
    )
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


def show_figure(fig: go.Figure, name: str, key: str | None = None) -> None:
    """Draw a plotly figure full width, with a PNG download in its modebar."""
    st.plotly_chart(fig, width="stretch", config=png_config(name), key=key)
