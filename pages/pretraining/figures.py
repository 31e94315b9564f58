"""Pretraining's tables, charts and diagrams, built without Streamlit calls."""

from __future__ import annotations

import html
import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components import palette
from components.graphs import Node, dot_graph
from components.html_table import STYLE, row_tint
from components.i18n import N_, _
from components.labels import markdown_template, plotly_text
from core.pretraining import FinetuningPattern, Masking, MaskLens, Prediction

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
    return [row_tint(colour, bold=True, alpha="33")
            if kind is not None and (colour := KIND_COLOURS.get(kind)) else ""
            for kind in m.kinds]


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


def lens_sentence(lens: MaskLens, mask: int, model_name: str) -> str:
    """Where the answer first reaches the top, as markdown (the model's words as code)."""
    first, stays, n = lens.first_top(mask), lens.stays_top(mask), lens.n_layers
    values = {"model": model_name, "token": lens.answer_tokens[mask], "n": n}
    if not lens.transform:
        if first is None:
            ranks = lens.answer_ranks[mask]
            best = int(ranks.argmin())
            return markdown_template(_(
                "With the decoder alone, {model}'s answer {token} is the top guess at no layer: "
                "its best rank is {rank}, at layer {layer}."),
                **values, rank=f"{int(ranks[best]):,}", layer=best)
        return markdown_template(_(
            "With the decoder alone, {model}'s answer {token} first reaches the top at layer "
            "{layer} of {n}."), **values, layer=first)
    if first == stays:
        return markdown_template(_(
            "{model}'s answer {token} first reaches the top at layer {layer} of {n}, and stays "
            "there."), **values, layer=first)
    return markdown_template(_(
        "{model}'s answer {token} first reaches the top at layer {layer} of {n}, drops back, "
        "and stays on top from layer {stays} on."), **values, layer=first, stays=stays)


def _percent(p: float) -> str:
    return f"{p:.1%}" if p >= 0.001 else "<0.1%"


# The answer's cell: tinted, bold and underlined (not by colour alone). The layer and rank
# columns take what their numbers need; the guesses share the rest, and a long word piece
# breaks inside its cell rather than push the table past a 1024 px page.
LENS_CSS = f"""<style>
.lens td.layer, .lens td.num {{ width:1%; white-space:nowrap; font-weight:600; }}
.lens td.guess {{ white-space:normal; overflow-wrap:anywhere; line-height:1.25; }}
.lens td small {{ font-size:14px; font-weight:400; color:{palette.SOFT_INK}; }}
.lens td.answer {{ background:{palette.GOOD}33; box-shadow:inset 0 0 0 2px {palette.GOOD};
  font-weight:700; text-decoration:underline; }}
.lens caption {{ text-align:left; padding:4px 6px; caption-side:top; }}
.lens th {{ word-break:keep-all; }}
</style>"""


def lens_table_html(lens: MaskLens, mask: int, model_name: str) -> str:
    """The layers as rows (layer 0, the embeddings, on top); in each, the head's best guesses
    with their probabilities, the model's answer highlighted wherever it appears."""
    answer = lens.answer_ids[mask]
    k = lens.probs.shape[2]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in (
        _("layer"), _("rank of the answer"), *(f"#{i + 1}" for i in range(k))))
    rows, embeddings = [], html.escape(_("embeddings"))
    for layer in range(lens.n_layers + 1):
        name = f"0<br><small>{embeddings}</small>" if layer == 0 else str(layer)
        cells = [f'<td class="layer">{name}</td>',
                 f'<td class="num">{lens.answer_ranks[mask, layer]:,}</td>']
        for token, token_id, p in zip(lens.tokens[mask][layer], lens.token_ids[mask, layer],
                                      lens.probs[mask, layer], strict=True):
            kind = "guess answer" if token_id == answer else "guess"
            cells.append(f'<td class="{kind}">{html.escape(token)}<br>'
                         f"<small>{_percent(float(p))}</small></td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    caption = _("{model}: the top guesses for [MASK] number {n} (position {position}) at each "
                "layer, best first").format(model=model_name, n=mask + 1,
                                            position=lens.positions[mask])
    return (f'{STYLE}{LENS_CSS}<div class="tab-wrap" data-table="pre_lens">'
            f'<table class="tab lens"><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def lens_figure(lens: MaskLens, mask: int, model_name: str,
                whole: MaskLens | None = None) -> go.Figure:
    """The answer's probability (top) and rank (bottom, 1 at the top) at each layer; with the
    decoder alone, the whole head's line beside it in grey."""
    layers = list(range(lens.n_layers + 1))
    token = plotly_text(lens.answer_tokens[mask])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    lines = [(lens, palette.SEGMENT_A, "solid")]
    if whole is not None:
        lines.insert(0, (whole, palette.MUTED, "dash"))
    for reading, colour, dash in lines:
        name = _("the whole head") if reading.transform else _("the decoder alone")
        style = {"color": colour, "dash": dash, "width": 3}
        fig.add_scatter(x=layers, y=reading.answer_probs[mask].tolist(), mode="lines+markers",
                        line=style, name=name, legendgroup=name, row=1, col=1,
                        hovertemplate=_("layer %{x}<br>probability %{y:.4f}")
                        + "<extra></extra>")
        fig.add_scatter(x=layers, y=reading.answer_ranks[mask].tolist(), mode="lines+markers",
                        line=style, name=name, legendgroup=name, showlegend=False, row=2, col=1,
                        hovertemplate=_("layer %{x}<br>rank %{y:,}") + "<extra></extra>")
    big = {"size": 14}
    fig.update_layout(
        title={"text": _("{model}: “{token}” layer by layer").format(
            model=plotly_text(model_name), token=token), "font": {"size": 16}},
        height=460, margin={"l": 10, "r": 10, "t": 60, "b": 50}, meta="pre_lens",
        font=big, showlegend=whole is not None,
        legend={"orientation": "h", "y": -0.16, "font": big},
    )
    fig.update_xaxes(dtick=1, tickfont=big)
    fig.update_xaxes(title={"text": _("layer (0 = the embeddings)"), "font": big}, row=2, col=1)
    fig.update_yaxes(title={"text": _("probability"), "font": big}, tickfont=big,
                     rangemode="tozero", tickformat=".2~g", row=1, col=1)
    # Ranks run from 1 to the vocabulary's size: a log axis, the top guess (1) at the top, a tick
    # at each power of ten (plotly's own minor ticks, 2 and 5, are drawn too small to read).
    worst = max(int(r.answer_ranks[mask].max()) for r, *_style in lines)
    powers = [10**i for i in range(max(1, math.ceil(math.log10(worst))) + 1)]
    fig.update_yaxes(title={"text": _("rank"), "font": big}, tickfont=big, type="log",
                     tickvals=powers, ticktext=[f"{p:,}" for p in powers],
                     range=[math.log10(powers[-1] * 1.3), math.log10(0.7)], row=2, col=1)
    return fig


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
