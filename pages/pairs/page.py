"""Pairs: which token pairs make two sentences alike, and many pairs compared at once.

Two sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.analysis_view import encoding_or_none, model_of, stop_on_input_error
from components.controls import whole_number
from components.downloads import download_matrix, safe_filename
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import draw_heatmap, exact_toggle
from components.html_table import draw_table
from components.i18n import N_, _, language
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import markdown_code, markdown_text
from components.sections import Section, draw_sections
from core import ModelBundle, PairContributions
from core.similarity import pair_lists as lists
from core.similarity.pair_examples import ONE_PAIR, SCORED, example_text
from pages.pairs import cache
from pages.pairs.figures import (
    contribution_figure,
    contribution_image,
    layer_name,
    top_table,
)
from pages.pairs.records import Context

TITLE = N_("Pairs")
EXPLANATION = N_(
    "How alike are two sentences for an embedding model, and which words make them so? "
    "all-MiniLM-L6-v2's sentence vector is the mean of its token vectors, normalised, so the "
    "cosine of two sentences is exactly a sum of one small term per pair of tokens: the picture "
    "shows every term. Many pairs paste in at once, with your own scores to compare against."
)
# URL keys (values of a shared link).
SECTION_KEY, LAYER_KEY, ROW_KEY, EXACT_KEY = "pr_section", "pr_layer", "pr_row", "pr_exact"
EXAMPLES_PARAM = "pr_list"          # ?pr_list=examples: the built-in scored set
LIST_KEY, FILE_KEY, TABLE_KEY = "pr_text", "pr_file", "pr_table"
KEPT_TEXT, KEPT_FILE, ROUND_KEY = "pr_text_kept", "pr_file_kept", "pr_file_round"
PROGRESS_EVERY_S = 0.5
WAIT_IN_RUN_S = 1.5                 # a short list finishes within the run: no progress bar
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
REASONS = {
    lists.COLUMNS: N_("not two or three fields"),
    lists.EMPTY: N_("sentence A or B is empty"),
    lists.SCORE: N_("the score is not a number"),
    lists.UNREADABLE: N_("the line could not be read"),
    lists.HEADER: N_("read as the column names"),
}


# --- one pair ------------------------------------------------------------------------------------

def _use_example(a: str, b: str) -> None:
    st.session_state["a"], st.session_state["b"] = a, b


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
    draw_pair(ctx, key.text_a, key.text_b)


def pick_layer(bundle: ModelBundle) -> int:
    layers = int(bundle.config.num_hidden_layers)
    asked = st.session_state.get(LAYER_KEY)
    if isinstance(asked, int) and not 0 <= asked <= layers:   # a link from a deeper model
        st.session_state[LAYER_KEY] = layers
    linked = st.query_params.get(LAYER_KEY)
    if LAYER_KEY not in st.session_state and linked is not None and linked.strip() not in {
            str(k) for k in range(layers + 1)}:
        st.info(_("The link asks for layer {asked}, but {model} has layers 0 to {last}: "
                  "showing layer {last}.").format(asked=markdown_code(linked[:20]),
                                                  model=markdown_text(bundle.name),
                                                  last=layers), icon=":material/info:")
    layer = st.slider(_("Layer"), 0, layers, layers, key=LAYER_KEY, bind="query-params",
                      help=_("0 is the embedding output (LayerNorm), k the output of encoder "
                             "layer k. The model's own sentence vector is made from the last "
                             "layer."))
    return int(layer if layer is not None else layers)


def draw_pair(ctx: Context, text_a: str, text_b: str) -> None:
    """The token-pair view of one pair: picture, top terms, the curve, each token's share."""
    layer = pick_layer(ctx.bundle)
    key = InputKey(ctx.key.model, text_a, text_b)
    with stop_on_input_error():
        contrib = cache.get_contributions(key, layer)
    draw_numbers(contrib)
    explain(_("Each cell is one term c_ij = h_i · g_j / (n · m · ‖ā‖ · ‖b̄‖): token i of A "
              "(down the side) against token j of B (across), where h and g are the token "
              "vectors at this layer and ā, b̄ their means. The cells add up exactly to the "
              "cosine, so red cells make the sentences alike and blue ones pull them apart. "
              "A and B are each run on their own, as sentence-transformers does."))
    draw_notes(contrib)
    exact = exact_toggle(EXACT_KEY)
    draw_heatmap(contribution_image(contrib), "pairs_matrix", exact,
                 lambda: contribution_figure(contrib))
    download_matrix(_("contributions") + f"_{contrib.layer}", contrib.matrix,
                    [f"{i}:{t}" for i, t in enumerate(contrib.tokens_a)], key="pr_matrix")
    shown = cache.get_pair_figures(key, layer, language())
    left, right = st.columns(2)
    with left:
        st.markdown("**" + _("The ten largest terms") + "**")
        st.dataframe(top_table(contrib), hide_index=True, width="stretch",
                     column_config={_("term"): st.column_config.NumberColumn(format="%.4f"),
                                    _("share"): st.column_config.NumberColumn(
                                        format="percent")})
    with right:
        show_figure(shown.curve, _("pair_cosine_by_layer"), key="pr_curve")
    draw_shares(contrib, shown)


def draw_numbers(contrib: PairContributions) -> None:
    first, second, third = st.columns(3)
    first.metric(_("cosine at {layer}").format(layer=layer_name(contrib.layer)),
                 f"{contrib.cosine:.3f}")
    second.metric(_("the model's figure"), f"{contrib.curve[-1]:.3f}",
                  help=_("The cosine at the last layer: what the model itself reports for "
                         "this pair."))
    third.metric(_("token pairs"), f"{len(contrib.tokens_a)} × {len(contrib.tokens_b)}")


def draw_notes(contrib: PairContributions) -> None:
    """Beside the figure: whose recipe this is, [UNK], and what was cut."""
    name = contrib.model_name
    if not contrib.own_recipe:
        st.info(_("{model} has no sentence vector of its own (no sentence-transformers mean "
                  "pooling), so these figures lend it all-MiniLM-L6-v2's recipe: the mean of "
                  "the token vectors, L2-normalised. Read them as that recipe's cosine, not as "
                  "a figure the model was trained to give.").format(model=markdown_text(name)),
                icon=":material/info:")
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
    left, right = st.columns(2)
    with left:
        show_figure(shown.shares_a, _("token_shares_A"), key="pr_shares_a")
    with right:
        show_figure(shown.shares_b, _("token_shares_B"), key="pr_shares_b")
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

def _load_examples() -> None:
    st.session_state[LIST_KEY] = st.session_state[KEPT_TEXT] = example_text()
    st.session_state[KEPT_FILE] = None
    st.session_state[ROUND_KEY] = st.session_state.get(ROUND_KEY, 0) + 1   # a fresh uploader


def _keep_text() -> None:
    st.session_state[KEPT_TEXT] = st.session_state.get(LIST_KEY) or ""


def _keep_file(key: str) -> None:
    upload = st.session_state.get(key)
    st.session_state[KEPT_FILE] = None if upload is None else (upload.name, upload.getvalue())


def _forget_file() -> None:
    st.session_state[KEPT_FILE] = None


def read_list() -> lists.PairList | None:
    """The list in the box, or the uploaded file (which wins); None when there is neither.

    Both are kept apart from their widgets: Streamlit forgets a widget's value on a run that
    does not draw it, so opening the One pair tab would otherwise lose the list.
    """
    if LIST_KEY not in st.session_state:
        if KEPT_TEXT in st.session_state:
            st.session_state[LIST_KEY] = st.session_state[KEPT_TEXT]
        elif st.query_params.get(EXAMPLES_PARAM) == "examples":   # a link to the example set
            st.session_state[LIST_KEY] = st.session_state[KEPT_TEXT] = example_text()
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
    file_key = f"{FILE_KEY}_{st.session_state.get(ROUND_KEY, 0)}"
    upload = st.file_uploader(
        _("…or a CSV or TSV file with the same columns"), type=["csv", "tsv", "txt"],
        key=file_key, max_upload_size=20, on_change=_keep_file, args=(file_key,))
    explain(_("At most {pairs} pairs and 1 MB. Quote a field that holds a comma "
              "(\"Hello, world\"). A file may be UTF-8, UTF-16 or Latin-1.").format(
        pairs=f"{lists.MAX_PAIRS:,}"))
    kept = st.session_state.get(KEPT_FILE)
    if upload is None and kept is not None:   # uploaded before the other tab was opened
        st.info(_("Comparing {name}, the file uploaded before.").format(
            name=markdown_code(kept[0])), icon=":material/upload_file:")
        st.button(_("Forget the file"), key="pr_forget_file", on_click=_forget_file)
    data = upload.getvalue() if upload is not None else (kept[1] if kept else None)
    examples = (text or "") == example_text() and data is None
    if examples:
        st.query_params[EXAMPLES_PARAM] = "examples"
    else:
        st.query_params.pop(EXAMPLES_PARAM, None)
    if data is not None:
        if (text or "").strip():
            st.info(_("The uploaded file is compared, not the pairs in the box: remove the file "
                      "to compare those."), icon=":material/upload_file:")
        return cache.parse_file(data)
    return cache.parse_text(text) if (text or "").strip() else None


def report_list(parsed: lists.PairList) -> bool:
    """Say what was left out and why; False when nothing can be compared."""
    refused = {
        lists.BINARY: _("This file is not text (it holds binary data): save the pairs as CSV "
                        "or TSV text and try again."),
        lists.TOO_LARGE: _("This list is {size} MB; at most 1 MB is read. Split it into smaller "
                           "lists.").format(size=f"{parsed.size / 1e6:.1f}"),
        lists.NOTHING: _("No line holds a pair: write sentence A and sentence B on one line, "
                         "separated by a tab or a comma."),
    }
    for reason, items in parsed.skipped_by_reason().items():
        lines, more = lists.line_ranges(s.line for s in items)
        text = _("Skipped {n} lines ({why}): {lines}").format(
            n=len(items), why=_(REASONS[reason]), lines=lines)
        if more:
            text += " " + _("and {more} more").format(more=f"{more:,}")
        if reason == lists.SCORE:
            text += ". " + _("A score is a number, such as 3 or 4.5.")
        if reason == lists.COLUMNS:
            text += ". " + _("Quote a sentence that holds a comma.")
        (st.info if reason == lists.HEADER else st.warning)(text, icon=":material/rule:")
    if parsed.beyond:
        st.warning(_("Only the first {max} pairs are compared: {n} more lines from line {line} "
                     "on were not read.").format(max=f"{lists.MAX_PAIRS:,}",
                                                 n=f"{parsed.beyond:,}",
                                                 line=f"{parsed.beyond_from:,}"),
                   icon=":material/content_cut:")
    if parsed.refused:
        st.error(refused[parsed.refused], icon=":material/block:")
        return False
    return True


@st.fragment(run_every=PROGRESS_EVERY_S)
def draw_progress(job: cache.PairJob) -> None:
    """Redrawn every half second while the job runs; then the whole page once more."""
    if not job.running:
        st.rerun()
    total = job.total or 1
    st.progress(min(1.0, job.done / total), text=_(
        "Comparing {pairs} pairs on {model}: {done} of {total} sentences encoded").format(
        pairs=f"{len(job.pairs.pairs):,}", model=job.model, done=f"{job.done:,}",
        total=f"{job.total:,}" if job.total else "…"))


def draw_many_pairs(ctx: Context) -> None:
    st.subheader(_("Many pairs: the model's cosine for each, against your scores"))
    parsed = read_list()
    if parsed is None:
        st.info(_("Paste pairs above, upload a file, or load the example set."),
                icon=":material/playlist_add:")
        return
    if not report_list(parsed):
        return
    job = cache.get_job_board().submit(ctx.key.model, parsed)
    if job.running:
        job.finished.wait(WAIT_IN_RUN_S)
    if job.running:
        draw_progress(job)
        return
    if job.failed or job.frame is None:
        st.error(_("The comparison stopped with an error. Try again, or a shorter list."),
                 icon=":material/error:")
        return
    draw_results(ctx, job, parsed)


def draw_results(ctx: Context, job: cache.PairJob, parsed: lists.PairList) -> None:
    name, frame = ctx.bundle.name, job.frame
    explain(_("{n} pairs compared by {model}: cosine is the model's own figure (the last "
              "layer's mean, A and B each run alone), layer_0 … layer_{last} the same recipe at "
              "every layer. Click a column's title to sort, a row to open it below.").format(
        n=f"{len(frame):,}", model=markdown_text(name), last=ctx.bundle.config.num_hidden_layers))
    if not cache.get_own_recipe(name):
        st.info(_("{model} has no sentence vector of its own: these cosines use the mean of "
                  "its token vectors, L2-normalised (all-MiniLM-L6-v2's recipe).").format(
            model=markdown_text(name)), icon=":material/info:")
    number = {c: st.column_config.NumberColumn(format="%.3f") for c in frame.columns
              if c not in ("line", "a", "b", cache.UNKNOWN)}
    # The numbers first: at 1024 px the two sentences would push them out of sight.
    order = ["line", *[c for c in ("score", "cosine") if c in frame], "a", "b", cache.UNKNOWN,
             *[c for c in frame.columns if c.startswith("layer_")]]
    st.dataframe(frame, hide_index=True, width="stretch", height=320, key=TABLE_KEY,
                 on_select=_pick_row, selection_mode="single-row", column_order=order,
                 column_config={"line": st.column_config.NumberColumn(_("line"), format="%d"),
                                "a": st.column_config.TextColumn("A", width="medium"),
                                "b": st.column_config.TextColumn("B", width="medium"),
                                cache.UNKNOWN: st.column_config.NumberColumn(
                                    help=_("[UNK] tokens in A and B: words the model's "
                                           "vocabulary has no entry for.")),
                                **number})
    st.download_button(_("Download the results (CSV)"), lambda: lists.results_csv(frame),
                       safe_filename(_("pair_cosines")) + ".csv", "text/csv",
                       icon=":material/download:", on_click="ignore", key="pr_csv")
    if parsed.has_scores:
        draw_agreement(frame, cache.get_score_view(job, language()), name)
    draw_row(ctx, frame)


def _pick_row() -> None:
    rows = st.session_state[TABLE_KEY].selection.rows
    if rows:
        st.session_state[ROW_KEY] = float(rows[0] + 1)


def draw_agreement(frame: pd.DataFrame, view: cache.ScoreView | None, model: str) -> None:
    if view is None:
        st.info(_("Scores need at least three pairs and more than one value to compare with."),
                icon=":material/info:")
        return
    st.markdown("**" + _("The model against your scores") + "**")
    explain(_("Spearman's ρ compares the order of the pairs (1: the model ranks them exactly "
              "as the scores do), Pearson's r the straight-line fit. A cosine is not a score "
              "from 0 to 5, and the two scales need not match, so read the order first."))
    unknown = frame.loc[frame["score"].notna(), cache.UNKNOWN]
    if (unknown > 0).any():
        st.warning(_("{k} of the {n} scored pairs hold [UNK] tokens (in orange): {model}'s "
                     "vocabulary has no entry for those words (for Chinese, most characters), "
                     "and every [UNK] is the same vector, so such pairs look alike whatever "
                     "they say.").format(
            k=int((unknown > 0).sum()), n=len(unknown), model=markdown_text(model)),
            icon=":material/help:")
    agreement = view.agreement
    first, second, third = st.columns(3)
    first.metric(_("scored pairs"), f"{agreement.n:,}")
    second.metric("Spearman ρ", f"{agreement.spearman:.3f}")
    third.metric("Pearson r", f"{agreement.pearson:.3f}")
    show_figure(view.scatter, _("cosine_vs_score"), key="pr_scatter")
    st.markdown("**" + _("The pairs that disagree most") + "**")
    explain(_("Largest gap between a pair's rank by cosine and its rank by score."))
    # Escaped HTML rather than a data grid: ten rows, and one grid fewer to lay out per rerun.
    draw_table(view.disagree, [""] * len(view.disagree), "pairs_disagree")


def draw_row(ctx: Context, frame: pd.DataFrame) -> None:
    """The token-pair view of the row picked (in the table or by number); none until one is:
    the view's figures would otherwise cost every rerun of a list nobody has opened yet."""
    st.markdown("**" + _("One pair of the list, token by token") + "**")
    if float(st.session_state.get(ROW_KEY) or 0) > len(frame):   # a shorter list than before
        st.session_state[ROW_KEY] = 0.0
    row = whole_number(st, _("Row of the table to open (0: none)"), min_value=0,
                       max_value=len(frame), value=0, key=ROW_KEY,
                       help=_("Or click a row of the table."))
    if row < 1:
        explain(_("Click a row of the table (or give its number) to see which token pairs make "
                  "its cosine."))
        return
    picked = frame.iloc[row - 1]
    explain(_("Line {line}: A {a} · B {b}").format(
        line=int(picked["line"]), a=markdown_code(_preview(picked["a"])),
        b=markdown_code(_preview(picked["b"]))))
    draw_pair(ctx, str(picked["a"]), str(picked["b"]))


def _preview(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"


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
