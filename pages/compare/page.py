"""Compare: two models side by side: how alike their layers are, the same pair and the same
corpus on both, and what pretraining bought (a model against its own random weights).

Four sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from components.analysis_view import (
    encoding_or_none,
    model_of,
    show_error,
    stop_on_input_error,
)
from components.builtin_corpus import show_builtin_corpus
from components.downloads import download_matrix
from components.explain import explain, page_header
from components.heatmap import png_config, show_figure
from components.html_table import draw_table
from components.i18n import N_, _, ngettext
from components.inputs import shared_inputs
from components.job_progress import show_job
from components.labels import markdown_template, markdown_text
from components.neighbours_table import neighbours_html
from components.pair_figure import contribution_figure
from components.pickers import layer_picker
from components.sections import Section, draw_sections
from components.two_models import (
    CHINESE,
    ENGLISH,
    YOURS,
    get_default_corpus,
    map_job,
    pick_model_b,
    second_model,
)
from core import ExplorerError
from core.compare import LayerSimilarity, RowUnit, trained_name
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.similarity.pair_examples import SCORED, example_text
from core.similarity.pair_lists import line_ranges, results_csv
from pages.compare import cache
from pages.compare import figures as figs
from pages.compare.records import Context

TITLE = N_("Compare")
EXPLANATION = N_(
    "Two models side by side on the same input: model A is the one in the sidebar, model B is "
    "picked here (by default A itself with random weights, the network before any training). "
    "The layer map shows how alike every layer of A is to every layer of B; the other tabs put "
    "the same sentence pair and the same words through both."
)

# URL keys (shared links must keep working: names and values stay as they are).
SECTION_KEY, MODEL_KEY, RANDOM_KEY = "cmp_section", "cmp_model", "cmp_random"
CORPUS_KEY, MINE_KEY = "cmp_corpus", "cmp_mine"
TOKEN_KEY, LAYER_A_KEY, LAYER_B_KEY = "cmp_token", "cmp_layer_a", "cmp_layer_b"
PAIRS_KEY = "cmp_pairs"   # not in the link: a list is too long for one
BUILT_IN_WORDS = {r.word for r in NEIGHBOUR_CORPUS if r.word}
FLAT = 0.05        # a map row this close to constant is said to be flat
SAME_WAY = 0.9     # a random copy's pair cosine above this is said to point the same way


# --- model B ------------------------------------------------------------------------------------

def context_of(key) -> Context:
    name_b, label_b = pick_model_b(key.model, MODEL_KEY, RANDOM_KEY)
    bundle_a = model_of(key)
    with st.spinner(_("Building {model}…").format(model=label_b)):
        bundle_b = bundle_a if name_b == key.model else second_model(name_b)
    return Context(key, bundle_a, bundle_b, name_b, bundle_a.label, label_b,
                   same=name_b == key.model)


# --- layer map ----------------------------------------------------------------------------------

def map_result(ctx: Context, corpus: str, extra: tuple[str, ...]) -> LayerSimilarity | None:
    """The map when it is ready; else its progress (or its refusal) drawn, and None."""
    result = show_job(map_job(ctx.key.model, ctx.name_b, corpus, extra),
                      _("Sentences through the two models: {amount} ({seconds} s)"),
                      _("The comparison stopped with an error. Reload the page to try again."),
                      explanation=_("Both models read every sentence once, in the background; "
                                    "the rest of the app keeps working meanwhile."))
    if result is None:
        return None
    if isinstance(result, ExplorerError):   # the input refused: rows that cannot be matched
        show_error(result)
        return None
    return result


def draw_layer_map(ctx: Context) -> None:
    explain(_("Linear CKA (Kornblith et al. 2019) of every layer of A against every layer of "
              "B, over the same tokens: 1 when two layers hold the same picture up to a "
              "rotation and a scale, near 0 when they have nothing in common. Read a row: "
              "which layer of B is most like this layer of A."))
    row = st.container(horizontal=True, vertical_alignment="bottom")
    corpus = row.segmented_control(
        _("Sentences"), [ENGLISH, CHINESE, YOURS], key=CORPUS_KEY,
        bind="query-params", default=get_default_corpus(ctx.key.model), required=True,
        help=_("The built-in corpus in English or in Chinese (the Contexts page's sentences), "
               "or only the sentences A and B of the sidebar.")) \
        or get_default_corpus(ctx.key.model)
    mine = corpus == YOURS or row.toggle(
        _("Add sentences A and B"), key=MINE_KEY, bind="query-params",
        help=_("Adds the sidebar's sentences to the built-in corpus."))
    extra = tuple(t for t in (ctx.key.text_a, ctx.key.text_b or "") if t.strip()) if mine \
        else ()
    if ctx.same:
        st.info(_("Model B is model A itself, trained weights and all: the map is A against "
                  "itself, so its diagonal is exactly 1 and it is symmetric. Switch on random "
                  "weights or pick another model B to compare two models."),
                icon=":material/info:")
    result = map_result(ctx, corpus, extra)
    if result is None:
        return
    show_figure(figs.map_figure(result, ctx.label_a, ctx.label_b), _("layer map"),
                key="cmp_map")
    explain(_("Checks, on the same rows as the map:"))
    if result.checks is not None:   # the page's map is always made with its checks
        checks = figs.checks_frame(result.checks)
        draw_table(checks, [""] * len(checks), "cmp_checks", wrap=True)
    explain(map_note(ctx, result))
    if trained_name(ctx.name_b) is not None:
        explain(random_note(ctx, result))
    if result.rows < 2 * max(ctx.bundle_a.config.hidden_size, ctx.bundle_b.config.hidden_size):
        st.warning(_("Only {rows} rows for vectors of {dims} numbers: with fewer rows than about "
                     "twice the numbers per vector, CKA reads high even between unrelated "
                     "layers. Use a built-in corpus for a map to trust.").format(
            rows=result.rows, dims=max(ctx.bundle_a.config.hidden_size,
                                       ctx.bundle_b.config.hidden_size)),
                   icon=":material/warning:")
    download_matrix("cka " + ctx.label_a + " vs " + ctx.label_b, result.cka,
                    row_labels=[f"A{k}" for k in range(result.cka.shape[0])], key="cmp_cka")


def random_note(ctx: Context, result: LayerSimilarity) -> str:
    """Against the random-weights copy: which layer of A is most and least like it, and why
    the rows are flat when they are (a number that looks wrong but is right)."""
    mean = np.nanmean(result.cka, axis=1)
    best, worst = int(np.nanargmax(mean)), int(np.nanargmin(mean))
    text = _("{model}'s layer {best} is the most like the random copy ({high} on average), "
             "layer {worst} the least ({low}).").format(
        model=ctx.label_a, best=best, high=f"{mean[best]:.2f}", worst=worst,
        low=f"{mean[worst]:.2f}")
    spread = float(np.nanmax(np.nanmax(result.cka, axis=1) - np.nanmin(result.cka, axis=1)))
    if spread < FLAT:
        text += " " + _("Each row is nearly flat: the random copy's layers are nearly alike, as "
                        "a layer with random weights adds little to what its residual "
                        "connection carries through.")
    return text


def map_note(ctx: Context, result: LayerSimilarity) -> str:
    """What the map was computed on, in one sentence."""
    if result.unit == RowUnit.WORD:
        rows = ngettext(
            "The two tokenizers split the sentence into different pieces ({n} of {texts}), so "
            "each row is a word (the mean of its pieces): {rows} words.",
            "The two tokenizers split {n} of the {texts} sentences into different pieces, so "
            "each row is a word (the mean of its pieces): {rows} words.",
            result.texts).format(
            n=result.split_differently, texts=result.texts, rows=f"{result.rows:,}")
    else:
        rows = ngettext(
            "Both tokenizers split the sentence the same way: {rows} tokens of {texts} sentence, "
            "[CLS] and [SEP] left out.",
            "Both tokenizers split every sentence the same way: {rows} tokens of {texts} "
            "sentences, [CLS] and [SEP] left out.",
            result.texts).format(rows=f"{result.rows:,}",
                                                                 texts=result.texts)
    return rows + " " + _("Computed in {seconds} s.").format(seconds=f"{result.seconds:.1f}")


# --- one pair -----------------------------------------------------------------------------------

def draw_one_pair(ctx: Context) -> None:
    explain(_("Sentences A and B of the sidebar, compared by each model as it compares "
              "sentences (its own recipe: which vector stands for a sentence), at every layer. "
              "Two models can agree at the last layer and take different roads there."))
    if not (ctx.key.text_b or "").strip():
        st.info(_("Type sentence B in the sidebar to compare a pair."), icon=":material/edit:")
        return
    with stop_on_input_error():
        pair = cache.get_pair(ctx.key, ctx.name_b)
    show_figure(figs.curves_figure(pair.curve_a, pair.curve_b, ctx.label_a, ctx.label_b),
                _("one pair on two models"), key="cmp_curves")
    draw_table(figs.pair_table(pair.curve_a, pair.curve_b, pair.recipe_a, pair.recipe_b,
                               ctx.label_a, ctx.label_b), ["", ""], "cmp_pair", wrap=True)
    if trained_name(ctx.name_b) is not None and pair.curve_b[-1] > SAME_WAY:
        explain(_("The random copy's sentence vectors all point almost the same way (a cosine "
                  "of {cosine} for this pair at its last layer, whatever the sentences say): "
                  "telling sentences apart is what pretraining taught.").format(
            cosine=f"{pair.curve_b[-1]:.2f}"))
    if pair.split_a is None or pair.split_b is None:
        explain(_("The token-pair split is shown when both models make a sentence's vector as "
                  "the mean of its tokens: only then does the cosine split exactly into one "
                  "term per token pair."))
        return
    explain(_("Each last layer's cosine split into one term per token pair (a row of A's "
              "tokens, a column of B's): where the two models find the likeness."))
    left, right = st.columns(2)
    for column, split, label, key in ((left, pair.split_a, ctx.label_a, "cmp_split_a"),
                                      (right, pair.split_b, ctx.label_b, "cmp_split_b")):
        with column:
            st.markdown("**" + markdown_text(label) + "**")
            figure = contribution_figure(split)
            # The label above names the model; the Pairs page's title would name B by its
            # cache name and not fit half a projector page.
            figure.update_layout(title=None, margin={"t": 10})
            st.plotly_chart(figure, width="stretch", config=png_config(label), key=key)


# --- many pairs ---------------------------------------------------------------------------------

def _load_examples() -> None:
    st.session_state[PAIRS_KEY] = example_text()


def draw_many_pairs(ctx: Context) -> None:
    explain(_("A list of sentence pairs scored by both models, each by its own recipe. With "
              "people's scores beside the pairs, each model's agreement with them, and whether "
              "the difference between the models is more than the luck of which pairs were "
              "picked."))
    st.button(_("Load the example set ({n} pairs)").format(n=len(SCORED)), key="cmp_examples",
              on_click=_load_examples, icon=":material/playlist_add:")
    text = st.text_area(
        _("Pairs, one a line: sentence A, sentence B and an optional score, separated by a tab "
          "or a comma"), key=PAIRS_KEY, height=150,
        placeholder="A man is playing the guitar.\tSomeone is strumming a guitar.\t4.6")
    explain(_("Read as the Pairs page reads a list: a header line, quotation marks and extra "
              "columns are understood, each sentence reaches the models as written."))
    if not (text or "").strip():
        st.info(_("Paste pairs above, or load the example set."), icon=":material/edit:")
        return
    parsed = cache.get_pair_list(ctx.key.model, text)
    if not parsed.pairs:
        st.warning(_("No pair could be read: give one pair a line, sentence A and sentence B "
                     "separated by a tab or a comma, and an optional score."),
                   icon=":material/edit_note:")
        return
    skipped = [item.line for item in parsed.skipped]
    lines, more = line_ranges(skipped)
    explain(_("Pairs read: {pairs}, {scored} with a score; lines skipped: {skipped}{where}.")
            .format(pairs=f"{len(parsed.pairs):,}", scored=f"{parsed.scored:,}",
                    skipped=len(skipped), where=f" ({lines})" if skipped else ""))
    both = show_job(cache.pairs_job(ctx.key.model, ctx.name_b, parsed),
                    _("Sentences through the two models: {amount} ({seconds} s)"),
                    _("The comparison stopped with an error. Reload the page to try again."))
    if both is None:
        return
    comparison = both.comparison
    if comparison is None:
        explain(_("Without scores (at least three, not all the same), the models are compared "
                  "with each other only."))
    else:
        draw_table(figs.agreement_table(comparison, ctx.label_a, ctx.label_b), ["", ""],
                   "cmp_agreement", wrap=True)
        st.markdown(figs.verdict(comparison))
    st.markdown("**" + _("The pairs the two models rank furthest apart") + "**")
    frame = figs.pairs_frame(parsed, both)
    shown = figs.shown_pairs(frame.iloc[list(both.disagree)])
    draw_table(shown, [""] * len(shown), "cmp_disagree", wrap=True,
               formats={_("score"): ".2f", _("cosine on A"): ".3f", _("cosine on B"): ".3f"})
    st.download_button("CSV", data=lambda: results_csv(frame), file_name="pairs-two-models.csv",
                       mime="text/csv", key="cmp_pairs_csv", icon=":material/download:",
                       on_click="ignore")


# --- neighbours in both -------------------------------------------------------------------------

def draw_neighbours(ctx: Context) -> None:
    explain(_("A token of sentence A and its nearest tokens in the built-in corpus (the "
              "Contexts page's sentences), under each model at a layer of each. How many "
              "neighbours the two lists share says how alike the models see that word there."))
    with stop_on_input_error():
        query_a, query_b, enc_a, enc_b = cache.get_queries(ctx.key, ctx.name_b)
    positions = [p for p, special in enumerate(query_a.special) if not special]
    if not positions:
        st.info(_("Sentence A has no token besides [CLS] and [SEP]."), icon=":material/edit:")
        return
    labelled = [p for p in positions if query_a.tokens[p] in BUILT_IN_WORDS]
    position = st.selectbox(
        _("Token of sentence A"), positions, key=TOKEN_KEY, bind="query-params",
        index=positions.index(labelled[0]) if labelled else 0,
        format_func=lambda p: f"{p} {query_a.tokens[p]}",
        help=_("A word of the built-in corpus's ambiguous words (bank, bat, spring, ...) is "
               "picked first when sentence A has one."))
    if position not in positions:
        position = positions[0]
    position_b = figs.same_characters(enc_a, enc_b, position)
    left, right = st.columns(2)
    layers_a = int(ctx.bundle_a.config.num_hidden_layers)
    layers_b = int(ctx.bundle_b.config.num_hidden_layers)
    layer_a = layer_picker(LAYER_A_KEY, range(layers_a + 1), _("Layer of A"), where=left)
    layer_b = layer_picker(LAYER_B_KEY, range(layers_b + 1), _("Layer of B"), where=right)
    corpus_a = show_builtin_corpus(ctx.key.model, ctx.label_a)
    corpus_b = show_builtin_corpus(ctx.name_b, ctx.label_b)
    if corpus_a is None or corpus_b is None or position_b is None:
        if position_b is None:
            st.info(_("Model B has no token at the characters of this token."),
                    icon=":material/info:")
        return
    found_a = cache.neighbours(ctx.key.model, corpus_a, query_a, position, layer_a)
    found_b = cache.neighbours(ctx.name_b, corpus_b, query_b, position_b, layer_b)
    shared = len({(n.record, n.start) for n in found_a} & {(n.record, n.start) for n in found_b})
    st.markdown(markdown_template(
        _("{shared} of their {k} nearest tokens are the same token of the same sentence."),
        shared=shared, k=len(found_a)))
    # One list under the other, each the page's width: side by side, a column of 1024 px
    # page (257 px) is narrower than a table of rank, cosine, token, sense and sentence.
    for found, label, token in ((found_a, ctx.label_a, query_a.tokens[position]),
                                (found_b, ctx.label_b, query_b.tokens[position_b])):
        st.markdown(markdown_template(_("{model}, token {token}"), model=label, token=token))
        st.html(neighbours_html(found, {}, f"cmp_{label}"))


SECTIONS = (
    Section(label=N_("Layer map"), draw=draw_layer_map),
    Section(label=N_("One pair, two models"), draw=draw_one_pair),
    Section(label=N_("Many pairs, two models"), draw=draw_many_pairs),
    Section(label=N_("Neighbours in both"), draw=draw_neighbours),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    # The sidebar's text, with the notices every page gives (empty text, B without A, what was
    # cut); the layer map and the pair list need none of it, so a refused text stops no tab.
    encoding_or_none(key)
    draw_sections(SECTIONS, SECTION_KEY, context_of(key))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
