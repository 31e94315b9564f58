"""Stages: the input-embedding pipeline as heatmaps, the tutorials' printouts and live checks."""

import numpy as np
import streamlit as st

from components import stages_figures as figs
from components.analysis_view import current_analysis, current_model
from components.downloads import download_matrix
from components.explain import explain
from components.heatmap import show_figure
from components.inputs import shared_inputs
from components.labels import token_labels
from components.router import ensure_router
from components.stages_cache import get_stage_details
from core.embedding_checks import LAYERNORM_COLUMNS, one_hot_matrix
from core.lookup_components import COMPONENT_COLUMNS
from core.printout import torch_size
from core.stages import (
    DEFAULT_DIMS,
    MODULE_OUTPUT,
    colour_bound,
    dimension_window,
    stage_description,
)

ensure_router()

ONE_HOT_MAX_TOKENS = 32    # draw (and offer to download) the one-hot matrix up to this length
DIM_MODES = ("first N", "range", "all")
SCALES = ("per stage", "shared")
PRINT_ROWS = ("every token", "as print() shows it")
PRINT_MAX_LINES = 40       # longer printouts scroll inside their box
SEGMENT_ICON = ":material/splitscreen:"

st.title("Stages")
explain(
    "Follow the input through the embedding layer: three table lookups (word, token type, "
    "position) are added, normalised by LayerNorm and passed through dropout, then the encoder "
    "layers mix the tokens. Each heatmap has one row per token and one column per hidden "
    "dimension (red positive, blue negative; hover for the exact value)."
)

bundle = current_model()
result = current_analysis()
inputs = shared_inputs()
details = get_stage_details(inputs.model, inputs.text_a, inputs.text_b)
trace = details.trace
hidden = bundle.config.hidden_size
stage_names = list(result.stages)
labels = token_labels(result.tokens)
row_labels = figs.csv_labels(result.tokens)
is_pair = 1 in result.token_type_ids
T = len(result.input_ids)

# --- controls: stage selection, colour scale and dimension window, all in the URL --------------
with st.container(border=True):
    picked = st.multiselect(
        "Stages", stage_names, default=stage_names, key="st_stages", bind="query-params",
        wrap=True, help="Which stages to draw, top to bottom in pipeline order.",
    )
    scale_col, mode_col, size_col = st.columns([4, 4, 3])
    scale = scale_col.radio(
        "Colour scale", SCALES, key="st_scale", bind="query-params", horizontal=True,
        help="Shared: one range for every stage drawn, so sizes compare across stages. "
        "Per stage: each heatmap uses its own range, so patterns show in every stage.",
    )
    clip = bool(scale_col.toggle(
        "Clip colours at the 99th percentile", value=True, key="st_clip", bind="query-params",
        help="A few dimensions hold far larger values than the rest; clipping the colours "
        "there keeps the other cells visible. Hover always shows the exact value.",
    ))
    dim_mode = mode_col.radio(
        "Hidden dimensions", DIM_MODES, key="st_dim_mode", bind="query-params",
        horizontal=True, help=f"The model has {hidden} dimensions per token.",
    )
    first_n, span = DEFAULT_DIMS, None
    if dim_mode == "first N":
        first_n = size_col.number_input(
            "N", min_value=1, max_value=hidden, value=min(DEFAULT_DIMS, hidden), step=8,
            key="st_dims", bind="query-params",
        )
    elif dim_mode == "range":
        span = size_col.slider(
            "Dimensions from … to", min_value=0, max_value=hidden - 1,
            value=(0, min(DEFAULT_DIMS, hidden) - 1), key="st_range", bind="query-params",
        )
    elif hidden > DEFAULT_DIMS:
        size_col.caption(f"All {hidden} dimensions: {hidden / DEFAULT_DIMS:g} times the data "
                         f"of the default window of {DEFAULT_DIMS}.")
window = dimension_window(hidden, {"first N": "first", "range": "range"}.get(dim_mode, "all"),
                          int(first_n or DEFAULT_DIMS), span)
shown = [name for name in stage_names if name in picked]  # pipeline order, whatever the clicks

# --- stage heatmaps, top to bottom; with a shared scale, one colour range for all of them ------
parts = {stage: result.stages[stage][:, window.start : window.stop] for stage in shown}
shared_bound = None
if not shown:
    st.info("Pick at least one stage above to draw it.", icon=":material/stacks:")
elif scale == "shared":
    shared_bound = colour_bound(list(parts.values()), clip)
    st.caption(
        f"One colour range for every stage drawn: ±{shared_bound:.3g}"
        + (" (99th percentile of |value| over all of them)." if clip else ".")
    )
if shown and is_pair:
    st.caption("A dotted line in each heatmap marks where sentence B (segment 1) starts.")
for stage in shown:
    with st.container(border=True):
        bound = shared_bound if shared_bound is not None else colour_bound([parts[stage]], clip)
        rows, width = result.stages[stage].shape
        st.caption(
            f"{stage_description(stage, bundle.config)} Shape {torch_size(trace.shapes[stage])}, "
            f"made by `{trace.grad_fn[stage]}`; dimensions {window.start}–{window.stop - 1} "
            f"of {width}, colours ±{bound:.3g}."
        )
        fig = figs.stage_figure(
            parts[stage], labels, window, f"{stage}  ·  [1, {rows}, {width}]", bound,
            result.token_type_ids.index(1) if is_pair else None,
        )
        show_figure(fig, f"stage_{stage}", key=f"st_fig_{stage}")
        if stage == "token_type_embeddings":
            st.info(figs.segment_rows_text(details.segments), icon=SEGMENT_ICON)
        download_matrix(stage, result.stages[stage], row_labels, key=f"st_{stage}")

# --- printouts ---------------------------------------------------------------------------------
st.header("As the tutorials print it")
explain(
    "The tutorials print each step with `print(tensor)`: the shape, the first and last "
    "three numbers of each row, and `grad_fn`, the autograd operation that made the tensor. "
    "The names below are read from a real forward pass run with gradients on (nothing is "
    "typed in), and its numbers are compared with the ones drawn above."
)
frame = figs.printout_frame(stage_names, trace)
st.dataframe(
    frame, hide_index=True, width="stretch", height=figs.table_height(len(frame)),
    column_config={"max |Δ| to shown": st.column_config.NumberColumn(format="%.1e")},
)
left, right = st.columns([2, 3])
printable = [*stage_names, MODULE_OUTPUT]
choice = left.selectbox("Print", printable, index=printable.index("LayerNorm"), key="st_print",
                        bind="query-params")
print_rows = right.radio("Rows", PRINT_ROWS, key="st_rows", bind="query-params", horizontal=True,
                         help="print() shows the first and last three rows of a long tensor.")
text = figs.printout_text(choice, result.stages["LayerNorm" if choice == MODULE_OUTPUT else choice],
                          trace, print_rows == PRINT_ROWS[0])
# A 512-token printout is 512 lines: it scrolls in its own box instead of the page.
st.code(text, language="python", height="content" if text.count("\n") < PRINT_MAX_LINES else 640)
if choice == "dropout":
    st.caption(
        "The explorer draws its own seeded mask, so the last operation is a division "
        "(DivBackward0); nn.Dropout in training mode would show NativeDropoutBackward0."
    )

# --- a lookup is a matrix product --------------------------------------------------------------
one_hot = details.one_hot
st.header("A lookup is a matrix product")
explain(
    "Looking up row input_id of the word table is the same as multiplying a one-hot row "
    "(a 1 in column input_id, 0 everywhere else) by the whole table. The check below does "
    f"the product over all {one_hot.vocab_size:,} columns and compares it with the lookup."
)
st.code(figs.one_hot_code(one_hot), language="python")
left, right = st.columns([1, 3])
figs.draw_check(left, "one_hot @ W vs lookup", one_hot.error,
                "max |one_hot(input_ids) @ word_embeddings.weight − word_embeddings(input_ids)|")
with right:
    if T > ONE_HOT_MAX_TOKENS:
        st.caption(
            f"The one-hot matrix has {T:,} × {one_hot.vocab_size:,} = "
            f"{T * one_hot.vocab_size:,} cells: too many to draw or download, so it is drawn "
            f"for inputs of up to {ONE_HOT_MAX_TOKENS} tokens. The check ran on all of it."
        )
    else:
        words = bundle.tokenizer.convert_ids_to_tokens([int(i) for i in one_hot.columns])
        show_figure(figs.one_hot_figure(one_hot, labels, words), "one_hot", key="st_fig_one_hot")
        st.caption(
            f"Only the {len(one_hot.columns)} columns that hold a 1 are drawn; the other "
            f"{one_hot.vocab_size - len(one_hot.columns):,} columns of every row are 0."
        )
        download_matrix("one_hot", lambda: one_hot_matrix(result.input_ids, one_hot.vocab_size),
                        row_labels, key="st_one_hot")

# --- broadcasting the position lookup ----------------------------------------------------------
st.header("Broadcasting the position lookup")
explain(
    "The tutorial builds `pos_ids = torch.arange(seq_len)`, which has no batch dimension, so "
    "its lookup is [tokens, hidden] while the other two are [1, tokens, hidden]. PyTorch "
    "lines up the last dimensions and repeats the position rows for every sentence in the "
    "batch; the last line adds them to a batch of two."
)
st.code(figs.broadcast_code(details.broadcast), language="python")
left, _ = st.columns([1, 3])
figs.draw_check(left, "broadcast sum vs sum", details.broadcast.error,
                "max |word + token_type + position_embeddings(arange(T)) − the sum stage|")

# --- word, segment or position: what the sum is made of ----------------------------------------
comp = details.components
st.header("Word, segment or position: what the sum is made of")
explain(
    "For each token: the length (L2 norm) of each of the three lookups, and each one's share "
    "of the sum, its projection c·s/|s|² on the sum s (the three shares add up to 1; a "
    "negative share points away from the sum). The table adds the cosine between each pair."
)
left, right = st.columns(2)
with left:
    show_figure(figs.norms_figure(comp, labels), "lookup_norms", key="st_fig_norms")
with right:
    show_figure(figs.shares_figure(comp, labels), "lookup_shares", key="st_fig_shares")
table = figs.components_frame(comp, result.tokens)
st.dataframe(table, hide_index=True, width="stretch",
             height=figs.table_height(len(table), limit=420),
             column_config={c: st.column_config.NumberColumn(format="%.3f")
                            for c in COMPONENT_COLUMNS})
download_matrix("lookup_components", comp.table(), row_labels, key="st_components")
st.caption("Columns of the download: " + ", ".join(COMPONENT_COLUMNS) + ".")
if "token_type_embeddings" not in shown:  # else said under the token-type heatmap
    st.info(figs.segment_rows_text(details.segments), icon=SEGMENT_ICON)

# --- LayerNorm, taken apart --------------------------------------------------------------------
ln = details.layernorm
st.header("LayerNorm, taken apart")
explain(
    "LayerNorm works on each token on its own: it subtracts the token's mean over the hidden "
    "dimensions, divides by its standard deviation, then multiplies each dimension by a "
    "learned γ and adds a learned β. So before γ and β every token has mean 0 and standard "
    "deviation 1; after them it does not quite, as the charts show."
)
st.latex(
    r"\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
    r" + \beta, \qquad \mu = \tfrac{1}{h}\sum_i x_i, \quad "
    r"\sigma^2 = \tfrac{1}{h}\sum_i (x_i - \mu)^2, \quad \varepsilon = "
    + figs.latex_number(ln.eps)
)
c1, c2 = st.columns(2)
figs.draw_check(c1, "LayerNorm(sum) vs model.embeddings(...)", ln.module_error,
                "max |embeddings.LayerNorm(word + token_type + position) − model.embeddings(...)|"
                " in eval mode")
figs.draw_check(c2, "formula by hand vs LayerNorm", ln.formula_error,
                "max |γ (x − μ)/√(σ² + ε) + β − LayerNorm(x)|, the formula in float64 numpy")
show_figure(figs.layernorm_stats_figure(ln, labels), "layernorm_token_stats",
            key="st_fig_ln_stats")
download_matrix("layernorm_stats", ln.table(), row_labels, key="st_ln_stats")
st.caption("Columns of the download: " + ", ".join(LAYERNORM_COLUMNS) + ".")
show_figure(figs.gamma_beta_figure(ln), "layernorm_gamma_beta", key="st_fig_ln_params")
download_matrix("layernorm_gamma_beta", np.vstack([ln.gamma, ln.beta]), ["gamma", "beta"],
                key="st_ln_params")
