"""Probes page's figures, tables and sentences: built from core's results, no st. calls.

Every plotly figure carries a ``meta`` tag naming its view (the tests find figures by it);
model names reach a figure escaped (``labels.plotly_text``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from components import palette
from components.i18n import N_, _
from components.labels import markdown_code, plotly_text
from core.probes import BuiltinSet, LayerProbe, ProbeTask

SET_NAMES = {
    BuiltinSet.POS: N_("parts of speech"),
    BuiltinSet.SENSES: N_("word senses"),
    BuiltinSet.TENSE: N_("tense"),
}
SET_HELP = {
    BuiltinSet.POS: N_("The part of speech of every word (noun, verb, ...: the 17 tags of "
                       "Universal Dependencies) in 400 sentences of an open treebank."),
    BuiltinSet.SENSES: N_("Which sense an ambiguous word has in its sentence (bank: river or "
                          "money), over the Contexts page's sentences."),
    BuiltinSet.TENSE: N_("Whether a sentence is in the past, the present or the future: the "
                         "same event in its three tenses, so only the verb tells."),
}
TASK_NAMES = {
    ProbeTask.WORD_TAGS: N_("a tag per word"),
    ProbeTask.SENTENCE_LABELS: N_("a label per sentence"),
    ProbeTask.MARKED_WORDS: N_("a label per marked word"),
}
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}   # each in its own language, in every language
BAND = 0.18   # the spread bands' opacity


def _band(x: list[int], mean: np.ndarray, spread: np.ndarray, colour: str, name: str
          ) -> go.Scatter:
    """mean ± spread as a filled band (no legend entry of its own)."""
    upper, lower = (mean + spread).astype(np.float32), (mean - spread).astype(np.float32)
    return go.Scatter(x=x + x[::-1], y=np.concatenate([upper, lower[::-1]]), fill="toself",
                      fillcolor=colour, opacity=BAND, line={"width": 0}, hoverinfo="skip",
                      showlegend=False, name=name)


def _line(x: list[int], y: np.ndarray, colour: str, name: str, dash: str = "solid"
          ) -> go.Scatter:
    return go.Scatter(x=x, y=np.asarray(y, dtype=np.float32), mode="lines+markers", name=name,
                      line={"color": colour, "width": 3, "dash": dash}, marker={"size": 8},
                      hovertemplate=name + "<br>" + _("layer %{x}: %{y:.3f}") + "<extra></extra>")


def _layout(fig: go.Figure, meta: str) -> go.Figure:
    fig.update_layout(height=420, margin={"l": 10, "r": 10, "t": 30, "b": 10}, meta=meta,
                      xaxis_title=_("layer (0 = embedding output)"),
                      yaxis_title=_("share right"), font={"size": 15},
                      legend={"orientation": "h", "y": -0.22})
    fig.update_xaxes(dtick=1)
    return fig


def probe_figure(probe: LayerProbe) -> go.Figure:
    """Accuracy, control and selectivity at every layer with their spread over the folds, the
    majority line and the expected layer."""
    x = list(range(len(probe.accuracy)))
    accuracy, control, selectivity = _("probe"), _("control task"), _("selectivity")
    fig = go.Figure([
        _band(x, probe.accuracy, probe.spread, palette.SEGMENT_A, accuracy),
        _line(x, probe.accuracy, palette.SEGMENT_A, accuracy),
        _band(x, probe.control, probe.control_spread, palette.SEGMENT_B, control),
        _line(x, probe.control, palette.SEGMENT_B, control, "dash"),
        _line(x, probe.selectivity, palette.WORD, selectivity, "dot"),
    ])
    fig.add_hline(y=probe.majority, line={"color": palette.MUTED, "dash": "dashdot"},
                  annotation_text=_("always the commonest label"),
                  annotation_position="bottom right")
    if not math.isnan(probe.expected_layer):
        fig.add_vline(x=probe.expected_layer, line={"color": palette.HIGHLIGHT, "width": 2},
                      annotation_text=_("expected layer {layer}").format(
                          layer=f"{probe.expected_layer:.2f}"),
                      annotation_position="top")
    fig.update_yaxes(range=[min(0.0, float(np.min(probe.selectivity)) - 0.05), 1.02])
    return _layout(fig, "probes_curves")


def two_models_figure(probe_a: LayerProbe, probe_b: LayerProbe, label_a: str, label_b: str
                      ) -> go.Figure:
    """Both models' probe accuracy (solid) and selectivity (dotted), each with its spread."""
    fig = go.Figure()
    for probe, label, colour in ((probe_a, label_a, palette.SEGMENT_A),
                                 (probe_b, label_b, palette.SEGMENT_B)):
        x = list(range(len(probe.accuracy)))
        name = plotly_text(label)
        fig.add_trace(_band(x, probe.accuracy, probe.spread, colour, name))
        fig.add_trace(_line(x, probe.accuracy, colour, name))
        fig.add_trace(_line(x, probe.selectivity, colour,
                            _("{model}: selectivity").format(model=name), "dot"))
    fig.add_hline(y=probe_a.majority, line={"color": palette.MUTED, "dash": "dashdot"},
                  annotation_text=_("always the commonest label"),
                  annotation_position="bottom right")
    low = min(float(np.min(probe_a.selectivity)), float(np.min(probe_b.selectivity)))
    fig.update_yaxes(range=[min(0.0, low - 0.05), 1.02])
    return _layout(fig, "probes_two_models")


def numbers_frame(probe: LayerProbe) -> pd.DataFrame:
    """The curves' numbers, one row a layer."""
    return pd.DataFrame({
        _("layer"): range(len(probe.accuracy)),
        _("probe"): [f"{a:.3f} ± {s:.3f}" for a, s in zip(probe.accuracy, probe.spread,
                                                           strict=True)],
        _("control task"): [f"{a:.3f} ± {s:.3f}" for a, s in zip(
            probe.control, probe.control_spread, strict=True)],
        _("selectivity"): [f"{v:+.3f}" for v in probe.selectivity],
    })


def set_line(probe: LayerProbe) -> str:
    """What the probe was fitted on, in one sentence."""
    return _("{examples} examples from {sentences} sentences, {labels} labels, {folds} folds "
             "split by sentence (a sentence is never in both the training and the test part); "
             "the commonest label is {share} of the examples.").format(
        examples=f"{probe.examples:,}", sentences=f"{probe.sentences:,}",
        labels=len(probe.labels), folds=probe.folds, share=f"{probe.majority:.0%}")


def vector_line(task: ProbeTask) -> str:
    """Which vector an example is, said on screen."""
    if task is ProbeTask.SENTENCE_LABELS:
        return _("A sentence's vector is the mean of its tokens' vectors at that layer ([CLS] "
                 "and [SEP] left out).")
    return _("A word's vector is the mean of its pieces' vectors at that layer, as in every "
             "view by word (a Chinese word is the segmenter's word; a word split into "
             "word pieces counts once).")


def notice(probe: LayerProbe, model: str, set_name: str) -> str:
    """What to notice, in two or three sentences, from the numbers themselves."""
    best = probe.best_layer
    text = _("On {model}, {set} is read best at layer {best} ({accuracy:.0%}, against "
             "{majority:.0%} for always guessing the commonest label).").format(
        model=markdown_code(model), set=set_name, best=best, accuracy=probe.accuracy[best],
        majority=probe.majority)
    top = int(np.argmax(probe.selectivity))
    text += " " + _("The control task, where each word type (or sentence) has a random label, "
                    "reaches {control:.0%} there: the selectivity, what the probe reads beyond "
                    "memorising, is highest at layer {top} ({selectivity:+.2f}).").format(
        control=probe.control[best], top=top, selectivity=probe.selectivity[top])
    if math.isnan(probe.expected_layer):
        text += " " + _("No layer does better than the embedding output, so there is no "
                        "expected layer: what the probe reads is there from the start.")
    else:
        text += " " + _("The gains from layer to layer (of the best accuracy so far) centre "
                        "on layer {layer} of {layers}: Tenney et al. 2019's expected "
                        "layer.").format(
            layer=f"{probe.expected_layer:.1f}", layers=len(probe.accuracy) - 1)
    return text


def labels_frame(probe: LayerProbe) -> pd.DataFrame:
    """Each label and how many examples have it, commonest first."""
    order = np.argsort(probe.counts)[::-1]
    return pd.DataFrame({_("label"): [probe.labels[k] for k in order],
                         _("examples"): [probe.counts[k] for k in order]})
