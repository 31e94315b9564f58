"""Stages: the input-embedding pipeline as heatmaps, the tutorials' printouts and live checks."""

from __future__ import annotations

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.analysis_view import analysis_of, model_of
from components.cache import get_analysis
from components.check import draw_check as check_widget
from components.controls import whole_number
from components.downloads import download_matrix, from_cache
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import draw_heatmap, exact_toggle, heatmap_html
from components.i18n import N_, _
from components.inputs import shared_inputs
from components.pickers import stage_axis
from components.picture_switcher import Axis, with_words
from components.sections import Section, draw_sections, run_part
from components.unk_note import draw_unk_note
from components.value_picture import value_picture
from core.stages.embedding_checks import (
    LAYERNORM_COLUMNS,
    LayerNormCheck,
    OneHotCheck,
    one_hot_matrix,
)
from core.stages.lookup_components import COMPONENT_COLUMNS, LookupComparison
from core.stages.pipeline import DEFAULT_DIMS, MODULE_OUTPUT, colour_bound, dimension_window
from core.stages.printout import torch_size
from pages.stages import cache
from pages.stages import figures as figs
from pages.stages.records import HeatmapSettings, StagesContext

TITLE = N_("Stages")
EXPLANATION = N_(
    "Follow the input through the embedding layer: three table lookups (word, token type, "
    "position) are added, normalised by LayerNorm and passed through dropout, then the encoder "
    "layers mix the tokens. Each tab below shows one side of it, computed live for your input."
)

# URL keys (shared links must keep working: names and values stay as they are).
SECTION_KEY = "st_section"
LAYOUT_KEY, STAGE_KEY, STAGES_KEY = "st_layout", "st_stage", "st_stages"
SCALE_KEY, CLIP_KEY, DIM_MODE_KEY, DIMS_KEY, RANGE_KEY = (
    "st_scale", "st_clip", "st_dim_mode", "st_dims", "st_range")
PRINT_KEY, ROWS_KEY = "st_print", "st_rows"
EXACT_KEY = "st_exact"

TOLERANCE = 1e-5           # the live checks pass when the max abs difference is at most this
ONE_HOT_MAX_TOKENS = 32    # draw (and offer to download) the one-hot matrix up to this length
FIRST_N, RANGE, ALL = DIM_MODES = (N_("first N"), N_("range"), N_("all"))
PER_STAGE, SHARED = SCALES = (N_("per stage"), N_("shared"))
ONE_AT_A_TIME, STACKED = LAYOUTS = (N_("one at a time"), N_("stacked"))
EVERY_TOKEN, AS_PRINTED = PRINT_ROWS = (N_("every token"), N_("as print() shows it"))
PRINT_MAX_LINES = 40       # longer printouts scroll inside their box
SEGMENT_ICON = ":material/splitscreen:"

LAYERNORM_VS_MODULE = N_("LayerNorm(sum) vs model.embeddings(...)")
FORMULA_VS_LAYERNORM = N_("formula by hand vs LayerNorm")
ONE_HOT_VS_LOOKUP = N_("one_hot @ W vs lookup")
BROADCAST_VS_SUM = N_("broadcast sum vs sum")


def draw_check(column: DeltaGenerator, label: str, error: float, formula: str) -> None:
    """A live check with its verdict (components.check): what was compared, the max abs
    difference and the tolerance."""
    check_widget(error, TOLERANCE, f"{_(label)}: {formula}", column)


def segment_box(ctx: StagesContext) -> None:
    seg = cache.get_segment_rows(ctx.key)
    st.info(figs.segment_rows_text(seg), icon=SEGMENT_ICON)


# --- Heatmaps ---------------------------------------------------------------------------------

def stage_picker(ctx: StagesContext, layout_col: DeltaGenerator,
                 pick_col: DeltaGenerator) -> tuple[str, tuple[str, ...]]:
    """One at a time (its slider is the stepping fragment's: draw_one_stage) or stacked (the
    stages picked); the stages asked for, none yet when stepping."""
    names = ctx.stage_names
    layout = layout_col.radio(
        _("Show"), LAYOUTS, key=LAYOUT_KEY, bind="query-params", format_func=_,
        help=_("One at a time: one large heatmap and a slider to walk the pipeline (quick to "
               "redraw, readable on a projector). Stacked: every stage you pick, top to bottom."),
    )
    if layout == ONE_AT_A_TIME:
        return layout, ()
    # Every stage by default, as the walk reads; each one is a plotly figure to redraw.
    return layout, tuple(pick_col.multiselect(
        _("Stages"), names, default=names, key=STAGES_KEY, bind="query-params", wrap=True,
        help=_("Which stages to draw, top to bottom in pipeline order."),
    ))


def dimension_controls(hidden: int, mode_col: DeltaGenerator, size_col: DeltaGenerator) -> range:
    """Which hidden dimensions to draw: the first N, a range or all of them."""
    dim_mode = mode_col.radio(
        _("Hidden dimensions"), DIM_MODES, key=DIM_MODE_KEY, bind="query-params",
        horizontal=True, format_func=_,
        help=_("The model has {hidden} dimensions per token.").format(hidden=hidden),
    )
    first_n, span = DEFAULT_DIMS, None
    if dim_mode == FIRST_N:
        first_n = whole_number(size_col, "N", min_value=1, max_value=hidden,
                               value=min(DEFAULT_DIMS, hidden), step=8, key=DIMS_KEY)
    elif dim_mode == RANGE:
        span = size_col.slider(
            _("Dimensions from … to"), min_value=0, max_value=hidden - 1,
            value=(0, min(DEFAULT_DIMS, hidden) - 1), key=RANGE_KEY, bind="query-params",
        )
    elif hidden > DEFAULT_DIMS:
        size_col.markdown(_("All {hidden} dimensions: {times} times the data of the default "
                            "window of {default}.").format(
            hidden=hidden, times=f"{hidden / DEFAULT_DIMS:g}", default=DEFAULT_DIMS))
    mode = {FIRST_N: "first", RANGE: "range"}.get(dim_mode, "all")
    return dimension_window(hidden, mode, int(first_n or DEFAULT_DIMS), span)


def heatmap_settings(ctx: StagesContext) -> HeatmapSettings:
    """The Heatmaps tab's controls, in one bordered box; the stage slider's place in it is
    ``HeatmapSettings.stage_place``."""
    with st.container(border=True):
        layout_col, pick_col = st.columns([1, 3])
        layout, picked = stage_picker(ctx, layout_col, pick_col)
        scale_col, mode_col, size_col = st.columns([4, 4, 3])
        scale = scale_col.radio(
            _("Colour scale"), SCALES, key=SCALE_KEY, bind="query-params", horizontal=True,
            format_func=_,
            help=_("Shared: one range for every stage (all of them when stepping, the ones "
                   "drawn when stacked), so sizes compare across stages. Per stage: each "
                   "heatmap uses its own range, so patterns show in every stage."),
        )
        window = dimension_controls(ctx.bundle.config.hidden_size, mode_col, size_col)
        clip_col, exact_col = st.columns(2)
        clip = bool(clip_col.toggle(
            _("Clip colours at the 99th percentile"), value=True, key=CLIP_KEY,
            bind="query-params",
            help=_("A few dimensions hold far larger values than the rest; clipping the colours "
                   "there keeps the other cells visible. The values themselves are not "
                   "clipped."),
        ))
        exact = exact_toggle(EXACT_KEY, exact_col)
    return HeatmapSettings(layout, picked, scale, clip, window, exact, pick_col)


def shared_bound_note(bound: float, every_stage: bool, clip: bool) -> str:
    template = (_("One colour range for every stage: ±{bound}.") if every_stage
                else _("One colour range for every stage drawn: ±{bound}."))
    text = template.format(bound=f"{bound:.3g}")
    if clip:
        text += " " + _("It is the 99th percentile of |value| over all of them.")
    return text


def draw_heatmaps(ctx: StagesContext) -> None:
    """Every picked stage as a tokens x dimensions heatmap, top to bottom in pipeline order."""
    explain(_("Each heatmap has one row per token and one column per hidden dimension (red "
              "positive, blue negative; turn on Exact values on hover to read any cell). Step "
              "through the stages one at a time with the slider, or stack the ones you pick top "
              "to bottom."))
    settings = heatmap_settings(ctx)
    # Stepping compares each stage with all the others, stacking with the ones drawn.
    stepping = settings.layout == ONE_AT_A_TIME
    shown = [name for name in ctx.stage_names if stepping or name in settings.picked]
    if not shown:
        st.info(_("Pick at least one stage above to draw it."), icon=":material/stacks:")
        return
    window = settings.window
    parts = {stage: ctx.result.stages[stage][:, window.start : window.stop] for stage in shown}
    shared = None
    if settings.scale == SHARED:
        shared = colour_bound(list(parts.values()), settings.clip)
        explain(shared_bound_note(shared, stepping, settings.clip))
    if ctx.segment_b is not None:
        explain(_("A dotted line marks where sentence B (segment 1) starts."))
    if stepping:
        # Its own fragment: the stage slider redraws the one heatmap, not the settings box.
        run_part(draw_one_stage, ctx, settings, parts, shared)
        return
    for stage in shown:
        bound = shared if shared is not None else colour_bound([parts[stage]], settings.clip)
        draw_stage(ctx, stage, parts[stage], window, bound, settings.exact)


def draw_one_stage(ctx: StagesContext, settings: HeatmapSettings, parts: dict[str, np.ndarray],
                   shared: float | None) -> None:
    """The stage slider and the stage it picks. As images, every stage's picture is in the page
    and the slider switches them in the browser (components.picture_switcher); it then reports
    the stage to this fragment, which redraws only the stage's downloads (and the token-type
    note) under the picture. With exact values on, the interactive figure of the stage picked
    on the server, as before (its slider in its place in the settings box); both through
    components.value_picture."""
    names = ctx.stage_names

    def exact_figure(stage: str) -> None:
        bound = shared if shared is not None else colour_bound([parts[stage]], settings.clip)
        draw_stage(ctx, stage, parts[stage], settings.window, bound, exact=True)

    stage = value_picture(
        stage_slider(ctx), lambda i: stage_picture(ctx, settings, parts, shared, names[i]),
        exact_figure, exact=settings.exact, slider_at=settings.stage_place)
    if settings.exact:
        return
    if stage == "token_type_embeddings":
        segment_box(ctx)
    download_matrix(stage, from_cache(get_analysis, ctx.key, part=lambda r: r.stages[stage]),
                    ctx.row_labels, key=f"st_{stage}")


def stage_words(ctx: StagesContext, stage: str, window: range, bound: float) -> str:
    """What a stage holds, its shape, the dimensions drawn and its colour range."""
    rows, width = ctx.result.stages[stage].shape
    return figs.stage_description(stage, ctx.bundle.config) + " " + _(
        "Shape {shape}; dimensions {first}–{last} of {width}, colours ±{bound}.").format(
        shape=torch_size((1, rows, width)), first=window.start, last=window.stop - 1,
        width=width, bound=f"{bound:.3g}")


def stage_picture(ctx: StagesContext, settings: HeatmapSettings, parts: dict[str, np.ndarray],
                  shared: float | None, stage: str) -> str:
    """One stage's picture with its words: the image draw_stage shows."""
    part = parts[stage]
    bound = shared if shared is not None else colour_bound([part], settings.clip)
    title = figs.stage_title(stage, ctx.result.stages[stage].shape, ctx.bundle.label)
    image = figs.stage_image(part, ctx.labels, settings.window, title, bound, ctx.segment_b)
    return with_words(stage_words(ctx, stage, settings.window, bound),
                      heatmap_html(image, f"st_fig_{stage}"))


def stage_slider(ctx: StagesContext) -> Axis[str]:
    """The stage slider's values, in pipeline order, the lookups first."""
    names = ctx.stage_names
    return stage_axis(STAGE_KEY, names, _("Stage"), default=names[0], help=_(
        "Drag or use the arrow keys to walk from the lookups to the last layer."))


def draw_stage(ctx: StagesContext, stage: str, part: np.ndarray, window: range,
               bound: float, exact: bool) -> None:
    """One stage's heatmap with what it holds, its shape, and its download."""
    with st.container(border=True):
        explain(stage_words(ctx, stage, window, bound))
        title = figs.stage_title(stage, ctx.result.stages[stage].shape, ctx.bundle.label)
        draw_heatmap(
            figs.stage_image(part, ctx.labels, window, title, bound, ctx.segment_b),
            f"st_fig_{stage}", exact,
            lambda: figs.stage_figure(part, ctx.labels, window, title, bound, ctx.segment_b))
        if stage == "token_type_embeddings":
            segment_box(ctx)
        download_matrix(stage, from_cache(get_analysis, ctx.key, part=lambda r: r.stages[stage]),
                        ctx.row_labels, key=f"st_{stage}")


# --- Printouts --------------------------------------------------------------------------------

def draw_printouts(ctx: StagesContext) -> None:
    """The tutorials' print(tensor) of every stage, with grad_fn from a real forward."""
    with st.spinner(_("Running the stages with gradients on…")):
        trace = cache.get_autograd_trace(ctx.key)
    explain(_("The tutorials print each step with `print(tensor)`: the shape, the first and "
              "last three numbers of each row, and `grad_fn`, the autograd operation that made "
              "the tensor. The names below are read from a real forward pass run with gradients "
              "on (nothing is typed in), and its numbers are compared with the ones drawn in "
              "the heatmaps."))
    frame = figs.printout_frame(ctx.stage_names, trace)
    # A static table whose cells wrap, and the expressions as code lines that wrap at their
    # spaces: as one grid, the grad_fn names and expressions ran past the right edge of a
    # 1024-pixel screen (an expression has no space to wrap at inside a table cell).
    stage, *checked, expression = frame.columns
    st.table(frame[[stage, *checked]].style.format({figs.difference_header(): "{:.1e}"}),
             hide_index=True)
    explain(_("How each stage is computed:"))
    st.code("\n".join(f"{name} = {expr}" for name, expr in zip(frame[stage], frame[expression],
                                                               strict=True)),
            language="python", wrap_lines=True)
    left, right = st.columns([2, 3])
    printable = [*ctx.stage_names, MODULE_OUTPUT]
    choice = left.selectbox(_("Print"), printable, index=printable.index("LayerNorm"),
                            key=PRINT_KEY, bind="query-params")
    print_rows = right.radio(
        _("Rows"), PRINT_ROWS, key=ROWS_KEY, bind="query-params", horizontal=True, format_func=_,
        help=_("print() shows the first and last three rows of a long tensor."),
    )
    values = ctx.result.stages["LayerNorm" if choice == MODULE_OUTPUT else choice]
    text = figs.printout_text(choice, values, trace, print_rows == EVERY_TOKEN)
    # A 512-token printout is 512 lines: it scrolls in its own box instead of the page.
    # Long rows wrap: a printout scrolled sideways hides its right half on a projector.
    st.code(text, language="python", wrap_lines=True,
            height="content" if text.count("\n") < PRINT_MAX_LINES else 640)
    if choice == "dropout":
        explain(_("The explorer draws its own fixed random mask, so the last operation is a "
                  "division (DivBackward0); nn.Dropout in training mode would show "
                  "NativeDropoutBackward0."))


# --- One-hot lookup ---------------------------------------------------------------------------

def draw_one_hot(ctx: StagesContext) -> None:
    """The word lookup as one_hot(input_ids) @ W, checked against the lookup."""
    one_hot = cache.get_one_hot_check(ctx.key)
    explain(_("Looking up row input_id of the word table is the same as multiplying a one-hot "
              "row (a 1 in column input_id, 0 everywhere else) by the whole table. The check "
              "below does the product over all {vocab} columns and compares it with the "
              "lookup.").format(vocab=f"{one_hot.vocab_size:,}"))
    st.code(figs.one_hot_code(one_hot), language="python", wrap_lines=True)
    draw_check(st.container(), ONE_HOT_VS_LOOKUP, one_hot.error,
               "max |one_hot(input_ids) @ word_embeddings.weight − word_embeddings(input_ids)|")
    draw_one_hot_matrix(ctx, one_hot)


def draw_one_hot_matrix(ctx: StagesContext, one_hot: OneHotCheck) -> None:
    """The one-hot rows for a short input; for a long one, why they are not drawn."""
    T, vocab = len(ctx.result.input_ids), one_hot.vocab_size
    if T > ONE_HOT_MAX_TOKENS:
        explain(_("The one-hot matrix has {tokens} × {vocab} = {cells} cells: too many to draw "
                  "or download, so it is drawn for inputs of up to {limit} tokens. The check ran "
                  "on all of it.").format(tokens=f"{T:,}", vocab=f"{vocab:,}",
                                          cells=f"{T * vocab:,}", limit=ONE_HOT_MAX_TOKENS))
        return
    words = ctx.bundle.ids_to_tokens([int(i) for i in one_hot.columns])
    show_figure(figs.one_hot_figure(one_hot, ctx.labels, words, ctx.bundle.label), "one_hot",
                key="st_fig_one_hot")
    explain(_("Only the {shown} columns that hold a 1 are drawn; the other {rest} columns of "
              "every row are 0.").format(shown=len(one_hot.columns),
                                         rest=f"{vocab - len(one_hot.columns):,}"))
    download_matrix("one_hot", from_cache(get_analysis, ctx.key,
                                          part=lambda r: one_hot_matrix(r.input_ids, vocab)),
                    ctx.row_labels, key="st_one_hot")


# --- Broadcasting -----------------------------------------------------------------------------

def draw_broadcasting(ctx: StagesContext) -> None:
    """The position lookup's [T, h] broadcast over the batch, with the real shapes."""
    demo = cache.get_broadcast_demo(ctx.key)
    explain(_("The tutorial builds `pos_ids = torch.arange(seq_len)`, which has no batch "
              "dimension, so its lookup is [tokens, hidden] while the other two are [1, tokens, "
              "hidden]. PyTorch lines up the last dimensions and repeats the position rows for "
              "every sentence in the batch; the last line adds them to a batch of two."))
    st.code(figs.broadcast_code(demo), language="python", wrap_lines=True)
    draw_check(st.container(), BROADCAST_VS_SUM, demo.error,
               "max |word + token_type + position_embeddings(arange(T)) − sum|")


# --- Parts of the sum -------------------------------------------------------------------------

def draw_parts_of_the_sum(ctx: StagesContext) -> None:
    """Per token: the norm of each lookup, its share of the sum, and the cosines between them."""
    comp = cache.get_lookup_comparison(ctx.key)
    explain(_("For each token: the length (L2 norm) of each of the three lookups, and each "
              "one's share of the sum, its projection c·s/|s|² on the sum s (the three shares "
              "add up to 1; a negative share points away from the sum). The table adds the "
              "cosine between each pair."))
    left, right = st.columns(2)
    with left:
        show_figure(figs.lookup_norms_figure(comp, ctx.labels, ctx.bundle.label), "lookup_norms",
                    key="st_fig_norms")
    with right:
        show_figure(figs.lookup_shares_figure(comp, ctx.labels, ctx.bundle.label),
                    "lookup_shares", key="st_fig_shares")
    table = figs.lookup_comparison_frame(comp, ctx.result.tokens)
    # Three narrow tables (lengths, shares, cosines) instead of one of twelve columns: each
    # fits the ~520 px a 1024-pixel screen leaves, no column hidden past the edge.
    for columns in figs.component_groups():
        st.dataframe(table[[*table.columns[:2], *columns]], hide_index=True, width="stretch",
                     height=figs.table_height(len(table), limit=420),
                     column_config={
                         table.columns[0]: st.column_config.NumberColumn(width=70),
                         table.columns[1]: st.column_config.TextColumn(width=100),
                         **{c: st.column_config.NumberColumn(format="%.3f", width=85)
                            for c in columns}})
    download_matrix("lookup_components",
                    from_cache(cache.get_lookup_comparison, ctx.key, part=LookupComparison.table),
                    ctx.row_labels, key="st_components")
    explain(_("Columns of the download: {columns}.").format(columns=", ".join(COMPONENT_COLUMNS)))
    segment_box(ctx)


# --- LayerNorm --------------------------------------------------------------------------------

def draw_layernorm(ctx: StagesContext) -> None:
    """LayerNorm taken apart: the formula, both live checks, per-token statistics, γ and β."""
    ln = cache.get_layernorm_check(ctx.key)
    explain(_("LayerNorm works on each token on its own: it subtracts the token's mean over the "
              "hidden dimensions, divides by its standard deviation, then multiplies each "
              "dimension by a learned γ and adds a learned β. So before γ and β every token has "
              "mean 0 and standard deviation 1; after them it does not quite, as the charts "
              "show."))
    # Two lines, so neither is cut off on a 1024-pixel screen.
    st.latex(r"\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
             r" + \beta")
    st.latex(r"\mu = \tfrac{1}{h}\sum_i x_i, \quad \sigma^2 = \tfrac{1}{h}\sum_i (x_i - \mu)^2,"
             r" \quad \varepsilon = " + figs.latex_number(ln.eps))
    c1, c2 = st.container(), st.container()
    draw_check(c1, LAYERNORM_VS_MODULE, ln.module_error,
               _("max |embeddings.LayerNorm(word + token_type + position) − "
                 "model.embeddings(...)| in eval mode"))
    draw_check(c2, FORMULA_VS_LAYERNORM, ln.formula_error,
               _("max |γ (x − μ)/√(σ² + ε) + β − LayerNorm(x)|, the formula in float64 numpy"))
    show_figure(figs.layernorm_stats_figure(ln, ctx.labels, ctx.bundle.label),
                "layernorm_token_stats", key="st_fig_ln_stats")
    download_matrix("layernorm_stats",
                    from_cache(cache.get_layernorm_check, ctx.key, part=LayerNormCheck.table),
                    ctx.row_labels, key="st_ln_stats")
    explain(_("Columns of the download: {columns}.").format(columns=", ".join(LAYERNORM_COLUMNS)))
    show_figure(figs.gamma_beta_figure(ln, ctx.bundle.label), "layernorm_gamma_beta",
                key="st_fig_ln_params")
    download_matrix("layernorm_gamma_beta",
                    from_cache(cache.get_layernorm_check, ctx.key,
                               part=lambda ln: np.vstack([ln.gamma, ln.beta])), ["gamma", "beta"],
                    key="st_ln_params")


# The page's sections, one tab each; only the open one runs (see components.sections).
SECTIONS = (
    Section(label=N_("Heatmaps"), draw=draw_heatmaps),
    Section(label=N_("Printouts"), draw=draw_printouts),
    Section(label=N_("LayerNorm"), draw=draw_layernorm),
    Section(label=N_("One-hot lookup"), draw=draw_one_hot),
    Section(label=N_("Broadcasting"), draw=draw_broadcasting),
    Section(label=N_("Parts of the sum"), draw=draw_parts_of_the_sum),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    context = StagesContext(key, model_of(key), analysis_of(key))
    draw_unk_note(context.result.encoding, context.bundle, _(
        "Their word_embeddings rows are identical, so on every tab their rows differ only by "
        "position and segment, and say little about the text."))
    draw_sections(SECTIONS, SECTION_KEY, context)


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
