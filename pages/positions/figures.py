"""Positions' figures and tables: PCA scatter, scree, cosine heatmap, offset curve, probe,
norms. Pure functions of core arrays (no Streamlit), so a test can rebuild any figure; their
words are translated with ``_()`` when they are built (never cached).

Payloads stay small: coordinates and matrices go out as float32, heatmaps only for the sampled
positions, and token text only through components.labels' ``plotly_text`` / ``token_labels``
(user text is never markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components import palette
from components.i18n import N_, _
from components.labels import SEGMENT_COLOURS, SEGMENT_NAMES, plotly_text, token_labels
from core.positions import PROBE_FITS, TABLE_KINDS, ProbeFit, ProbeResult, Projection, TableKind
from core.tokens import Encoding

TABLE_COLOURS = {"learned": palette.POSITION, "sinusoidal": palette.WORD}
TABLE_NAME_TEMPLATES = {"learned": N_("learned ({model})"),
                        "sinusoidal": N_("sinusoidal (formula)")}
FIT_NAMES = {"plain": N_("plain linear regression"), "ridge": N_("ridge regression")}
FIT_SYMBOLS = {"plain": "circle", "ridge": "x"}
# Short words for the per-fold table's headers, so its six columns fit at 1024 px.
SHORT_TABLE_NAMES = {"learned": N_("learned"), "sinusoidal": N_("sinusoidal")}
SHORT_FIT_NAMES = {"plain": N_("plain"), "ridge": N_("ridge")}
MAX_TEXT_LABELS = 32   # more labels than this overlap into a blot; hover still names every token
SCREE_COMPONENTS = 20
FIRST_COUNT = 32       # the smallest count of first positions the PCA tab's switcher offers
LABEL_GAP = 0.05       # printed token labels keep this share of the plot's width apart
FONT = {"size": 15}    # legible from the back of a classroom
# Below the plot, clear of the title (and of the x axis title above it).
LEGEND = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0.0}


def model_label(name: str) -> str:
    """The loaded model as a figure names it: its name, or a folder's last part."""
    return Path(name).name if Path(name).is_absolute() else name


def table_names(model: str) -> dict[TableKind, str]:
    """Each table's name in this run's language, the learned one naming the loaded model."""
    return {kind: _(TABLE_NAME_TEMPLATES[kind]).format(model=model_label(model))
            for kind in TABLE_KINDS}


@dataclass(frozen=True)
class InputMarks:
    """The current input's positions with plotly-safe token texts, hover labels and segments."""

    positions: tuple[int, ...]
    tokens: tuple[str, ...]     # the token alone: short enough to print next to its point
    labels: tuple[str, ...]     # "position token", unique, for hovers
    segments: tuple[int, ...]

    @classmethod
    def from_encoding(cls, encoding: Encoding) -> InputMarks:
        real = [i for i, mask in enumerate(encoding.attention_mask) if mask]
        labels = token_labels(encoding.tokens)
        return cls(
            positions=tuple(real),
            tokens=tuple(plotly_text(encoding.tokens[i]) for i in real),
            labels=tuple(labels[i] for i in real),
            segments=tuple(encoding.token_type_ids[i] for i in real),
        )

    def within(self, start: int, stop: int) -> InputMarks:
        """Only the marks whose position lies in start..stop (inclusive)."""
        keep = [i for i, p in enumerate(self.positions) if start <= p <= stop]
        return InputMarks(
            positions=tuple(self.positions[i] for i in keep),
            tokens=tuple(self.tokens[i] for i in keep),
            labels=tuple(self.labels[i] for i in keep),
            segments=tuple(self.segments[i] for i in keep),
        )

    @property
    def span(self) -> tuple[int, int] | None:
        return (min(self.positions), max(self.positions)) if self.positions else None

    def colours(self) -> list[str]:
        return [SEGMENT_COLOURS.get(s, palette.SOFT_INK) for s in self.segments]


def format_positions(value: float) -> str:
    """An error measured in positions, to two decimals.

    Below 0.01 the digits are rounding noise of float64 least squares (the sinusoid's probe
    lands around 1e-5), so the text says "< 0.01" rather than print noise as a finding.
    """
    return f"{value:.2f}" if abs(value) >= 0.01 else "< 0.01"


def format_alphas(alphas: np.ndarray) -> str:
    """The ridge penalties the folds chose, e.g. "0.01" or "0.001–0.01"."""
    low, high = float(np.min(alphas)), float(np.max(alphas))
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


def _layout(fig: go.Figure, title: str, height: int, subtitle: str | None = None) -> go.Figure:
    """Title (and a second line for figures drawn two to a row: one long line was cut off at
    1024 px), height, legible font, legend below the plot."""
    heading: dict = {"text": title, "x": 0.0, "xanchor": "left"}
    if subtitle:
        heading["subtitle"] = {"text": subtitle, "font": {"size": 14, "color": palette.SOFT_INK}}
    fig.update_layout(
        title=heading,
        height=height,
        margin={"l": 10, "r": 10, "t": 75 if subtitle else 50, "b": 10},
        font=FONT,
        legend=LEGEND,
    )
    return fig


def first_counts(n_positions: int, smallest: int = FIRST_COUNT) -> list[int]:
    """The counts of first positions the PCA tab switches between: powers of two from
    ``smallest`` below the table's size, then the whole table (32, 64, 128, 256, 512 for a
    512-position table; 32, 40 for a 40-position one; the whole table alone below 32).
    Each is one PCA of positions 0..count-1, sent to the browser as a picture, so a handful
    keeps the page small (about 40 kB as the switcher packs them for 512 positions)."""
    counts = []
    count = max(smallest, 1)
    while count < n_positions:
        counts.append(count)
        count *= 2
    return [*counts, n_positions]


def axis_title(proj: Projection, pc: int) -> str:
    """An axis of the PCA: the component and its share of the variance."""
    return _("PC{pc} ({share} of variance)").format(
        pc=pc, share=f"{proj.explained_variance_ratio[pc - 1]:.1%}")


# Under the plot, not beside it: two figures share a row at 1024 px, and a colour bar on the
# right left the scatter a third of its width.
PCA_COLOURBAR = {"thickness": 10, "orientation": "h", "x": 0.5, "xanchor": "center", "y": -0.45,
                 "yanchor": "top", "len": 0.9}


def pca_figure(
    proj: Projection, pcs: Sequence[int], marks: InputMarks | None, title: str,
    subtitle: str | None = None,
) -> go.Figure:
    """Positions in the plane (2 components) or space (3) of the chosen principal components.

    Consecutive positions are joined by a faint line so the path through the table shows; the
    input's positions are ringed in their segment's colour and labelled with their tokens.
    """
    coords = proj.coords[:, [pc - 1 for pc in pcs]]                # (n, 2 or 3) float32
    fig = go.Figure(_pca_path(proj, pcs, coords))
    if marks is not None and marks.positions:
        fig.add_trace(_pca_marks(marks, coords, np.asarray(marks.positions) - proj.start))
    if len(pcs) == 3:
        fig.update_layout(
            scene={
                f"{axis}axis": {"title": {"text": f"PC{pc}"}}
                for pc, axis in zip(pcs, "xyz", strict=True)
            }
        )
        return _layout(fig, title, 580, subtitle)
    fig.update_xaxes(title=axis_title(proj, pcs[0]))
    fig.update_yaxes(title=axis_title(proj, pcs[1]), scaleanchor="x", scaleratio=1)
    return _layout(fig, title, 540, subtitle)


def pca_marks_trace(proj: Projection, pcs: Sequence[int], marks: InputMarks | None,
                    ) -> dict | None:
    """The input's marks of pca_figure as a plain trace, to add to a cached figure."""
    if marks is None or not marks.positions:
        return None
    coords = proj.coords[:, [pc - 1 for pc in pcs]]
    return _pca_marks(marks, coords, np.asarray(marks.positions) - proj.start).to_plotly_json()


def with_trace(base: dict, trace: dict | None) -> go.Figure:
    """A cached figure (``to_dict()`` of a validated one) with one more trace (validated when it
    was made), put together without plotly validating it all again: building the PCA figures
    each rerun was most of a Positions rerun on the server."""
    data = [*base["data"], trace] if trace else base["data"]
    return go.Figure(data=data, layout=base["layout"], _validate=False)


def _pca_path(proj: Projection, pcs: Sequence[int], coords: np.ndarray) -> go.Scatter:
    """Every position of the range, coloured by its index and joined to the next."""
    three_d = len(pcs) == 3
    positions = proj.positions.astype(np.int32)
    hover = _("position %{customdata}") + "<br>" + "<br>".join(
        f"PC{pc} %{{{axis}:.3f}}" for pc, axis in zip(pcs, "xyz", strict=False)
    )
    scatter = go.Scatter3d if three_d else go.Scatter
    return scatter(
        **dict(zip("xyz", coords.T, strict=False)),
        mode="lines+markers",
        name=_("positions {start}–{stop}").format(start=proj.start, stop=proj.stop),
        customdata=positions,
        line={"color": "rgba(120,120,120,0.15)", "width": 1},
        marker={
            "size": 3 if three_d else 6, "color": positions, "colorscale": "Viridis",
            "colorbar": {"title": {"text": _("position"), "side": "top"}, **PCA_COLOURBAR},
        },
        hovertemplate=hover + "<extra></extra>",
    )


def _pca_marks(marks: InputMarks, coords: np.ndarray, rows: np.ndarray) -> go.Scatter:
    """The input's positions, ringed in their segment's colour, labelled where there is room."""
    three_d = coords.shape[1] == 3
    scatter = go.Scatter3d if three_d else go.Scatter
    return scatter(
        **dict(zip("xyz", coords[rows].T, strict=False)),
        mode="markers+text" if len(rows) <= MAX_TEXT_LABELS else "markers",
        name=_("your input"),
        text=spaced_labels(coords, rows, marks.tokens),
        hovertext=list(marks.labels),
        textposition="top center",
        # dark text with a white halo stays readable on top of the point cloud
        textfont={"size": 15, "color": palette.INK} if three_d
        else {"size": 15, "color": palette.INK, "shadow": "auto"},
        marker={
            "size": 6 if three_d else 14,
            "symbol": "circle-open" if not three_d else "circle",
            "color": marks.colours(),
            "line": {"width": 2.5, "color": marks.colours()},
            "opacity": 1.0,
        },
        hovertemplate="%{hovertext}<extra>" + _("your input") + "</extra>",
    )


def spaced_labels(
    coords: np.ndarray, rows: np.ndarray, tokens: Sequence[str], min_gap: float = LABEL_GAP
) -> list[str]:
    """The tokens to print beside the points ``coords[rows]``; "" where a label would overlap.

    Going in reading order, a token is printed only if its point (2-D or 3-D) is at least
    ``min_gap`` times the plot's widest extent from every point already labelled: the sinusoid
    puts its first positions almost on top of each other, and a pile of labels there reads as
    a blot. The others keep their hover text.
    """
    span = float(np.ptp(coords, axis=0).max()) or 1.0
    placed: list[np.ndarray] = []
    texts = []
    for row, token in zip(rows, tokens, strict=True):
        point = coords[row].astype(np.float64)
        if all(np.linalg.norm(point - other) >= min_gap * span for other in placed):
            placed.append(point)
            texts.append(token)
        else:
            texts.append("")
    return texts


def scree_figure(
    projections: Mapping[TableKind, Projection], names: Mapping[TableKind, str],
    n: int = SCREE_COMPONENTS,
) -> go.Figure:
    """Share of the variance per principal component (bars) and its running total (lines)."""
    fig = go.Figure()
    for kind, proj in projections.items():
        ratio = proj.explained_variance_ratio[:n].astype(np.float32)
        pcs = [f"PC{i}" for i in range(1, len(ratio) + 1)]
        colour = TABLE_COLOURS.get(kind, palette.SOFT_INK)
        name = names.get(kind, kind)
        fig.add_trace(
            go.Bar(x=pcs, y=ratio, name=name, marker_color=colour,
                   hovertemplate="%{x}: %{y:.1%}<extra>" + plotly_text(name) + "</extra>")
        )
        fig.add_trace(
            go.Scatter(x=pcs, y=np.cumsum(ratio, dtype=np.float32), mode="lines+markers",
                       name=_("{table}, running total").format(table=name),
                       line={"color": colour, "dash": "dot"},
                       hovertemplate=_("up to %{x}: %{y:.1%}") + "<extra>" + plotly_text(name)
                       + "</extra>")
        )
    fig.update_yaxes(title=_("share of the variance"), tickformat=".0%", range=[0, 1.02])
    fig.update_layout(barmode="group")
    return _layout(fig, _("Explained variance per component (scree)"), 440)


def position_cosine_figure(
    cosine: np.ndarray, positions: np.ndarray, marks: InputMarks | None, title: str,
    subtitle: str | None = None,
) -> go.Figure:
    """cos(p, q) for the sampled positions, on a fixed -1..1 scale; the input's span is boxed."""
    idx = np.asarray(positions, dtype=np.int32)
    values = np.asarray(cosine[np.ix_(idx, idx)], dtype=np.float32)
    fig = go.Figure(
        go.Heatmap(
            z=values, x=idx, y=idx, zmin=-1.0, zmax=1.0, colorscale="RdBu_r",
            colorbar={"title": {"text": "cos", "side": "top"}, "thickness": 10,
                      "orientation": "h", "x": 0.5, "xanchor": "center", "y": -0.3,
                      "yanchor": "top", "len": 0.9},   # under the plot, as in the PCA
            hovertemplate=_("cos(p=%{y}, q=%{x}) = %{z:.3f}") + "<extra></extra>",
        )
    )
    span = marks.within(int(idx[0]), int(idx[-1])).span if marks else None
    if span is not None:
        half = (idx[1] - idx[0]) / 2 if len(idx) > 1 else 0.5
        fig.add_shape(
            type="rect", x0=span[0] - half, x1=span[1] + half, y0=span[0] - half,
            y1=span[1] + half, line={"color": palette.INK, "width": 2},
            fillcolor="rgba(0,0,0,0)",
        )
    fig.update_xaxes(title=_("position q"), constrain="domain")
    fig.update_yaxes(title=_("position p"), autorange="reversed", scaleanchor="x",
                     constrain="domain")
    return _layout(fig, title, 490, subtitle)


def offset_figure(
    curves: Mapping[TableKind, np.ndarray], names: Mapping[TableKind, str], start: int, stop: int
) -> go.Figure:
    """Mean cos(p, p + k) against the offset k, one line per table."""
    fig = go.Figure()
    for kind, curve in curves.items():
        name = names.get(kind, kind)
        fig.add_trace(
            go.Scatter(
                x=np.arange(len(curve), dtype=np.int32), y=np.asarray(curve, dtype=np.float32),
                mode="lines", name=name,
                line={"color": TABLE_COLOURS.get(kind, palette.SOFT_INK), "width": 2.5},
                hovertemplate=_("k = %{x}: mean cos %{y:.3f}") + "<extra>" + plotly_text(name)
                + "</extra>",
            )
        )
    fig.add_hline(y=0, line={"color": palette.GRID, "width": 1})
    fig.update_xaxes(title=_("offset k (positions apart)"))
    fig.update_yaxes(title=_("mean cos(p, p + k)"), range=[-1.02, 1.02])
    title = _("How similarity falls with distance (positions {start}–{stop})")
    return _layout(fig, title.format(start=start, stop=stop), 440)


def probe_trace_name(names: Mapping[TableKind, str], kind: TableKind, fit: ProbeFit) -> str:
    """A probe trace's legend entry, e.g. "learned (all-MiniLM-L6-v2), ridge regression"."""
    return _("{table}, {fit}").format(table=names[kind], fit=_(FIT_NAMES[fit]))


def probe_figure(
    probes: Mapping[tuple[TableKind, ProbeFit], ProbeResult], names: Mapping[TableKind, str],
    marks: InputMarks | None,
) -> go.Figure:
    """Index predicted by the held-out fold against the true index, per (table, fit); perfect
    recovery is y = x."""
    fig = go.Figure()
    n = 0
    for (kind, fit), probe in probes.items():
        n = len(probe.predictions)
        name = probe_trace_name(names, kind, fit)
        fig.add_trace(
            go.Scatter(
                x=np.arange(n, dtype=np.int32), y=probe.predictions.astype(np.float32),
                mode="markers", name=name,
                marker={"color": TABLE_COLOURS.get(kind, palette.SOFT_INK), "size": 5,
                        "opacity": 0.8, "symbol": FIT_SYMBOLS.get(fit, "circle")},
                hovertemplate=_("position %{x}: predicted %{y:.2f}") + "<extra>"
                + plotly_text(name) + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(x=[0, n - 1], y=[0, n - 1], mode="lines", name=_("perfect (y = x)"),
                   line={"color": palette.EDGE, "dash": "dash", "width": 1.5}, hoverinfo="skip")
    )
    _shade_input(fig, marks)
    fig.update_xaxes(title=_("true position"))
    fig.update_yaxes(title=_("predicted position"), range=list(probe_frame(n)))
    return _layout(fig, _("Probe: index predicted from the vector (held-out folds)"), 560)


def probe_frame(n: int) -> tuple[float, float]:
    """The predicted-position range drawn: a few wild misses (often position 0) would squash the
    rest into a flat line, so the frame keeps the plausible range."""
    return -0.15 * (n - 1), 1.15 * (n - 1)


def probe_outside_note(
    probes: Mapping[tuple[TableKind, ProbeFit], ProbeResult], names: Mapping[TableKind, str]
) -> str | None:
    """How many predictions lie beyond the frame, and the furthest (None when none do)."""
    n = len(next(iter(probes.values())).predictions)
    low, high = probe_frame(n)
    outside = [
        (key, p, float(v)) for key, probe in probes.items()
        for p, v in enumerate(probe.predictions) if not low <= v <= high
    ]
    if not outside:
        return None
    (kind, fit), p, v = max(outside, key=lambda t: abs(t[2] - t[1]))
    return _("{count} prediction(s) lie beyond the frame of the chart; the furthest: position "
             "{position} predicted as {value} ({table}).").format(
        count=len(outside), position=p, value=f"{v:.0f}", table=probe_trace_name(names, kind, fit))


def probe_summary(
    probes: Mapping[tuple[TableKind, ProbeFit], ProbeResult], names: Mapping[TableKind, str]
) -> pd.DataFrame:
    """One row per fit (and the guess of the mean), one column per table: the 5-fold MAE."""
    rows = {_(FIT_NAMES[fit]): [format_positions(probes[kind, fit].mae) for kind in TABLE_KINDS]
            for fit in PROBE_FITS}
    rows[_("guessing the mean index")] = [
        format_positions(probes[kind, "plain"].baseline_mae) for kind in TABLE_KINDS
    ]
    frame = pd.DataFrame(rows, index=[names[k] for k in TABLE_KINDS]).T
    frame.index.name = _("mean absolute error (positions)")
    return frame.reset_index()


def probe_fold_table(
    probes: Mapping[tuple[TableKind, ProbeFit], ProbeResult], n_folds: int
) -> pd.DataFrame:
    """Per fold: positions held out and the MAE of every (table, fit), under short headers."""
    first = next(iter(probes.values()))
    return pd.DataFrame({
        _("fold"): np.arange(1, n_folds + 1),
        _("positions held out"): np.bincount(first.fold, minlength=n_folds),
        **{fold_column(kind, fit): probe.fold_mae for (kind, fit), probe in probes.items()},
    })


def fold_column(kind: str, fit: str) -> str:
    """A per-fold table header, e.g. "learned, ridge"."""
    return _("{table}, {fit}").format(table=_(SHORT_TABLE_NAMES[kind]),
                                      fit=_(SHORT_FIT_NAMES[fit]))


def position_norms_figure(
    norms: np.ndarray, name: str, colour: str, marks: InputMarks | None
) -> go.Figure:
    """||p|| along the index for one table, the input's positions marked."""
    values = np.asarray(norms, dtype=np.float32)
    fig = go.Figure(
        go.Scatter(
            x=np.arange(len(values), dtype=np.int32), y=values, mode="lines", name=name,
            line={"color": colour, "width": 2},
            hovertemplate=_("position %{x}: norm %{y:.3f}") + "<extra></extra>",
        )
    )
    if marks is not None and marks.positions:
        rows = np.asarray(marks.positions)
        fig.add_trace(
            go.Scatter(
                x=rows.astype(np.int32), y=values[rows], mode="markers", name=_("your input"),
                text=list(marks.labels), marker={"color": marks.colours(), "size": 8},
                hovertemplate=_("%{text}: norm %{y:.3f}") + "<extra></extra>",
            )
        )
    fig.update_xaxes(title=_("position"))
    fig.update_yaxes(title=_("norm ||p||"), rangemode="tozero")
    return _layout(fig, _("Norm of each position vector"), 440, name)


def _shade_input(fig: go.Figure, marks: InputMarks | None) -> None:
    """A light band over the positions the current input occupies."""
    span = marks.span if marks else None
    if span is not None:
        fig.add_vrect(x0=span[0] - 0.5, x1=span[1] + 0.5, fillcolor=palette.SEGMENT_A,
                      opacity=0.12, line_width=0, annotation_text=_("your input"),
                      annotation_position="top left")


COLOUR_WORDS = {0: N_("blue"), 1: N_("orange")}
OTHER_COLOUR = N_("grey")


def segment_legend(marks: InputMarks) -> str:
    """Plain words for the ring colours, e.g. "blue = sentence A, orange = sentence B"."""
    used = sorted(set(marks.segments))
    return _(", ").join(
        _("{colour} = sentence {segment}").format(colour=_(COLOUR_WORDS.get(s, OTHER_COLOUR)),
                                                  segment=SEGMENT_NAMES.get(s, s))
        for s in used
    )
