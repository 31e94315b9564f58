"""Figures, tables, texts and code listings of the Stages page: pure builders of core's results.

Everything here returns a plotly figure, a DataFrame or a string, so a test can rebuild any of
them; nothing calls Streamlit. Words a reader sees are translated here with ``_()`` (the run's
language is a context variable, so no Streamlit call is needed); code, module names and
numbers stay as they are. Token labels reach plotly only through ``components.labels``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from transformers import BertConfig

from components import palette
from components.heatmap import heatmap_figure
from components.heatmap_image import HeatmapImage, Scale
from components.i18n import N_, _
from components.labels import plotly_text
from core.stages.embedding_checks import (
    LAYERNORM_COLUMNS,
    BroadcastDemo,
    LayerNormCheck,
    OneHotCheck,
)
from core.stages.lookup_components import (
    COMPONENT_COLUMNS,
    LOOKUPS,
    LookupComparison,
    SegmentRows,
)
from core.stages.pipeline import MODULE_OUTPUT, AutogradTrace, stage_expression
from core.stages.printout import torch_printout, torch_size

LOOKUP_COLOURS = {  # colour-blind safe (ColorBrewer Dark2), distinct from the segment colours
    "word_embeddings": palette.WORD,
    "token_type_embeddings": palette.TOKEN_TYPE,
    "position_embeddings": palette.POSITION,
}
SHORT = {"word_embeddings": "word", "token_type_embeddings": "token_type",
         "position_embeddings": "position"}
# Shown headers of core's table columns (the download keeps core's English names).
COMPONENT_HEADERS = dict(zip(COMPONENT_COLUMNS, (
    N_("|word|"), N_("|token_type|"), N_("|position|"), N_("|sum|"),
    N_("cos(word, token_type)"), N_("cos(word, position)"), N_("cos(token_type, position)"),
    N_("share word"), N_("share token_type"), N_("share position"),
), strict=True))
LAYERNORM_HEADERS = dict(zip(LAYERNORM_COLUMNS, (
    N_("mean before"), N_("std before"), N_("mean normalised"), N_("std normalised"),
    N_("mean after"), N_("std after"),
), strict=True))
STAGE_TEXT = {
    "word_embeddings": N_("Row input_id of the {vocab} × {hidden} vocabulary table: a token gets "
                          "the same vector wherever it stands and whatever its neighbours."),
    "token_type_embeddings": N_("Row 0 or 1 of the {types} × {hidden} segment table: every "
                                "token of sentence A gets one vector, every token of sentence B "
                                "another."),
    "position_embeddings": N_("Row i of the {positions} × {hidden} position table for the token "
                              "at position i: the only place where word order enters the "
                              "model."),
    "sum": N_("word + token_type + position, number by number: still one vector per token, "
              "nothing has moved between tokens yet."),
    "LayerNorm": N_("Each row shifted to mean 0 and scaled to standard deviation 1, then "
                    "multiplied by γ and shifted by β per dimension: this is "
                    "model.embeddings(...) in eval mode, the input of layer_1."),
    "dropout": N_("What training would feed the encoder: {percent} of the values zeroed and the "
                  "rest scaled by 1/(1 − {p}), with a fixed random mask. In eval mode, as here "
                  "and in the tutorials, dropout does nothing and layer_1 reads LayerNorm."),
}
LAYER_TEXT = N_("Output of encoder.layer[{index}]: self-attention has mixed information between "
                "the tokens, so each row now depends on the whole input.")


# ---------------------------------------------------------------------------------------------
# Sizes and labels
# ---------------------------------------------------------------------------------------------

def heatmap_height(rows: int) -> int:
    """Pixels for a tokens x dimensions heatmap: every token label readable up to 30 tokens."""
    return max(260, min(900, 120 + 24 * rows))


def table_height(rows: int, limit: int = 720) -> int:
    """Pixels that show every row of a dataframe (header included), up to ``limit``."""
    return min(limit, 40 + 36 * rows)


def latex_number(value: float) -> str:
    """1e-12 as LaTeX, 10^{-12} (and 2.5e-05 as 2.5 \\times 10^{-5})."""
    mantissa, exponent = f"{value:.1e}".split("e")
    power = f"10^{{{int(exponent)}}}"
    return power if float(mantissa) == 1.0 else f"{float(mantissa):g} \\times {power}"


def csv_labels(tokens: Sequence[str]) -> list[str]:
    """Row labels for downloads, "3:test" (CSV cells are data, not markup)."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def per_token_layout(fig: go.Figure, categorical: bool = True) -> go.Figure:
    """Title top left, legend above the plot on the right, room below for slanted labels."""
    fig.update_layout(
        height=380,
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
    )
    fig.update_xaxes(automargin=True, **({"type": "category"} if categorical else {}))
    fig.update_layout(title_y=0.98, title_yanchor="top", title_x=0.01)  # above the legend
    return fig


def of_model(title: str, model_name: str) -> str:
    """A figure title that names the loaded model."""
    return _("{title} · {model}").format(title=title, model=plotly_text(model_name))


# ---------------------------------------------------------------------------------------------
# Stage heatmaps
# ---------------------------------------------------------------------------------------------

def stage_description(stage: str, config: BertConfig) -> str:
    """One or two sentences on what a stage holds, with the model's own table sizes."""
    h, p = config.hidden_size, config.hidden_dropout_prob
    if stage in STAGE_TEXT:
        return _(STAGE_TEXT[stage]).format(
            vocab=f"{config.vocab_size:,}", hidden=h, types=config.type_vocab_size,
            positions=config.max_position_embeddings, percent=f"{p:.0%}", p=f"{p:g}")
    return _(LAYER_TEXT).format(index=int(stage.removeprefix("layer_")) - 1)


def stage_title(stage: str, shape: tuple[int, int], model_name: str) -> str:
    rows, width = shape
    return f"{stage}  ·  [1, {rows}, {width}]  ·  {plotly_text(model_name)}"


def stage_figure(
    part: np.ndarray, labels: list[str], window: range, title: str, bound: float,
    segment_b: int | None,
) -> go.Figure:
    """One stage's tokens x dimensions window on a ±bound scale; for a pair, a dotted line
    above the first token of sentence B (row ``segment_b``)."""
    fig = heatmap_figure(part, labels, list(window), title=title, zmin=-bound, zmax=bound,
                         height=heatmap_height(part.shape[0]),
                         hover=_("token %{y}<br>dim %{x}<br>value %{z:.4f}") + "<extra></extra>",
                         x_title=_("hidden dimension"))
    fig.update_layout(title_font_size=20)
    if segment_b is not None:
        fig.add_hline(y=segment_b - 0.5, line={"color": palette.SOFT_INK, "width": 2,
                                               "dash": "dot"})
    return fig


def stage_image(
    part: np.ndarray, labels: list[str], window: range, title: str, bound: float,
    segment_b: int | None,
) -> HeatmapImage:
    """The same window as stage_figure, drawn as an image."""
    return HeatmapImage(part, labels, list(window), Scale("RdBu_r", -bound, bound), title,
                        _("hidden dimension"), boundary_row=segment_b)


def segment_rows_text(seg: SegmentRows) -> str:
    """How many distinct vectors the token-type stage holds: one per segment."""
    parts = _(", ").join(
        (_("segment {segment} (1 token)") if n == 1
         else _("segment {segment} ({count} tokens)")).format(segment=s, count=n)
        for s, n in zip(seg.segments, seg.counts, strict=True)
    )
    rows = {1: _("one distinct row"), 2: _("exactly two distinct rows")}.get(
        seg.n_distinct, _("{n} distinct rows").format(n=seg.n_distinct))
    text = _("The token-type heatmap has {rows}: {parts}. Each distinct row is the "
             "token_type_embeddings table's row for that segment, copied to every token of the "
             "segment (max |Δ| to the table row {error}).").format(
        rows=rows, parts=parts, error=f"{seg.table_error:.1e}")
    if seg.segments == [0]:
        text += " " + _("Give a sentence B to see segment 1.")
    return text


# ---------------------------------------------------------------------------------------------
# Printouts
# ---------------------------------------------------------------------------------------------

def printout_frame(stages: Sequence[str], trace: AutogradTrace) -> pd.DataFrame:
    """One row per stage (and the module's own output): grad_fn, shape, check, expression."""
    names = [*stages, MODULE_OUTPUT]
    return pd.DataFrame(
        {
            _("stage"): names,
            "grad_fn": [f"<{trace.grad_fn[n]}>" for n in names],
            _("shape"): [torch_size(trace.shapes[n]) for n in names],
            difference_header(): [trace.max_diff[n] for n in names],
            _("computed as"): [stage_expression(n) for n in names],
        }
    )


def difference_header() -> str:
    return _("max |Δ| to shown")


def printout_text(stage: str, values: np.ndarray, trace: AutogradTrace, every_row: bool) -> str:
    """The tutorial's session: the expression, ``x.shape`` and ``print(x)``."""
    return (
        f">>> x = {stage_expression(stage)}\n"
        f">>> x.shape\n{torch_size(trace.shapes[stage])}\n"
        f">>> x\n{torch_printout(values, trace.grad_fn[stage], every_row)}"
    )


# ---------------------------------------------------------------------------------------------
# The lookups: one-hot product, broadcasting, the parts of the sum
# ---------------------------------------------------------------------------------------------

def one_hot_code(check: OneHotCheck) -> str:
    """The tutorial's two lines, each followed by the shape it gives (short lines: nothing is
    cut off on a 1024-pixel screen)."""
    return (
        f"one_hot = F.one_hot(input_ids, num_classes={check.vocab_size}).float()\n"
        f"# {torch_size(check.one_hot_shape)}\n"
        f"one_hot @ model.embeddings.word_embeddings.weight\n"
        f"# {torch_size(check.product_shape)}"
    )


def one_hot_figure(check: OneHotCheck, labels: list[str], words: Sequence[str],
                   model_name: str) -> go.Figure:
    """The one-hot rows, cut to the columns that hold a 1 (``words`` names those columns)."""
    col_labels = [f"{i} {plotly_text(w)}" for i, w in zip(check.columns, words, strict=True)]
    fig = heatmap_figure(
        check.compact, labels, col_labels, zmin=0, zmax=1,
        title=of_model(_("one_hot(input_ids), the columns that hold a 1"), model_name),
        colorscale="Greys", x_title=_("vocabulary column (input_id)"),
        hover=_("token %{y}<br>column %{x}<br>%{z}") + "<extra></extra>",
    )
    fig.update_traces(showscale=False, xgap=1, ygap=1)
    # Slanted column names: upright, "102 [SEP]" and "1012 ." ran into each other at 1024 px.
    fig.update_xaxes(type="category", tickangle=-45)
    return fig


def broadcast_code(demo: BroadcastDemo) -> str:
    """The tutorial's lines, each followed by the shape it gives."""
    return "\n".join(f"{line.code}\n# {torch_size(line.shape)}" for line in demo.lines)


def lookup_bars(labels: list[str], values: np.ndarray, hover: str) -> go.Figure:
    """One bar per token for each lookup (the columns of ``values``, in LOOKUPS order);
    ``hover`` is a template with {name} for the lookup's short name."""
    return go.Figure(
        [
            go.Bar(name=SHORT[name], x=labels, y=values[:, i],
                   marker_color=LOOKUP_COLOURS[name],
                   hovertemplate="%{x}<br>" + hover.format(name=SHORT[name])
                   + " %{y:.3f}<extra></extra>")
            for i, name in enumerate(LOOKUPS)
        ]
    )


def lookup_norms_figure(comp: LookupComparison, labels: list[str], model_name: str) -> go.Figure:
    fig = lookup_bars(labels, comp.norms, "|{name}|")
    fig.update_layout(barmode="group", title=of_model(_("norm of each lookup"), model_name),
                      yaxis_title=_("L2 norm"))
    return per_token_layout(fig)


def lookup_shares_figure(comp: LookupComparison, labels: list[str],
                         model_name: str) -> go.Figure:
    fig = lookup_bars(labels, comp.shares, _("share {name}"))
    fig.update_layout(barmode="relative",
                      title=of_model(_("share of the sum (adds up to 1)"), model_name),
                      yaxis_title="c·s / |s|²")
    return per_token_layout(fig)


def lookup_comparison_frame(comp: LookupComparison, tokens: Sequence[str]) -> pd.DataFrame:
    """Per token: position, token, then the COMPONENT_COLUMNS (headers translated)."""
    table = pd.DataFrame(comp.table(), columns=component_headers())
    table.insert(0, _("token"), list(tokens))
    table.insert(0, _("position"), range(len(table)))
    return table


def component_headers() -> list[str]:
    return [_(COMPONENT_HEADERS[c]) for c in COMPONENT_COLUMNS]


def component_groups() -> list[list[str]]:
    """The shown headers in three groups: the four lengths, the three cosines, the three
    shares (COMPONENT_COLUMNS' order)."""
    headers = component_headers()
    return [headers[:4], headers[4:7], headers[7:]]


def layernorm_headers() -> list[str]:
    return [_(LAYERNORM_HEADERS[c]) for c in LAYERNORM_COLUMNS]


# ---------------------------------------------------------------------------------------------
# LayerNorm
# ---------------------------------------------------------------------------------------------

def layernorm_stats_figure(ln: LayerNormCheck, labels: list[str], model_name: str) -> go.Figure:
    """Mean and standard deviation per token: the sum, the normalised sum and LayerNorm's output."""
    series = (
        (_("sum (before)"), ln.mean_before, ln.std_before, palette.MUTED),
        (_("normalised, before γ and β"), ln.mean_normalised, ln.std_normalised,
         palette.SEGMENT_A),
        (_("LayerNorm (after)"), ln.mean_after, ln.std_after, palette.HIGHLIGHT),
    )
    mode = "lines+markers" if len(labels) <= 64 else "lines"  # 512 markers hide the lines
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=(_("mean per token"), _("standard deviation per token")))
    for name, mean, std, colour in series:
        for col, values in ((1, mean), (2, std)):
            fig.add_trace(
                go.Scatter(x=labels, y=values, name=name, mode=mode,
                           line={"color": colour}, legendgroup=name, showlegend=col == 1,
                           hovertemplate="%{x}<br>" + name + " %{y:.4f}<extra></extra>"),
                row=1, col=col,
            )
    per_token_layout(fig)
    fig.update_layout(title_text=of_model(_("embeddings.LayerNorm per token"), model_name),
                      margin={"t": 120},
                      legend={"y": 1.12})  # legend above the subplot titles, below the title
    return fig


def gamma_beta_figure(ln: LayerNormCheck, model_name: str) -> go.Figure:
    """γ and β of embeddings.LayerNorm along the hidden dimensions."""
    dims = np.arange(len(ln.gamma))
    fig = go.Figure(
        [
            go.Scatter(x=dims, y=ln.gamma, name="γ (LayerNorm.weight)", mode="lines",
                       line={"color": palette.WORD}),
            go.Scatter(x=dims, y=ln.beta, name="β (LayerNorm.bias)", mode="lines",
                       line={"color": palette.TOKEN_TYPE}),
        ]
    )
    fig.update_traces(hovertemplate=_("dim %{x}<br>%{y:.4f}") + "<extra>%{fullData.name}</extra>")
    fig.update_layout(
        title=of_model(_("γ and β of embeddings.LayerNorm, one value per dimension"), model_name),
        xaxis_title=_("hidden dimension"))
    return per_token_layout(fig, categorical=False)
