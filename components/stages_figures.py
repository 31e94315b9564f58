"""Figures, tables and code listings of the Stages page: pure builders of the core results.

Everything here returns a plotly figure, a DataFrame or a string, so a test can rebuild any of
them; the one exception is ``draw_check``, which draws a live check into the column it is given.
Token labels reach plotly only through ``components.labels`` (user text is never markup).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from streamlit.delta_generator import DeltaGenerator

from components.heatmap import heatmap_figure
from components.labels import plotly_text
from core.embedding_checks import BroadcastDemo, LayerNormCheck, OneHotCheck
from core.lookup_components import COMPONENT_COLUMNS, LOOKUPS, Components, SegmentRows
from core.printout import torch_printout, torch_size
from core.stages import MODULE_OUTPUT, AutogradTrace, stage_expression

TOLERANCE = 1e-5           # the live checks pass when the max abs difference is at most this
LOOKUP_COLOURS = {  # colour-blind safe (ColorBrewer Dark2), distinct from the segment colours
    "word_embeddings": "#1b9e77",
    "token_type_embeddings": "#d95f02",
    "position_embeddings": "#7570b3",
}
SHORT = {"word_embeddings": "word", "token_type_embeddings": "token_type",
         "position_embeddings": "position"}


# ---------------------------------------------------------------------------------------------
# Sizes, labels and the live checks
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
    return fig


def draw_check(column: DeltaGenerator, label: str, error: float, help_text: str) -> None:
    """A live check: the max abs difference and whether it is within TOLERANCE."""
    column.metric(f"max |Δ|, {label}", f"{error:.1e}", help=help_text)
    if error <= TOLERANCE:
        column.badge(f"equal within {TOLERANCE:g}", icon=":material/check:", color="green")
    else:
        column.badge(f"differs by more than {TOLERANCE:g}", icon=":material/close:", color="red")


# ---------------------------------------------------------------------------------------------
# Stage heatmaps
# ---------------------------------------------------------------------------------------------

def stage_figure(
    part: np.ndarray, labels: list[str], window: range, title: str, bound: float,
    segment_b: int | None,
) -> go.Figure:
    """One stage's tokens x dimensions window on a ±bound scale; for a pair, a dotted line
    above the first token of sentence B (row ``segment_b``)."""
    fig = heatmap_figure(part, labels, list(window), title=title, zmin=-bound, zmax=bound,
                         height=heatmap_height(part.shape[0]))
    fig.update_layout(title_font_size=20)
    if segment_b is not None:
        fig.add_hline(y=segment_b - 0.5, line={"color": "#333333", "width": 2, "dash": "dot"})
    return fig


def segment_rows_text(seg: SegmentRows) -> str:
    """How many distinct vectors the token-type stage holds: one per segment."""
    parts = ", ".join(
        f"segment {s} ({n} token{'s' if n != 1 else ''})"
        for s, n in zip(seg.segments, seg.counts, strict=True)
    )
    rows = {1: "one distinct row", 2: "exactly two distinct rows"}.get(
        seg.n_distinct, f"{seg.n_distinct} distinct rows"
    )
    hint = " Give a sentence B to see segment 1." if seg.segments == [0] else ""
    return (
        f"The token-type heatmap has {rows}: {parts}. Each distinct row is the "
        "token_type_embeddings table's row for that segment, copied to every token of the "
        f"segment (max |Δ| to the table row {seg.table_error:.1e}).{hint}"
    )


# ---------------------------------------------------------------------------------------------
# Printouts
# ---------------------------------------------------------------------------------------------

def printout_frame(stages: Sequence[str], trace: AutogradTrace) -> pd.DataFrame:
    """One row per stage (and the module's own output): grad_fn, shape, check, expression."""
    names = [*stages, MODULE_OUTPUT]
    return pd.DataFrame(
        {
            "stage": names,
            "grad_fn": [f"<{trace.grad_fn[n]}>" for n in names],
            "shape": [torch_size(trace.shapes[n]) for n in names],
            "max |Δ| to shown": [trace.max_diff[n] for n in names],
            "computed as": [stage_expression(n) for n in names],
        }
    )


def printout_text(stage: str, values: np.ndarray, trace: AutogradTrace, every_row: bool) -> str:
    """The tutorial's session: the expression, ``x.shape`` and ``print(x)``."""
    return (
        f">>> x = {stage_expression(stage)}\n"
        f">>> x.shape\n{torch_size(trace.shapes[stage])}\n"
        f">>> x\n{torch_printout(values, trace.grad_fn[stage], every_row)}"
    )


# ---------------------------------------------------------------------------------------------
# The lookups: one-hot product, broadcasting, components
# ---------------------------------------------------------------------------------------------

def one_hot_code(check: OneHotCheck) -> str:
    return (
        f"one_hot = F.one_hot(input_ids, num_classes={check.vocab_size}).float()"
        f"  # {torch_size(check.one_hot_shape)}\n"
        f"one_hot @ model.embeddings.word_embeddings.weight  # {torch_size(check.product_shape)}"
    )


def one_hot_figure(check: OneHotCheck, labels: list[str], words: Sequence[str]) -> go.Figure:
    """The one-hot rows, cut to the columns that hold a 1 (``words`` names those columns)."""
    col_labels = [f"{i} {plotly_text(w)}" for i, w in zip(check.columns, words, strict=True)]
    fig = heatmap_figure(
        check.compact, labels, col_labels, zmin=0, zmax=1,
        colorscale="Greys", x_title="vocabulary column (input_id)",
        hover="token %{y}<br>column %{x}<br>%{z}<extra></extra>",
    )
    fig.update_traces(showscale=False, xgap=1, ygap=1)
    fig.update_xaxes(type="category")
    return fig


def broadcast_code(demo: BroadcastDemo) -> str:
    """The tutorial's lines with the shape each one gives, aligned in a comment column."""
    width = max(len(line.code) for line in demo.lines) + 2
    return "\n".join(f"{line.code:<{width}}# {torch_size(line.shape)}" for line in demo.lines)


def lookup_bars(labels: list[str], values: np.ndarray, hover: tuple[str, str]) -> go.Figure:
    """One bar per token for each lookup (the columns of ``values``, in LOOKUPS order); the
    hover reads ``hover[0] + name + hover[1]`` before the value."""
    before, after = hover
    return go.Figure(
        [
            go.Bar(name=SHORT[name], x=labels, y=values[:, i],
                   marker_color=LOOKUP_COLOURS[name],
                   hovertemplate=f"%{{x}}<br>{before}{SHORT[name]}{after} %{{y:.3f}}"
                   "<extra></extra>")
            for i, name in enumerate(LOOKUPS)
        ]
    )


def norms_figure(comp: Components, labels: list[str]) -> go.Figure:
    fig = lookup_bars(labels, comp.norms, ("|", "|"))
    fig.update_layout(barmode="group", title="norm of each lookup", yaxis_title="L2 norm")
    return per_token_layout(fig)


def shares_figure(comp: Components, labels: list[str]) -> go.Figure:
    fig = lookup_bars(labels, comp.shares, ("share ", ""))
    fig.update_layout(barmode="relative", title="share of the sum (adds up to 1)",
                      yaxis_title="c·s / |s|²")
    return per_token_layout(fig)


def components_frame(comp: Components, tokens: Sequence[str]) -> pd.DataFrame:
    """Per token: position, token, then the COMPONENT_COLUMNS."""
    table = pd.DataFrame(comp.table(), columns=list(COMPONENT_COLUMNS))
    table.insert(0, "token", list(tokens))
    table.insert(0, "position", range(len(table)))
    return table


# ---------------------------------------------------------------------------------------------
# LayerNorm
# ---------------------------------------------------------------------------------------------

def layernorm_stats_figure(ln: LayerNormCheck, labels: list[str]) -> go.Figure:
    """Mean and standard deviation per token: the sum, the normalised sum and LayerNorm's output."""
    series = (
        ("sum (before)", ln.mean_before, ln.std_before, "#9e9e9e"),
        ("normalised, before γ and β", ln.mean_normalised, ln.std_normalised, "#1f77b4"),
        ("LayerNorm (after)", ln.mean_after, ln.std_after, "#d62728"),
    )
    mode = "lines+markers" if len(labels) <= 64 else "lines"  # 512 markers hide the lines
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("mean per token", "standard deviation per token"))
    for name, mean, std, colour in series:
        for col, values in ((1, mean), (2, std)):
            fig.add_trace(
                go.Scatter(x=labels, y=values, name=name, mode=mode,
                           line={"color": colour}, legendgroup=name, showlegend=col == 1,
                           hovertemplate="%{x}<br>" + name + " %{y:.4f}<extra></extra>"),
                row=1, col=col,
            )
    per_token_layout(fig)
    fig.update_layout(margin={"t": 90}, legend={"y": 1.1})  # legend above the subplot titles
    return fig


def gamma_beta_figure(ln: LayerNormCheck) -> go.Figure:
    """γ and β of embeddings.LayerNorm along the hidden dimensions."""
    dims = np.arange(len(ln.gamma))
    fig = go.Figure(
        [
            go.Scatter(x=dims, y=ln.gamma, name="γ (LayerNorm.weight)", mode="lines",
                       line={"color": "#1b9e77"}),
            go.Scatter(x=dims, y=ln.beta, name="β (LayerNorm.bias)", mode="lines",
                       line={"color": "#d95f02"}),
        ]
    )
    fig.update_traces(hovertemplate="dim %{x}<br>%{y:.4f}<extra>%{fullData.name}</extra>")
    fig.update_layout(title="γ and β of embeddings.LayerNorm, one value per dimension",
                      xaxis_title="hidden dimension")
    return per_token_layout(fig, categorical=False)
