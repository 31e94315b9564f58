"""Pretraining's tables, charts and diagrams, built without Streamlit calls."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from components import palette
from components.graphs import Node, dot_graph
from components.html_table import row_tint
from components.i18n import N_, _
from components.labels import plotly_text
from core.pretraining import FinetuningPattern, Masking, MaskTrace, Prediction

KIND_COLOURS = {"mask": palette.POSITION, "random": palette.TOKEN_TYPE, "kept": palette.WORD}
KIND_NAMES = {None: N_("not picked"), "mask": N_("→ [MASK]"), "random": N_("random token"),
              "kept": N_("kept unchanged")}
DIAGRAM_TOKENS = 8   # tokens drawn in a diagram; longer inputs show the first ones and "…"


def masking_frame(m: Masking) -> pd.DataFrame:
    """One row per position: the token, whether it was picked and what the model reads."""
    rows = []
    for pos, (tok, oid, kind, new_tok, new_id, label) in enumerate(zip(
            m.tokens, m.original_ids, m.kinds, m.corrupted_tokens, m.input_ids, m.labels,
            strict=True)):
        rows.append([pos, tok, oid, _(KIND_NAMES[kind]), new_tok, new_id,
                     label])
    columns = [_("position"), _("token"), _("original id"), _("what happened"),
               _("the model reads"), "input_ids", "labels"]
    return pd.DataFrame(rows, columns=columns)


def kind_row_styles(m: Masking) -> list[str]:
    """CSS for each row of masking_frame: tinted by what happened to its token, a bar in that
    colour at its start; rows not picked stay plain."""
    return [row_tint(colour, bold=True, alpha="33") if (colour := KIND_COLOURS.get(kind))
            else "" for kind in m.kinds]


def counts(m: Masking) -> dict[str, int]:
    """The counts shown as metrics, by English label."""
    return {N_("Picked"): m.n_picked, N_("→ [MASK]"): m.n_mask, N_("→ random"): m.n_random,
            N_("Kept"): m.n_kept}


def predictions_figure(preds: list[Prediction], model_name: str) -> go.Figure:
    """The top-k tokens for one [MASK] as horizontal bars, best on top."""
    labels = [plotly_text(p.token) for p in preds][::-1]
    values = [p.probability for p in preds][::-1]
    fig = go.Figure(go.Bar(
        x=values, y=labels, orientation="h", marker_color=palette.SEGMENT_A,
        text=[f"{v:.3f}" for v in values], textposition="auto",
        hovertemplate=_("token %{y}<br>probability %{x:.4f}") + "<extra></extra>",
    ))
    fig.update_layout(
        title=_("{model}: the most likely tokens for [MASK]").format(
            model=plotly_text(model_name)),
        xaxis_title=_("probability"), height=120 + 36 * len(preds),
        margin={"l": 10, "r": 10, "t": 60, "b": 40}, meta="pre_topk",
    )
    fig.update_xaxes(range=[0, max(values + [0.0]) * 1.1 or 1])
    return fig


def layers_figure(trace: MaskTrace, model_name: str) -> go.Figure:
    """The probability of the final answer when the MLM head reads each layer."""
    layers = [g.layer for g in trace.layers]
    fig = go.Figure(go.Scatter(
        x=layers, y=[g.answer_probability for g in trace.layers], mode="lines+markers",
        line_color=palette.SEGMENT_A,
        customdata=[[plotly_text(g.predictions[0].token), g.answer_rank] for g in trace.layers],
        hovertemplate=_("layer %{x}<br>probability of the answer %{y:.4f}<br>rank %{customdata[1]}"
                        "<br>best guess %{customdata[0]}") + "<extra></extra>",
    ))
    fig.update_layout(
        title=_("{model}: the answer “{token}” layer by layer").format(
            model=plotly_text(model_name), token=plotly_text(trace.answer.token)),
        xaxis_title=_("layer (0 = the embeddings)"), yaxis_title=_("probability"),
        height=340, margin={"l": 10, "r": 10, "t": 60, "b": 40}, meta="pre_layers",
    )
    fig.update_xaxes(dtick=1)
    return fig


def layers_frame(trace: MaskTrace) -> pd.DataFrame:
    rows = [[g.layer, g.predictions[0].token, round(g.predictions[0].probability, 4),
             g.answer_rank, round(g.answer_probability, 4)] for g in trace.layers]
    return pd.DataFrame(rows, columns=[_("layer"), _("best guess"), _("its probability"),
                                       _("rank of the answer"), _("probability of the answer")])


def guess_rank(guess: str, preds: list[Prediction]) -> int | None:
    """1-based rank of the typed guess among the predictions (case and ## ignored), or None."""
    wanted = guess.strip().lower()
    for rank, p in enumerate(preds, start=1):
        if wanted and p.token.lower().removeprefix("##") == wanted.removeprefix("##"):
            return rank
    return None


def patterns_frame(patterns: list[FinetuningPattern]) -> pd.DataFrame:
    """The four heads side by side; four short columns, so it fits a 1024-pixel screen."""
    rows = [[_(p.title), p.uses, f"{p.weight_shape[0]} × {p.weight_shape[1]}",
             f"{p.parameters:,}"] for p in patterns]
    return pd.DataFrame(rows, columns=[_("pattern"), _("reads"), _("weight shape"),
                                       _("parameters")])


def _shown(tokens: list[str], pair: bool = False) -> list[tuple[int, str]]:
    """(position, token) of the tokens a diagram draws, -1 for an "…" standing for the rest.
    For a pair, each sentence gets half of the room, so B's words show too."""
    if len(tokens) <= DIAGRAM_TOKENS:
        return list(enumerate(tokens))
    if pair and "[SEP]" in tokens[:-1]:
        end_a, half = tokens.index("[SEP]") + 1, DIAGRAM_TOKENS // 2
        return (_part(tokens, 0, end_a, half)
                + _part(tokens, end_a, len(tokens), DIAGRAM_TOKENS - half))
    return _part(tokens, 0, len(tokens), DIAGRAM_TOKENS)


def _part(tokens: list[str], start: int, stop: int, room: int) -> list[tuple[int, str]]:
    """Positions start..stop-1, or the first room - 2 of them, "…" and the last one."""
    if stop - start <= room:
        return [(i, tokens[i]) for i in range(start, stop)]
    head = [(i, tokens[i]) for i in range(start, start + room - 2)]
    return head + [(-1, "…"), (stop - 1, tokens[stop - 1])]


def pattern_dot(p: FinetuningPattern, tokens: list[str], model_name: str) -> str:
    """The pattern over the live tokens: tokens -> the model -> the output vectors the head
    reads (coloured) -> the new linear head -> its output."""
    shown = _shown(tokens, pair=p.inputs == 2)
    nodes, edges = [], []
    model = Node("bert", [model_name, _("(pretrained)")], palette.LAYER_FILL)
    nodes.append(model)
    for n, (i, tok) in enumerate(shown):
        nodes.append(Node(f"t{n}", [tok], palette.EMBEDDING_FILL))
        edges.append((f"t{n}", "bert"))
        used = (not p.uses_pooler and i >= 0) or (p.uses_pooler and i == 0)
        label = "…" if i < 0 else f"T{i}"
        nodes.append(Node(f"o{n}", [label], palette.HEAD_FILL if used else palette.PLAIN_FILL))
        edges.append(("bert", f"o{n}"))
    head_lines = [f"{p.head_module}: nn.Linear", _("weight {rows} × {cols}").format(
        rows=p.weight_shape[0], cols=p.weight_shape[1]),
        _("{n} parameters").format(n=f"{p.parameters:,}")]
    nodes.append(Node("head", head_lines, palette.HEAD_FILL))
    if p.uses_pooler:
        nodes.append(Node("pool", [_("pooler on [CLS]"), "tanh(W·T0 + b)"], palette.NODE_FILL))
        edges += [("o0", "pool"), ("pool", "head")]
        out = _("{n} class scores").format(n=p.n_outputs)
    else:
        edges += [(f"o{n}", "head") for n, (i, _tok) in enumerate(shown) if i >= 0]
        out = (_("a start and an end score per token {shape}") if p.key == "span"
               else _("{n} class scores per token {shape}")).format(
            n=p.n_outputs, shape=p.output_shape)
    nodes.append(Node("out", [out], palette.PLAIN_FILL))
    edges.append(("head", "out"))
    ranks = ["{rank=same; " + " ".join(f"t{n};" for n in range(len(shown))) + "}",
             "{rank=same; " + " ".join(f"o{n};" for n in range(len(shown))) + "}"]
    return dot_graph(nodes, edges, direction="TB", extra=ranks, font_size=14, compact=True)
