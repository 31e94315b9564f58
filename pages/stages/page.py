"""Stages: the input-embedding pipeline as heatmaps, the tutorials' printouts and live checks."""

from typing import Any

import numpy as np
import streamlit as st

from components import stages_figures as figs
from components.analysis_view import current_analysis, current_model
from components.controls import whole_number
from components.downloads import download_matrix
from components.explain import explain
from components.heatmap import show_figure
from components.inputs import shared_inputs
from components.labels import token_labels
from components.sections import open_section
from components.stages_cache import get_stage_check
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

ONE_HOT_MAX_TOKENS = 32    # draw (and offer to download) the one-hot matrix up to this length
DIM_MODES = ("first N", "range", "all")
SCALES = ("per stage", "shared")
ONE_AT_A_TIME, STACKED = LAYOUTS = ("one at a time", "stacked")
PRINT_ROWS = ("every token", "as print() shows it")
PRINT_MAX_LINES = 40       # longer printouts scroll inside their box
SEGMENT_ICON = ":material/splitscreen:"
# The page's sections, one tab each; only the open one runs (see components.sections).
HEATMAPS, PRINTOUTS, LAYERNORM, ONE_HOT, BROADCAST, PARTS = VIEWS = (
    "Heatmaps", "Printouts", "LayerNorm", "One-hot lookup", "Broadcasting", "Parts of the sum",
)

st.title("Stages")
explain(
    "Follow the input through the embedding layer: three table lookups (word, token type, "
    "position) are added, normalised by LayerNorm and passed through dropout, then the encoder "
    "layers mix the tokens. Each tab below shows one side of it, computed live for your input."
)

bundle = current_model()
result = current_analysis()
inputs = shared_inputs()
hidden = bundle.config.hidden_size
stage_names = list(result.stages)
labels = token_labels(result.tokens)
row_labels = figs.csv_labels(result.tokens)
is_pair = 1 in result.token_type_ids
T = len(result.input_ids)


def check(name: str) -> Any:  # each check has its own result type (core.stages.STAGE_CHECKS)
    """One live check of core.stages.STAGE_CHECKS for the current input, cached."""
    return get_stage_check(name, inputs.model, inputs.text_a, inputs.text_b)


def draw_heatmaps() -> None:
    """Every picked stage as a tokens x dimensions heatmap, top to bottom in pipeline order."""
    explain(
        "Each heatmap has one row per token and one column per hidden dimension (red positive, "
        "blue negative; hover for the exact value). Step through the stages one at a time with "
        "the slider, or stack the ones you pick top to bottom."
    )
    with st.container(border=True):
        layout_col, pick_col = st.columns([1, 3])
        layout = layout_col.radio(
            "Show", LAYOUTS, key="st_layout", bind="query-params",
            help="One at a time: one large heatmap and a slider to walk the pipeline (quick to "
            "redraw, readable on a projector). Stacked: every stage you pick, top to bottom.",
        )
        if layout == ONE_AT_A_TIME:
            picked = [pick_col.select_slider(
                "Stage", stage_names, value=stage_names[0], key="st_stage", bind="query-params",
                help="Drag or use the arrow keys to walk from the lookups to the last layer.",
            )]
        else:
            # Every stage by default, as the walk reads; each one is a plotly figure to redraw.
            picked = pick_col.multiselect(
                "Stages", stage_names, default=stage_names, key="st_stages",
                bind="query-params", wrap=True,
                help="Which stages to draw, top to bottom in pipeline order.",
            )
        scale_col, mode_col, size_col = st.columns([4, 4, 3])
        scale = scale_col.radio(
            "Colour scale", SCALES, key="st_scale", bind="query-params", horizontal=True,
            help="Shared: one range for every stage (all of them when stepping, the ones drawn "
            "when stacked), so sizes compare across stages. Per stage: each heatmap uses its "
            "own range, so patterns show in every stage.",
        )
        clip = bool(scale_col.toggle(
            "Clip colours at the 99th percentile", value=True, key="st_clip",
            bind="query-params",
            help="A few dimensions hold far larger values than the rest; clipping the colours "
            "there keeps the other cells visible. Hover always shows the exact value.",
        ))
        dim_mode = mode_col.radio(
            "Hidden dimensions", DIM_MODES, key="st_dim_mode", bind="query-params",
            horizontal=True, help=f"The model has {hidden} dimensions per token.",
        )
        first_n, span = DEFAULT_DIMS, None
        if dim_mode == "first N":
            first_n = whole_number(size_col, "N", min_value=1, max_value=hidden,
                                   value=min(DEFAULT_DIMS, hidden), step=8, key="st_dims")
        elif dim_mode == "range":
            span = size_col.slider(
                "Dimensions from … to", min_value=0, max_value=hidden - 1,
                value=(0, min(DEFAULT_DIMS, hidden) - 1), key="st_range", bind="query-params",
            )
        elif hidden > DEFAULT_DIMS:
            size_col.caption(f"All {hidden} dimensions: {hidden / DEFAULT_DIMS:g} times the "
                             f"data of the default window of {DEFAULT_DIMS}.")
    window = dimension_window(hidden, {"first N": "first", "range": "range"}.get(dim_mode, "all"),
                              int(first_n or DEFAULT_DIMS), span)
    shown = [name for name in stage_names if name in picked]  # pipeline order, whatever the clicks
    if not shown:
        st.info("Pick at least one stage above to draw it.", icon=":material/stacks:")
        return
    # Stepping compares each stage with all the others, stacking with the ones drawn.
    scaled = stage_names if layout == ONE_AT_A_TIME else shown
    parts = {stage: result.stages[stage][:, window.start : window.stop] for stage in scaled}
    shared_bound = None
    if scale == "shared":
        shared_bound = colour_bound(list(parts.values()), clip)
        st.caption(
            f"One colour range for every stage{' drawn' if scaled is shown else ''}: "
            f"±{shared_bound:.3g}"
            + (" (99th percentile of |value| over all of them)." if clip else ".")
        )
    if is_pair:
        st.caption("A dotted line marks where sentence B (segment 1) starts.")
    for stage in shown:
        with st.container(border=True):
            bound = shared_bound if shared_bound is not None else colour_bound([parts[stage]], clip)
            rows, width = result.stages[stage].shape
            st.caption(
                f"{stage_description(stage, bundle.config)} Shape "
                f"{torch_size((1, rows, width))}; dimensions {window.start}–{window.stop - 1} "
                f"of {width}, colours ±{bound:.3g}."
            )
            fig = figs.stage_figure(
                parts[stage], labels, window, f"{stage}  ·  [1, {rows}, {width}]", bound,
                result.token_type_ids.index(1) if is_pair else None,
            )
            show_figure(fig, f"stage_{stage}", key=f"st_fig_{stage}")
            if stage == "token_type_embeddings":
                st.info(figs.segment_rows_text(check("segments")), icon=SEGMENT_ICON)
            download_matrix(stage, result.stages[stage], row_labels, key=f"st_{stage}")


def draw_printouts() -> None:
    """The tutorials' print(tensor) of every stage, with grad_fn from a real forward."""
    trace = check("trace")
    explain(
        "The tutorials print each step with `print(tensor)`: the shape, the first and last "
        "three numbers of each row, and `grad_fn`, the autograd operation that made the tensor. "
        "The names below are read from a real forward pass run with gradients on (nothing is "
        "typed in), and its numbers are compared with the ones drawn in the heatmaps."
    )
    frame = figs.printout_frame(stage_names, trace)
    st.dataframe(
        frame, hide_index=True, width="stretch", height=figs.table_height(len(frame)),
        column_config={"max |Δ| to shown": st.column_config.NumberColumn(format="%.1e")},
    )
    left, right = st.columns([2, 3])
    printable = [*stage_names, MODULE_OUTPUT]
    choice = left.selectbox("Print", printable, index=printable.index("LayerNorm"),
                            key="st_print", bind="query-params")
    print_rows = right.radio(
        "Rows", PRINT_ROWS, key="st_rows", bind="query-params", horizontal=True,
        help="print() shows the first and last three rows of a long tensor.",
    )
    values = result.stages["LayerNorm" if choice == MODULE_OUTPUT else choice]
    text = figs.printout_text(choice, values, trace, print_rows == PRINT_ROWS[0])
    # A 512-token printout is 512 lines: it scrolls in its own box instead of the page.
    st.code(text, language="python",
            height="content" if text.count("\n") < PRINT_MAX_LINES else 640)
    if choice == "dropout":
        st.caption(
            "The explorer draws its own seeded mask, so the last operation is a division "
            "(DivBackward0); nn.Dropout in training mode would show NativeDropoutBackward0."
        )


def draw_one_hot() -> None:
    """The word lookup as one_hot(input_ids) @ W, checked against the lookup."""
    one_hot = check("one_hot")
    explain(
        "Looking up row input_id of the word table is the same as multiplying a one-hot row "
        "(a 1 in column input_id, 0 everywhere else) by the whole table. The check below does "
        f"the product over all {one_hot.vocab_size:,} columns and compares it with the lookup."
    )
    st.code(figs.one_hot_code(one_hot), language="python")
    left, right = st.columns([1, 3])
    figs.draw_check(left, "one_hot @ W vs lookup", one_hot.error,
                    "max |one_hot(input_ids) @ word_embeddings.weight − "
                    "word_embeddings(input_ids)|")
    with right:
        if T > ONE_HOT_MAX_TOKENS:
            st.caption(
                f"The one-hot matrix has {T:,} × {one_hot.vocab_size:,} = "
                f"{T * one_hot.vocab_size:,} cells: too many to draw or download, so it is "
                f"drawn for inputs of up to {ONE_HOT_MAX_TOKENS} tokens. The check ran on all "
                "of it."
            )
            return
        words = bundle.ids_to_tokens([int(i) for i in one_hot.columns])
        show_figure(figs.one_hot_figure(one_hot, labels, words), "one_hot",
                    key="st_fig_one_hot")
        st.caption(
            f"Only the {len(one_hot.columns)} columns that hold a 1 are drawn; the other "
            f"{one_hot.vocab_size - len(one_hot.columns):,} columns of every row are 0."
        )
        download_matrix("one_hot", lambda: one_hot_matrix(result.input_ids, one_hot.vocab_size),
                        row_labels, key="st_one_hot")


def draw_broadcasting() -> None:
    """The position lookup's [T, h] broadcast over the batch, with the real shapes."""
    demo = check("broadcast")
    explain(
        "The tutorial builds `pos_ids = torch.arange(seq_len)`, which has no batch dimension, "
        "so its lookup is [tokens, hidden] while the other two are [1, tokens, hidden]. PyTorch "
        "lines up the last dimensions and repeats the position rows for every sentence in the "
        "batch; the last line adds them to a batch of two."
    )
    st.code(figs.broadcast_code(demo), language="python")
    left, _ = st.columns([1, 3])
    figs.draw_check(left, "broadcast sum vs sum", demo.error,
                    "max |word + token_type + position_embeddings(arange(T)) − the sum stage|")


def draw_parts_of_the_sum() -> None:
    """Per token: the norm of each lookup, its share of the sum, and the cosines between them."""
    comp = check("components")
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
    st.info(figs.segment_rows_text(check("segments")), icon=SEGMENT_ICON)


def draw_layernorm() -> None:
    """LayerNorm taken apart: the formula, both live checks, per-token statistics, γ and β."""
    ln = check("layernorm")
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
                    "max |embeddings.LayerNorm(word + token_type + position) − "
                    "model.embeddings(...)| in eval mode")
    figs.draw_check(c2, "formula by hand vs LayerNorm", ln.formula_error,
                    "max |γ (x − μ)/√(σ² + ε) + β − LayerNorm(x)|, the formula in float64 numpy")
    show_figure(figs.layernorm_stats_figure(ln, labels), "layernorm_token_stats",
                key="st_fig_ln_stats")
    download_matrix("layernorm_stats", ln.table(), row_labels, key="st_ln_stats")
    st.caption("Columns of the download: " + ", ".join(LAYERNORM_COLUMNS) + ".")
    show_figure(figs.gamma_beta_figure(ln), "layernorm_gamma_beta", key="st_fig_ln_params")
    download_matrix("layernorm_gamma_beta", np.vstack([ln.gamma, ln.beta]), ["gamma", "beta"],
                    key="st_ln_params")


SECTIONS = {
    HEATMAPS: draw_heatmaps,
    PRINTOUTS: draw_printouts,
    LAYERNORM: draw_layernorm,
    ONE_HOT: draw_one_hot,
    BROADCAST: draw_broadcasting,
    PARTS: draw_parts_of_the_sum,
}
view, area = open_section(VIEWS, key="st_section")
with area:
    SECTIONS[view]()
