"""Parameters: where every parameter lives, the count from the config, and the seed's hand count."""

import streamlit as st

from components.analysis_view import current_encoding, current_model
from components.explain import explain
from components.heatmap import show_figure
from components.parameters_cache import custom_meta_count, live_parameters, preset_parameters
from components.parameters_figures import (
    BREAKDOWN_COLUMNS,
    LIST_COLUMNS,
    PRESET_COLUMNS,
    RECONCILE_COLUMNS,
    TERMS_COLUMNS,
    show_table,
    treemap_figure,
)
from core.architecture import architecture_dot
from core.parameter_listing import blocks, filter_parameters, reconcile, tree_nodes
from core.parameter_tables import breakdown_frame, parameters_frame, reconcile_frame, terms_frame
from core.parameters import (
    closed_form_latex,
    count_from_config,
    group_totals,
    omitted_terms,
    parameter_terms,
    seed_terms,
)
from core.presets import (
    LIMITS,
    PRESETS,
    SEED_MODEL,
    Sizes,
    check_sizes,
    config_from_sizes,
    preset_config,
    presets_frame,
    sizes_from_config,
)

# Option labels double as URL values (a bound widget puts the label in the URL), so they are
# plain words, the same for every model.
LOADED = "the loaded model"
ABOVE = "the config above"
DEFAULT_SIZES = sizes_from_config(preset_config("bert-base-uncased"))
FORM_KEYS = {  # Sizes field -> (widget key, short label with the formula's symbol)
    "layers": ("par_layers", "Layers N"),
    "hidden": ("par_hidden", "Hidden h"),
    "heads": ("par_heads", "Heads"),
    "intermediate": ("par_inter", "FFN i"),
    "vocab": ("par_vocab", "Vocabulary V"),
    "positions": ("par_pos", "Positions P"),
    "types": ("par_types", "Types S"),
}


def fill_form(sizes: Sizes) -> None:
    """Button callback: put a model's sizes in the custom form (and so in the URL)."""
    for name, (key, _) in FORM_KEYS.items():
        st.session_state[key] = str(getattr(sizes, name))


st.title("Parameters")
explain(
    "Every number BERT learned sits in a lookup table, a weight matrix, a bias vector or a "
    "LayerNorm. This page finds each one in the loaded model's `named_parameters()`, counts them "
    "again from the config alone, and shows that the two agree exactly."
)

bundle = current_model()
config = bundle.config
rows = live_parameters(bundle.name)
model_blocks = blocks(rows)
total, trainable = sum(r.numel for r in rows), sum(r.numel for r in rows if r.trainable)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Parameters", f"{total:,}", help="sum(p.numel() for p in model.parameters())")
m2.metric("Trainable", f"{trainable:,}", help="parameters with requires_grad=True")
m3.metric("Tensors", f"{len(rows):,}", help="entries of model.named_parameters()")
m4.metric("Size in float32", f"{total * 4 / 2**20:,.1f} MiB", help="4 bytes per parameter")

# Drawn last (it needs the current input, which may be empty), shown here.
sketch_slot = st.container()

# --- Where the parameters live -------------------------------------------------------------
st.header("Where the parameters live")
explain(
    "The loaded model grouped by module: the three embedding tables and their "
    "LayerNorm, then the same eight blocks in every encoder layer, then the pooler. Each "
    "rectangle's area is its share of the parameters; click a rectangle to zoom in, click the "
    "bar at the top to zoom out."
)
show_figure(treemap_figure(tree_nodes(model_blocks)), f"parameters-{bundle.name}",
            key="par_treemap")

per_layer = st.toggle(
    "One row per encoder layer", value=False, key="par_per_layer", bind="query-params",
    help="Off: the blocks of all layers added up (× number of layers). On: every layer apart.",
)
breakdown = breakdown_frame(model_blocks, per_layer=bool(per_layer))
# Shown in percent with 3 decimals; the CSV keeps the fraction.
show_table(breakdown.assign(share=100 * breakdown["share"]), BREAKDOWN_COLUMNS)
st.download_button("Download the breakdown (CSV)", breakdown.to_csv(index=False),
                   "parameter-breakdown.csv", "text/csv", icon=":material/download:",
                   on_click="ignore", key="par_breakdown_csv")

# --- The count from the config -------------------------------------------------------------
st.header("The count from the config")
explain(
    "The same total without looking at a single weight: V·h, P·h and S·h for the three tables "
    "(V vocabulary, P positions, S token types, h hidden size), per layer 4h² + 4h for query, key, "
    "value and attention output, 2hi + i + h for the feed-forward network (i its inner size) and "
    "2h for each LayerNorm, and h² + h for the pooler. Each term is set beside what the model's "
    "named_parameters really hold for that block."
)
choices = [LOADED, *PRESETS]
picked = st.selectbox(
    "Config", choices, key="par_formula", bind="query-params",
    help="The loaded model is the one in the sidebar. The presets are built on the meta device: "
    "every shape, no weights, no download.",
)
picked = picked if picked in choices else LOADED
if picked == LOADED:
    formula_config, target_rows, against = config, rows, "sum(p.numel()) of the loaded model"
else:
    formula_config = preset_config(picked)
    target_rows = preset_parameters(picked)
    against = f"sum(p.numel()) of BertModel({picked} config) on the meta device"
with_pooler = any(r.group == "pooler" for r in target_rows)
terms = parameter_terms(formula_config, with_pooler)
exact = count_from_config(formula_config, with_pooler)
held = sum(r.numel for r in target_rows)

st.subheader("Exact, term by term")
show_table(reconcile_frame(reconcile(terms, blocks(target_rows)), formula_config),
           RECONCILE_COLUMNS)
formula_latex = closed_form_latex(formula_config, with_pooler)
if formula_latex:
    st.latex(formula_latex)
if exact == held:
    st.success(f"From the config: {exact:,}. {against}: {held:,}. Exactly equal.",
               icon=":material/check_circle:")
else:
    st.warning(
        f"From the config: {exact:,}; {against}: {held:,}; {held - exact:+,} differ. This "
        "model has blocks a plain BertModel does not (the rows marked not in the formula).",
        icon=":material/warning:",
    )

st.subheader("The seed's hand formula")
explain(
    "Seed 004 counts only the lookup tables and the weight matrices. It misses every bias "
    "vector (4h + i + h per layer, h in the pooler) and the scale and shift (γ, β) of every "
    "LayerNorm (2h in the embeddings, 2h twice per layer): vectors, not matrices, which is why "
    "the gap is so small next to the total."
)
seed_view = st.radio(
    "Count by hand", [SEED_MODEL, ABOVE], key="par_seed", bind="query-params", horizontal=True,
    help=f"The seed counts {SEED_MODEL}; the same hand formula works for any config.",
)
if seed_view == ABOVE:
    hand_config, hand_pooler, hand_exact = formula_config, with_pooler, exact
else:
    hand_config, hand_pooler = preset_config(SEED_MODEL), True
    hand_exact = count_from_config(hand_config)
hand_terms = seed_terms(hand_config, hand_pooler)
left_out = omitted_terms(hand_config, hand_pooler)
hand, gap = sum(t.total for t in hand_terms), sum(t.total for t in left_out)
st.markdown(f"**What the seed counts: {hand:,}**")
show_table(terms_frame(hand_terms, hand_config), TERMS_COLUMNS)
st.markdown(f"**What it leaves out: {gap:,}**")
show_table(terms_frame(left_out, hand_config), TERMS_COLUMNS)
st.markdown(
    f"Hand count **{hand:,}** + left out **{gap:,}** = **{hand + gap:,}**"
    + (f" = the exact count; the hand count is {gap / hand_exact:.3%} short."
       if hand + gap == hand_exact else f", while the exact count is {hand_exact:,}.")
)

# --- Presets and your own BERT -------------------------------------------------------------
st.header("Presets and your own BERT")
explain(
    "The published BERT checkpoints counted from their config alone, twice: with the formula, and "
    "by building BertModel(config) on PyTorch's meta device, which creates every tensor's shape "
    "but no memory, so nothing is downloaded. Change any size in the form and the count follows."
)
presets = presets_frame({name: sum(r.numel for r in preset_parameters(name)) for name in PRESETS})
show_table(presets, PRESET_COLUMNS)
unequal = presets.loc[~presets["equal"], "model"].tolist()
if unequal:
    st.warning(f"The formula and the meta-device model disagree for {', '.join(unequal)}.")
else:
    st.caption("For all four, the count from the formula equals sum(p.numel()) of the model "
               "built on the meta device.")

st.subheader("Your own BERT")
starts = {name: sizes_from_config(preset_config(name)) for name in PRESETS}
starts["the loaded model"] = sizes_from_config(config)
with st.container(horizontal=True, vertical_alignment="center"):
    st.markdown("Start from:")
    for number, (label, start) in enumerate(starts.items()):
        st.button(label, key=f"par_from_{number}", on_click=fill_form, args=(start,))

values = {}
for col, (name, (key, label)) in zip(st.columns(len(FORM_KEYS)), FORM_KEYS.items(), strict=True):
    # Text, not st.number_input: a bound number input crashes on "inf" or "nan" in the URL, and
    # text lets an impossible value through to the message below that says why it is refused.
    values[name] = col.text_input(
        label, value=str(getattr(DEFAULT_SIZES, name)), key=key, bind="query-params",
        max_chars=40, help=f"{LIMITS[name].label} (config.{LIMITS[name].config_key}), "
        f"a whole number from 1 to {LIMITS[name].cap:,}",
    )
sizes, problems = check_sizes(values)
if sizes is None:
    st.error("These sizes cannot make a BERT:\n\n" + "\n".join(f"- {p}" for p in problems),
             icon=":material/block:")
else:
    custom = config_from_sizes(sizes)
    custom_terms = parameter_terms(custom)
    by_formula = count_from_config(custom)
    on_meta = custom_meta_count(*sizes.as_tuple())
    c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
    c1.metric("Parameters (from the config)", f"{by_formula:,}")
    c2.metric("On the meta device", f"{on_meta:,}",
              delta="equal" if on_meta == by_formula else f"{on_meta - by_formula:+,} differ",
              delta_color="green" if on_meta == by_formula else "red", delta_arrow="off",
              help="sum(p.numel()) of BertModel(config) built on the meta device")
    c3.metric("Size in float32", f"{by_formula * 4 / 2**30:,.2f} GiB")
    c4.metric("× the loaded model", f"{by_formula / total:,.2f}",
              help=f"{by_formula:,} / {total:,} parameters")
    parts = group_totals(custom_terms)
    st.caption(
        f"Embeddings {parts['embeddings']:,} ({parts['embeddings'] / by_formula:.1%}) · "
        f"{sizes.layers} encoder layers {parts['encoder.layer']:,} "
        f"({parts['encoder.layer'] / by_formula:.1%}) · pooler {parts['pooler']:,} · "
        f"each head sees {sizes.hidden // sizes.heads} dimensions."
    )

# --- Every named parameter -----------------------------------------------------------------
st.header("Every named parameter")
explain(
    "The list `model.named_parameters()` gives, with each tensor's shape and size. The filter "
    "keeps the names that contain every word you type (plain text, case ignored), e.g. "
    "`layer.0.` or `LayerNorm bias`; the caption adds up what is left."
)
query = st.text_input("Filter by name", value="", key="par_filter", bind="query-params",
                      placeholder="e.g. attention.self.query  or  LayerNorm bias", max_chars=200)
shown = filter_parameters(rows, query or "")
if shown:
    part = sum(r.numel for r in shown)
    st.caption(f"{len(shown):,} of {len(rows):,} tensors, {part:,} parameters "
               f"({part / total:.2%} of the model).")
    frame = parameters_frame(shown)
    show_table(frame, LIST_COLUMNS)
    st.download_button("Download this list (CSV)", frame.to_csv(index=False),
                       "named-parameters.csv", "text/csv", icon=":material/download:",
                       on_click="ignore", key="par_list_csv")
else:
    st.info("No parameter name contains all the words of the filter. Names look like "
            "encoder.layer.0.attention.self.query.weight.", icon=":material/filter_alt_off:")

# --- The architecture with the current input's shapes ---------------------------------------
with sketch_slot:
    st.header("The architecture, with the shapes of your input")
    explain(
        "The path of the sentence in the sidebar through the model, with the shape of what each "
        "step outputs for it (T tokens, batch of 1). Query, key and value are split into heads of "
        "h / heads dimensions each; every encoder layer has the same shapes, so it is drawn once."
    )
    dot = architecture_dot(config, len(current_encoding().tokens))
    st.graphviz_chart(dot, width="stretch")
    st.download_button("Download the sketch (Graphviz DOT)", dot, "bert-architecture.dot",
                       "text/vnd.graphviz", icon=":material/download:", on_click="ignore",
                       key="par_sketch_dot")
