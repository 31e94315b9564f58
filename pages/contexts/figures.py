"""The Contexts page's figures: the sense curves, and the map as a picture (SVG points, page text
around it) or an interactive figure (the neighbours' table and the senses' words are
components.neighbours_table's, which the Compare page shares). No Streamlit calls. Every text
from a corpus is escaped: a sentence shows as written."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from components import palette
from components.i18n import _
from components.labels import plotly_text
from components.neighbours_table import (
    OTHER,
    SENSE_COLOURS,
    sense_label,
)
from core.contexts.senses import Projection, SenseSeparation


def _layout(fig: go.Figure, title: str, y_title: str, height: int = 360) -> go.Figure:
    fig.update_layout(
        title={"text": title, "font": {"size": 17}}, height=height, font={"size": 14},
        margin={"l": 60, "r": 20, "t": 60, "b": 50},
        legend={"orientation": "h", "y": -0.22, "font": {"size": 14}},
        xaxis={"title": _("layer (0 = embedding output)"), "dtick": 1,
               "tickfont": {"size": 13}},
        yaxis={"title": y_title, "tickfont": {"size": 13}})
    return fig


def separation_figure(sep: SenseSeparation, mean: np.ndarray, n_words: int, model: str
                      ) -> go.Figure:
    """The word's leave-one-out accuracy per layer, the mean over words, and chance."""
    layers = list(sep.layers)
    fig = go.Figure()
    fig.add_scatter(x=layers, y=sep.accuracy, mode="lines+markers", name=plotly_text(sep.word),
                    line={"color": palette.SEGMENT_A, "width": 3},
                    hovertemplate="%{x}: %{y:.0%}<extra></extra>")
    fig.add_scatter(x=layers, y=mean, mode="lines", name=_("mean over {n} words").format(
        n=n_words), line={"color": palette.MUTED, "dash": "dash"},
        hovertemplate="%{x}: %{y:.0%}<extra></extra>")
    fig.add_hline(y=sep.chance, line={"color": palette.HIGHLIGHT, "dash": "dot"},
                  annotation_text=_("chance"), annotation_font_size=14)
    fig.add_vline(x=sep.peak_layer, line={"color": palette.GOOD, "width": 1})
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%")
    fig.update_layout(meta="ctx_senses")
    return _layout(fig, _("Senses told apart, {model}").format(model=plotly_text(model)),
                   _("leave-one-out accuracy"))


def self_similarity_figure(word: str, layers: Sequence[int], values: np.ndarray,
                           baseline: np.ndarray, model: str) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=list(layers), y=values, mode="lines+markers", name=plotly_text(word),
                    line={"color": palette.SEGMENT_A, "width": 3},
                    hovertemplate="%{x}: %{y:.3f}<extra></extra>")
    fig.add_scatter(x=list(layers), y=baseline, mode="lines", name=_("two random tokens"),
                    line={"color": palette.HIGHLIGHT, "dash": "dot"},
                    hovertemplate="%{x}: %{y:.3f}<extra></extra>")
    fig.update_yaxes(range=[min(0.0, float(np.nanmin(baseline)) - 0.05), 1.02])
    fig.update_layout(meta="ctx_self")
    return _layout(fig, _("Self-similarity, {model}").format(model=plotly_text(model)),
                   _("mean cosine"))


# --- the map ----------------------------------------------------------------------------------

MAP_STYLE = f"""<style>
.cm {{ color:{palette.INK}; font-size:15px; line-height:1.35; }}
.cm-title {{ font-size:18px; font-weight:600; overflow-wrap:anywhere; }}
.cm-plot {{ width:100%; border:1px solid {palette.GRID}; box-sizing:border-box; }}
.cm-plot img {{ display:block; width:100%; height:auto; }}
.cm-axes {{ color:{palette.SOFT_INK}; margin-top:2px; }}
.cm-key {{ display:flex; flex-wrap:wrap; gap:4px 16px; margin-top:4px; }}
.cm-dot {{ display:inline-block; width:12px; height:12px; border-radius:50%;
  margin-right:5px; vertical-align:-1px; }}
</style>"""


def point_groups(labels: Sequence[str | None]) -> list[str | None]:
    """The distinct labels in order of appearance, None (no label) last."""
    named = list(dict.fromkeys(x for x in labels if x is not None))
    return named + ([None] if any(x is None for x in labels) else [])


def map_picture(proj: Projection, labels: Sequence[str | None], title: str, name: str,
                own: bool = False) -> str:
    """The points as an SVG image (equal axes), title, axis shares and the key as page text."""
    xy = proj.xy
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    width, height, pad = 1000.0, 620.0, 30.0
    scale = min((width - 2 * pad) / max(float(hi[0] - lo[0]), 1e-9),
                (height - 2 * pad) / max(float(hi[1] - lo[1]), 1e-9))
    cx, cy = (lo + hi) / 2
    groups = point_groups(labels)
    colours = {g: (SENSE_COLOURS[k % len(SENSE_COLOURS)] if g is not None else OTHER)
               for k, g in enumerate(groups)}
    dots = []
    for g in reversed(groups):   # the first group on top
        for (x, y), label in zip(xy, labels, strict=True):
            if label == g:
                px, py = width / 2 + (x - cx) * scale, height / 2 - (y - cy) * scale
                dots.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="13" fill="{colours[g]}" '
                            'fill-opacity="0.8" stroke="#ffffff" stroke-width="1"/>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}">'
           f'<rect width="100%" height="100%" fill="#ffffff"/>{"".join(dots)}</svg>')
    data = base64.b64encode(svg.encode()).decode()
    key = "".join(f'<span><span class="cm-dot" style="background:{colours[g]}"></span>'
                  f"{html.escape(sense_label(g, own) if g is not None else _('no label'))} "
                  f"({sum(1 for x in labels if x == g)})</span>" for g in groups)
    axes = _("Horizontal: the direction of largest spread at this layer ({a} of it); vertical: "
             "the next ({b}).").format(a=f"{proj.explained[0]:.0%}", b=f"{proj.explained[1]:.0%}")
    return (f'{MAP_STYLE}<div class="cm" data-picture="{html.escape(name)}">'
            f'<div class="cm-title">{html.escape(title)}</div>'
            f'<div class="cm-plot"><img alt="{html.escape(title)}" '
            f'src="data:image/svg+xml;base64,{data}"></div>'
            f'<div class="cm-axes">{html.escape(axes)}</div><div class="cm-key">{key}</div></div>')


def map_figure(proj: Projection, labels: Sequence[str | None], sentences: Sequence[str],
               title: str, own: bool = False) -> go.Figure:
    """The same map, interactive: hover a point for its sentence."""
    fig = go.Figure()
    groups = point_groups(labels)
    for k, g in enumerate(groups):
        rows = [i for i, x in enumerate(labels) if x == g]
        fig.add_scatter(
            x=proj.xy[rows, 0], y=proj.xy[rows, 1], mode="markers",
            name=plotly_text(sense_label(g, own) if g is not None else _("no label")),
            marker={"size": 10, "color": SENSE_COLOURS[k % len(SENSE_COLOURS)] if g else OTHER,
                    "line": {"color": "#ffffff", "width": 1}},
            text=[plotly_text(sentences[i]) for i in rows],
            hovertemplate="%{text}<extra></extra>")
    fig.update_layout(
        title={"text": plotly_text(title), "font": {"size": 17}}, height=520, font={"size": 14},
        margin={"l": 50, "r": 20, "t": 60, "b": 50}, meta="ctx_map",
        legend={"orientation": "h", "y": -0.12},
        xaxis={"title": f"PC1 ({proj.explained[0]:.0%})", "zeroline": False},
        yaxis={"title": f"PC2 ({proj.explained[1]:.0%})", "zeroline": False,
               "scaleanchor": "x"})
    return fig
