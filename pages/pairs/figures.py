"""Figures and tables for the Pairs page: pure builders, no Streamlit drawing.

Every plotly figure carries a ``meta`` tag naming its view (the tests find figures by it) and
float32 values; every text a user typed reaches a figure escaped (``labels.plotly_text``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components import palette
from components.bar_table import Measure, bars_html
from components.heatmap import heatmap_figure
from components.heatmap_image import HeatmapImage, Scale
from components.i18n import N_, _, ngettext
from components.labels import SEGMENT_COLOURS, plotly_text, token_labels
from components.pair_figure import colour_bound, pair_title
from core.similarity.pair_lists import Agreement
from core.similarity.pairs import PairContributions, WordContributions, share_of_cosine

CELL_TEXT_MAX = 16      # write each contribution in its cell up to this many tokens a side
HOVER_CHARS = 90        # characters of a sentence in a scatter point's hover
SHARE = N_("share of the cosine")
EFFECT = N_("drop when left out")
UNKNOWN = "[UNK]"       # the results table's column: [UNK] tokens of A and B together


def contribution_image(contrib: PairContributions) -> HeatmapImage:
    """The n x m contributions as a picture, A's tokens down, B's across; values written in the
    cells while they fit."""
    bound = colour_bound(contrib.matrix)
    small = max(contrib.matrix.shape) <= CELL_TEXT_MAX
    return HeatmapImage(
        contrib.matrix.astype(np.float32), token_labels(contrib.tokens_a),
        token_labels(contrib.tokens_b), Scale("RdBu_r", -bound, bound), pair_title(contrib),
        _("sentence B's tokens (A's down the side)"), colour_title=_("contribution"),
        word_columns=True, cell_format="{:.3f}" if small else None)


def word_labels(contrib: WordContributions, side: str) -> list[str]:
    """Each word as "position word", its first token's position, safe for plotly."""
    words = contrib.words_a if side == "a" else contrib.words_b
    return [f"{w.start} {plotly_text(w.text)}" for w in words]


def word_contribution_image(contrib: PairContributions, words: WordContributions
                            ) -> HeatmapImage:
    """The word x word contributions as a picture, A's words down, B's across."""
    bound = colour_bound(words.matrix)
    small = max(words.matrix.shape) <= CELL_TEXT_MAX
    return HeatmapImage(
        words.matrix.astype(np.float32), word_labels(words, "a"), word_labels(words, "b"),
        Scale("RdBu_r", -bound, bound), pair_title(contrib) + " · " + _("by word"),
        _("sentence B's words (A's down the side)"), colour_title=_("contribution"),
        word_columns=True, cell_format="{:.3f}" if small else None)


def word_contribution_figure(contrib: PairContributions, words: WordContributions
                             ) -> go.Figure:
    """The same word matrix as an interactive heatmap."""
    bound = colour_bound(words.matrix)
    fig = heatmap_figure(
        words.matrix.astype(np.float32), word_labels(words, "a"), word_labels(words, "b"),
        title=pair_title(contrib) + " · " + _("by word"), zmin=-bound, zmax=bound,
        hover=_("A: %{y}<br>B: %{x}<br>contribution %{z:.5f}") + "<extra></extra>",
        x_title=_("sentence B's words"))
    fig.update_xaxes(type="category", tickangle=-60)
    fig.update_layout(meta="pairs_matrix")
    return fig


def top_word_table(words: WordContributions, k: int = 10) -> pd.DataFrame:
    """The k word pairs with the largest contributions (by size), largest first: core's
    ``WordContributions.top`` and each one's ``share_of_cosine``."""
    rows = words.top(k)
    a, b = words.texts_a, words.texts_b   # the words alone, to keep the table narrow
    return pd.DataFrame({
        "A": [a[i] for i, _j, _v in rows], "B": [b[j] for _i, j, _v in rows],
        _("term"): [v for _i, _j, v in rows],
        _("share"): [share_of_cosine(v, words.cosine) for _i, _j, v in rows],
    })


def top_table(contrib: PairContributions, k: int = 10) -> pd.DataFrame:
    """The k token pairs with the largest contributions (by size), largest first: core's
    ``PairContributions.top`` and each one's ``share_of_cosine``."""
    rows = contrib.top(k)
    return pd.DataFrame({
        "A": [f"{i} {contrib.tokens_a[i]}" for i, _j, _v in rows],
        "B": [f"{j} {contrib.tokens_b[j]}" for _i, j, _v in rows],
        _("term"): [v for _i, _j, v in rows],
        _("share"): [share_of_cosine(v, contrib.cosine) for _i, _j, v in rows],
    })


def shares_html(contrib: PairContributions, side: str) -> str:
    """Per token of one sentence: its share of the cosine (row or column sum) and how much the
    cosine drops when it is left out, side by side on one scale, values written out."""
    tokens = contrib.tokens_a if side == "a" else contrib.tokens_b
    shares = contrib.shares_a if side == "a" else contrib.shares_b
    effect = contrib.effect_a if side == "a" else contrib.effect_b
    name = _("sentence A") if side == "a" else _("sentence B")
    return bars_html(
        [f"{i} {token}" for i, token in enumerate(tokens)],   # escaped once, by bars_html
        [Measure(_(SHARE), shares.tolist(), SEGMENT_COLOURS[0 if side == "a" else 1]),
         Measure(_(EFFECT), effect.tolist(), palette.MUTED)],
        contrib.model_name + "\n" + _("each token of {sentence}").format(sentence=name),
        _("token"), f"pairs_shares_{side}")


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return plotly_text(text if len(text) <= HOVER_CHARS else text[:HOVER_CHARS - 1] + "…")


def scatter_figure(frame: pd.DataFrame, agreement: Agreement, model: str) -> go.Figure:
    """The model's cosine against the human score, one point per scored pair (pairs with [UNK]
    tokens in their own colour); the pairs that disagree most ringed in red."""
    scored = frame[frame["score"].notna()]
    unknown = scored[UNKNOWN] > 0
    fig = go.Figure()
    for part, name, colour in ((scored[~unknown], _("pairs"), SEGMENT_COLOURS[0]),
                               (scored[unknown], _("pairs with [UNK] tokens"),
                                SEGMENT_COLOURS[1])):
        if part.empty:
            continue
        hover = [f"{line}: {_short(a)}<br>{_short(b)}" for line, a, b
                 in zip(part["line"], part["a"], part["b"], strict=True)]
        fig.add_scatter(x=part["score"].astype(np.float32), y=part["cosine"].astype(np.float32),
                        mode="markers", name=name, text=hover,
                        marker={"size": 9, "color": colour, "opacity": 0.8},
                        hovertemplate="%{text}<br>" + _("score %{x:.2f} · cosine %{y:.3f}")
                        + "<extra></extra>")
    worst = frame.iloc[agreement.disagree]
    fig.add_scatter(x=worst["score"].astype(np.float32), y=worst["cosine"].astype(np.float32),
                    mode="markers", name=_("disagree most"), hoverinfo="skip",
                    marker={"size": 15, "color": "rgba(0,0,0,0)",
                            "line": {"color": palette.HIGHLIGHT, "width": 2}})
    fig.update_layout(
        meta="pairs_scatter", height=460, margin={"l": 10, "r": 10, "t": 70, "b": 10},
        title={"text": plotly_text(model) + "<br>" + ngettext(
            "cosine vs score of {n} pair · Spearman {rho} · Pearson {r}",
            "cosine vs score of {n} pairs · Spearman {rho} · Pearson {r}",
            agreement.n).format(
            n=agreement.n, rho=f"{agreement.spearman:.3f}", r=f"{agreement.pearson:.3f}")},
        xaxis_title=_("human score"), yaxis_title=_("the model's cosine"),
        legend={"orientation": "h", "yanchor": "top", "y": -0.15, "x": 0}, font={"size": 14})
    return fig


def disagree_table(frame: pd.DataFrame, agreement: Agreement) -> pd.DataFrame:
    """The pairs whose rank by cosine and rank by score are furthest apart."""
    worst = frame.iloc[agreement.disagree]
    return pd.DataFrame({
        _("line"): worst["line"].to_numpy(), _("score"): worst["score"].to_numpy(),
        _("cosine"): worst["cosine"].round(3).to_numpy(), "A": worst["a"].to_numpy(),
        "B": worst["b"].to_numpy()})
