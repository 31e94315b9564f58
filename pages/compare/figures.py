"""Compare page's figures and tables: built from core's results, no st. calls.

Every plotly figure carries a ``meta`` tag naming its view (the tests find figures by it);
model names reach a figure escaped (``labels.plotly_text``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components import palette
from components.i18n import N_, _
from components.labels import plotly_text
from core.compare import LayerSimilarity, MapChecks, PairsComparison
from core.compare.layers import CHECK_SCALE
from core.compare.pairs import Statistic
from core.similarity.pair_lists import PairList
from core.similarity.recipe import Recipe
from core.tokens import Encoding
from pages.compare.records import PairsOnBoth

CELL_TEXT_MAX = 13      # write each CKA in its cell up to this many layers a side
TOLERANCE = 1e-6        # a check that should give the same number passes within this
RANDOM_LABEL = N_("{model} with random weights")
POOLING_WORDS = {"cls": N_("the [CLS] vector"), "mean": N_("the mean of the tokens"),
                 "max": N_("the largest value per dimension"),
                 "mean_sqrt_len_tokens": N_("the sum over √(tokens)"),
                 "weightedmean": N_("a position-weighted mean"),
                 "lasttoken": N_("the last token's vector")}


def layer_labels(count: int) -> list[str]:
    """hidden_states' indices: 0 is the embedding output (said in the axis titles)."""
    return [str(k) for k in range(count)]


def map_figure(result: LayerSimilarity, label_a: str, label_b: str) -> go.Figure:
    """The CKA map: A's layers down, B's across, 0 (unlike) to 1 (alike up to a rotation and
    a scale)."""
    rows, cols = result.cka.shape
    values = result.cka.astype(np.float32)
    fig = go.Figure(go.Heatmap(
        z=values, x=layer_labels(cols), y=layer_labels(rows), zmin=0.0, zmax=1.0,
        colorscale="Viridis", colorbar={"title": {"text": "CKA"}},
        text=np.vectorize(lambda v: f"{v:.2f}")(values) if max(rows, cols) <= CELL_TEXT_MAX
        else None,
        texttemplate="%{text}" if max(rows, cols) <= CELL_TEXT_MAX else None,
        textfont={"size": 14},
        hovertemplate=_("A: %{y}<br>B: %{x}<br>CKA %{z:.4f}") + "<extra></extra>"))
    fig.update_layout(
        height=max(360, min(720, 120 + 44 * rows)), margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis_title=_("B: {model}, layer (0 = embedding output)").format(
            model=plotly_text(label_b)),
        yaxis_title=_("A: {model}, layer").format(model=plotly_text(label_a)),
        meta="compare_map", font={"size": 15})
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def map_frame(result: LayerSimilarity) -> pd.DataFrame:
    """The map's numbers, rows A's layers, columns B's (for the download)."""
    rows, cols = result.cka.shape
    return pd.DataFrame(result.cka, index=[f"A{k}" for k in range(rows)],
                        columns=[f"B{k}" for k in range(cols)])


def checks_frame(checks: MapChecks) -> pd.DataFrame:
    """The three checks (and the self-comparison) as a table: what was done, the number it
    gave, what it must do, and whether it did."""
    worst = float(np.max(np.abs(checks.self_diagonal - 1.0)))
    rows = [
        (_("A against itself, every layer"), f"{np.mean(checks.self_diagonal):.6f}",
         _("be 1 (off by at most {diff})").format(diff=f"{worst:.0e}"), worst <= TOLERANCE),
        (_("B's last layer rotated by a random orthogonal matrix"), f"{checks.rotated:.6f}",
         _("not change: {cell}").format(cell=f"{checks.cell:.6f}"),
         abs(checks.rotated - checks.cell) <= TOLERANCE),
        (_("B's last layer times {scale}").format(scale=CHECK_SCALE), f"{checks.scaled:.6f}",
         _("not change: {cell}").format(cell=f"{checks.cell:.6f}"),
         abs(checks.scaled - checks.cell) <= TOLERANCE),
        (_("B's rows shuffled (each row of A meets another token)"), f"{checks.shuffled:.6f}",
         _("drop: CKA compares the same inputs row by row"), checks.shuffled < checks.cell),
    ]
    return pd.DataFrame({
        _("check"): [r[0] for r in rows], "CKA": [r[1] for r in rows],
        _("it must"): [r[2] for r in rows], "": ["✓" if r[3] else "✗" for r in rows]})


def curves_figure(curve_a: np.ndarray, curve_b: np.ndarray, label_a: str, label_b: str
                  ) -> go.Figure:
    """The pair's cosine at every layer of A and of B, two curves on one axis."""
    fig = go.Figure()
    for curve, label, colour, dash in ((curve_a, label_a, palette.SEGMENT_A, "solid"),
                                       (curve_b, label_b, palette.SEGMENT_B, "dash")):
        fig.add_trace(go.Scatter(
            x=list(range(len(curve))), y=curve.astype(np.float32), mode="lines+markers",
            name=plotly_text(label), line={"color": colour, "width": 3, "dash": dash},
            marker={"size": 9},
            hovertemplate=_("layer %{x}: cosine %{y:.4f}") + "<extra></extra>"))
    fig.update_layout(
        height=380, margin={"l": 10, "r": 10, "t": 10, "b": 10}, meta="compare_curves",
        xaxis_title=_("layer (0 = embedding output)"), yaxis_title=_("cosine of A and B"),
        legend={"orientation": "h", "y": -0.25}, font={"size": 15})
    fig.update_xaxes(dtick=1)
    return fig


def recipe_words(recipe: Recipe) -> str:
    """A recipe as a reader says it: "the mean of the tokens, normalised"."""
    words = " + ".join(_(POOLING_WORDS.get(p.value, p.value)) for p in recipe.pooling)
    if recipe.prompt:
        words = _("“{prompt}” before the text, then {words}").format(prompt=recipe.prompt,
                                                                     words=words)
    if not recipe.own:
        words = _("{words} (lent: the model has no recipe of its own)").format(words=words)
    return words


def pair_table(curve_a: np.ndarray, curve_b: np.ndarray, recipe_a: Recipe, recipe_b: Recipe,
               label_a: str, label_b: str) -> pd.DataFrame:
    """One row per model: its sentence vector and the pair's cosine at its last layer."""
    return pd.DataFrame({
        _("model"): [label_a, label_b],
        _("sentence vector"): [recipe_words(recipe_a), recipe_words(recipe_b)],
        _("cosine at the last layer"): [f"{curve_a[-1]:.4f}", f"{curve_b[-1]:.4f}"],
    })


# --- many pairs ---------------------------------------------------------------------------------

STATISTIC_NAMES = {Statistic.SPEARMAN: "Spearman", Statistic.AUC: "ROC AUC"}


def agreement_table(comparison: PairsComparison, label_a: str, label_b: str) -> pd.DataFrame:
    """Each model's agreement with people's scores: the ranking statistic and Pearson."""
    name = STATISTIC_NAMES[comparison.statistic]
    return pd.DataFrame({
        _("model"): [label_a, label_b],
        name: [f"{comparison.a:.4f}", f"{comparison.b:.4f}"],
        "Pearson": [f"{comparison.pearson_a:.4f}", f"{comparison.pearson_b:.4f}"],
    })


def verdict(comparison: PairsComparison) -> str:
    """The difference in words a student understands, with its interval."""
    name = STATISTIC_NAMES[comparison.statistic]
    diff = comparison.difference
    if comparison.statistic == Statistic.AUC:
        better = _("B separates the pairs labelled 1 from those labelled 0 better than A by "
                   "{diff} ({name} {b} against {a}).") if diff >= 0 else _(
            "A separates the pairs labelled 1 from those labelled 0 better than B by {diff} "
            "({name} {a} against {b}).")
    else:
        better = _("B ranks the pairs more like people's scores than A does, by {diff} ({name} "
                   "{b} against {a}).") if diff >= 0 else _(
            "A ranks the pairs more like people's scores than B does, by {diff} ({name} {a} "
            "against {b}).")
    first = better.format(diff=f"{abs(diff):.3f}", name=name, a=f"{comparison.a:.3f}",
                          b=f"{comparison.b:.3f}")
    interval = _("The 95% interval of the difference (B minus A; pairs: {n}, drawn with "
                 "replacement {rounds} times) runs from {low} to {high}").format(
        rounds=f"{comparison.rounds:,}", n=f"{comparison.n:,}", low=f"{comparison.low:.3f}",
        high=f"{comparison.high:.3f}")
    if comparison.excludes_zero:
        tail = _("; it excludes 0: the difference is more than the luck of which pairs were "
                 "picked.")
    else:
        tail = _("; it includes 0: with these pairs, the difference could be chance.")
    return first + " " + interval + tail


def pairs_frame(parsed: PairList, both: PairsOnBoth) -> pd.DataFrame:
    """One row per pair: both sentences, the score, each model's cosine and rank."""
    n = len(parsed.pairs)
    rank_a = pd.Series(both.cosines_a).rank(ascending=False).to_numpy()
    rank_b = pd.Series(both.cosines_b).rank(ascending=False).to_numpy()
    return pd.DataFrame({
        "line": list(parsed.lines) if len(parsed.lines) == n else list(range(1, n + 1)),
        "a": [a for a, _b in parsed.pairs], "b": [b for _a, b in parsed.pairs],
        "score": [np.nan if s is None else s for s in parsed.scores] if parsed.scores
        else [np.nan] * n,
        "cosine_a": both.cosines_a.round(4), "cosine_b": both.cosines_b.round(4),
        "rank_a": rank_a.astype(int), "rank_b": rank_b.astype(int),
    })


def shown_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """``pairs_frame``'s rows as the page shows them: named in the reader's language, without
    the ranks (the CSV keeps them)."""
    names = {"line": _("line"), "a": _("sentence A"), "b": _("sentence B"), "score": _("score"),
             "cosine_a": _("cosine on A"), "cosine_b": _("cosine on B")}
    return frame[list(names)].rename(columns=names)


# --- neighbours ---------------------------------------------------------------------------------

def same_characters(enc_a: Encoding, enc_b: Encoding, position: int) -> int | None:
    """The token of B's encoding that holds the first character of A's token ``position``;
    None when B has none there."""
    start = enc_a.offsets[position][1]
    for p, (_seg, lo, hi) in enumerate(enc_b.offsets):
        if not enc_b.special_tokens_mask[p] and lo <= start < hi:
            return p
    return None
