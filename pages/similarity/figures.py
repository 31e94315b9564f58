"""Figures and small tables for the Similarity page: pure builders, no Streamlit drawing.

Every figure carries a ``meta`` tag naming its view (the tests find figures by it) and float32
values only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components import palette
from components.heatmap import heatmap_figure
from components.heatmap_image import HeatmapImage, Scale
from components.i18n import N_, _
from components.labels import SEGMENT_COLOURS, plotly_text
from core.corpus import CORPUS
from core.similarity.anisotropy import CorpusStats
from core.similarity.sentences import SentenceComparison

CELL_TEXT_MAX = 20    # write the cosine in each cell up to this many tokens
MODE_WORDS = {
    "raw": N_("raw cosine"),
    "adjusted": N_("baseline-adjusted cosine"),
    "standardised": N_("cosine of standardised vectors"),
}
DIMENSION_PARTS = {
    "raw": N_("part of the cosine: unit_first[d] × unit_second[d]"),
    "adjusted": N_("part: (unit_first[d] × unit_second[d] − corpus part[d]) / (1 − b)"),
    "standardised": N_("part of the cosine: product of the standardised unit vectors at d"),
}
SAME_ROW = N_("both [UNK]: the same table row")
# Ethayarajh 2019, bert-base-cased: mean cosine between random words, input layer 0 to layer 12.
ETHAYARAJH_2019 = (.105, .168, .219, .245, .327, .377, .420, .398, .399, .484, .561, .675, .477)
UNRELATED_LINE: dict = {"color": palette.MUTED, "dash": "dash"}   # "unrelated" in every chart
FRAME_COLOUR = SEGMENT_COLOURS[1]                        # sentence B's colour frames A x B


def token_name(tokens: Sequence[str], position: int) -> str:
    """How a token is offered in the pickers: its position, then the token as plain text."""
    return f"{position} {tokens[position]}"


def curve_table(stages: Sequence[str], curve: np.ndarray, mode: str) -> pd.DataFrame:
    """The word-in-context curve as a table: one row per stage."""
    return pd.DataFrame({_("stage"): stages, _(MODE_WORDS[mode]): curve})


def corpus_table() -> pd.DataFrame:
    """The built-in corpus the baselines are measured on, one sentence a row."""
    return pd.DataFrame({_("sentence"): list(CORPUS)})


def ethayarajh_table() -> pd.DataFrame:
    """The published baseline for bert-base-cased, one row per layer."""
    return pd.DataFrame({_("layer"): range(len(ETHAYARAJH_2019)),
                         _("mean cosine"): ETHAYARAJH_2019})


def dimensions_title(mode: str, cosine: float, n_dims: int, top: pd.DataFrame, model: str) -> str:
    """How the bars add up to the cosine, e.g. "raw cosine 0.612 = sum over 384 dims; ..."."""
    return _("{model}: {what} {cosine}<br>= sum over {n} dims; these {k} give {part}").format(
        model=plotly_text(model), what=_(MODE_WORDS[mode]), cosine=f"{cosine:.3f}", n=n_dims,
        k=len(top), part=f"{top['contribution'].sum():.3f}")


def line_figure(stages: list[str], meta: str, y_title: str, marked: str | None,
                title: str = "") -> go.Figure:
    """An empty per-stage line chart, with the chosen stage marked by a vertical band; the
    legend sits under the plot, clear of the title."""
    fig = go.Figure()
    fig.update_layout(
        meta=meta,
        title={"text": title},
        height=440,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
        yaxis_title=y_title,
        hovermode="x unified",
    )
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=stages)
    if marked in stages:
        fig.add_vline(x=stages.index(marked), line={"color": palette.GRID, "width": 10},
                      opacity=0.4)
    return fig


def add_lines(
    fig: go.Figure,
    stages: list[str],
    series: Mapping[str, tuple[np.ndarray, dict]],
    plotly_mode: str = "lines+markers",
) -> go.Figure:
    """Add one float32 line over the stages for each ``name: (values, line style)``."""
    for name, (values, line) in series.items():
        fig.add_scatter(x=stages, y=np.asarray(values, dtype=np.float32), name=name,
                        mode=plotly_mode,
                        line=line, hovertemplate="%{y:.3f}")
    return fig


def matrix_figure(
    matrix: np.ndarray, labels: list[str], lo: int, n_a: int | None, stage: str, mode: str,
    model: str = "", unknown: list[bool] | None = None,
) -> go.Figure:
    """The cosine heatmap of tokens lo..lo+len(labels); for a pair, the A x B block framed."""
    bound = cosine_bound(matrix, mode)
    fig = heatmap_figure(
        matrix.astype(np.float32),
        labels,
        labels,
        zmin=-bound,
        zmax=bound,
        hover=_("%{y}  ×  %{x}<br>cosine %{z:.3f}%{customdata}") + "<extra></extra>",
        x_title="",
        height=min(900, 140 + 26 * len(labels)),
    )
    fig.update_traces(colorbar={"title": {"text": _("cosine")}},
                      customdata=same_row_notes(unknown or [False] * len(labels)))
    if len(labels) <= CELL_TEXT_MAX:
        fig.update_traces(texttemplate="%{z:.2f}", textfont={"size": 11})
    fig.update_xaxes(type="category", tickangle=-60)
    fig.update_yaxes(scaleanchor="x", constrain="domain")
    fig.update_layout(meta="sim_matrix", title={"text": matrix_title(model, stage, mode)},
                      margin={"t": 40})
    if n_a is not None and lo < n_a < lo + len(labels):
        frame_pair_block(fig, n_a - lo - 0.5, len(labels) - 0.5)
    return fig


def matrix_image(
    matrix: np.ndarray, labels: list[str], lo: int, n_a: int | None, stage: str, mode: str,
    model: str = "", unknown: list[bool] | None = None,
) -> HeatmapImage:
    """matrix_figure as a picture: values written in the cells up to CELL_TEXT_MAX tokens, the
    A x B block framed with the same dotted edges."""
    bound = cosine_bound(matrix, mode)
    n = len(labels)
    edge = n_a - lo if n_a is not None and lo < n_a < lo + n else None
    return HeatmapImage(
        matrix.astype(np.float32), labels, labels, Scale("RdBu_r", -bound, bound),
        matrix_title(model, stage, mode), "",
        boundary_row=edge, boundary_col=edge, colour_title=_("cosine"), word_columns=True,
        frame=None if edge is None else (0, edge, edge, n), frame_colour=FRAME_COLOUR,
        frame_label="A × B",
        cell_format="{:.2f}" if n <= CELL_TEXT_MAX else None,
        cell_notes=same_row_notes(unknown or [False] * n, " · "))


def cosine_bound(matrix: np.ndarray, mode: str) -> float:
    """The colour scale's end: 1, or wider for adjusted cosines, which can fall below -1 (a pair
    less alike than the baseline)."""
    return max(1.0, float(np.abs(matrix).max())) if mode == "adjusted" else 1.0


def matrix_title(model: str, stage: str, mode: str) -> str:
    return f"{plotly_text(model)} · {stage}: {_(MODE_WORDS[mode])}"


def frame_pair_block(fig: go.Figure, edge: float, end: float) -> None:
    """Dotted lines between A's last token and B's first (at ``edge``, in window coordinates),
    and a frame round the block of A's rows against B's columns."""
    dotted = {"color": palette.SOFT_INK, "width": 1, "dash": "dot"}
    fig.add_shape(type="line", x0=edge, x1=edge, y0=-0.5, y1=end, line=dotted)
    fig.add_shape(type="line", y0=edge, y1=edge, x0=-0.5, x1=end, line=dotted)
    fig.add_shape(type="rect", x0=edge, x1=end, y0=-0.5, y1=edge,
                  line={"color": FRAME_COLOUR, "width": 4}, name="A x B")
    fig.add_annotation(x=(edge + end) / 2, y=-0.5, yanchor="bottom", text="A × B",
                       showarrow=False, font={"color": FRAME_COLOUR})


def sentence_figure(
    comparison: SentenceComparison, stats: CorpusStats, marked: str, model: str = "",
    cls_standardised: np.ndarray | None = None,
) -> go.Figure:
    """Sentence A vs B per stage, three ways, against two unrelated corpus sentences; the star
    is the model's own (sentence-transformers) figure on the last layer."""
    stages = comparison.stages
    fig = line_figure(stages, "sim_sentences", _("cosine"), marked,
                      _("{model}: sentence A vs sentence B").format(model=plotly_text(model)))
    series: dict[str, tuple[np.ndarray, dict]] = {
        _("A and B separately, mean pooling (sentence-transformers)"):
            (comparison.mean_separate, {"color": SEGMENT_COLOURS[0], "width": 4}),
        _("A and B separately, [CLS]"): (comparison.cls_separate, {"color": palette.GOOD}),
        _("one pair input, mean of each segment"):
            (comparison.mean_in_pair, {"color": SEGMENT_COLOURS[1]}),
        _("two unrelated corpus sentences, mean pooling"):
            (np.array([stats.stage(s).sentence_baseline for s in stages]), UNRELATED_LINE),
    }
    if cls_standardised is not None:
        series[_("A and B separately, [CLS], standardised")] = (
            cls_standardised, {"color": palette.GOOD, "dash": "dot"})
    add_lines(fig, stages, series)
    fig.add_scatter(x=[stages[-1]], y=[np.float32(comparison.model_figure)], mode="markers",
                    name=_("the model's own figure"),
                    marker={"symbol": "star", "size": 18, "color": palette.HIGHLIGHT},
                    hovertemplate="%{y:.4f}")
    return fig


def token_curve_figure(
    stages: list[str], curve: np.ndarray, level: np.ndarray, mode: str, label: str, marked: str,
    model: str = "", control: np.ndarray | None = None,
) -> go.Figure:
    """Two tokens' cosine per stage (``label`` must already be plotly-safe text), against the
    level of two unrelated corpus tokens read the same way, and the same-sense control."""
    fig = line_figure(stages, "sim_words", _(MODE_WORDS[mode]), marked,
                      _("{model}: one word in two contexts").format(model=plotly_text(model)))
    add_lines(fig, stages, {label: (curve, {"color": SEGMENT_COLOURS[0], "width": 4})})
    if control is not None:
        add_lines(fig, stages, {_("same sense: the control sentence"):
                                (control, {"color": palette.GOOD, "width": 3})})
    return add_lines(fig, stages, {_("two unrelated corpus tokens"): (level, UNRELATED_LINE)},
                     "lines")


def dimensions_figure(top: pd.DataFrame, title: str, mode: str) -> go.Figure:
    """Horizontal bars, one per dimension of ``top``: red adds to the cosine, blue takes away."""
    labels = [_("dim {d}").format(d=d) for d in top["dimension"]]
    values = top["contribution"].to_numpy(np.float32)
    fig = go.Figure(go.Bar(
        x=values, y=labels, orientation="h",
        marker={"color": np.where(values >= 0, palette.HIGHLIGHT, palette.SEGMENT_A).tolist()},
        hovertemplate="%{y}: %{x:.4f}<extra></extra>",
    ))
    fig.update_layout(meta="sim_dims", title={"text": title}, height=100 + 28 * len(labels),
                      margin={"l": 10, "r": 10, "t": 64, "b": 10},
                      xaxis_title=_(DIMENSION_PARTS[mode]))
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


def anisotropy_figure(table: pd.DataFrame, marked: str, model: str = "") -> go.Figure:
    """The corpus baselines per stage (columns of ``core.similarity.anisotropy_table``)."""
    stages = table["stage"].tolist()
    fig = line_figure(stages, "sim_anisotropy", _("mean cosine"), marked,
                      _("{model}: unrelated corpus tokens").format(model=plotly_text(model)))
    styles: dict[str, dict] = {
        N_("random tokens, raw"): {"color": palette.HIGHLIGHT, "width": 4},
        N_("random tokens, standardised"): {"color": palette.SEGMENT_A},
        N_("random sentences, mean pooling"): UNRELATED_LINE,
    }
    return add_lines(fig, stages,
                     {_(c): (table[c].to_numpy(), line) for c, line in styles.items()})


def same_row_notes(unknown: list[bool], separator: str = "<br>") -> list[list[str]]:
    """Per matrix cell, the hover note for two [UNK] tokens (one word-table row), else ""."""
    note = separator + _(SAME_ROW)
    return [[note if a and b else "" for b in unknown] for a in unknown]
