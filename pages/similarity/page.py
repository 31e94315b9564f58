"""Similarity: cosines between tokens and between sentences, stage by stage, and how to read them.

Four sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from components.analysis_view import analysis_of, model_of
from components.coverage_panel import draw_coverage
from components.downloads import download_matrix, download_table, from_cache
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import exact_toggle, heatmap_html
from components.i18n import N_, _, every_language
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import markdown_template, plotly_text, token_labels
from components.pickers import stage_axis
from components.picture_switcher import Axis, axis_slider, with_words
from components.sections import Section, draw_sections, run_part
from components.unk_note import draw_unk_note
from components.value_picture import value_picture
from core import Analysis, InputError, ModelBundle
from core.similarity.anisotropy import (
    MODES,
    CorpusStats,
    anisotropy_table,
    rogue_dimensions,
    unrelated_level,
)
from core.similarity.choices import (
    control_sentence,
    default_tokens,
    depth_stages,
    is_pair,
    real_positions,
    segment_positions,
    similarity_stages,
    token_options,
)
from core.similarity.cosines import DOMINANCE_LIMIT, Dominance
from pages.similarity import cache
from pages.similarity.figures import (
    anisotropy_figure,
    corpus_table,
    curve_table,
    dimensions_figure,
    dimensions_title,
    ethayarajh_table,
    matrix_figure,
    matrix_image,
    sentence_figure,
    token_curve_figure,
    token_name,
)
from pages.similarity.records import Context, Settings, WordChoice

TITLE = N_("Similarity")
EXPLANATION = N_(
    "Cosine similarity measures whether two vectors point the same way (1), are unrelated (0) "
    "or opposite (−1). Here it compares tokens with tokens and sentence A with sentence B at "
    "every stage, so you can watch one word's single static vector become different vectors in "
    "different sentences, and see why a raw cosine needs a baseline before it means anything."
)
# URL keys (values of a shared link; unchanged from the first version of the page).
SECTION_KEY, STAGE_KEY, MODE_KEY = "sim_section", "sim_stage", "sim_mode"
FIRST_KEY, SECOND_KEY, CONTEXT_KEY, FROM_KEY = "sim_i", "sim_j", "sim_context", "sim_from"
CONTROL_KEY = "sim_control"
EXACT_KEY = "sim_exact"
STAGE_HELP = N_("word_embeddings, position_embeddings and sum are the lookups and their sum; "
                "LayerNorm is the embeddings' output; layer_k is the output of encoder layer k.")
MATRIX_WINDOW = 160   # tokens per side drawn at once (the download has them all)
CONTEXTS = (N_("separately"), N_("as one pair"))
MODE_LABELS = (N_("raw"), N_("adjusted"), N_("standardised"))   # core's MODES, as shown
MODE_CAPTIONS = (N_("as the model gives it"), N_("(raw − b) / (1 − b)"),
                 N_("each dimension z-scored"))
MODE_HELP = N_(
    "raw: the cosine as the model gives it. adjusted: (raw − b) / (1 − b), b = mean cosine of "
    "two unrelated corpus tokens at this stage, so 0 reads “as alike as unrelated tokens” and 1 "
    "stays 1. standardised: every dimension z-scored with the corpus mean and std first "
    "(Timkey & van Schijndel 2021)."
)
DOMINATED = N_(
    "One dimension makes this number: dim {dim} carries {share} of the dot product "
    "({first} and {second} of the two vectors' squared lengths), so the cosine mostly says that "
    "both vectors are large in that one dimension. Read it standardised (each dimension minus "
    "the corpus mean, divided by the corpus std): {standardised}."
)


def stage_and_mode(result: Analysis, stats: CorpusStats) -> Settings:
    """The stage and the mode, above the tabs: one value and one place for every section. The
    Tokens tab draws its own stage slider with its matrix (draw_stage_matrix), under the same
    key: the stage read here is then the link's."""
    axis = stage_slider(similarity_stages(result.stages))
    left, right = st.columns([1, 2])
    tokens = tokens_open()
    if tokens:
        stage = axis.in_link()[0] or axis.start()
    else:
        stage = axis_slider(axis, where=left)
    mode = right.radio(_("Read cosines as"), MODES, key=MODE_KEY, bind="query-params",
                       horizontal=True, help=_(MODE_HELP), format_func=_,
                       captions=[_(c) for c in MODE_CAPTIONS])
    if not tokens:
        explain(baseline_text(stats, stage))
    return Settings(stage, mode)


def stage_slider(stages: list[str]) -> Axis[str]:
    """The stage slider's values (a slider, as Stages' stage: the stages are in order, and the
    arrow keys step), the last layer first."""
    return stage_axis(STAGE_KEY, stages, _("Stage or layer"), default=stages[-1],
                      help=_(STAGE_HELP))


def baseline_text(stats: CorpusStats, stage: str) -> str:
    return _("At {stage}, two unrelated tokens of the built-in corpus have a mean raw cosine of "
             "**{b}**: that, not 0, is what “unrelated” looks like here.").format(
        stage=stage, b=f"{stats.stage(stage).baseline:.3f}")


def tokens_open() -> bool:
    """Is the Tokens tab open (the first: also for no tab or an unknown one in the link)? Then
    it draws the stage slider itself, over its matrix."""
    asked = st.session_state.get(SECTION_KEY, st.query_params.get(SECTION_KEY))
    return not (asked is not None and any(asked in every_language(s.label)
                                          for s in SECTIONS[1:]))


def unknown_flags(result: Analysis, bundle: ModelBundle) -> list[bool]:
    """Per real token: is it [UNK] (every [UNK] is one row of the word table)."""
    unk = bundle.tokenizer.unk_token_id
    return [result.encoding.input_ids[p] == unk for p in real_positions(result.encoding)]


# --- the sections, one per tab -----------------------------------------------------------------

def draw_token_matrix(ctx: Context) -> None:
    """The token x token cosine heatmap at the stage, windowed for long inputs, and its CSV."""
    enc, (stage, mode) = ctx.result.encoding, (ctx.settings.stage, ctx.settings.mode)
    has_b = is_pair(enc)
    st.subheader(_("Token × token cosine"))
    explain(_("Each cell is the cosine between the vectors of two tokens of the input at the "
              "chosen stage (the diagonal is every token with itself). At word_embeddings a "
              "repeated word is exactly 1, because it is the same row of the table; deeper "
              "layers mix in context.")
            + (" " + _("The framed block is sentence A's tokens against sentence B's.")
               if has_b else ""))
    draw_coverage(enc, ctx.bundle)
    draw_unk_note(enc, ctx.bundle, _(
        "Every cell between two [UNK] tokens starts from a cosine of 1 at word_embeddings and "
        "stays high in later layers whatever the characters meant, so those cells say little."))
    positions = real_positions(enc)
    n_tokens, lo = len(positions), 0
    if n_tokens > MATRIX_WINDOW:
        lo = st.slider(_("First token shown"), 0, n_tokens - MATRIX_WINDOW, 0, key=FROM_KEY,
                       bind="query-params",
                       help=_("The input has {n} tokens; {w} are drawn at a time.").format(
                           n=n_tokens, w=MATRIX_WINDOW))
    hi = min(n_tokens, lo + MATRIX_WINDOW)
    labels = token_labels([enc.tokens[p] for p in positions])
    n_a = len(segment_positions(enc, 0)) if has_b else None
    unknown = unknown_flags(ctx.result, ctx.bundle)
    exact = exact_toggle(EXACT_KEY)
    stage = draw_stage_matrix(ctx, labels[lo:hi], lo, hi, n_a, unknown[lo:hi], exact)
    download_matrix(_("cosine") + f"_{stage}_{mode}",
                    from_cache(cache.get_token_matrix, ctx.key, stage, mode),
                    [f"{p}:{enc.tokens[p]}" for p in positions], key="sim_matrix")
    draw_matrix_dominance(ctx, stage)


def draw_stage_matrix(ctx: Context, labels: list[str], lo: int, hi: int, n_a: int | None,
                      unknown: list[bool], exact: bool) -> str:
    """The stage slider and the stage's matrix (components.value_picture): every stage's matrix
    as a picture with its baseline line, switched in the browser, or with ``exact`` the
    interactive figure of the stage the server's slider picks; returns the stage. A move
    reruns the page's fragment, which then redraws the download, the notes and the other tabs'
    stage after the picture."""
    stages = similarity_stages(ctx.result.stages)
    mode = ctx.settings.mode

    def shown(stage: str) -> np.ndarray:
        return cache.get_token_matrix(ctx.key, stage, mode)[lo:hi, lo:hi]

    def picture(i: int) -> str:
        stage = stages[i]
        image = matrix_image(shown(stage), labels, lo, n_a, stage, mode, ctx.bundle.label,
                             unknown)
        words = baseline_text(ctx.stats, stage).replace("**", "")
        return with_words(words, heatmap_html(image, "sim_matrix_chart"))

    def figure(stage: str) -> None:
        explain(baseline_text(ctx.stats, stage))
        show_figure(matrix_figure(shown(stage), labels, lo, n_a, stage, mode, ctx.bundle.label,
                                  unknown), "sim_matrix_chart", key="sim_matrix_chart")

    return value_picture(stage_slider(stages), picture, figure, exact=exact)


def draw_matrix_dominance(ctx: Context, stage: str) -> None:
    """Beside the matrix: when one dimension holds most of many tokens' length, say so."""
    dims, shares = cache.get_token_dominance(ctx.key, stage)
    flagged = dims[shares > DOMINANCE_LIMIT]
    if not len(flagged):
        return
    values, counts = np.unique(flagged, return_counts=True)
    dim = int(values[np.argmax(counts)])
    st.info(_("At {stage}, one dimension holds more than {limit} of the squared length of {k} "
              "of the {n} tokens (mostly dim {dim}). Between two such tokens that one "
              "dimension makes most of the dot product, so their raw cosine is high whatever "
              "the words; read cosines as “standardised” to see the rest.").format(
        stage=stage, limit=f"{DOMINANCE_LIMIT:.0%}", k=len(flagged), n=len(dims),
        dim=dim), icon=":material/balance:")


def draw_sentence_comparison(ctx: Context) -> None:
    """Sentence A vs B layer by layer, the model's own figure, and its CSV; a hint without B."""
    name, text_b = ctx.bundle.label, ctx.key.text_b
    st.subheader(_("Sentence A vs sentence B"))
    if text_b is None or not is_pair(ctx.result.encoding):
        st.info(_("This view needs sentence B: type a second sentence in the sidebar (for "
                  "example “I sat on the bank of the river.” and “I deposited money at the "
                  "bank.”) to compare the two sentences' vectors layer by layer."),
                icon=":material/compare_arrows:")
        return
    explain(_(
        "A sentence vector is the mean of its token vectors (mean pooling) or its [CLS] vector. "
        "The model's own figure is what sentence-transformers reports for this model: A and B "
        "run apart (each alone), the last layer mean-pooled and L2-normalised, then the dot "
        "product. The “one pair input” line runs them together ([CLS] A [SEP] B [SEP]), where A "
        "and B attend to each other, so their segment means grow alike. The Word in context tab "
        "follows one word of A and B the same two ways."))
    draw_unk_note(ctx.result.encoding, ctx.bundle, _(
        "Both sentence vectors are then partly the same [UNK] vector, which pushes their score "
        "up whatever the sentences mean: a high score here says little."))
    comparison = cache.get_sentence_comparison(ctx.key)
    flags, cls_std = cache.get_cls_checks(ctx.key)
    draw_sentence_metrics(ctx, comparison.model_figure, comparison.cls_separate[-1])
    explain(what_the_score_shows(comparison.model_figure,
                                 ctx.stats.stage(depth_stages(ctx.result.stages)[-1])
                                 .sentence_baseline))
    draw_cls_note(comparison.stages, comparison.cls_separate, flags, cls_std,
                  ctx.settings.stage)
    draw_truncation_notes(ctx.key)
    show_figure(sentence_figure(comparison, ctx.stats, ctx.settings.stage, name, cls_std),
                _("sentence_similarity"), key="sim_sentence_chart")
    download_table(comparison.frame(), _("sentence_similarity"), "sim_sentence_csv")
    # The same pair, split into one term per token pair, on the Pairs page (the texts go along:
    # the router carries them into every page's link).
    st.page_link("pages/pairs/page.py", icon=":material/join_inner:",
                 label=_("Which token pairs make the model's figure: this pair on the Pairs page"),
                 query_params={"pr_section": "One pair"})


def what_the_score_shows(score: float, unrelated: float) -> str:
    """One sentence reading the model's figure against the unrelated level, and what such a
    score does and does not measure."""
    where = (_("{score} is above the {unrelated} of two unrelated sentences, so the model "
               "reads A and B as being about related things.") if score > unrelated
             else _("{score} is no higher than the {unrelated} of two unrelated sentences, so "
                    "the model reads A and B as unrelated."))
    return (where.format(score=f"{score:.4f}", unrelated=f"{unrelated:.4f}") + " " + _(
        "Such a score measures shared topic and wording more than agreement: a sentence and its "
        "negation share almost every word, so they often score above a paraphrase in other "
        "words (Moeller et al. 2024)."))


def draw_sentence_metrics(ctx: Context, model_figure: float, cls_last: float) -> None:
    limit = cache.get_encoder_max_length(ctx.bundle.name)
    last = depth_stages(ctx.result.stages)[-1]
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Model's figure (star)"), f"{model_figure:.4f}",
              help=_("SentenceTransformer(model).encode([A, B]) then the cosine; each sentence "
                     "cut at {n} tokens, as sentence-transformers does.").format(n=limit)
              if limit else _("SentenceTransformer(model).encode([A, B]) then the cosine."))
    m2.metric(_("Unrelated sentences"), f"{ctx.stats.stage(last).sentence_baseline:.4f}",
              help=_("Two unrelated corpus sentences, last layer, mean pooling."))
    m3.metric(_("[CLS], last layer"), f"{cls_last:.4f}",
              help=_("The [CLS] vectors of A and B, each run alone."))


def draw_cls_note(stages: list[str], cls: np.ndarray, flags: list[Dominance],
                  cls_std: np.ndarray, stage: str) -> None:
    """Why the [CLS] curve sits at 1.00: identical lookups, then one dimension."""
    layers = [k for k, s in enumerate(stages) if s.startswith("layer_") and flags[k].flagged]
    lines = [_("Before layer_1 the two [CLS] vectors are identical (the same token at the same "
               "position, run apart), so their cosine is exactly 1.")]
    if layers:
        picked = stages.index(stage) if stage in stages else -1
        k = picked if picked in layers else max(layers, key=lambda i: flags[i].share)
        f = flags[k]
        lines.append(_("From {first} to {last_stage}, one dimension carries more than {limit} "
                       "of the [CLS] dot product. At {stage} the cosine is {cos}.").format(
            first=stages[layers[0]], last_stage=stages[layers[-1]],
            limit=f"{DOMINANCE_LIMIT:.0%}", stage=stages[k], cos=f"{cls[k]:.4f}"))
        lines.append(_(DOMINATED).format(
            dim=f.dimension, share=f"{f.share:.1%}", first=f"{f.norm_share_first:.1%}",
            second=f"{f.norm_share_second:.1%}", standardised=f"{cls_std[k]:.4f}"))
    st.warning(" ".join(lines), icon=":material/balance:")


def draw_truncation_notes(key: InputKey) -> None:
    for label, text in zip(("A", "B"), key.pair(), strict=True):
        alone = cache.get_alone(key, text).encoding
        if alone.truncated:
            explain(_("Sentence {name} alone has {full} tokens; sentence-transformers reads the "
                      "first {limit}, and so do the “separately” curves.").format(
                name=label, full=f"{alone.full_length:,}", limit=f"{alone.max_length:,}"))


def follow_new_text(result: Analysis) -> None:
    """Put the word pickers on the new text's default pair when the tokens changed.

    A pick is a position in the text it was made in; when the tokens change, an old pick points
    at another word, so a new text starts from its own default pair (assigned, so the browser
    shows the new names). On a session's first run nothing is remembered, so a link's picks apply.
    """
    enc = result.encoding
    tokens_now = (tuple(enc.tokens), tuple(enc.token_type_ids))
    if st.session_state.get("sim_tokens", tokens_now) != tokens_now:
        st.session_state[FIRST_KEY], st.session_state[SECOND_KEY] = default_tokens(enc)
    st.session_state["sim_tokens"] = tokens_now


def word_controls(enc, name_of) -> WordChoice:
    """The two tokens, how A and B run, and the same-sense control sentence."""
    has_b = is_pair(enc)
    first_options, second_options = token_options(enc)
    default_first, default_second = default_tokens(enc)
    c1, c2, c3 = st.columns(3)
    first = c1.selectbox(_("Token of A") if has_b else _("First token"), first_options,
                         index=first_options.index(default_first), format_func=name_of,
                         key=FIRST_KEY, bind="query-params")
    second = c2.selectbox(_("Token of B") if has_b else _("Second token"), second_options,
                          index=second_options.index(default_second), format_func=name_of,
                          key=SECOND_KEY, bind="query-params")
    separately = False
    if has_b:
        context = c3.radio(
            _("Run A and B"), CONTEXTS, key=CONTEXT_KEY, bind="query-params", format_func=_,
            help=_("separately: each sentence alone, so neither sees the other (as "
                   "sentence-transformers does). as one pair: [CLS] A [SEP] B [SEP], so B's "
                   "tokens also attend to A's."))
        separately = context == CONTEXTS[0]
    control = st.text_input(
        _("Same-sense control sentence"), control_sentence(enc.tokens[first]), key=CONTROL_KEY,
        bind="query-params",
        help=_("A sentence using the first token's word in the same sense, run alone: its line "
               "shows what a same-sense cosine looks like beside the other-sense one."))
    return WordChoice(first, second, separately, control.strip())


def draw_word_in_context(ctx: Context) -> None:
    """Two chosen tokens' cosine at every stage, a same-sense control, and the dimensions."""
    enc = ctx.result.encoding
    st.subheader(_("Word in context"))
    follow_new_text(ctx.result)
    name_of = partial(token_name, enc.tokens)
    choice = word_controls(enc, name_of)
    explain(_("The same word starts from the same row of the vocabulary table, so at "
              "word_embeddings two copies of it have cosine 1; every later stage adds position "
              "and context, and the cosine falls as far as the two contexts differ. The dashed "
              "line is what two unrelated tokens score; the Sentences tab compares whole "
              "sentences."))
    if is_pair(enc):
        explain(_("Here A and B ran apart (each alone).") if choice.separately
                else _("Here A and B ran together, as one pair input."))
    draw_coverage(enc, ctx.bundle)
    if enc.input_ids[choice.first] == enc.input_ids[choice.second] == \
            ctx.bundle.tokenizer.unk_token_id:
        draw_unk_note(enc, ctx.bundle, _(
            "Both chosen tokens are [UNK]: they start from identical vectors, so their curve "
            "says nothing about the word."))
    args = (ctx.key, choice.first, choice.second, choice.separately)
    try:
        curve = cache.get_token_curve(*args, ctx.settings.mode)
        here, top, flag = cache.get_top_dimensions(*args, ctx.settings.stage, ctx.settings.mode)
        control = (cache.get_control_curve(ctx.key, choice.first, choice.separately,
                                           choice.control, ctx.settings.mode)
                   if choice.control else None)
    except InputError as exc:
        st.warning(markdown_template(_(exc.template), **exc.params),
                   icon=":material/content_cut:")
        return
    if choice.first == choice.second:
        st.info(_("Both choices are the same token, so its cosine with itself is 1 at every "
                  "stage."), icon=":material/info:")
    draw_word_curve(ctx, curve, control, plotly_text(
        f"{name_of(choice.first)} vs {name_of(choice.second)}"), choice)
    draw_dimensions(ctx, here, top, flag)


def draw_word_curve(ctx: Context, curve, control, label: str, choice: WordChoice) -> None:
    depth = depth_stages(ctx.result.stages)
    mode = ctx.settings.mode
    if choice.control and control is None:
        st.info(markdown_template(_("The control sentence has no token “{token}”."),
                                  token=ctx.result.encoding.tokens[choice.first]),
                icon=":material/info:")
    elif control is not None:
        explain(_("Same sense vs other sense at the last layer: {same} (control sentence) vs "
                  "{other} (the two chosen tokens).").format(
            same=f"{control[-1]:.3f}", other=f"{curve[-1]:.3f}"))
    unrelated = unrelated_level(ctx.stats, depth, mode)
    show_figure(token_curve_figure(depth, curve, unrelated, mode,
                                   label, ctx.settings.stage, ctx.bundle.label, control),
                _("word_in_context"), key="sim_words_chart")
    explain(what_the_curve_shows(float(curve[0]), float(curve[-1]), float(unrelated[-1]),
                                 depth[-1]))
    download_table(curve_table(depth, curve, mode), _("word_in_context"), "sim_words_csv")


def what_the_curve_shows(first: float, last: float, unrelated: float, last_stage: str) -> str:
    """One sentence reading the curve: where it ends against the unrelated level."""
    if first <= unrelated:
        verdict = _("they start no more alike than two unrelated tokens")
    elif last - unrelated > 0.5 * (first - unrelated):
        verdict = _("they kept more than half of their lead over the unrelated level, so the "
                    "model still reads them as much alike")
    else:
        verdict = _("they lost most of their lead over the unrelated level: their contexts "
                    "pulled them apart (what two senses of one word should do)")
    return _("What it shows: the two tokens start at {first} and end at {last} at {stage}, "
             "against {unrelated} for two unrelated tokens; {verdict}.").format(
        first=f"{first:.3f}", last=f"{last:.3f}", stage=last_stage,
        unrelated=f"{unrelated:.3f}", verdict=verdict)


def draw_dimensions(ctx: Context, here: float, top, flag: Dominance) -> None:
    stage, mode = ctx.settings.stage, ctx.settings.mode
    st.markdown("**" + _("Which dimensions make this cosine, at {stage}").format(stage=stage)
                + "**")
    explain(_("A cosine is the dot product of the two unit vectors, a sum of one product per "
              "dimension. When one or two bars dwarf the rest, a few “rogue” dimensions decide "
              "the cosine (Timkey & van Schijndel 2021); the standardised mode evens them out."))
    if flag.flagged and mode != "standardised":
        st.warning(_("Raw cosine at {stage}: dim {dim} carries {share} of the dot product. Pick "
                     "“standardised” above to read it without that dimension's weight.").format(
            stage=stage, dim=flag.dimension, share=f"{flag.share:.1%}"), icon=":material/balance:")
    title = dimensions_title(mode, here, ctx.result.stages[stage].shape[1], top, ctx.bundle.label)
    show_figure(dimensions_figure(top, title, mode), _("top_dimensions"), key="sim_dims_chart")
    download_table(top, _("top_dimensions") + f"_{stage}", "sim_dims_csv")


def draw_anisotropy(ctx: Context) -> None:
    """The corpus baseline at every stage, the dimensions behind it, and the corpus itself."""
    stats, stage = ctx.stats, ctx.settings.stage
    stages, depth = similarity_stages(ctx.result.stages), depth_stages(ctx.result.stages)
    st.subheader(_("Anisotropy baseline"))
    explain(_("The mean cosine between tokens of two different sentences of a built-in corpus "
              "({n} sentences, {t} word tokens, {p} pairs), at each stage, for this model. Where "
              "the red line sits well above 0, unrelated tokens look alike because the vectors "
              "crowd into a narrow cone (anisotropy, Ethayarajh 2019); standardising each "
              "dimension (blue) brings it back to about 0.").format(
        n=stats.n_sentences, t=stats.n_tokens, p=f"{stats.n_pairs:,}"))
    show_figure(anisotropy_figure(anisotropy_table(stats, depth), stage, ctx.bundle.label),
                _("anisotropy"), key="sim_anisotropy_chart")
    download_table(anisotropy_table(stats, stages), _("anisotropy_baseline"),
                   "sim_anisotropy_csv")
    st.markdown("**" + _("Dimensions that make most of the baseline at {stage}").format(
        stage=stage) + "**")
    st.dataframe(rogue_dimensions(stats, stage), hide_index=True, width="stretch",
                 column_config={
                     "dimension": st.column_config.NumberColumn(_("dimension")),
                     "share": st.column_config.NumberColumn(_("share"), format="percent"),
                     **{c: st.column_config.NumberColumn(_(c), format="%.4f") for c in
                        (N_("part of the baseline"), N_("corpus mean"), N_("corpus std"))},
                 })
    with st.expander(_("The corpus, and the published figures"), icon=":material/menu_book:"):
        explain(_("The sentences, written for this explorer (topics chosen to be unrelated; "
                  "bank, bat, spring, light and match each appear in two senses):"))
        st.dataframe(corpus_table(), hide_index=True, width="stretch")
        explain(_("Ethayarajh (2019) measured the same baseline for bert-base-cased, input "
                  "layer 0 to layer 12 (numbers from the paper; compare their shape with this "
                  "model's curve above)."))
        st.dataframe(ethayarajh_table(), hide_index=True)


# Tab labels are the values of ?sim_section= in a shared link.
SECTIONS = (
    Section(label=N_("Tokens"), draw=draw_token_matrix),
    Section(label=N_("Sentences"), draw=draw_sentence_comparison),
    Section(label=N_("Word in context"), draw=draw_word_in_context),
    Section(label=N_("Anisotropy"), draw=draw_anisotropy),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    result = analysis_of(key)
    stats = cache.get_corpus_stats(bundle.name)
    # The stage and the mode are read by every tab: they and the tabs are one fragment, so
    # moving them reruns the open tab with them, not the sidebar and the page's header.
    run_part(draw_settings_and_tabs, key, bundle, result, stats)


def draw_settings_and_tabs(key: InputKey, bundle: ModelBundle, result: Analysis,
                           stats: CorpusStats) -> None:
    settings = stage_and_mode(result, stats)
    draw_sections(SECTIONS, SECTION_KEY, Context(key, bundle, result, stats, settings))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
