"""Similarity: cosines between tokens and between sentences, stage by stage, and how to read.

The page is four sections shown as tabs; only the open one runs (components.sections), because
laying out every section's figures in the browser was most of a rerun's cost.
"""

from functools import partial

import streamlit as st

from components.analysis_view import current_analysis, current_model
from components.downloads import download_matrix, download_table
from components.explain import explain
from components.heatmap import show_figure
from components.inputs import shared_inputs
from components.labels import plotly_text, token_labels
from components.sections import open_section
from components.similarity_cache import (
    get_alone,
    get_corpus_stats,
    get_encoder_max_length,
    get_sentence_comparison,
    get_token_curve,
    get_token_matrix,
    get_top_dimensions,
)
from components.similarity_figures import (
    anisotropy_figure,
    corpus_table,
    curve_table,
    dimensions_figure,
    dimensions_title,
    ethayarajh_table,
    matrix_figure,
    sentence_figure,
    token_curve_figure,
    token_name,
)
from core import Analysis, InputError
from core.anisotropy import MODES, CorpusStats, anisotropy_table, rogue_dimensions, unrelated_level
from core.similarity_choices import (
    default_tokens,
    depth_stages,
    is_pair,
    real_positions,
    segment_positions,
    similarity_stages,
    token_options,
)

# Tab labels are the values of ?sim_section= in a shared link: short, unique, plain ASCII.
VIEWS = ("Tokens", "Sentences", "Word in context", "Anisotropy")
MATRIX_WINDOW = 160   # tokens per side drawn at once (the download has them all)
MODE_HELP = (
    "raw: the cosine as the model gives it. "
    "adjusted: (raw − b) / (1 − b), b = mean cosine of two unrelated corpus tokens at this "
    "stage, so 0 reads “as alike as unrelated tokens” and 1 stays 1. "
    "standardised: every dimension z-scored with the corpus mean and std first "
    "(Timkey & van Schijndel 2021)."
)


# --- the sections, one per tab -----------------------------------------------------------------

def draw_token_matrix(model: str, text_a: str, text_b: str | None, result: Analysis, stage: str,
                      mode: str) -> None:
    """The token x token cosine heatmap at ``stage``, windowed for long inputs, and its CSV."""
    enc = result.encoding
    has_b = is_pair(enc)
    st.subheader("Token × token cosine")
    explain(
        "Each cell is the cosine between the vectors of two tokens of the input at the chosen "
        "stage (the diagonal is every token with itself). At word_embeddings a repeated word is "
        "exactly 1, because it is the same row of the table; deeper layers mix in context."
        + (" The framed block is sentence A's tokens against sentence B's." if has_b else "")
    )
    matrix = get_token_matrix(model, text_a, text_b, stage, mode)
    positions = real_positions(enc)
    n_tokens = len(positions)
    lo = 0
    if n_tokens > MATRIX_WINDOW:
        lo = st.slider("First token shown", 0, n_tokens - MATRIX_WINDOW, 0, key="sim_from",
                       bind="query-params",
                       help=f"The input has {n_tokens} tokens; {MATRIX_WINDOW} are drawn at a "
                       "time.")
    hi = min(n_tokens, lo + MATRIX_WINDOW)
    all_labels = token_labels([enc.tokens[p] for p in positions])
    n_a = len(segment_positions(enc, 0)) if has_b else None
    show_figure(matrix_figure(matrix[lo:hi, lo:hi], all_labels[lo:hi], lo, n_a, stage, mode),
                f"cosine_{stage}_{mode}", key="sim_matrix_chart")
    download_matrix(f"cosine_{stage}_{mode}", matrix,
                    [f"{p}:{enc.tokens[p]}" for p in positions], key="sim_matrix")


def draw_sentence_comparison(model: str, text_a: str, text_b: str | None, result: Analysis,
                             stats: CorpusStats, stage: str) -> None:
    """Sentence A vs B layer by layer, the model's own figure, and its CSV; a hint without B."""
    st.subheader("Sentence A vs sentence B")
    if text_b is None or not is_pair(result.encoding):
        st.info(
            "This view needs sentence B: type a second sentence in the sidebar (for example "
            "“I sat on the bank of the river.” and “I deposited money at the bank.”) to compare "
            "the two sentences' vectors layer by layer.",
            icon=":material/compare_arrows:",
        )
        return
    limit = get_encoder_max_length(model)
    explain(
        "A sentence vector is the mean of its token vectors (mean pooling) or its [CLS] vector. "
        "The model's own figure is what sentence-transformers reports for this model: A and B "
        "encoded separately, the last layer mean-pooled and L2-normalised, then the dot product. "
        "In one pair input A and B attend to each other, so their segment means grow alike."
    )
    comparison = get_sentence_comparison(model, text_a, text_b)
    last = depth_stages(result.stages)[-1]
    m1, m2, m3 = st.columns(3)
    m1.metric("The model's own figure (star)", f"{comparison.model_figure:.4f}",
              help="SentenceTransformer(model).encode([A, B]) then the cosine; "
              + (f"each sentence cut at {limit} tokens, as sentence-transformers does."
                 if limit else "each sentence up to the model's length limit."))
    m2.metric("Unrelated corpus sentences, last layer",
              f"{stats.stage(last).sentence_baseline:.4f}")
    m3.metric("[CLS] vectors, last layer", f"{comparison.cls_separate[-1]:.4f}")
    for name, text in (("A", text_a), ("B", text_b)):
        alone = get_alone(model, text).encoding
        if alone.truncated:
            st.caption(
                f"Sentence {name} alone has {alone.full_length:,} tokens; sentence-transformers "
                f"reads the first {alone.max_length:,}, and so do the “separately” curves."
            )
    show_figure(sentence_figure(comparison, stats, stage), "sentence_similarity",
                key="sim_sentence_chart")
    download_table(comparison.frame(), "sentence_similarity", "sim_sentence_csv")


def follow_new_text(result: Analysis) -> None:
    """Put the word pickers on the new text's default pair when the tokens changed.

    A pick is a position in the text it was made in. When the tokens change, an old pick points
    at another word, or (after a text with a single token to pick) both pickers sit on one token
    for every later text; so a new text starts from its own default pair. Assigned, not popped:
    only an assigned value is sent to the browser, which would otherwise keep showing the old
    token's name. On a session's first run of this section nothing is remembered, so picks from a
    shared link (URL) apply. The memory is only read and written here, so a text changed while
    another tab was open is caught when this tab opens again.
    """
    enc = result.encoding
    tokens_now = (tuple(enc.tokens), tuple(enc.token_type_ids))
    if st.session_state.get("sim_tokens", tokens_now) != tokens_now:
        st.session_state["sim_i"], st.session_state["sim_j"] = default_tokens(enc)
    st.session_state["sim_tokens"] = tokens_now


def draw_word_in_context(model: str, text_a: str, text_b: str | None, result: Analysis,
                         stats: CorpusStats, stage: str, mode: str) -> None:
    """Two chosen tokens' cosine at every stage, and the dimensions that make it at ``stage``."""
    enc = result.encoding
    has_b = is_pair(enc)
    depth = depth_stages(result.stages)
    st.subheader("Word in context")
    first_options, second_options = token_options(enc)
    default_first, default_second = default_tokens(enc)
    follow_new_text(result)
    name_of = partial(token_name, enc.tokens)
    c1, c2, c3 = st.columns(3)
    first = c1.selectbox("Token of A" if has_b else "First token", first_options,
                         index=first_options.index(default_first), format_func=name_of,
                         key="sim_i", bind="query-params")
    second = c2.selectbox("Token of B" if has_b else "Second token", second_options,
                          index=second_options.index(default_second), format_func=name_of,
                          key="sim_j", bind="query-params")
    separately = False
    if has_b:
        context = c3.radio(
            "Run A and B", ("separately", "as one pair"), key="sim_context", bind="query-params",
            help="separately: each sentence on its own, so neither sees the other (as "
            "sentence-transformers does). as one pair: [CLS] A [SEP] B [SEP], so B's tokens also "
            "attend to A's.",
        )
        separately = context == "separately"
    explain(
        "The same word starts from the same row of the vocabulary table, so at word_embeddings "
        "two copies of it have cosine 1; every later stage adds position and context, and the "
        "cosine falls as far as the two contexts differ. The dashed line is what two unrelated "
        "tokens score, read the same way."
    )
    try:
        curve = get_token_curve(model, text_a, text_b, first, second, separately, mode)
        cosine_here, top = get_top_dimensions(model, text_a, text_b, first, second, separately,
                                              stage, mode)
    except InputError as exc:
        st.warning(str(exc), icon=":material/content_cut:")
        return
    if first == second:
        st.info("Both choices are the same token, so its cosine with itself is 1 at every stage.",
                icon=":material/info:")
    pair_label = plotly_text(f"{name_of(first)} vs {name_of(second)}")
    show_figure(token_curve_figure(depth, curve, unrelated_level(stats, depth, mode), mode,
                                   pair_label, stage), "word_in_context", key="sim_words_chart")
    download_table(curve_table(depth, curve, mode), "word_in_context", "sim_words_csv")

    st.markdown(f"**Which dimensions make this cosine, at {stage}**")
    explain(
        "A cosine is the dot product of the two unit vectors, a sum of one product per "
        "dimension. When one or two bars dwarf the rest, a few “rogue” dimensions decide the "
        "cosine (Timkey & van Schijndel 2021); the standardised mode evens them out."
    )
    title = dimensions_title(mode, cosine_here, result.stages[stage].shape[1], top)
    show_figure(dimensions_figure(top, title, mode), "top_dimensions", key="sim_dims_chart")
    download_table(top, f"top_dimensions_{stage}", "sim_dims_csv")


def draw_anisotropy(result: Analysis, stats: CorpusStats, stage: str) -> None:
    """The corpus baseline at every stage, the dimensions behind it, and the corpus itself."""
    stages, depth = similarity_stages(result.stages), depth_stages(result.stages)
    st.subheader("Anisotropy baseline")
    explain(
        f"The mean cosine between tokens of two different sentences of a built-in corpus "
        f"({stats.n_sentences} sentences, {stats.n_tokens} word tokens, {stats.n_pairs:,} pairs), "
        "at each stage, for this model. Where the red line sits well above 0, unrelated tokens "
        "look alike because the vectors crowd into a narrow cone (anisotropy, Ethayarajh 2019); "
        "standardising each dimension (blue) brings it back to about 0."
    )
    show_figure(anisotropy_figure(anisotropy_table(stats, depth), stage), "anisotropy",
                key="sim_anisotropy_chart")
    download_table(anisotropy_table(stats, stages), "anisotropy_baseline", "sim_anisotropy_csv")
    st.markdown(f"**Dimensions that make most of the baseline at {stage}**")
    st.dataframe(rogue_dimensions(stats, stage), hide_index=True, width="stretch",
                 column_config={
                     "share": st.column_config.NumberColumn(format="percent"),
                     **{c: st.column_config.NumberColumn(format="%.4f") for c in
                        ("part of the baseline", "corpus mean", "corpus std")},
                 })
    with st.expander("The corpus, and the published figures", icon=":material/menu_book:"):
        st.markdown("The sentences, written for this explorer (topics chosen to be unrelated; "
                    "bank, bat, spring, light and match each appear in two senses):")
        st.dataframe(corpus_table(), hide_index=True, width="stretch")
        st.markdown(
            "Ethayarajh (2019) measured the same baseline for bert-base-cased, input layer 0 to "
            "layer 12 (numbers from the paper; compare their shape with this model's curve "
            "above)."
        )
        st.dataframe(ethayarajh_table(), hide_index=True)


# --- the page --------------------------------------------------------------------------------

st.title("Similarity")
explain(
    "Cosine similarity measures whether two vectors point the same way (1), are unrelated (0) or "
    "opposite (−1). Here it compares tokens with tokens and sentence A with sentence B at every "
    "stage, so you can watch one word's single static vector become different vectors in "
    "different sentences, and see why a raw cosine needs a baseline before it means anything."
)

inputs = shared_inputs()
bundle = current_model()
result = current_analysis()
stats = get_corpus_stats(bundle.name)
text_a, text_b = inputs.text_a, inputs.text_b
stages = similarity_stages(result.stages)

# Every section reads the stage (the matrix, the highlighted point of each curve, the dimension
# bars); the mode is read by the matrix and the word curves. Above the tabs they keep one value
# and one place while the user switches sections.
left, right = st.columns([1, 2])
stage = left.selectbox(
    "Stage or layer", stages, index=len(stages) - 1, key="sim_stage", bind="query-params",
    help="word_embeddings, position_embeddings and sum are the lookups and their sum; LayerNorm "
    "is the embeddings' output; layer_k is the output of encoder layer k.",
)
mode = right.radio("Read cosines as", MODES, key="sim_mode", bind="query-params",
                   horizontal=True, help=MODE_HELP,
                   captions=("as the model gives it", "(raw − b) / (1 − b)",
                             "each dimension z-scored"))
st.caption(
    f"At {stage}, two unrelated tokens of the built-in corpus have a mean raw cosine of "
    f"**{stats.stage(stage).baseline:.3f}**: that, not 0, is what “unrelated” looks like here."
)

view, area = open_section(VIEWS, key="sim_section")
with area:
    if view == "Tokens":
        draw_token_matrix(bundle.name, text_a, text_b, result, stage, mode)
    elif view == "Sentences":
        draw_sentence_comparison(bundle.name, text_a, text_b, result, stats, stage)
    elif view == "Word in context":
        draw_word_in_context(bundle.name, text_a, text_b, result, stats, stage, mode)
    else:
        draw_anisotropy(result, stats, stage)
