"""Pairs, the One pair tab: which token pairs make the cosine of the sidebar's sentences A and B.

``draw_pair`` is also the Many pairs tab's view of one line of a list (pages/pairs/many_pairs.py).
"""

from __future__ import annotations

import html

import streamlit as st

from components.analysis_view import stop_on_input_error
from components.controls import by_word_toggle
from components.downloads import download_matrix
from components.explain import explain
from components.heatmap import show_figure
from components.heatmap_image import exact_toggle, heatmap_html
from components.html_row import draw_side_by_side
from components.html_table import table_html
from components.i18n import N_, _, language, ngettext
from components.input_key import InputKey
from components.labels import markdown_code, markdown_text
from components.pair_figure import contribution_figure, layer_name
from components.pickers import layer_axis
from components.sections import run_part
from components.value_picture import value_picture
from core import PairContributions
from core.attribution.targets import Target
from core.similarity.pair_examples import ONE_PAIR
from core.similarity.pairs import WordContributions
from core.similarity.recipe import Pooling, Recipe
from pages.pairs import cache
from pages.pairs.figures import (
    contribution_image,
    top_table,
    top_word_table,
    word_contribution_figure,
    word_contribution_image,
)
from pages.pairs.records import Context

# URL keys (values of a shared link).
LAYER_KEY, EXACT_KEY, WORDS_KEY = "pr_layer", "pr_exact", "pr_words"
LAYER_HELP = N_("0 is the embedding output (LayerNorm), k the output of encoder layer k. The "
                "model's own sentence vector is made from the last layer.")

EXAMPLE_LABELS = {
    "negation": N_("Negation"), "unrelated": N_("Unrelated"), "paraphrase": N_("Paraphrase"),
    "order": N_("Word order"), "bank": N_("bank, two senses"), "chinese": N_("Chinese negation"),
}
NOTICE = {
    "negation": N_("Notice: “do not” reverses the meaning, yet the cosine stays high. The largest "
                   "terms pair a word with the same word (“movie” × “movie”, “love” × “love”), "
                   "and “not” adds only small ones. Sentence encoders often miss negation "
                   "(Moeller et al. 2024)."),
    "unrelated": N_("Notice: with all-MiniLM-L6-v2 the last layer's cosine is near 0, every term "
                    "tiny, some red and some blue. Slide to an earlier layer: the same pair looks "
                    "far more alike there, because raw cosines of early layers start high for "
                    "any two sentences (the Similarity page's Anisotropy tab)."),
    "paraphrase": N_("Notice: “strumming” is split into word pieces, and its pieces still pair "
                     "with “guitar”; “man” pairs with “someone”. Deep layers compare meanings, "
                     "not spellings."),
    "order": N_("Notice: swapping who chases whom leaves the cosine near 1: a mean of token "
                "vectors keeps almost nothing of word order."),
    "bank": N_("Notice: “bank” × “bank” is among the largest terms although the senses differ, "
               "and much of the rest comes from “i”, [CLS] and the full stop, which the two "
               "sentences share."),
    "chinese": N_("Notice: the sentences differ only by 不 (not). Where the model's vocabulary "
                  "has no entry for a character it reads as [UNK] (the note below says how "
                  "many), one and the same vector at the lookup, so much of what tells the two "
                  "sentences apart is lost before the first layer."),
}
POOLING_WORDS = {
    Pooling.CLS: N_("the [CLS] token's vector"),
    Pooling.MEAN: N_("the mean of the token vectors"),
    Pooling.MAX: N_("the largest value of each dimension over the tokens"),
    Pooling.MEAN_SQRT_LEN: N_("the sum of the token vectors over the square root of their number"),
    Pooling.WEIGHTED_MEAN: N_("a mean that weighs later tokens more"),
    Pooling.LAST_TOKEN: N_("the last token's vector"),
}
NO_EXACT_SPLIT_CLS = N_(
    "{model}'s own figure is the cosine of the two [CLS] vectors ({recipe}). No exact split "
    "into token pairs exists for it: the [CLS] vector is what the last layer's attention mixed "
    "from every token, with weights that themselves depend on all the tokens, so it is not a sum "
    "of one term per token. The picture below splits the cosine of the mean token vectors "
    "instead, a different figure. To see which tokens move the model's own figure, open the "
    "Attribution page:")
NO_EXACT_SPLIT = N_(
    "{model}'s own figure uses {recipe}, which is not the plain mean of the token vectors, so it "
    "does not split exactly into token pairs. The picture below splits the cosine of the mean "
    "token vectors instead, a different figure. To see which tokens move the model's own "
    "figure, open the Attribution page:")
# Why lines were skipped, and what to do about it: {n} lines, {lines} their numbers as ranges
# (the reader's own reasons, quotes and JSON, are components.skipped_lines' words).

def _use_example(a: str, b: str) -> None:
    st.session_state["a"] = a
    st.session_state["b"] = b



def example_buttons() -> None:
    row = st.container(horizontal=True)
    for name, a, b in ONE_PAIR:
        row.button(_(EXAMPLE_LABELS[name]), key=f"pr_example_{name}", on_click=_use_example,
                   args=(a, b), help=_("Put this pair in the sentence boxes."))


def draw_one_pair(ctx: Context) -> None:
    """The shared sentences A and B, compared as the model compares them."""
    st.subheader(_("One pair: which token pairs make the cosine"))
    example_buttons()
    key = ctx.key
    if ctx.encoding is None:   # what is wrong with the text is said above the tabs
        return
    if key.text_b is None:
        st.info(_("This view needs sentence B: type a second sentence in the sidebar, or pick "
                  "one of the pairs above."), icon=":material/compare_arrows:")
        return
    shown = next((name for name, a, b in ONE_PAIR if (a, b) == (key.text_a, key.text_b)), None)
    if shown is not None:
        st.info(_(NOTICE[shown]), icon=":material/visibility:")
    # Its own fragment (as below): the layer slider redraws the pair's figures only.
    run_part(draw_pair, ctx, key.text_a, key.text_b)


def draw_pair(ctx: Context, text_a: str, text_b: str) -> None:
    """The token-pair view of one pair: picture, top terms, the curve, each token's share.

    As images, every layer's picture is in the page and the layer slider switches them in the
    browser (components.picture_switcher); a move then reports the layer to this fragment,
    which redraws what depends on it on the server (the numbers above, the download, the top
    terms, the curve's mark and the shares) after the picture, which it does not send again.
    With exact values on, the interactive figure of the layer picked on the server, as before."""
    key = InputKey(ctx.key.model, text_a, text_b)
    layers = list(range(int(ctx.bundle.config.num_hidden_layers) + 1))
    numbers = st.container()
    with stop_on_input_error():
        last = cache.get_contributions(key, layers[-1])
    explain(_("Each cell is one term c_ij = h_i · g_j / (n · m · ‖ā‖ · ‖b̄‖): token i of A "
              "(down the side) against token j of B (across), where h and g are the token "
              "vectors at this layer and ā, b̄ their means. The cells add up exactly to the "
              "cosine, so red cells make the sentences alike and blue ones pull them apart. "
              "A and B are each run on their own, as sentence-transformers does."))
    draw_notes(last)    # the recipe, [UNK] and what was cut: the same at every layer
    left, right = st.columns(2)
    exact = exact_toggle(EXACT_KEY, left)
    by_word = by_word_toggle(WORDS_KEY, right)

    def figure(layer: int) -> None:
        contrib = cache.get_contributions(key, layer)
        words = cache.get_word_contributions(key, layer) if by_word else None
        explain_words(words)
        if words is None:
            show_figure(contribution_figure(contrib), "pairs_matrix", key="pairs_matrix")
        else:
            show_figure(word_contribution_figure(contrib, words), "pairs_matrix",
                        key="pairs_matrix")

    layer = value_picture(layer_axis(LAYER_KEY, layers, _("Layer"), named=False,
                                     help=_(LAYER_HELP)),
                          lambda i: layer_picture(key, layers[i], by_word), figure,
                          exact=exact, slider_at=numbers)
    contrib = cache.get_contributions(key, layer)
    with numbers:
        draw_numbers(contrib)
    words = cache.get_word_contributions(key, layer) if by_word else None
    if not exact:
        explain_words(words)
    if words is None:
        download_matrix(_("contributions") + f"_{contrib.layer}", contrib.matrix,
                        [f"{i}:{t}" for i, t in enumerate(contrib.tokens_a)], key="pr_matrix")
    else:
        download_matrix(_("contributions") + f"_{contrib.layer}", words.matrix,
                        [f"{w.start}:{w.text}" for w in words.words_a], key="pr_matrix")
    shown = cache.get_pair_figures(key, layer, language())
    top = top_table(contrib) if words is None else top_word_table(words)
    heading = html.escape(_("The ten largest terms"))
    top_html = (f'<div style="font-weight:600;margin-bottom:6px">{heading}</div>'
                + table_html(top, [""] * len(top), "pairs_top",
                             formats={_("term"): ".4f", _("share"): ".2%"}))
    draw_side_by_side([top_html, shown.curve])
    draw_shares(contrib, shown)


def layer_picture(key: InputKey, layer: int, by_word: bool) -> str:
    """One layer's contributions picture (by word when ``by_word``), as draw_heatmap shows it
    without exact values."""
    contrib = cache.get_contributions(key, layer)
    image = (word_contribution_image(contrib, cache.get_word_contributions(key, layer))
             if by_word else contribution_image(contrib))
    return heatmap_html(image, "pairs_matrix")


def explain_words(words: WordContributions | None) -> None:
    """By word, what a cell is."""
    if words is not None:
        explain(_("By word: each cell is the sum of the cells of the word's pieces (a Chinese "
                  "word's characters, the pieces of a split word), so the cells still add up "
                  "exactly to the cosine: {total} here. Each word keeps its first token's "
                  "position.").format(total=f"{words.matrix.sum():.3f}"))


def recipe_words(recipe: Recipe) -> str:
    """The recipe in a few words: its pooling, normalised or not, its prompt, its limit."""
    text = " + ".join(_(POOLING_WORDS[p]) for p in recipe.pooling)
    if recipe.normalize:
        text += _(", normalised")
    if recipe.prompt:
        text += _(", after the prompt {prompt}").format(prompt=markdown_code(recipe.prompt))
    if recipe.max_seq_length:
        text += _(", at most {n} tokens").format(n=recipe.max_seq_length)
    return text


def draw_numbers(contrib: PairContributions) -> None:
    first, second, third = st.columns(3)
    first.metric(_("cosine at {layer}").format(layer=layer_name(contrib.layer)),
                 f"{contrib.cosine:.3f}",
                 help=_("The cosine of the two sentences' mean token vectors at this layer: "
                        "the figure the picture splits."))
    second.metric(_("the model's figure"), f"{contrib.model_cosine:.3f}",
                  help=_("What the model itself gives for this pair: its own sentence recipe "
                         "(named below) on the last layer."))
    third.metric(_("token pairs"), f"{len(contrib.tokens_a)} × {len(contrib.tokens_b)}")
    recipe = contrib.recipe
    if recipe.own:
        explain(_("{model}'s own sentence recipe: {recipe}.").format(
            model=markdown_text(contrib.model_name), recipe=recipe_words(recipe)))


def draw_notes(contrib: PairContributions) -> None:
    """Beside the figure: whose recipe this is, [UNK], and what was cut."""
    name = contrib.model_name
    recipe = contrib.recipe
    if not recipe.own:
        st.info(_("{model} has no sentence vector of its own (no sentence-transformers mean "
                  "pooling), so these figures lend it all-MiniLM-L6-v2's recipe: the mean of "
                  "the token vectors, L2-normalised. Read them as that recipe's cosine, not as "
                  "a figure the model was trained to give.").format(model=markdown_text(name)),
                icon=":material/info:")
    elif not recipe.mean_only:
        cls = Pooling.CLS in recipe.pooling
        st.info(_(NO_EXACT_SPLIT_CLS if cls else NO_EXACT_SPLIT).format(
            model=markdown_text(name), recipe=recipe_words(recipe)), icon=":material/info:")
        st.page_link("pages/attribution/page.py", icon=":material/troubleshoot:",
                     label=_("Which tokens move {model}'s own figure: this pair on the "
                             "Attribution page").format(model=name),
                     query_params={"att_target": Target.PAIR_COSINE.value,
                                   "att_token": "0" if cls else "mean"})
    if recipe.unknown_modules:
        st.warning(_("{model}'s files also list {modules}, a step this explorer does not run: "
                     "its figure here is the one before that step.").format(
            model=markdown_text(name),
            modules=", ".join(markdown_code(m) for m in recipe.unknown_modules)),
            icon=":material/warning:")
    unknown = contrib.unknown_a + contrib.unknown_b
    if unknown:
        total = len(contrib.tokens_a) + len(contrib.tokens_b)
        st.warning(ngettext(
            "{k} of the {n} tokens is [UNK] ({a} in A, {b} in B): {model}'s vocabulary has no "
            "entry for it (for Chinese, most characters). Every [UNK] starts as the same vector, "
            "so the rows and columns of [UNK] tokens compare their places and neighbours, not the "
            "characters that were typed.",
            "{k} of the {n} tokens are [UNK] ({a} in A, {b} in B): {model}'s vocabulary has no "
            "entry for them (for Chinese, most characters). Every [UNK] starts as the same "
            "vector, so the rows and columns of [UNK] tokens compare their places and neighbours, "
            "not the characters that were typed.",
            unknown).format(
            k=unknown, n=total, a=contrib.unknown_a, b=contrib.unknown_b,
            model=markdown_text(name)),
            icon=":material/help:")
    cut = contrib.truncated_a + contrib.truncated_b
    if cut:
        st.warning(ngettext(
            "{cut} token was cut: the model reads at most {limit} tokens of a sentence, as "
            "sentence-transformers does.",
            "{cut} tokens were cut: the model reads at most {limit} tokens of a sentence, as "
            "sentence-transformers does.",
            cut).format(
            cut=f"{cut:,}", limit=contrib.limit), icon=":material/content_cut:")


def draw_shares(contrib: PairContributions, shown: cache.PairFigures) -> None:
    """Each token's share (its row or column of the picture) beside leave-one-out."""
    st.markdown("**" + _("Each token's share, and the cosine without it") + "**")
    explain(_("Blue or orange: the token's row (or column) of the picture, its share of the "
              "cosine. Grey: how much the cosine drops when the token is left out of its "
              "sentence's mean (below 0: it rises). The two views usually agree; where they "
              "do not, the token's vector is long or short rather than aimed at the other "
              "sentence."))
    draw_side_by_side([shown.shares_a, shown.shares_b])
    found = contrib.disagreements()
    if found:
        names = ", ".join(
            f"{side.upper()} {i} {(contrib.tokens_a if side == 'a' else contrib.tokens_b)[i]}"
            for side, i in found)
        explain(_("The two views rank {tokens} far apart: a large share of the cosine but "
                  "little drop when left out, or the reverse. Both are right: a long token "
                  "vector takes a large share of its own sentence's mean without pulling that "
                  "mean towards the other sentence.").format(tokens=markdown_code(names)))

