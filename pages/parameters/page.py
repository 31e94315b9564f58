"""Parameters: where every parameter lives, the count from the config, the tutorial's hand
formula, the published checkpoints, your own sizes and the architecture with live shapes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from components.analysis_view import encoding_or_none, model_of
from components.cache import parameter_count
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.html_table import draw_table
from components.i18n import N_, _, language
from components.inputs import shared_inputs
from components.sections import Section, draw_sections
from core.parameters.counting import (
    closed_form_latex,
    count_from_config,
    group_totals,
    hand_formula_terms,
    omitted_terms,
    parameter_terms,
)
from core.parameters.listing import blocks, reconcile
from core.parameters.presets import (
    LIMITS,
    PRESETS,
    TUTORIAL_MODEL,
    Sizes,
    config_from_sizes,
    preset_config,
    presets_frame,
    size_problems,
    sizes_from_config,
)
from core.parameters.tables import reconcile_frame, terms_frame
from pages.parameters import cache
from pages.parameters.figures import (
    BREAKDOWN_COLUMNS,
    LIST_COLUMNS,
    PRESET_COLUMNS,
    PRESET_SIZE_COLUMNS,
    RECONCILE_COLUMNS,
    TERMS_COLUMNS,
    ColumnSpec,
    architecture_dot,
    html_columns,
    localized,
    shown,
)
from pages.parameters.records import Context, CustomSettings, FormulaSettings

if TYPE_CHECKING:   # the type st.column_config's functions return (not exported by name)
    from streamlit.elements.lib.column_types import ColumnConfig


TITLE = N_("Parameters")
EXPLANATION = N_(
    "Every number BERT learned sits in a lookup table, a weight matrix, a bias vector or a "
    "LayerNorm. This page finds each one in the loaded model's `named_parameters()`, counts them "
    "again from the config alone, and shows that the two agree exactly."
)
# URL keys (names and values as before: shared links keep working).
SECTION_KEY = "par_section"
PER_LAYER_KEY, FILTER_KEY, FORMULA_KEY, HAND_KEY = "par_per_layer", "par_filter", "par_formula", \
    "par_seed"
ZOOM_KEY = "par_zoom"
# Option values double as URL values (a bound widget puts the label in the URL).
LOADED = N_("the loaded model")
ABOVE = N_("the config above")
DEFAULT_SIZES = sizes_from_config(preset_config("bert-base-uncased"))
FORM_KEYS = {  # Sizes field -> (widget key, short label with the formula's symbol)
    "layers": ("par_layers", N_("Layers N")),
    "hidden": ("par_hidden", N_("Hidden h")),
    "heads": ("par_heads", N_("Heads")),
    "intermediate": ("par_inter", N_("FFN i")),
    "vocab": ("par_vocab", N_("Vocabulary V")),
    "positions": ("par_pos", N_("Positions P")),
    "types": ("par_types", N_("Types S")),
}


def show_table(frame: pd.DataFrame, columns: Mapping[str, ColumnSpec | None], name: str) -> None:
    """A short table as an HTML table named ``name``, its headers and words translated and every
    cell in view (a grid cut cells at 1024 px); a column's help is written under it, where a
    projector shows it."""
    table, formats = html_columns(frame, columns)
    draw_table(table, [""] * len(table), name, wrap=True, formats=formats)
    helps = [f"{_(spec.label)}: {_(spec.help)}" for spec in columns.values()
             if spec is not None and spec.help]
    if helps:
        explain(" · ".join(helps))


def column_config(spec: ColumnSpec) -> ColumnConfig:
    """A shown column's header (translated), width, number format and help."""
    if spec.number:
        return st.column_config.NumberColumn(_(spec.label), width=spec.width, format=spec.format,
                                             help=_(spec.help) if spec.help else None)
    return st.column_config.Column(_(spec.label), width=spec.width)


def show_grid(frame: pd.DataFrame, columns: Mapping[str, ColumnSpec | None]) -> None:
    """A long list as a grid without index, its headers and words translated: whole when short,
    else scrolling."""
    config = {column: None if spec is None else column_config(spec)
              for column, spec in columns.items()}
    st.dataframe(localized(frame), hide_index=True, width="stretch",
                 height="content" if len(frame) <= 20 else 600, column_config=config)


def draw_headline(ctx: Context) -> None:
    """The count in large type (one line, never cut), the rest of the numbers beside it."""
    trainable = sum(r.numel for r in ctx.rows if r.trainable)
    st.subheader(_("{model}: {count} parameters").format(
        model=ctx.bundle.label, count=f"{ctx.total:,}"), anchor=False)
    st.markdown(_("Trainable: **{trainable}** · tensors in `named_parameters()`: **{tensors}** · "
                  "size in float32: **{mib} MiB** (4 bytes each)").format(
        trainable=f"{trainable:,}", tensors=f"{len(ctx.rows):,}",
        mib=f"{ctx.total * 4 / 2**20:,.1f}"))


def draw_where(ctx: Context) -> None:
    explain(_("{model} grouped by module: the three embedding tables and their LayerNorm, then "
              "the same eight blocks in every encoder layer, then the pooler. Each rectangle's "
              "area is its share of the parameters.").format(model=ctx.bundle.label))
    if st.toggle(_("Zoom in and out"), key=ZOOM_KEY, bind="query-params",
                 help=_("Draws the treemap as an interactive figure: click a rectangle to zoom "
                        "in, click the bar at the top to zoom out. It takes longer to draw.")):
        explain(_("Click a rectangle to zoom in, click the bar at the top to zoom out."))
        show_figure(cache.get_treemap(ctx.bundle.name, language()),
                    f"parameters-{ctx.bundle.label}", key="par_treemap")
    else:
        st.html(cache.get_treemap_picture(ctx.bundle.name, language()))
        explain(_("A rectangle too small for its name names itself when the pointer rests on "
                  "it; the table below lists every block."))
    per_layer = st.toggle(
        _("One row per encoder layer"), value=False, key=PER_LAYER_KEY, bind="query-params",
        help=_("Off: the blocks of all layers added up (× number of layers). On: every layer "
               "apart."))
    breakdown = cache.get_breakdown(ctx.bundle.name, bool(per_layer))
    # Shown in percent with 3 decimals; the CSV keeps the fraction.
    show_grid(breakdown.assign(share=100 * breakdown["share"]), BREAKDOWN_COLUMNS)
    st.download_button(_("Download the breakdown (CSV)"),
                       lambda: breakdown.to_csv(index=False),
                       _("parameter-breakdown") + ".csv", "text/csv",
                       icon=":material/download:", on_click="ignore", key="par_breakdown_csv")
    draw_named_list(ctx)


def draw_named_list(ctx: Context) -> None:
    st.subheader(_("Every named parameter"), anchor=False)
    explain(_("The list `model.named_parameters()` gives, with each tensor's shape and size. The "
              "filter keeps the names that contain every word you type (plain text, case "
              "ignored), e.g. `layer.0.` or `LayerNorm bias`."))
    query = st.text_input(_("Filter by name"), value="", key=FILTER_KEY, bind="query-params",
                          placeholder=_("e.g. attention.self.query  or  LayerNorm bias"),
                          max_chars=200)
    shown_rows, frame = cache.get_named_list(ctx.bundle.name, query or "")
    if not shown_rows:
        st.info(_("No parameter name contains all the words of the filter. Names look like "
                  "encoder.layer.0.attention.self.query.weight."), icon=":material/filter_alt_off:")
        return
    part = sum(r.numel for r in shown_rows)
    st.markdown(_("{shown} of {all} tensors, {part} parameters ({share} of the model).").format(
        shown=f"{len(shown_rows):,}", all=f"{len(ctx.rows):,}", part=f"{part:,}",
        share=f"{part / ctx.total:.2%}"))
    show_grid(frame, LIST_COLUMNS)
    st.download_button(_("Download this list (CSV)"), lambda: frame.to_csv(index=False),
                       _("named-parameters") + ".csv", "text/csv", icon=":material/download:",
                       on_click="ignore", key="par_list_csv")


def formula_settings() -> FormulaSettings:
    choices = [LOADED, *PRESETS]
    picked = st.selectbox(
        _("Config"), choices, key=FORMULA_KEY, bind="query-params", format_func=_,
        help=_("The loaded model is the one in the sidebar. The presets are built on the meta "
               "device: every shape, no weights, no download."))
    return FormulaSettings(picked if picked in choices else LOADED)


def draw_from_config(ctx: Context) -> None:
    explain(_("The same total without looking at a single weight: V·h, P·h and S·h for the three "
              "tables (V vocabulary, P positions, S token types, h hidden size), per layer "
              "4h² + 4h for query, key, value and attention output, 2hi + i + h for the "
              "feed-forward network (i its inner size) and 2h for each LayerNorm, and h² + h for "
              "the pooler. Each term is set beside what the model's named_parameters really hold "
              "for that block."))
    settings = formula_settings()
    if settings.picked == LOADED:
        config, rows = ctx.bundle.config, list(ctx.rows)
        against = _("sum(p.numel()) of {model}").format(model=ctx.bundle.label)
    else:
        config, rows = preset_config(settings.picked), cache.get_preset_parameters(settings.picked)
        against = _("sum(p.numel()) of BertModel({model} config) on the meta device").format(
            model=settings.picked)
    with_pooler = any(r.group == "pooler" for r in rows)
    exact, held = count_from_config(config, with_pooler), sum(r.numel for r in rows)
    show_table(reconcile_frame(reconcile(parameter_terms(config, with_pooler), blocks(rows)),
                               config), RECONCILE_COLUMNS, "par_reconcile")
    formula_latex = closed_form_latex(config, with_pooler)
    if formula_latex:
        # The pooler's term on a line of its own, so the first line fits a 1024-pixel screen.
        st.latex(formula_latex.replace(r" \;+\; (h^2 + h)", r" \\ &\quad + (h^2 + h)", 1))
    if exact == held:
        st.success(_("From the config: {exact}. {against}: {held}. Exactly equal.").format(
            exact=f"{exact:,}", against=against, held=f"{held:,}"), icon=":material/check_circle:")
    else:
        st.warning(_("From the config: {exact}; {against}: {held}; {diff} differ. This model has "
                     "blocks a plain BertModel does not (the rows marked not in the formula).")
                   .format(exact=f"{exact:,}", against=against, held=f"{held:,}",
                           diff=f"{held - exact:+,}"), icon=":material/warning:")
    draw_hand_formula(config, with_pooler, exact)


def draw_hand_formula(above, above_pooler: bool, above_exact: int) -> None:
    st.subheader(_("The tutorial's hand formula"), anchor=False)
    explain(_("The parameter tutorial counts {model} by hand: only the lookup tables and the "
              "weight matrices. It misses every bias vector (4h + i + h per layer, h in the "
              "pooler) and the scale and shift (γ, β) of every LayerNorm (2h in the embeddings, "
              "2h twice per layer): vectors, not matrices, which is why the gap is so small next "
              "to the total.").format(model=TUTORIAL_MODEL))
    view = st.radio(_("Count by hand"), [TUTORIAL_MODEL, ABOVE], key=HAND_KEY,
                    bind="query-params", horizontal=True, format_func=_,
                    help=_("The tutorial counts {model}; the same hand formula works for any "
                           "config.").format(model=TUTORIAL_MODEL))
    if view == ABOVE:
        config, with_pooler, exact = above, above_pooler, above_exact
    else:
        config, with_pooler = preset_config(TUTORIAL_MODEL), True
        exact = count_from_config(config)
    counted, left_out = hand_formula_terms(config, with_pooler), omitted_terms(config, with_pooler)
    hand, gap = sum(t.total for t in counted), sum(t.total for t in left_out)
    st.markdown(_("**What the hand formula counts: {hand}**").format(hand=f"{hand:,}"))
    show_table(terms_frame(counted, config), TERMS_COLUMNS, "par_hand")
    st.markdown(_("**What it leaves out, the biases and LayerNorm: {gap}**").format(gap=f"{gap:,}"))
    show_table(terms_frame(left_out, config), TERMS_COLUMNS, "par_left_out")
    numbers = {"hand": f"{hand:,}", "gap": f"{gap:,}", "sum": f"{hand + gap:,}",
               "exact": f"{exact:,}", "short": f"{gap / exact:.3%}"}
    if hand + gap == exact:
        st.markdown(_("Hand count **{hand}** + left out **{gap}** = **{sum}** = the exact count; "
                      "the hand count is {short} short.").format(**numbers))
    else:
        st.markdown(_("Hand count **{hand}** + left out **{gap}** = **{sum}**, while the exact "
                      "count is {exact}.").format(**numbers))


def draw_presets(ctx: Context) -> None:
    explain(_("The published BERT checkpoints counted from their config alone, twice: with the "
              "formula, and by building BertModel(config) on PyTorch's meta device, which creates "
              "every tensor's shape but no memory, so nothing is downloaded."))
    presets = presets_frame({name: sum(r.numel for r in cache.get_preset_parameters(name))
                             for name in PRESETS})
    show_table(presets, PRESET_SIZE_COLUMNS, "par_preset_sizes")
    show_table(presets, PRESET_COLUMNS, "par_preset_counts")
    unequal = presets.loc[~presets["equal"], "model"].tolist()
    if unequal:
        st.warning(_("The formula and the meta-device model disagree for {models}.").format(
            models=", ".join(unequal)))
    else:
        explain(_("For all four, the count from the formula equals sum(p.numel()) of the model "
                  "built on the meta device."))


def fill_form(sizes: Sizes) -> None:
    """Button callback: put a model's sizes in the custom form (and so in the URL)."""
    for name, (key, _label) in FORM_KEYS.items():
        st.session_state[key] = str(getattr(sizes, name))


def custom_settings(ctx: Context) -> CustomSettings:
    """The start buttons and the seven size boxes; the sizes, or why they are refused."""
    starts = {name: sizes_from_config(preset_config(name)) for name in PRESETS}
    starts[LOADED] = sizes_from_config(ctx.bundle.config)
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown(_("Start from:"))
        for number, (label, start) in enumerate(starts.items()):
            st.button(_(label), key=f"par_from_{number}", on_click=fill_form, args=(start,))
    values: dict[str, object] = {}
    columns = [*st.columns(4), *st.columns(4)]  # two rows: every label whole at 1024 px
    for col, (name, (key, label)) in zip(columns, FORM_KEYS.items(), strict=False):
        # Text, not a number box: a bound number input crashes on "inf" or "nan" in the URL, and
        # text lets an impossible value through to the message that says why it is refused.
        limit = LIMITS[name]
        values[name] = col.text_input(
            _(label), value=str(getattr(DEFAULT_SIZES, name)), key=key, bind="query-params",
            max_chars=40, help=_("{label} (config.{key}), a whole number from 1 to {cap}").format(
                label=_(limit.label), key=limit.config_key, cap=f"{limit.cap:,}"))
    sizes, problems = size_problems(values)
    return CustomSettings(sizes, tuple(shown(p) for p in problems))


def draw_custom(ctx: Context) -> None:
    explain(_("Change any size and the count follows, from the formula and from BertModel(config) "
              "built on the meta device."))
    settings = custom_settings(ctx)
    if settings.sizes is None:
        st.error(_("These sizes cannot make a BERT:") + "\n\n"
                 + "\n".join(f"- {p}" for p in settings.problems), icon=":material/block:")
        return
    sizes = settings.sizes
    custom = config_from_sizes(sizes)
    by_formula, on_meta = count_from_config(custom), cache.get_custom_meta_count(*sizes.as_tuple())
    c1, c2 = st.columns(2)
    c1.metric(_("Parameters (from the config)"), f"{by_formula:,}")
    equal = on_meta == by_formula
    c2.metric(_("On the meta device"), f"{on_meta:,}",
              delta=_("equal") if equal else _("{diff} differ").format(
                  diff=f"{on_meta - by_formula:+,}"),
              delta_color="green" if equal else "red", delta_arrow="off",
              help=_("sum(p.numel()) of BertModel(config) built on the meta device"))
    c3, c4 = st.columns(2)
    c3.metric(_("Size in float32"), f"{by_formula * 4 / 2**30:,.2f} GiB")
    c4.metric(_("× {model}").format(model=ctx.bundle.label), f"{by_formula / ctx.total:,.2f}",
              help=_("{custom} / {loaded} parameters").format(custom=f"{by_formula:,}",
                                                               loaded=f"{ctx.total:,}"))
    parts = group_totals(parameter_terms(custom))
    st.markdown(_("Embeddings {emb} ({emb_share}) · {layers} encoder layers {enc} ({enc_share}) · "
                  "pooler {pool} · each head sees {dims} dimensions.").format(
        emb=f"{parts['embeddings']:,}", emb_share=f"{parts['embeddings'] / by_formula:.1%}",
        layers=sizes.layers, enc=f"{parts['encoder.layer']:,}",
        enc_share=f"{parts['encoder.layer'] / by_formula:.1%}", pool=f"{parts['pooler']:,}",
        dims=sizes.hidden // sizes.heads))


def draw_architecture(ctx: Context) -> None:
    explain(_("The path of the sentence in the sidebar through {model}, with the shape of what "
              "each step outputs for it (T tokens, batch of 1). Query, key and value are split "
              "into heads of h / heads dimensions each; every encoder layer has the same shapes, "
              "so it is drawn once.").format(model=ctx.bundle.label))
    if ctx.encoding is None:  # the reason is shown above the tabs
        st.info(_("Type a sentence in the sidebar to see its shapes."), icon=":material/edit:")
        return
    dot = architecture_dot(ctx.bundle.config, len(ctx.encoding.tokens))
    st.graphviz_chart(dot, width="stretch")
    st.download_button(_("Download the sketch (Graphviz DOT)"), dot,
                       _("bert-architecture") + ".dot", "text/vnd.graphviz",
                       icon=":material/download:", on_click="ignore", key="par_sketch_dot")


SECTIONS = (
    Section(label=N_("Where they live"), draw=draw_where),
    Section(label=N_("From the config"), draw=draw_from_config),
    Section(label=N_("Presets"), draw=draw_presets),
    Section(label=N_("Your own BERT"), draw=draw_custom),
    Section(label=N_("Architecture"), draw=draw_architecture),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    ctx = Context(key, bundle, tuple(cache.get_live_parameters(bundle.name)),
                  parameter_count(bundle.name), encoding_or_none(key))
    draw_headline(ctx)
    draw_sections(SECTIONS, SECTION_KEY, ctx)


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
