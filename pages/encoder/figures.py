"""Encoder's diagrams and figures, built without Streamlit calls."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from transformers import PretrainedConfig

from components import palette
from components.graphs import Node, dot_graph
from components.heatmap import heatmap_figure
from components.heatmap_image import HeatmapImage, Scale, heatmap_html
from components.i18n import N_, _
from components.labels import plotly_text
from core import Encoding
from core.encoder import EncoderSteps, HeadAtlas, PoolerSteps, ResidualShares, TokenTrajectory
from core.words import Word
from pages.encoder.records import AttentionMaps, AttentionRows

MAX_COLUMNS = 64   # columns of a tokens x dimensions step drawn by default
GRID_COLUMNS = 4   # small maps per row in the all-heads grid

# What each step is (1-2 sentences) and what its live check compares it with.
STEP_TEXT: dict[str, tuple[str, str]] = {
    "attention.self.query": (
        N_("Each token's query: the layer input times Wq plus bq, split into heads. A query says "
           "what this token looks for."),
        N_("numpy in float64: layer input @ Wqᵀ + bq, split into heads")),
    "attention.self.key": (
        N_("Each token's key: the layer input times Wk plus bk. A key says what a token offers "
           "to the queries."),
        N_("numpy in float64: layer input @ Wkᵀ + bk, split into heads")),
    "attention.self.value": (
        N_("Each token's value: the layer input times Wv plus bv. Values are what attention "
           "mixes together."),
        N_("numpy in float64: layer input @ Wvᵀ + bv, split into heads")),
    "attention_scores": (
        N_("Every query against every key: Q Kᵀ / √head_dim, plus the padding mask. A row is "
           "one token's scores before softmax."),
        N_("numpy in float64: Q Kᵀ / √head_dim, padded keys + float32 min")),
    "attention_probs": (
        N_("Softmax of each row of the scores: the attention weights, each row sums to 1."),
        N_("the layer's own self-attention module, whose weights output_attentions returns")),
    "context": (
        N_("The attention weights times V, every head's result side by side: each token becomes "
           "a weighted mix of the values."),
        N_("numpy in float64: attention_probs @ V, heads joined")),
    "attention.output.dense": (
        N_("A linear layer mixes the heads' results together: this is the attention update."),
        N_("numpy in float64: context @ Wᵀ + b")),
    "attention.output": (
        N_("Residual connection and layer normalisation: LayerNorm(update + layer input)."),
        N_("numpy in float64: the LayerNorm formula on attention.output.dense + layer input")),
    "intermediate.dense": (
        N_("The feed-forward network widens every token to the intermediate size, each token "
           "on its own."),
        N_("numpy in float64: attention.output @ Wᵀ + b")),
    "intermediate": (
        N_("GELU: negative values are squashed towards 0, positive ones pass almost unchanged."),
        N_("numpy in float64: the activation's formula (GELU: x/2 (1 + erf(x/√2)))")),
    "output.dense": (
        N_("Back down to the hidden size: this is the feed-forward update."),
        N_("numpy in float64: intermediate @ Wᵀ + b")),
    "output": (
        N_("Residual connection and LayerNorm again: the layer's output, the next layer's "
           "input."),
        N_("the model's own hidden_states for this layer")),
}

MEASURES = {
    "to_cls": N_("share to [CLS]"),
    "to_sep": N_("share to [SEP]"),
    "to_prev": N_("previous token"),
    "to_next": N_("next token"),
    "to_self": N_("itself"),
    "entropy": N_("entropy (nats)"),
}
# The same measures of the attention by word (core.words).
WORD_MEASURES = MEASURES | {"to_prev": N_("previous word"), "to_next": N_("next word")}

HOVER_DIMS = N_("token %{y}<br>dim %{x}<br>value %{z:.4f}")
HOVER_TOKENS = N_("query %{y}<br>key %{x}<br>value %{z:.4f}")


def layer_dot(config: PretrainedConfig, tokens: int | str) -> str:
    """One BertLayer with the shapes of an input of ``tokens`` tokens (a number, or "T")."""
    t, h, heads = tokens, config.hidden_size, config.num_attention_heads
    d, i = h // heads, config.intermediate_size
    nodes = [
        Node("x", [_("the layer's input"), f"[{t}, {h}]"]),
        Node("qkv", ["attention.self (Q, K, V)", f"3 × [{heads}, {t}, {d}]"],
             palette.HEAD_FILL),
        Node("s", [_("scores") + " QKᵀ/√" + str(d), f"[{heads}, {t}, {t}]"], palette.HEAD_FILL),
        Node("p", ["softmax", f"[{heads}, {t}, {t}]"], palette.HEAD_FILL),
        Node("c", ["context", f"[{t}, {h}]"], palette.HEAD_FILL),
        Node("ao", ["attention.output.dense", f"[{t}, {h}]"]),
        Node("r1", [_("+ residual, LayerNorm"), f"[{t}, {h}]"], palette.LAYER_FILL),
        Node("id", ["intermediate.dense", f"[{t}, {i}]"]),
        Node("g", [str(config.hidden_act).upper(), f"[{t}, {i}]"]),
        Node("od", ["output.dense", f"[{t}, {h}]"]),
        Node("r2", [_("+ residual, LayerNorm"), f"[{t}, {h}]"], palette.LAYER_FILL),
    ]
    chain = [n.key for n in nodes]
    edges = list(zip(chain, chain[1:], strict=False)) + [("x", "r1"), ("r1", "r2")]
    return dot_graph(nodes, edges, direction="TB", font_size=14)


def clipped_scores(scores: np.ndarray, mask_bias: np.ndarray | None) -> np.ndarray:
    """Scores with padded key columns (float32 min) raised to the lowest real score."""
    if mask_bias is None:
        return scores
    real = mask_bias > -1e30
    if not real.any():
        return scores
    low = float(scores[..., real].min())
    return np.maximum(scores, low)


def step_matrix(steps: EncoderSteps, name: str, head: int) -> np.ndarray:
    """The 2-D matrix a step is drawn as: the picked head of a per-head step."""
    value = steps.steps[name]
    if name == "attention_scores":
        value = clipped_scores(value, steps.mask_bias)
    return value[head] if value.ndim == 3 else value


def shown_part(matrix: np.ndarray, cols: Sequence[str] | None,
               max_columns: int | None) -> np.ndarray:
    """What a step's figure draws: tokens x tokens whole, tokens x dimensions cut to
    ``max_columns``."""
    return matrix if max_columns is None or cols is not None else matrix[:, :max_columns]


def matrix_figure(matrix: np.ndarray, rows: Sequence[str], title: str, *,
                  cols: Sequence[str] | None = None, probs: bool = False,
                  max_columns: int | None = MAX_COLUMNS) -> go.Figure:
    """A heatmap of tokens x dimensions (cut to ``max_columns``) or tokens x tokens."""
    shown = shown_part(matrix, cols, max_columns)
    if probs:
        return heatmap_figure(shown, rows, cols, title=title, zmin=0.0, zmax=1.0,
                              colorscale="Blues", hover=_(HOVER_TOKENS) + "<extra></extra>",
                              x_title=_("key (attended to)"))
    return heatmap_figure(shown, rows, cols, title=title,
                          hover=_(HOVER_DIMS if cols is None else HOVER_TOKENS)
                          + "<extra></extra>",
                          x_title=_("dimension") if cols is None else _("key (attended to)"))


def matrix_image(matrix: np.ndarray, rows: Sequence[str], title: str, *,
                 cols: Sequence[str] | None = None, probs: bool = False,
                 max_columns: int | None = MAX_COLUMNS) -> HeatmapImage:
    """matrix_figure's cells and colour range, drawn as an image."""
    shown = shown_part(matrix, cols, max_columns)
    if probs:
        scale = Scale("Blues", 0.0, 1.0)
    else:
        bound = float(np.abs(shown).max()) if shown.size else 1.0
        scale = Scale("RdBu_r", -bound, bound)
    x_title = _("dimension") if cols is None and not probs else _("key (attended to)")
    return HeatmapImage(shown, rows, list(cols) if cols is not None else
                        list(range(shown.shape[1])), scale, title, x_title,
                        word_columns=cols is not None)


def boundary_of(token_type_ids: Sequence[int], keep: Sequence[int] | None = None) -> int | None:
    """Index of sentence B's first token among the positions drawn, None without a B."""
    types = list(token_type_ids) if keep is None else [token_type_ids[i] for i in keep]
    return types.index(1) if 1 in types else None


def head_grid(probs: np.ndarray, title: str, boundary: int | None) -> go.Figure:
    """Every head of the layer as a small token x token map, one shared colour scale."""
    heads = probs.shape[0]
    rows = math.ceil(heads / GRID_COLUMNS)
    fig = make_subplots(rows=rows, cols=GRID_COLUMNS, horizontal_spacing=0.03,
                        vertical_spacing=0.06,
                        subplot_titles=[_("head {n}").format(n=h) for h in range(heads)])
    for h in range(heads):
        fig.add_trace(go.Heatmap(z=probs[h].astype(np.float32), coloraxis="coloraxis",
                                 hovertemplate=_(HOVER_TOKENS) + "<extra></extra>"),
                      row=h // GRID_COLUMNS + 1, col=h % GRID_COLUMNS + 1)
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    if boundary is not None:
        for h in range(heads):
            r, c = h // GRID_COLUMNS + 1, h % GRID_COLUMNS + 1
            fig.add_hline(y=boundary - 0.5, line_color=palette.HIGHLIGHT, line_width=1,
                          row=r, col=c)
            fig.add_vline(x=boundary - 0.5, line_color=palette.HIGHLIGHT, line_width=1,
                          row=r, col=c)
    fig.update_layout(title=title, height=40 + 190 * rows, margin={"l": 10, "r": 10, "t": 70},
                      coloraxis={"colorscale": "Blues", "cmin": 0, "cmax": 1})
    return fig


def add_boundary(fig: go.Figure, boundary: int | None) -> go.Figure:
    """Lines where sentence B starts, on a token x token heatmap."""
    if boundary is not None:
        fig.add_hline(y=boundary - 0.5, line_color=palette.HIGHLIGHT, line_width=2)
        fig.add_vline(x=boundary - 0.5, line_color=palette.HIGHLIGHT, line_width=2)
    return fig


def atlas_matrix(atlas: HeadAtlas, measure: str) -> np.ndarray:
    return np.asarray(getattr(atlas, measure), dtype=np.float64)


def atlas_figure(atlas: HeadAtlas, measure: str, title: str) -> go.Figure:
    """Layers x heads of one measure."""
    matrix = atlas_matrix(atlas, measure)
    layers = [_("layer {n}").format(n=n) for n in range(1, matrix.shape[0] + 1)]
    top = float(np.nanmax(matrix)) if measure == "entropy" and np.isfinite(matrix).any() else 1.0
    fig = heatmap_figure(matrix, layers, list(range(matrix.shape[1])), title=title, zmin=0.0,
                         zmax=top, colorscale="Viridis",
                         hover=_("%{y}<br>head %{x}<br>value %{z:.3f}") + "<extra></extra>",
                         x_title=_("head"), height=80 + 40 * matrix.shape[0])
    fig.update_xaxes(dtick=1)
    return fig


def ffn_histogram(before: np.ndarray, after: np.ndarray, title: str) -> go.Figure:
    """intermediate.dense (before GELU) and intermediate (after), every value of the real tokens."""
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=before.ravel(), name=_("before GELU (intermediate.dense)"),
                               marker_color=palette.SEGMENT_A, opacity=0.6, nbinsx=120))
    fig.add_trace(go.Histogram(x=after.ravel(), name=_("after GELU (intermediate)"),
                               marker_color=palette.SEGMENT_B, opacity=0.6, nbinsx=120))
    fig.update_layout(barmode="overlay", title=title, height=360,
                      xaxis_title=_("value"), yaxis_title=_("count"),
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 50})
    return fig


def widening_dot(config: PretrainedConfig, tokens: int | str) -> str:
    """attention.output widened to intermediate_size and back, for ``tokens`` tokens (a
    number, or "T")."""
    h, i, t = config.hidden_size, config.intermediate_size, tokens
    nodes = [Node("a", ["attention.output", f"[{t}, {h}]"]),
             Node("b", ["intermediate.dense + GELU", f"[{t}, {i}]"], palette.HEAD_FILL),
             Node("c", ["output.dense", f"[{t}, {h}]"])]
    return dot_graph(nodes, [("a", "b"), ("b", "c")], font_size=14)


def residual_figure(shares: ResidualShares, labels: Sequence[str], title: str) -> go.Figure:
    """Per token: the norm of the layer input and of the two updates added to it."""
    fig = go.Figure()
    for values, name, colour in (
        (shares.layer_input, _("‖layer input‖"), palette.INK),
        (shares.attention_update, _("‖attention update‖"), palette.SEGMENT_A),
        (shares.ffn_update, _("‖feed-forward update‖"), palette.SEGMENT_B),
    ):
        fig.add_trace(go.Bar(x=list(labels), y=values, name=name, marker_color=colour))
    fig.update_layout(barmode="group", title=title, height=380, yaxis_title=_("norm"),
                      legend={"orientation": "h", "y": -0.3}, margin={"t": 50})
    fig.update_xaxes(type="category")
    return fig


def residual_matrix(shares: ResidualShares) -> np.ndarray:
    return np.stack([shares.layer_input, shares.attention_update, shares.attention_output,
                     shares.ffn_update], axis=1)


def pooler_figure(pooled: PoolerSteps, title: str, dims: int = MAX_COLUMNS) -> go.Figure:
    """[CLS], pooler.dense and tanh: the first ``dims`` dimensions of each."""
    names = ("[CLS]", "pooler.dense", "tanh")
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, subplot_titles=names,
                        vertical_spacing=0.08)
    for row, values in enumerate((pooled.cls, pooled.dense, pooled.tanh), start=1):
        fig.add_trace(go.Bar(y=values[:dims], marker_color=palette.SEGMENT_A, showlegend=False,
                             hovertemplate=_("dim %{x}<br>value %{y:.4f}") + "<extra></extra>"),
                      row=row, col=1)
    fig.update_layout(title=title, height=520, margin={"t": 70})
    fig.update_xaxes(title_text=_("dimension"), row=3, col=1)
    return fig


def pooler_matrix(pooled: PoolerSteps) -> np.ndarray:
    return np.stack([pooled.cls, pooled.dense, pooled.tanh], axis=1)


def trajectory_figure(path: TokenTrajectory, title: str) -> go.Figure:
    """The token's norm (left axis) and its two cosines (right), stage by stage."""
    x = [_("input embedding") if s == path.stages[0] else s.replace("layer_", _("layer") + " ")
         for s in path.stages]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=(_("norm ‖h‖"), _("cosine")))
    fig.add_trace(go.Scatter(x=x, y=path.norm, mode="lines+markers", name=_("norm ‖h‖"),
                             line_color=palette.INK), row=1, col=1)
    fig.add_trace(go.Scatter(x=x, y=path.cos_prev, mode="lines+markers",
                             name=_("cosine to one layer earlier"),
                             line_color=palette.SEGMENT_A), row=2, col=1)
    fig.add_trace(go.Scatter(x=x, y=path.cos_input, mode="lines+markers",
                             name=_("cosine to its input embedding"),
                             line_color=palette.SEGMENT_B), row=2, col=1)
    fig.update_layout(title=title, height=520, legend={"orientation": "h", "y": -0.15},
                      margin={"t": 70})
    return fig


def trajectory_matrix(path: TokenTrajectory) -> np.ndarray:
    return np.stack([path.norm, path.cos_prev, path.cos_input], axis=1)


def layer_title(what: str, model: str, layer: int) -> str:
    """A figure's title on the Encoder page: what it shows, the model and the layer."""
    return _("{what} · {model}, layer {layer}").format(what=what, model=model, layer=layer)


def head_picture(probs: np.ndarray, labels: Sequence[str], boundary: int | None, what: str,
                 model: str, layer: int, head: int) -> str:
    """One head's map of one layer, (heads, n, n)[head], as a picture titled with ``what``
    ("head {n}"), the model and the layer, with sentence B's edge, keyed fig_att_head_<head>."""
    image = matrix_image(probs[head], labels, layer_title(what.format(n=head), model, layer),
                         cols=labels, probs=True)
    return heatmap_html(replace(image, boundary_row=boundary, boundary_col=boundary),
                        f"fig_att_head_{head}")


def attention_picture(maps: AttentionMaps, model: str, by_word: bool, index: int) -> str:
    """The map of picture ``index`` in components.picture_grid's order (layer 1's heads
    first)."""
    layer, head = divmod(index, maps.probs.shape[1])
    what = _("head {n}, by word") if by_word else _("head {n}")
    return head_picture(maps.probs[layer], maps.labels, maps.boundary, what, model, layer + 1,
                        head)


def attention_pictures(maps: AttentionMaps, model: str, by_word: bool) -> tuple[str, ...]:
    """Every layer's heads as pictures, layer 1's heads first (components.picture_grid's
    order)."""
    return tuple(attention_picture(maps, model, by_word, i)
                 for i in range(maps.probs.shape[0] * maps.probs.shape[1]))


def step_name(steps: EncoderSteps, name: str, head: int) -> tuple[str, str]:
    """A Layer walk step's title (without the model) and its download's name, for a layer and
    head: "attention_probs (head 3)", "attention_probs(head 3)_layer2"."""
    where = _(" (head {n})").format(n=head) if steps.steps[name].ndim == 3 else ""
    return name + where, f"{name}{where.strip()}_layer{steps.layer}"


def step_image(steps: EncoderSteps, name: str, head: int, labels: Sequence[str],
               model: str) -> HeatmapImage:
    """The Layer walk's step of one layer (and head) as an image."""
    square = name in ("attention_scores", "attention_probs")
    return matrix_image(step_matrix(steps, name, head), labels,
                        layer_title(step_name(steps, name, head)[0], model, steps.layer),
                        cols=labels if square else None, probs=name == "attention_probs")


def walk_heads(steps: EncoderSteps, name: str) -> int:
    """How many pictures a layer's step has in the Layer walk: one a head for a per-head step,
    else one."""
    return steps.steps[name].shape[0] if steps.steps[name].ndim == 3 else 1


def walk_picture(steps: EncoderSteps, name: str, head: int, labels: Sequence[str],
                 model: str) -> str:
    """One layer's step (of ``head`` for a per-head step) as a picture keyed fig_<download
    name>."""
    return heatmap_html(step_image(steps, name, head, labels, model),
                        f"fig_{step_name(steps, name, head)[1]}")


def walk_pictures(every: Sequence[EncoderSteps], name: str, labels: Sequence[str],
                  model: str) -> tuple[str, ...]:
    """The step of every layer, and of every head of a per-head step (layer 1's heads first),
    as pictures keyed fig_<download name>."""
    return tuple(walk_picture(steps, name, h, labels, model)
                 for steps in every for h in range(walk_heads(steps, name)))


def token_rows(enc: Encoding, hide: bool) -> AttentionRows:
    """An attention map's rows by token; with ``hide``, without [CLS], [SEP] and padding (as
    core.encoder.without_specials drops them)."""
    keep = [i for i, (special, real) in enumerate(zip(enc.special_tokens_mask,
                                                      enc.attention_mask, strict=True))
            if not hide or (not special and real)]
    return AttentionRows(tuple(f"{i} {plotly_text(enc.tokens[i])}" for i in keep),
                         tuple(f"{i}:{enc.tokens[i]}" for i in keep),
                         boundary_of(enc.token_type_ids, keep))


def word_rows(words: Sequence[Word]) -> AttentionRows:
    """An attention map's rows by word: a word's first token's position and its text."""
    segments = [w.segment for w in words]
    return AttentionRows(tuple(f"{w.start} {plotly_text(w.text)}" for w in words),
                         tuple(f"{w.start}:{w.text}" for w in words),
                         segments.index(1) if 1 in segments else None)
