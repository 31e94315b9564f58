"""Fine-tuning's figures and tables: built from core's results (FineTuneRun, Evaluation,
LayerSimilarity, PairContributions), no st. calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components.heatmap import heatmap_figure
from components.i18n import N_, _
from components.labels import plotly_text
from core.compare import LayerSimilarity
from core.finetune import Evaluation, Metric
from core.finetune.tasks import FineTuneTask
from core.similarity.pairs import PairContributions
from pages.finetune.records import Mode

METRIC_NAMES = {
    Metric.ACCURACY: N_("accuracy"), Metric.MACRO_F1: N_("macro F1"),
    Metric.EXACT_MATCH: N_("exact match"), Metric.F1: N_("F1 (answer words)"),
    Metric.SPEARMAN: N_("Spearman (cosine against the scores)"),
    Metric.PEARSON: N_("Pearson (cosine against the scores)"),
}
MODE_NAMES = {Mode.FULL: N_("Full fine-tuning"), Mode.FROZEN: N_("Frozen features (ELMo's way)")}
TOP_PAIRS = 5


def loss_figure(losses: Sequence[float], total: int) -> go.Figure:
    """The training loss, one point a step, on an axis as long as the whole run."""
    steps = list(range(1, len(losses) + 1))
    fig = go.Figure(go.Scatter(x=steps, y=[float(v) for v in losses], mode="lines+markers",
                               marker={"size": 4}, line={"width": 2},
                               hovertemplate=_("step %{x}<br>loss %{y:.4f}") + "<extra></extra>"))
    fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis_title=_("step"), yaxis_title=_("training loss"),
                      meta="finetune_loss", font={"size": 15})
    fig.update_xaxes(range=[0.5, max(total, len(losses), 1) + 0.5])
    return fig


def scores_frame(before: Evaluation, after: Mapping[Mode, Evaluation]) -> pd.DataFrame:
    """The held-out figures before training and after each run (full, frozen) that is kept."""
    columns = {_("before training"): before.metrics}
    for mode, evaluation in after.items():
        columns[_(MODE_NAMES[mode])] = evaluation.metrics
    metrics = list(before.metrics)
    frame = pd.DataFrame({name: [f"{values[m]:.3f}" for m in metrics]
                          for name, values in columns.items()})
    frame.insert(0, _("held-out figure"), [_(METRIC_NAMES.get(m, m)) for m in metrics])
    return frame


def item_words(task: FineTuneTask, item: tuple) -> str:
    """An item's input as one line of text."""
    if task is FineTuneTask.SENTENCE_CLASS:
        return str(item[0])
    if task is FineTuneTask.TOKEN_TAGS:
        return " ".join(item[0])
    return f"{item[0]}  ‖  {item[1]}"


def answer_words(task: FineTuneTask, item: tuple) -> str:
    """The item's right answer as text."""
    if task is FineTuneTask.TOKEN_TAGS:
        return " ".join(item[1])
    if task is FineTuneTask.SPAN:
        return str(item[3])
    if task is FineTuneTask.PAIR_SCORE:
        return f"{float(item[2]):g} / 5"
    return str(item[-1])


def prediction_words(prediction: object) -> str:
    if isinstance(prediction, tuple | list):
        return " ".join(str(p) for p in prediction)
    if isinstance(prediction, float):
        return f"{prediction:.2f}"
    return str(prediction)


def changed_indices(before: Evaluation, after: Evaluation) -> tuple[list[int], list[int]]:
    """Held-out items the tuned model now gets right (wrong before), and those still wrong."""
    pairs = list(zip(before.correct, after.correct, strict=True))
    return ([i for i, (b, a) in enumerate(pairs) if a and not b],
            [i for i, (b, a) in enumerate(pairs) if not a and not b])


def examples_frame(task: FineTuneTask, held_out: Sequence[tuple], indices: Sequence[int],
                   before: Evaluation, after: Evaluation) -> pd.DataFrame:
    """The items at ``indices``: input, the right answer, the prediction before and after."""
    return pd.DataFrame({
        _("held-out item"): [item_words(task, held_out[i]) for i in indices],
        _("right answer"): [answer_words(task, held_out[i]) for i in indices],
        _("before training"): [prediction_words(before.predictions[i]) for i in indices],
        _("after training"): [prediction_words(after.predictions[i]) for i in indices],
    })


def change_figure(result: LayerSimilarity, before: str, after: str) -> go.Figure:
    """The layer map (linear CKA) of the model before training (down) against the tuned model
    (across): 1 where a layer is alike up to a rotation and a scale, lower where it moved."""
    rows, cols = result.cka.shape
    fig = heatmap_figure(
        result.cka, [str(k) for k in range(rows)], [str(k) for k in range(cols)],
        zmin=0.0, zmax=1.0, colorscale="Viridis",
        hover=_("before: layer %{y}<br>tuned: layer %{x}<br>CKA %{z:.4f}") + "<extra></extra>",
        x_title=_("{model}, layer (0 = embedding output)").format(model=plotly_text(after)),
        height=max(360, min(640, 120 + 44 * rows)))
    values = np.asarray(result.cka, dtype=np.float32)
    fig.update_traces(text=np.vectorize(lambda v: f"{v:.2f}")(values), texttemplate="%{text}",
                      textfont={"size": 14}, colorbar={"title": {"text": "CKA"}})
    fig.update_layout(yaxis_title=_("{model}, layer").format(model=plotly_text(before)),
                      meta="finetune_map", font={"size": 15})
    fig.update_xaxes(type="category")
    return fig


def diagonal(result: LayerSimilarity) -> np.ndarray:
    """Each layer against itself, before and after training."""
    return np.diag(np.asarray(result.cka, dtype=np.float64))


def diagonal_words(result: LayerSimilarity) -> str:
    """Which layer moved most and least, read on the diagonal."""
    values = diagonal(result)
    moved, kept = int(np.argmin(values)), int(np.argmax(values[1:]) + 1) if len(values) > 1 \
        else 0
    return _("Down the diagonal, each layer against itself: layer {moved} moved most (CKA "
             "{low}), layer {kept} least ({high}). The lower a diagonal cell, the more training "
             "changed what that layer gives.").format(
        moved=moved, low=f"{values[moved]:.3f}", kept=kept, high=f"{values[kept]:.3f}")


def split_frame(before: PairContributions, after: PairContributions) -> pd.DataFrame:
    """The token pairs that add most to the cosine, before and after training."""
    def top(split: PairContributions) -> list[tuple[str, float]]:
        flat = np.argsort(split.matrix, axis=None)[::-1][:TOP_PAIRS]
        rows, cols = np.unravel_index(flat, split.matrix.shape)
        return [(f"{split.tokens_a[i]} · {split.tokens_b[j]}", float(split.matrix[i, j]))
                for i, j in zip(rows, cols, strict=True)]

    first, second = top(before), top(after)
    return pd.DataFrame({
        _("before: token pair"): [p for p, _v in first],
        _("before: adds to the cosine"): [f"{v:+.3f}" for _p, v in first],
        _("after: token pair"): [p for p, _v in second],
        _("after: adds to the cosine"): [f"{v:+.3f}" for _p, v in second],
    })
