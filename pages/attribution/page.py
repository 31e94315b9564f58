"""Attribution: which input tokens drive what the model outputs. Raw attention, rollout, flow,
norm-weighted attention and integrated gradients side by side, and a blank-out test of which to
believe on this input. Only the open tab's section runs; flow and gradients only on a click."""

from __future__ import annotations

import numpy as np
import streamlit as st

from components.analysis_view import encoding_of, model_of, show_error, stop_on_input_error
from components.controls import by_word_toggle, whole_number
from components.explain import explain, page_header
from components.html_table import draw_table
from components.i18n import N_, _, every_language
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import markdown_template, markdown_text
from components.pickers import LAYER_LABEL, layer_axis
from components.picture_switcher import Drawn, picture_slider, with_words
from components.sections import Section, draw_sections, run_part
from components.url_values import option_in_link
from core import ExplorerError
from core.attribution import (
    BASELINE,
    MAX_STEPS,
    IntegratedGradients,
    Method,
    Target,
    TargetPlan,
    agreement,
    best_agreement,
    default_target,
    flow_token_limit,
    token_importance,
)
from core.words import sum_by_word
from pages.attribution import cache
from pages.attribution import figures as fg
from pages.attribution.records import MEAN, Context, method_label

TITLE = N_("Attribution")
EXPLANATION = N_(
    "Which input tokens drive what the model outputs? Raw attention is the answer students "
    "reach for, and often a misleading one. Here five methods answer for the same token and "
    "layer side by side, and a blank-out test (leave each word out and measure how much the "
    "output moves) shows which of them to believe on this input."
)
SECTION_KEY, TARGET_KEY, TOKEN_KEY = "att_section", "att_target", "att_token"
LAYER_KEY, METHODS_KEY, STEPS_KEY = "att_layer", "att_methods", "att_steps"
WORDS_KEY = "att_words"
ASKED_STATE = "att_asked"   # the flows and gradients this session asked for (not in the URL)
# A link carries a target as its value (?att_target=pair_cosine) or as its label in either
# language (what the widget writes): keep both as they are, or old links lose the target.
TARGET_TITLES = {
    Target.PAIR_COSINE: N_("cosine of A and B"),
    Target.SENTENCE_COSINE: N_("the sentence vector"),
    Target.MASK_PROBABILITY: N_("probability at [MASK]"),
    Target.IS_NEXT: N_("IsNext probability"),
}
TARGET_HELP = N_(
    "Cosine of A and B: the model's own similarity figure, each sentence run on its own and "
    "mean-pooled. The sentence vector: the input's mean-pooled vector, as its cosine with the "
    "vector of the whole, unchanged input. Probability at [MASK]: the probability of the token "
    "the masked-language-model head predicts at the first [MASK]. IsNext probability: the "
    "next-sentence head's belief that B follows A. The last two need a model with those heads."
)
CHANGE_TITLE = N_("blank-out change")
MEAN_TITLE, CLS_EACH = N_("the mean over all tokens"), N_("[CLS] of each sentence")


# --- the pickers ----------------------------------------------------------------------------

def seed_from_link(key: str, options: list, labels: dict, missing: str) -> None:
    """On a session's first run, take the link's value for ``key``: an option itself
    ("pair_cosine", a position) or its label in either language. Anything else: a line saying
    so, and the widget's default (Streamlit drops an invalid bound value by itself)."""
    valid, invalid = option_in_link(key, options, lambda o: every_language(labels[o]))
    if valid is not None:
        st.session_state[key] = valid
    elif invalid is not None:
        st.info(markdown_template(_(missing), asked=invalid[:40]), icon=":material/info:")


def target_label(target: Target) -> str:
    """The target's name in the reader's language."""
    return _(TARGET_TITLES[target])


def pick_target(key: InputKey) -> Target:
    default = default_target(key.text_b)
    targets = list(Target)
    seed_from_link(TARGET_KEY, targets, TARGET_TITLES,
                   N_("There is no quantity “{asked}” to explain: showing the default."))
    value = st.selectbox(_("What to explain"), targets, index=targets.index(default),
                         key=TARGET_KEY, bind="query-params", help=_(TARGET_HELP),
                         format_func=target_label)
    return Target(value or default)


def token_options(plan: TargetPlan) -> list[str]:
    """The mean over tokens, then [CLS] (the pair's cosine: of each sentence), then, for one
    input, every position."""
    if len(plan.parts) == 2:
        return [MEAN, "0"]
    return [MEAN, *(str(i) for i in range(len(plan.parts[0].input_ids)))]


def default_token(plan: TargetPlan) -> str:
    if plan.kind == Target.MASK_PROBABILITY:
        return str(plan.mask_position)
    if plan.kind == Target.IS_NEXT:
        return "0"
    return MEAN     # a mean-pooled sentence vector reads from every token


def token_titles(plan: TargetPlan) -> dict[str, str]:
    """Each token option's label (English, or a token as the tokenizer gives it)."""
    tokens = plan.parts[0].tokens
    titles = {MEAN: MEAN_TITLE}
    if len(plan.parts) == 2:
        return titles | {"0": CLS_EACH}
    return titles | {str(i): f"{i} {t}" for i, t in enumerate(tokens)}


def pick_token(plan: TargetPlan) -> str:
    options = token_options(plan)
    titles = token_titles(plan)
    seed_from_link(TOKEN_KEY, options, titles,
                   N_("There is no token {asked} to pick in this input: showing the default."))
    if st.session_state.get(TOKEN_KEY) not in (None, *options):
        del st.session_state[TOKEN_KEY]     # the input or the quantity changed under it
    value = st.selectbox(_("Output token"), options, index=options.index(default_token(plan)),
                         key=TOKEN_KEY, bind="query-params",
                         format_func=lambda o: _(titles[o]))
    return str(value if value in options else default_token(plan))


def draw_layer_tables(ctx: Context, tables: Drawn) -> None:
    """The encoder layer slider over every layer's table (index k - 1 for layer k, with its
    heading, drawn when sent), switched in the browser (components.picture_switcher). In a
    fragment of its own, holding nothing else: a move reports the layer (nothing else here is
    redrawn), so the server's copy of the address has it when a button of the section reruns it
    later."""
    layers = list(range(1, ctx.layers + 1))
    picture_slider(layer_axis(LAYER_KEY, layers, _("Encoder layer")), tables)


def pick_methods() -> tuple[Method, ...]:
    """The methods shown; the link carries each by its label (what the widget writes)."""
    chosen = st.multiselect(_("Methods"), list(Method), default=list(Method), key=METHODS_KEY,
                            bind="query-params", format_func=method_label)
    return tuple(m for m in Method if m in (chosen or []))


# --- asked-for results -------------------------------------------------------------------------

def _asked_set() -> set:
    return st.session_state.setdefault(ASKED_STATE, set())


def asked_flow(ctx: Context) -> tuple[np.ndarray, ...] | None:
    """The flow this session asked for on this input and token, else None (never computed
    here unless it was asked for)."""
    if cache.flow_request(ctx.key, ctx.target, ctx.token_index) not in _asked_set():
        return None
    try:
        return cache.get_flow(ctx.key, ctx.target, ctx.token_index)
    except ExplorerError as exc:
        show_error(exc)
        return None


def steps_asked() -> int:
    return whole_number(st, _("Integration steps"), min_value=1, max_value=MAX_STEPS, value=50,
                        key=STEPS_KEY,
                        help=_("More steps follow the path more closely: the gap below "
                               "shrinks."))


def asked_gradients(ctx: Context, steps: int) -> IntegratedGradients | None:
    if cache.gradient_request(ctx.key, ctx.target, steps) not in _asked_set():
        return None
    return _gradients(ctx, steps)


def _gradients(ctx: Context, steps: int) -> IntegratedGradients | None:
    bar = st.empty()

    def progress(done: int, total: int) -> None:
        bar.progress(done / total, text=_("Integrated gradients: {done} of {total} points of "
                                          "the path").format(done=done, total=total))

    try:
        result = cache.get_gradients(ctx.key, ctx.target, steps, progress)
    except ExplorerError as exc:
        show_error(exc)
        return None
    finally:
        bar.empty()
    _asked_set().add(cache.gradient_request(ctx.key, ctx.target, steps))
    return result


# --- importance ---------------------------------------------------------------------------------

def flow_rows(ctx: Context, flow: tuple[np.ndarray, ...]) -> np.ndarray:
    """(L, N): the output token's row of each part's (L, T, T) flow, parts joined."""
    return np.concatenate([token_importance(m, ctx.token_index) for m in flow], axis=1)


def importances(ctx: Context, attention: dict[Method, np.ndarray],
                flow: tuple[np.ndarray, ...] | None) -> dict[Method, np.ndarray]:
    """Each shown method with layers: (L, N) over every part's tokens (``attention``: the
    three attention methods' rows, cache.get_importance)."""
    out = dict(attention)
    if flow is not None:
        out[Method.FLOW] = flow_rows(ctx, flow)
    return {m: v for m, v in out.items() if m in ctx.methods}


def gradient_values(ig: IntegratedGradients) -> np.ndarray:
    return np.concatenate(ig.attributions)


def draw_flow_button(ctx: Context) -> None:
    limit = flow_token_limit(ctx.layers, all_tokens=ctx.token_index is None)
    explain(_("Attention flow runs for inputs of up to {limit} tokens with {model} ({layers} "
              "layers, {which}): it solves one maximum-flow problem per token and layer on a "
              "graph of layers × tokens² edges, so its cost grows with the fourth power of the "
              "length.").format(
        limit=limit, model=markdown_text(ctx.bundle.label), layers=ctx.layers,
        which=_("the mean over every token") if ctx.token_index is None
        else _("one output token")))
    if st.button(_("Compute attention flow"), icon=":material/water:"):
        try:
            with st.spinner(_("Solving the maximum-flow problems…")):
                cache.get_flow(ctx.key, ctx.target, ctx.token_index)
        except ExplorerError as exc:
            show_error(exc)
            return
        _asked_set().add(cache.flow_request(ctx.key, ctx.target, ctx.token_index))


def draw_gradient_button(ctx: Context) -> int:
    steps = steps_asked()
    if st.button(_("Compute integrated gradients"), icon=":material/functions:"):
        _gradients(ctx, steps)
    return steps


def by_word(ctx: Context, values: np.ndarray) -> np.ndarray:
    """(..., N) over every part's tokens -> (..., words): a word's importance is the sum over
    its pieces, part by part."""
    words = cache.get_plan_words(ctx.key, ctx.target)
    cuts = np.cumsum([len(part.input_ids) for part in ctx.plan.parts])[:-1]
    return np.concatenate([sum_by_word(v, w) for v, w in
                           zip(np.split(values, cuts, axis=-1), words, strict=True)], axis=-1)


def rows_of(ctx: Context, words: bool) -> fg.Rows:
    """The table's rows: every token, or every word at its first token's position."""
    if not words:
        return fg.Rows(ctx.plan.tokens, ctx.segments, ctx.special,
                       list(range(len(ctx.plan.tokens))))
    start, labels, segments, special, positions = 0, [], [], [], []
    for p, (part, part_words) in enumerate(zip(ctx.plan.parts,
                                               cache.get_plan_words(ctx.key, ctx.target),
                                               strict=True)):
        for w in part_words:
            labels.append(w.text)
            segments.append(p if len(ctx.plan.parts) == 2 else w.segment)
            special.append(w.special)
            positions.append(start + w.start)
        start += len(part.input_ids)
    return fg.Rows(labels, segments, special, positions)


def layer_heading(ctx: Context, layer: int) -> str:
    """The heading over a layer's table (the token as typed: shown as text)."""
    return _("What {token} draws on at layer {layer} · {model}").format(
        token=_("the mean over all tokens") if ctx.token_index is None
        else ctx.plan.tokens[ctx.token_index], layer=layer, model=ctx.bundle.label)


def draw_importance(ctx: Context) -> None:
    """The buttons for flow and gradients, then every layer's table of bars, switched by the
    layer slider in the browser (its own fragment: draw_layer_tables)."""
    words = by_word_toggle(WORDS_KEY)
    left, right = st.columns(2)
    with left:
        draw_flow_button(ctx)
    with right:
        steps = draw_gradient_button(ctx)
    flow = asked_flow(ctx) if Method.FLOW in ctx.methods else None
    ig = asked_gradients(ctx, steps) if Method.GRADIENTS in ctx.methods else None
    layered = importances(ctx, cache.get_importance(ctx.key, ctx.target, ctx.token_index), flow)
    if not layered and ig is None:
        st.info(_("Pick at least one method above."))
        return
    rows = rows_of(ctx, words)

    def table(layer: int) -> str:
        columns = [fg.Column(ctx.title(m), values[layer - 1]) for m, values in layered.items()]
        if ig is not None:
            columns.append(fg.Column(ctx.title(Method.GRADIENTS), gradient_values(ig),
                                     signed=True))
        if words:
            columns = [fg.Column(c.title, by_word(ctx, c.values), c.signed) for c in columns]
        return with_words(layer_heading(ctx, layer), fg.importance_html(
            rows, columns, "#", _("word") if words else _("token"), "importance",
            figure=f"att_importance_layer{layer}"))

    # Drawn here, outside the slider's fragment: a move's report reruns that fragment with it,
    # and the tables it drew are kept.
    run_part(draw_layer_tables, ctx, Drawn(lambda i: table(i + 1)))
    if words:
        explain(_("By word: each word's importance is the sum of its pieces' (a Chinese word's "
                  "characters, or the pieces of a split word), so a column still adds up to "
                  "the same total; # is the word's first token."))
    explain(_("Each column's bars are scaled to its own largest value, so read a column's shape "
              "over the tokens, not its units. Raw attention and rollout are shares of "
              "attention (each sums to 1); norm-weighted attention is the share of "
              "‖α·f(x)‖, the size of what is actually moved; integrated gradients are in the "
              "units of the quantity explained, red where a token pulls it down."))
    if len(ctx.plan.parts) == 2:
        explain(_("The model's similarity figure runs sentence A and sentence B separately, so "
                  "each has its own [CLS] and [SEP]; A's tokens come first, B's below (orange)."))
    if Method.FLOW in ctx.methods and flow is None:
        explain(_("Flow is not computed yet: use the button above."))
    if Method.GRADIENTS in ctx.methods and ig is None:
        explain(_("Integrated gradients are not computed yet: use the button above."))
    if ig is not None:
        draw_completeness(ctx, ig)


def draw_completeness(ctx: Context, ig: IntegratedGradients) -> None:
    explain(_("Integrated gradients of {target}: {value} for this input, {baseline} for the "
              "baseline (every word token's embedding replaced by {pad}'s; [CLS], [SEP] and a "
              "predicted [MASK] kept, so they get 0). The attributions sum to {total}; the "
              "difference should be {span}: a gap of {gap} at {steps} steps.").format(
        target=target_label(ctx.target), value=f"{ig.target:.4f}",
        baseline=f"{ig.baseline_target:.4f}", pad=BASELINE, total=f"{ig.total:.4f}",
        span=f"{ig.target - ig.baseline_target:.4f}",
        gap=f"{ig.relative_gap:.2%}" if np.isfinite(ig.relative_gap) else "–", steps=ig.steps))
    if ctx.target == Target.PAIR_COSINE and abs(ig.baseline_target - 1.0) < 1e-6:
        explain(_("The baseline's cosine of 1.0000 is right: with every word replaced by [PAD], "
                  "two sentences of the same length are the same input. So each attribution "
                  "says how far a word moves the cosine down from there: most negative for the "
                  "words that make the two sentences differ."))
    if ctx.target == Target.SENTENCE_COSINE:
        explain(_("The value 1.0000 for the input is right: it is the sentence vector's cosine "
                  "with itself."))


# --- blank-out -----------------------------------------------------------------------------------

PUBLISHED = N_(
    "For comparison, Abnar & Zuidema (2020) measured this on their own models, not on this one: "
    "on a 6-layer model trained for subject-verb agreement, raw attention's correlation with "
    "blank-out was .69 at layer 1, −.11 at layer 3 and .29 at layer 6; rollout rose from .32 to "
    ".71 by layer 6; flow stayed near .70. On a DistilBERT fine-tuned for sentiment (SST-2), "
    "all three were only .08 to .14: attention-based importance can be weak on a pretrained "
    "encoder, which is why this page measures it rather than assuming it."
)


def draw_blank_out(ctx: Context) -> None:
    explain(_("Each word token is left out in turn (the input one token shorter; [CLS], [SEP] "
              "and a predicted [MASK] stay) and the quantity is computed again. The change, "
              "the whole input's value minus the value without the token, is what that token "
              "was worth. Leaving out rather than writing [MASK] works for every model here: "
              "the embedding model was never trained on [MASK]. Each method's importance is "
              "then ranked against that change (Spearman's ρ, from −1 to 1; 1 means the same "
              "order)."))
    try:
        result = cache.get_blank(ctx.key, ctx.target)
    except ExplorerError as exc:
        show_error(exc)
        explain(_(PUBLISHED))
        return
    steps = int(st.session_state.get(STEPS_KEY) or 50)
    flow = asked_flow(ctx) if Method.FLOW in ctx.methods else None
    ig = asked_gradients(ctx, steps) if Method.GRADIENTS in ctx.methods else None
    layered = importances(ctx, cache.get_importance(ctx.key, ctx.target, ctx.token_index), flow)
    table = agreement(layered, result.change)
    titles = {m: ctx.title(m) for m in Method}
    st.subheader(_("Agreement with blank-out, layer by layer · {model}").format(
        model=markdown_text(ctx.bundle.label)))
    if layered:
        draw_table(fg.agreement_frame(table, titles, _("layer"), _(LAYER_LABEL)),
                   [""] * ctx.layers, "agreement")
    if ig is not None:
        table |= agreement({Method.GRADIENTS: gradient_values(ig)}, result.change)
        explain(_("Integrated gradients (one value, it has no layers): ρ = {rho}.").format(
            rho=fg.rho_text(table[Method.GRADIENTS][0])))
    draw_verdict(ctx, table)
    if Method.FLOW not in table or Method.GRADIENTS not in table:
        explain(_("Flow and integrated gradients join the table once computed (buttons in the "
                  "first tab)."))
    explain(_(PUBLISHED))
    st.subheader(_("The change itself · {model}").format(model=markdown_text(ctx.bundle.label)))
    columns = [fg.Column(_(CHANGE_TITLE), result.change, signed=True)]
    st.html(fg.importance_html(rows_of(ctx, False), columns, "#", _("token"), "blank_out",
                               digits=4))


def draw_verdict(ctx: Context, table: dict[Method, np.ndarray]) -> None:
    """One sentence, computed: which method agrees best with blank-out on this input."""
    best = best_agreement(table)
    if best is None:
        st.info(_("This input has too few word tokens to rank (at least 3 are needed)."))
        return
    where = (_("at layer {n}").format(n=best.layer) if best.layer is not None
             else _("(no layers)"))
    text = _("On this input, {method} {where} agrees best with blank-out: ρ = {rho}.").format(
        method=ctx.title(Method(best.method)), where=where, rho=fg.rho_text(best.rho))
    if best.rho < 0.3:
        text += " " + _("Even that is a weak agreement: none of these methods ranks the tokens "
                        "as leaving them out does.")
    st.markdown(f"**{text}**")


SECTIONS = (
    Section(label=N_("Token importance"), draw=draw_importance),
    Section(label=N_("Blank-out test"), draw=draw_blank_out),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    encoding_of(key)    # the tokenizer's notices (truncation, the character cap)
    left, right = st.columns(2)
    with left:
        target = pick_target(key)
    with stop_on_input_error():
        plan = cache.get_plan(key, target)
    with right:
        token = pick_token(plan)
    methods = pick_methods()
    draw_sections(SECTIONS, SECTION_KEY, Context(key, bundle, target, plan, token, methods))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
