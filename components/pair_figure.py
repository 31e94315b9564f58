"""The token-pair split of a pair's cosine as an interactive figure: the Pairs page's exact
view, and the Compare page's split on each of two models. A pure builder, no Streamlit call.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from components.heatmap import heatmap_figure
from components.i18n import _
from components.labels import plotly_text, token_labels
from core.similarity.pairs import PairContributions


def layer_name(layer: int) -> str:
    """How a layer is named beside the slider: 0 is the embedding output."""
    return _("embedding output (LayerNorm)") if layer == 0 else _("layer {k}").format(k=layer)


def pair_title(contrib: PairContributions) -> str:
    return _("{model}: token-pair contributions at {layer}, cosine {cosine}").format(
        model=plotly_text(contrib.model_name), layer=layer_name(contrib.layer),
        cosine=f"{contrib.cosine:.3f}")


def colour_bound(matrix: np.ndarray) -> float:
    """The colour scale's reach: the largest absolute term (1 for an all-zero matrix)."""
    return float(np.abs(matrix).max()) or 1.0


def contribution_figure(contrib: PairContributions) -> go.Figure:
    """The same matrix as an interactive heatmap: hover a cell for its exact value."""
    bound = colour_bound(contrib.matrix)
    fig = heatmap_figure(
        contrib.matrix.astype(np.float32), token_labels(contrib.tokens_a),
        token_labels(contrib.tokens_b), title=pair_title(contrib), zmin=-bound, zmax=bound,
        hover=_("A: %{y}<br>B: %{x}<br>contribution %{z:.5f}") + "<extra></extra>",
        x_title=_("sentence B's tokens"))
    fig.update_xaxes(type="category", tickangle=-60)
    fig.update_layout(meta="pairs_matrix")
    return fig
