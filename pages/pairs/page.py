"""Pairs: which token pairs make two sentences alike, and many pairs compared at once.

Two sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

import html
from dataclasses import replace
from functools import partial

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.analysis_view import encoding_or_none, model_of, stop_on_input_error
from components.controls import by_word_toggle, whole_number
from components.downloads import download_matrix, safe_filename
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import draw_heatmap, exact_toggle, heatmap_html
from components.html_row import draw_side_by_side
from components.html_table import draw_table, table_html
from components.i18n import N_, _, language
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.job_progress import wait_or_show
from components.kept_upload import KeptUpload
from components.labels import markdown_code, markdown_text
from components.layer_picker import NO_LAYER, layer_picker
from components.picture_switcher import picture_switcher
from components.sections import Section, draw_sections, run_part
from components.skipped_lines import READER_SKIPPED, lines_words, report_skipped
from core import ModelBundle, PairContributions
from core.attribution.targets import Target
from core.sentence_files import reader
from core.sentence_files.reader import Table
from core.similarity import pair_lists as lists
from core.similarity.pair_examples import ONE_PAIR, SCORED, example_text
from core.similarity.recipe import Pooling, Recipe
from pages.pairs import cache
from pages.pairs.figures import (
    contribution_figure,
    contribution_image,
    layer_name,
    top_table,
    top_word_table,
    word_contribution_figure,
    word_contribution_image,
)
from pages.pairs.records import Context, ListSource, PairsState, Picked, SortOrder

TITLE = N_("Pairs")
EXPLANATION = N_(
    "How alike are two sentences for an embedding model, and which words make them so? "
    "all-MiniLM-L6-v2's sentence vector is the mean of its token vectors, normalised, so the "
    "cosine of two sentences is exactly a sum of one small term per pair of tokens: the picture "
    "shows every term. Many pairs paste in at once, with your own scores to compare against."
)
# URL keys (values of a shared link).
SECTION_KEY, LAYER_KEY, ROW_KEY, EXACT_KEY = "pr_section", "pr_layer", "pr_row", "pr_exact"
WORDS_KEY = "pr_words"
LAYER_HELP = N_("0 is the embedding output (LayerNorm), k the output of encoder layer k. The "
                "model's own sentence vector is made from the last layer.")
EXAMPLES_PARAM = "pr_list"          # ?pr_list=examples: the built-in scored set
LIST_KEY, FILE_KEY, TABLE_KEY = "pr_text", "pr_file", "pr_table"
COLUMN_KEYS = ("pr_col_a", "pr_col_b", "pr_col_score")
SKIP_KEY = "pr_skip_extra"          # skip the lines with more fields than the columns
SORT_KEY, PAGE_KEY = "pr_sort", "pr_page"
STATE_KEY = "pr_state"              # the tab's PairsState (records.py)
PAGE_ROWS = 100                     # rows of the results table sent to the browser at once
UPLOAD_MB = 12                      # the uploader's own limit; the reader's is MAX_BYTES
PREVIEW_CHARS = 60

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
SKIPPED = READER_SKIPPED | {
    lists.MISSING: N_("Skipped {n} lines with missing fields: {lines}. They hold fewer fields "
                      "than the columns picked need: give each line sentence A and sentence B, "
                      "separated by {separator}, or pick other columns."),
    lists.EMPTY: N_("Skipped {n} lines with an empty sentence A or B: {lines}. Write both "
                    "sentences on the line, or remove it."),
    lists.SCORE: N_("Skipped {n} lines whose score is not a number: {lines}. A score is a "
                    "number, such as 3 or 4.5: correct it, or pick no score column."),
    lists.LONG: N_("Skipped {n} lines longer than {chars} characters: {lines}. A line holds one "
                   "pair: check that the lines end where the pairs do."),
    lists.EXTRA: N_("Skipped {n} lines with more fields than the columns, as asked: {lines}. "
                    "Untick the box to read their picked columns."),
}
# Extra fields whose picked cells do not fit: a separator inside a sentence moved the columns.
SHIFTED = {
    "\t": N_("Skipped {n} lines whose fields are shifted: {lines}. They hold more fields than "
             "the columns, and the picked cells do not fit (an empty sentence, or a score that "
             "is not a number): a tab inside a sentence split it. Replace the tab in the "
             "sentence with a space."),
    ",": N_("Skipped {n} lines whose fields are shifted: {lines}. They hold more fields than "
            "the columns, and the picked cells do not fit (an empty sentence, or a score that is "
            "not a number): a comma outside quotation marks split a sentence. Put a sentence "
            "that holds a comma in quotation marks."),
    ";": N_("Skipped {n} lines whose fields are shifted: {lines}. They hold more fields than "
            "the columns, and the picked cells do not fit (an empty sentence, or a score that is "
            "not a number): a semicolon outside quotation marks split a sentence. Put a "
            "sentence that holds a semicolon in quotation marks."),
}
HEADER_WORDS = N_("Line {lines} holds the column names, not a pair.")
# The lines kept with more fields than the columns: one line, beside the switch that skips them.
EXTRA_KEPT = {
    True: N_("{n} lines hold more fields than the header names ({width}; {extra} more): "
             "{lines}. Their picked columns come before the extra fields and are read."),
    False: N_("{n} lines hold more fields than most lines ({width}; {extra} more): {lines}. "
              "Their picked columns come before the extra fields and are read."),
}
EXTRA_WHY = {
    "\t": N_("A tab inside a sentence also makes an extra field, and moves the columns after "
             "it: if these lines are like that, skip them."),
    ",": N_("A comma outside quotation marks also makes an extra field, and moves the columns "
            "after it: if these lines are like that, quote those sentences or skip the lines."),
    ";": N_("A semicolon outside quotation marks also makes an extra field, and moves the "
            "columns after it: if these lines are like that, quote those sentences or skip the "
            "lines."),
}
SEPARATOR_WORDS = {"\t": N_("a tab"), ",": N_("a comma"), ";": N_("a semicolon")}
JSON_EXAMPLE = '{"sentence1": "…", "sentence2": "…", "score": 4.5}'
DELIMITER_WORDS = {"\t": N_("tabs"), ",": N_("commas"), ";": N_("semicolons")}
QUOTING_WORDS = {
    reader.Quoting.NONE: N_("a quotation mark is part of the sentence"),
    reader.Quoting.CSV: N_("with CSV quoting (a field in quotation marks may hold the separator, "
                           "and two quotation marks are one)"),
}
FORMAT_WORDS = {reader.Format.JSONL: N_("JSON Lines, one record a line"),
                reader.Format.PARQUET: N_("Parquet, one record a row")}
HOW_WORDS = {"names": N_("picked by the column names"),
             "content": N_("picked by what the columns hold"),
             "order": N_("the columns in order"), "yours": N_("your choice")}
SORT_LABELS = {
    SortOrder.LINE: N_("as in the list"), SortOrder.COSINE_HIGH: N_("cosine, highest first"),
    SortOrder.COSINE_LOW: N_("cosine, lowest first"),
    SortOrder.SCORE_HIGH: N_("score, highest first"),
    SortOrder.GAP: N_("model and scores disagree most first"),
}


# --- one pair ------------------------------------------------------------------------------------

# --- state: the page's only reads and writes of st.session_state ---------------------------------

def state() -> PairsState:
    """The Many pairs tab's state (records.PairsState), made on the session's first run."""
    kept = st.session_state.get(STATE_KEY)
    if not isinstance(kept, PairsState):
        kept = st.session_state[STATE_KEY] = PairsState()
    return kept


def widget(key: str) -> object:
    """A widget's value this session (None: never drawn, or forgotten on a run that did not
    draw it)."""
    return st.session_state.get(key)


def set_widget(key: str, value: object) -> None:
    """Set a widget's value before it is drawn (or from a callback): a reset, an example."""
    st.session_state[key] = value


def _use_example(a: str, b: str) -> None:
    set_widget("a", a)
    set_widget("b", b)


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


def pick_layer(bundle: ModelBundle) -> int:
    """The layer whose vectors are compared: 0 the embedding output, then each encoder layer."""
    return layer_picker(LAYER_KEY, range(int(bundle.config.num_hidden_layers) + 1), _("Layer"),
                        help=_(LAYER_HELP))


def draw_pair(ctx: Context, text_a: str, text_b: str) -> None:
    """The token-pair view of one pair: picture, top terms, the curve, each token's share.

    As images, every layer's picture is in the page and the layer slider switches them in the
    browser (components.picture_switcher); a move then reports the layer to this fragment,
    which redraws what depends on it on the server (the numbers above, the download, the top
    terms, the curve's mark and the shares) after the picture, which it does not send again.
    With exact values on, the interactive figure of the layer picked on the server, as before."""
    key = InputKey(ctx.key.model, text_a, text_b)
    layers = range(int(ctx.bundle.config.num_hidden_layers) + 1)
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
    if exact:
        with numbers:
            layer = pick_layer(ctx.bundle)
    else:
        layer = layer_switcher(key, list(layers), by_word)
    contrib = cache.get_contributions(key, layer)
    with numbers:
        draw_numbers(contrib)
    words = cache.get_word_contributions(key, layer) if by_word else None
    if words is not None:
        explain(_("By word: each cell is the sum of the cells of the word's pieces (a Chinese "
                  "word's characters, the pieces of a split word), so the cells still add up "
                  "exactly to the cosine: {total} here. Each word keeps its first token's "
                  "position.").format(total=f"{words.matrix.sum():.3f}"))
    if exact:
        if words is None:
            draw_heatmap(contribution_image(contrib), "pairs_matrix", exact,
                         lambda: contribution_figure(contrib))
        else:
            draw_heatmap(word_contribution_image(contrib, words), "pairs_matrix", exact,
                         lambda: word_contribution_figure(contrib, words))
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


def layer_switcher(key: InputKey, layers: list[int], by_word: bool) -> int:
    """The layer slider over every layer's picture, switched in the browser (each drawn when
    sent); returns the layer the page is on."""
    return picture_switcher(
        LAYER_KEY, layers, lambda i: layer_picture(key, layers[i], by_word), _("Layer"),
        names=[str(k) for k in layers], default=layers[-1], invalid=_(NO_LAYER), report=True,
        help=_(LAYER_HELP))


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
        st.warning(_("{k} of the {n} tokens are [UNK] ({a} in A, {b} in B): {model}'s "
                     "vocabulary has no entry for them (for Chinese, most characters). Every "
                     "[UNK] starts as the same vector, so the rows and columns of [UNK] tokens "
                     "compare their places and neighbours, not the characters that were "
                     "typed.").format(
            k=unknown, n=total, a=contrib.unknown_a, b=contrib.unknown_b,
            model=markdown_text(name)),
            icon=":material/help:")
    cut = contrib.truncated_a + contrib.truncated_b
    if cut:
        st.warning(_("{cut} tokens were cut: the model reads at most {limit} tokens of a "
                     "sentence, as sentence-transformers does.").format(
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


# --- many pairs ----------------------------------------------------------------------------------

UPLOAD = KeptUpload(FILE_KEY, limit_bytes=reader.MAX_BYTES)


def _load_examples() -> None:
    set_widget(LIST_KEY, example_text())
    state().text = example_text()
    UPLOAD.forget()                    # a fresh uploader: the example set is what is compared


def _keep_text() -> None:
    state().text = str(widget(LIST_KEY) or "")


def read_source() -> ListSource | Table | None:
    """The list in the box, or the uploaded file (which wins): its source, a refused table (a
    file too large, refused from its size before it is read), or None when there is neither.

    Both are kept apart from their widgets (the box's text in PairsState, the file by
    KeptUpload): Streamlit forgets a widget's value on a run that does not draw it, so opening
    the One pair tab would otherwise lose the list.
    """
    kept = state()
    if widget(LIST_KEY) is None:
        if kept.text is not None:
            set_widget(LIST_KEY, kept.text)
        elif st.query_params.get(EXAMPLES_PARAM) == "examples":   # a link to the example set
            kept.text = example_text()
            set_widget(LIST_KEY, kept.text)
    row = st.container(horizontal=True)
    row.button(_("Load the example set ({n} pairs)").format(n=len(SCORED)), key="pr_examples",
               on_click=_load_examples, icon=":material/playlist_add:")
    explain(_("The example set was written for this explorer, not taken from a benchmark: 30 "
              "English and 30 Chinese pairs, each scored by hand from 0 (unrelated) to 5 (same "
              "meaning)."))
    text = st.text_area(
        _("Pairs, one a line: sentence A, sentence B and an optional score, separated by a tab "
          "or a comma"), key=LIST_KEY, height=160, on_change=_keep_text,
        placeholder="A man is playing the guitar.\tSomeone is strumming a guitar.\t4.6")
    upload = UPLOAD.draw(
        _("…or a file: CSV, TSV, JSON Lines or Parquet, with as many columns as it has"),
        types=["csv", "tsv", "txt", "jsonl", "json", "parquet"], max_mb=UPLOAD_MB,
        before=_("Comparing {name}, the file uploaded before."), forget=_("Forget the file"))
    explain(_("At most {pairs} pairs and {mb} MB. A file keeps its own columns (a benchmark's "
              "genre, year, score, sentence 1, sentence 2, ...): the sentence and score columns "
              "are picked from their names or what they hold, and you can change them. Each "
              "sentence reaches the model exactly as it is in the file, only the spaces around "
              "it removed; in tab-separated text a quotation mark is part of the sentence. "
              "Text may be UTF-8, UTF-16, GB18030 or Latin-1.").format(
        pairs=f"{lists.MAX_PAIRS:,}", mb=reader.MAX_BYTES // 1_000_000))
    examples = (text or "") == example_text() and upload is None
    if examples:
        st.query_params[EXAMPLES_PARAM] = "examples"
    else:
        st.query_params.pop(EXAMPLES_PARAM, None)
    if upload is not None:
        if (text or "").strip():
            st.info(_("The uploaded file is compared, not the pairs in the box: remove the file "
                      "to compare those."), icon=":material/upload_file:")
        return (reader.size_refusal(upload.size) if upload.data is None
                else ListSource(upload.data, upload.name))
    return ListSource(text) if (text or "").strip() else None


def column_label(table: Table, k: int) -> str:
    """A column as the pickers name it (and the link carries it): its number first, then its
    name or its first cell; 0 for no column."""
    if k < 0:
        return "0 · " + _("none")
    name = table.columns[k] if k < len(table.columns) else ""
    if not name and table.rows:
        first = table.rows[0].cells[k] if k < len(table.rows[0].cells) else ""
        name = "“" + _preview(first, 24) + "”" if first else ""
    return f"{k + 1} · {name}" if name else str(k + 1)


def pick_columns(table: Table) -> Picked:
    """Sentence A, B and score columns (0-based; score None): proposed for each new list, shown
    as pickers bound to the link where the table has a choice to make."""
    proposal = reader.propose_columns(table)
    proposed = (proposal.a, proposal.b, -1 if proposal.score is None else proposal.score)
    width = table.width
    if width <= 3 and table.header_line is None:
        return Picked(proposal.a, proposal.b, proposal.score, how=proposal.how)
    options = list(range(width))
    identity = (width, table.columns, len(table.rows), table.rows[0].line if table.rows else 0)
    kept = state()
    if kept.proposed_for != identity:
        first_list = kept.proposed_for is None
        kept.proposed_for = identity
        for key, value, allowed in zip(COLUMN_KEYS, proposed, (options, options, [-1, *options]),
                                       strict=True):
            linked = st.query_params.get(key) if first_list else None
            asked = _column_number(linked)
            set_widget(key, asked if asked in allowed else value)
    left, middle, right = st.columns(3)
    picked = []
    for where, key, label, allowed in zip(
            (left, middle, right), COLUMN_KEYS,
            (_("Sentence A column"), _("Sentence B column"), _("Score column")),
            (options, options, [-1, *options]), strict=True):
        value = where.selectbox(label, allowed, key=key, bind="query-params",
                                format_func=partial(column_label, table))
        picked.append(int(value) if value is not None else allowed[0])
    a, b, score = picked
    return Picked(a, b, None if score < 0 else score,
                  how="yours" if tuple(picked) != proposed else proposal.how)


def _column_number(value: str | None) -> int | None:
    """A column from the link: its number (1-based; 0 or "none": no score column)."""
    text = (value or "").strip().split(" ")[0]
    if text.lower() in ("0", "none"):
        return -1
    return int(text) - 1 if text.isdigit() and 0 < int(text) < 10_000 else None


def report_refusal(table: Table) -> None:
    refused = {
        reader.Refusal.BINARY: _("This file is not text (it holds binary data): save the pairs "
                                 "as CSV, TSV, JSON Lines or Parquet and try again."),
        reader.Refusal.TOO_LARGE: _("This list is {size} MB; at most {mb} MB is read. Split it "
                                    "into smaller lists.").format(
            size=f"{table.size / 1e6:.1f}", mb=reader.MAX_BYTES // 1_000_000),
        reader.Refusal.EXCEL: _("This is an Excel workbook, whatever its name says. In Excel, "
                                "choose File › Save As › CSV UTF-8, and upload that file."),
        reader.Refusal.NOT_PARQUET: _("This file is named as Parquet but is not a Parquet file, "
                                      "or it is damaged: save the data again as Parquet, or as "
                                      "CSV."),
        reader.Refusal.NOTHING: _("No line holds a pair: write sentence A and sentence B on one "
                                  "line, separated by a tab or a comma."),
        reader.Refusal.HEADER_ONLY: _("This list holds only its header line (the column names "
                                      "{names}) and no pairs.").format(
            names=markdown_code(", ".join(table.columns)[:120])),
    }
    st.error(refused[table.refused or reader.Refusal.NOTHING], icon=":material/block:")


def read_summary(table: Table, parsed: lists.PairList, picked: Picked) -> None:
    """What was read and how: lines read, used, skipped; delimiter, quoting, charset; columns."""
    if table.format == reader.Format.TEXT:
        how_read = _("separated by {delimiter}; {quoting}").format(
            delimiter=_(DELIMITER_WORDS.get(table.delimiter, N_("nothing (one column)"))),
            quoting=_(QUOTING_WORDS[table.quoting]))
    else:
        how_read = _(FORMAT_WORDS[table.format])
    explain(_("Read {read} lines: {used} pairs used, {skipped} skipped. The file is {how}. "
              "Sentence A: {a}; sentence B: {b}; score: {score} ({why}).").format(
        read=f"{table.lines:,}", used=f"{len(parsed.pairs):,}", skipped=f"{len(parsed.skipped):,}",
        how=how_read, a=markdown_text(column_label(table, picked.a)),
        b=markdown_text(column_label(table, picked.b)),
        score=markdown_text(column_label(table, -1 if picked.score is None else picked.score)),
        why=_(HOW_WORDS[picked.how])))
    score = picked.score
    if table.charset not in ("utf-8", "utf-16", "binary"):
        st.warning(_("This file is not UTF-8: it was read as {charset}. If the sentences below "
                     "look wrong, save it as UTF-8 and upload it again.").format(
            charset=table.charset.upper()), icon=":material/translate:")
    if parsed.score_text and score is not None:
        example = next((r.cells[score] for r in table.rows
                        if score < len(r.cells) and r.cells[score]), "")
        st.warning(_("The score column holds text (such as {example}), not numbers: the pairs are "
                     "compared without scores. Pick another score column, or none.").format(
            example=markdown_code(example[:40])), icon=":material/pin:")


def report_list(parsed: lists.PairList, table: Table | None = None) -> bool:
    """Say what was left out, why and what to do; False when nothing can be compared."""
    shifted = SHIFTED.get(parsed.delimiter, SHIFTED["\t"])
    report_skipped(parsed.skipped, SKIPPED | {lists.SHIFTED: shifted}, HEADER_WORDS,
                   example=markdown_code(JSON_EXAMPLE),
                   separator=_(SEPARATOR_WORDS.get(parsed.delimiter, SEPARATOR_WORDS["\t"])))
    if parsed.beyond:
        st.warning(_("Only the first {max} pairs are compared: {n} more lines from line {line} "
                     "on were not read.").format(max=f"{lists.MAX_PAIRS:,}",
                                                 n=f"{parsed.beyond:,}",
                                                 line=f"{parsed.beyond_from:,}"),
                   icon=":material/content_cut:")
    if parsed.refused:
        report_refusal(table if table is not None and table.refused == parsed.refused
                       else Table(refused=parsed.refused, size=parsed.size))
        return False
    return True


def skip_extra_switch(table: Table) -> tuple[bool, DeltaGenerator]:
    """The switch that skips the lines with more fields than the columns (bound to the link),
    under a slot where ``report_extra`` says which lines those are."""
    slot = st.container()
    skip = st.checkbox(_("Skip the lines with extra fields"), key=SKIP_KEY, bind="query-params",
                       help=_("Off: those lines are read in the columns picked, which come "
                              "before their extra fields. On: they are left out."))
    return bool(skip), slot


def report_extra(slot: DeltaGenerator, table: Table, parsed: lists.PairList) -> None:
    """One line: how many lines were read despite extra fields, which, how many extra."""
    if not parsed.extra:
        return    # skipped as asked, or for another reason: said with the other skips
    counts = sorted({k for _line, k in parsed.extra})
    extra = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    text = _(EXTRA_KEPT[table.header_line is not None]).format(
        n=f"{len(parsed.extra):,}", width=table.width, extra=extra,
        lines=lines_words([line for line, _k in parsed.extra]))
    why = EXTRA_WHY.get(parsed.delimiter)
    slot.info(joined(text, _(why) if why else ""), icon=":material/view_column:")


def figures_cover(parsed: lists.PairList, n: int) -> None:
    """Over how many pairs the headline figures are, and whether that is the whole list."""
    left_out = sum(s.reason != lists.HEADER for s in parsed.skipped) + parsed.beyond
    unscored = len(parsed.pairs) - parsed.scored
    text = joined(_("These figures are over {n} scored pairs.").format(n=f"{n:,}"),
                  _("{k} pairs without a score are not counted.").format(k=f"{unscored:,}")
                  if unscored else "")
    if left_out:
        st.warning(joined(text, _("{k} lines of the list were not read as pairs (said above), "
                                  "so they are not the whole list's figures.").format(
            k=f"{left_out:,}")), icon=":material/functions:")
    else:
        explain(joined(text, "" if unscored else _("Every line of the list is counted.")))


def joined(*sentences: str) -> str:
    """Sentences one after another: a space between them in English, none after Chinese
    punctuation."""
    return ("" if language() == "zh" else " ").join(s for s in sentences if s)


def draw_many_pairs(ctx: Context) -> None:
    st.subheader(_("Many pairs: the model's cosine for each, against your scores"))
    source = read_source()
    if source is None:
        st.info(_("Paste pairs above, upload a file, or load the example set."),
                icon=":material/playlist_add:")
        return
    table = source if isinstance(source, Table) else cache.get_table(ctx.key.model, source)
    if table.refused is not None and not table.skipped:
        report_refusal(table)
        return
    kept = state()
    if table.refused is None and isinstance(source, ListSource):
        picked = pick_columns(table)
        skip, slot = skip_extra_switch(table) if table.extra_rows else (False, None)
        kept.picked = replace(picked, skip_extra=skip)
        parsed = cache.get_pair_list(ctx.key.model, source, kept.picked.columns, skip)
        read_summary(table, parsed, kept.picked)
        if slot is not None:
            report_extra(slot, table, parsed)
    else:
        kept.picked = Picked()
        parsed = reader.pairs_from(table, 0, 1, None)
    if not report_list(parsed, table):
        return
    model = ctx.key.model
    if not cache.held(model, parsed):
        job = cache.get_job(model, parsed)
        # A short list finishes within the run's short wait: no progress card.
        if not wait_or_show(job, _("Comparing {pairs} pairs on {model}. Sentences encoded: "
                                   "{amount}."), pairs=f"{len(parsed.pairs):,}", model=model):
            return
        if job.failed:
            st.error(_("The comparison stopped with an error. Try again, or a shorter list."),
                     icon=":material/error:")
            return
    draw_results(ctx, parsed)


def draw_results(ctx: Context, parsed: lists.PairList) -> None:
    name = ctx.bundle.name
    frame = cache.get_compared(name, parsed)
    recipe = cache.get_recipe(name)
    explain(_("{n} pairs compared by {model}: cosine is the model's own figure ({recipe}, A and "
              "B each run alone), layer_0 … layer_{last} the same recipe at every layer. Sort "
              "and page through the table below; click a row to open it.").format(
        n=f"{len(frame):,}", model=markdown_text(name), recipe=recipe_words(recipe),
        last=ctx.bundle.config.num_hidden_layers))
    if not recipe.own:
        st.info(_("{model} has no sentence vector of its own: these cosines use the mean of "
                  "its token vectors, L2-normalised (all-MiniLM-L6-v2's recipe).").format(
            model=markdown_text(name)), icon=":material/info:")
    rows = draw_table_page(frame, parsed, name)
    st.download_button(_("Download the results (CSV)"), lambda: lists.results_csv(frame),
                       safe_filename(_("pair_cosines")) + ".csv", "text/csv",
                       icon=":material/download:", on_click="ignore", key="pr_csv")
    if parsed.has_scores:
        draw_agreement(frame, cache.get_score_view(name, parsed, language()), name, parsed)
    draw_row(ctx, frame, rows)


def draw_table_page(frame: pd.DataFrame, parsed: lists.PairList, model: str) -> pd.DataFrame:
    """One page of the table in the order picked: only that page's rows go to the browser."""
    orders = [o for o in SortOrder if parsed.has_scores or o not in (SortOrder.SCORE_HIGH,
                                                                     SortOrder.GAP)]
    pages = max(1, -(-len(frame) // PAGE_ROWS))
    if widget(SORT_KEY) is not None and widget(SORT_KEY) not in orders:
        set_widget(SORT_KEY, SortOrder.LINE)      # a list without scores now
    if widget(PAGE_KEY) is not None and widget(PAGE_KEY) not in range(1, pages + 1):
        set_widget(PAGE_KEY, 1)                   # a shorter list than before
    left, right = st.columns(2)
    order = left.selectbox(_("Order"), orders, key=SORT_KEY, bind="query-params",
                           format_func=lambda o: _(SORT_LABELS[o]))
    order = SortOrder(order or SortOrder.LINE)
    page = 1
    if pages > 1:
        page = right.selectbox(
            _("Rows"), list(range(1, pages + 1)), key=PAGE_KEY, bind="query-params",
            format_func=lambda p: f"{(p - 1) * PAGE_ROWS + 1:,}–{min(p * PAGE_ROWS, len(frame)):,}")
        page = int(page or 1)
    positions = cache.get_order(model, parsed, order)[(page - 1) * PAGE_ROWS:page * PAGE_ROWS]
    shown = frame.iloc[positions]
    number = {c: st.column_config.NumberColumn(format="%.3f") for c in frame.columns
              if c not in ("line", "a", "b", cache.UNKNOWN)}
    # The numbers first: at 1024 px the two sentences would push them out of sight.
    columns = ["line", *[c for c in ("score", "cosine") if c in frame], "a", "b", cache.UNKNOWN,
               *[c for c in frame.columns if c.startswith("layer_")]]
    st.dataframe(shown, hide_index=True, width="stretch", height=320, key=TABLE_KEY,
                 on_select=_pick_row, selection_mode="single-row", column_order=columns,
                 column_config={"line": st.column_config.NumberColumn(_("line"), format="%d"),
                                "a": st.column_config.TextColumn("A", width="medium"),
                                "b": st.column_config.TextColumn("B", width="medium"),
                                cache.UNKNOWN: st.column_config.NumberColumn(
                                    help=_("[UNK] tokens in A and B: words the model's "
                                           "vocabulary has no entry for.")),
                                **number})
    state().shown_lines = tuple(int(line) for line in shown["line"])
    return shown


def _pick_row() -> None:
    """A click on a row of the table opens its line (the table's on_select)."""
    selection = widget(TABLE_KEY)
    rows = selection.selection.rows if selection is not None else []   # type: ignore[attr-defined]
    lines = state().shown_lines
    if rows and rows[0] < len(lines):
        set_widget(ROW_KEY, float(lines[rows[0]]))


def draw_agreement(frame: pd.DataFrame, view: cache.ScoreView | None, model: str,
                   parsed: lists.PairList) -> None:
    if view is None:
        st.info(_("Scores need at least three pairs and more than one value to compare with."),
                icon=":material/info:")
        return
    st.markdown("**" + _("The model against your scores") + "**")
    agreement = view.agreement
    explain(_("Your scores run from {low} to {high}. Spearman's ρ compares the order of the "
              "pairs (1: the model ranks them exactly as the scores do), Pearson's r the "
              "straight-line fit. A cosine is not a score on your scale, and the two scales "
              "need not match, so read the order first.").format(
        low=f"{agreement.low:g}", high=f"{agreement.high:g}"))
    unknown = frame.loc[frame["score"].notna(), cache.UNKNOWN]
    if (unknown > 0).any():
        st.warning(_("{k} of the {n} scored pairs hold [UNK] tokens (in orange): {model}'s "
                     "vocabulary has no entry for those words (for Chinese, most characters), "
                     "and every [UNK] is the same vector, so such pairs look alike whatever "
                     "they say.").format(
            k=f"{int((unknown > 0).sum()):,}", n=f"{len(unknown):,}", model=markdown_text(model)),
            icon=":material/help:")
    first, second, third = st.columns(3)
    first.metric(_("scored pairs"), f"{agreement.n:,}")
    second.metric("Spearman ρ", f"{agreement.spearman:.3f}")
    third.metric("Pearson r", f"{agreement.pearson:.3f}")
    figures_cover(parsed, agreement.n)
    labels = agreement.labels
    if labels is not None:
        first, second, third = st.columns(3)
        first.metric("ROC AUC", f"{labels.auc:.3f}")
        second.metric(_("best accuracy"), f"{labels.accuracy:.1%}")
        third.metric(_("best threshold"), f"{labels.threshold:.3f}")
        explain(_("Your scores are labels, 0 or 1 ({pos} pairs labelled 1, {neg} labelled 0). "
                  "ROC AUC {auc}: take one pair labelled 1 and one labelled 0 at random; this is "
                  "how often the model gives the 1 the higher cosine (0.5 is a coin toss, 1 "
                  "never wrong). Calling every pair with a cosine of at least {t} a 1 gets "
                  "{acc} of the labels right, the best any single cut does; always answering "
                  "the commoner label gets {maj}.").format(
            pos=f"{labels.positives:,}", neg=f"{labels.negatives:,}", auc=f"{labels.auc:.3f}",
            t=f"{labels.threshold:.3f}", acc=f"{labels.accuracy:.1%}",
            maj=f"{labels.majority:.1%}"))
    show_figure(view.scatter, _("cosine_vs_score"), key="pr_scatter")
    st.markdown("**" + _("The pairs that disagree most") + "**")
    explain(_("Largest gap between a pair's rank by cosine and its rank by score."))
    # Escaped HTML rather than a data grid: ten rows, and one grid fewer to lay out per rerun.
    draw_table(view.disagree, [""] * len(view.disagree), "pairs_disagree")


def draw_row(ctx: Context, frame: pd.DataFrame, shown: pd.DataFrame) -> None:
    """The token-pair view of the line picked (in the table or by number); none until one is:
    the view's figures would otherwise cost every rerun of a list nobody has opened yet."""
    st.markdown("**" + _("One pair of the list, token by token") + "**")
    last = int(frame["line"].max()) if len(frame) else 0
    asked = widget(ROW_KEY)
    if isinstance(asked, int | float) and asked > last:   # a shorter list than before
        set_widget(ROW_KEY, 0.0)
    line = whole_number(st, _("Line of the list to open (0: none)"), min_value=0,
                        max_value=last, value=0, key=ROW_KEY,
                        help=_("Or click a row of the table."))
    state().row = int(line)
    if line < 1:
        explain(_("Click a row of the table (or give its line) to see which token pairs make "
                  "its cosine."))
        return
    match = frame.index[frame["line"] == line]
    if not len(match):
        st.info(_("Line {line} holds no pair that was compared (it was skipped, or blank).")
                .format(line=line), icon=":material/info:")
        return
    picked = frame.loc[match[0]]
    explain(_("Line {line}: A {a} · B {b}").format(
        line=int(picked["line"]), a=markdown_code(_preview(picked["a"])),
        b=markdown_code(_preview(picked["b"]))))
    # Its own fragment: the layer slider and the view's toggles redraw the pair, not the list.
    run_part(draw_pair, ctx, str(picked["a"]), str(picked["b"]))


def _preview(text: str, most: int = PREVIEW_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[:most - 1] + "…"


# Tab labels are the values of ?pr_section= in a shared link.
SECTIONS = (
    Section(label=N_("One pair"), draw=draw_one_pair),
    Section(label=N_("Many pairs"), draw=draw_many_pairs),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    # The sidebar's text, with the notices every page gives (empty text, B without A, what
    # was cut); the Many pairs tab needs none of it, so a refused text does not stop the page.
    encoding = encoding_or_none(key)
    draw_sections(SECTIONS, SECTION_KEY, Context(key, model_of(key), encoding))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
