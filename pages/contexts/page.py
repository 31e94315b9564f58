"""Contexts: one word across many sentences: its nearest corpus tokens at every layer, where its
senses come apart, a map of many sentences, and a corpus of your own.

Four sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.analysis_view import model_of, show_error, show_notices
from components.cache import get_encoding
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import exact_toggle
from components.i18n import N_, _
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import markdown_code, markdown_text
from components.model_picker import offer_model
from components.sections import Section, draw_sections, run_part
from core import DEFAULT_MODEL, ExplorerError, InputError
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.contexts.neighbours import Neighbour, Query
from core.contexts.senses import labelled_words, sentence_map
from core.contexts.user_corpus import MAX_SENTENCES, MAX_TOKENS, UserCorpus
from core.contexts.vectors import ContextVectors, layers_within
from core.sentence_files.reader import Refusal
from pages.contexts import cache
from pages.contexts.figures import (
    map_figure,
    map_picture,
    neighbours_html,
    self_similarity_figure,
    sense_colours,
    sense_label,
    separation_figure,
)
from pages.contexts.records import Context

TITLE = N_("Contexts")
EXPLANATION = N_(
    "BERT gives a word a different vector in every sentence: context is what the layers add. "
    "Here a corpus of sentences written for this explorer runs through the model once, and one "
    "token of sentence A is compared with every corpus token at the layer you pick: its nearest "
    "neighbours, where the senses of an ambiguous word come apart, and a map of many sentences."
)
# URL keys (values of a shared link).
SECTION_KEY, TOKEN_KEY, LAYER_KEY, WORD_KEY = "ctx_section", "ctx_token", "ctx_layer", "ctx_word"
MAP_KEY, EXACT_KEY = "ctx_map", "ctx_exact"
TEXT_KEY, FILE_KEY, SENTENCE_COL_KEY, LABEL_COL_KEY = "ctx_text", "ctx_file", "ctx_col", \
    "ctx_label_col"
KEPT_TEXT, KEPT_FILE = "ctx_text_kept", "ctx_file_kept"
DEFAULT_WORD = "bank"
PROGRESS_EVERY_S = 0.5
WAIT_IN_RUN_S = 1.5
K = 10
BUILT_IN_WORDS = list(dict.fromkeys(r.word for r in NEIGHBOUR_CORPUS if r.word))
MAP_WORD, MAP_SENTENCES = N_("one word in every sentence"), N_("every sentence")
NO_LABEL = N_("no label column")
WEAK_MODEL = N_(
    "{model} was trained to make sentence vectors: its token vectors tell word senses apart less "
    "well than bert-base's (a 12-layer model trained only on masked words). For a sharper view, "
    "use {larger}.")
REFUSALS = {
    Refusal.TOO_LARGE: N_("This file is too large: at most 10 MB is read. Keep the sentences "
                          "you need, or split the file."),
    Refusal.BINARY: N_("This file is not text (it holds binary data): save the sentences as "
                       "text, CSV or TSV and try again."),
    Refusal.EXCEL: N_("This is a spreadsheet workbook: save the sheet as CSV and upload that."),
    Refusal.NOT_PARQUET: N_("This file is named as Parquet but is not a Parquet file."),
    Refusal.NOTHING: N_("No sentence found: every line (or every cell of the chosen column) is "
                        "empty."),
    Refusal.HEADER_ONLY: N_("The file holds only a line of column names, no sentence."),
}


# --- shared parts -------------------------------------------------------------------------------

@st.fragment(run_every=PROGRESS_EVERY_S)
def draw_progress(job, text: str) -> None:
    """Redrawn every half second while the pass runs; then the whole page once more."""
    if job.done():
        st.rerun()
    progress = job.progress
    total = progress.total or 0
    st.progress(progress.fraction or 0.0)
    # In body text under the bar: the bar's own label is drawn at 15 px, small for a projector.
    explain(text.format(done=f"{progress.done:,}", total=f"{total:,}" if total else "…",
                        seconds=f"{job.seconds:.0f}"))


def builtin_corpus(ctx: Context) -> ContextVectors | None:
    """The built-in corpus run through the model; None (and its progress drawn) until then."""
    job = cache.builtin_job(ctx.key.model)
    if not job.done():
        try:
            job.future.exception(timeout=WAIT_IN_RUN_S)   # a short wait: often done by then
        except TimeoutError:
            pass
    if not job.done():
        explain(_("The corpus runs through {model} once, in the background; the rest of the "
                  "app keeps working meanwhile.").format(model=markdown_text(ctx.bundle.label)))
        draw_progress(job, _("Corpus sentences through the model: {done} of {total} "
                             "({seconds} s)"))
        return None
    if job.exception() is not None:
        st.error(_("The corpus pass stopped with an error. Reload the page to try again."),
                 icon=":material/error:")
        return None
    return job.result()


def weak_model_note(ctx: Context, chinese: bool = False) -> None:
    """With the embedded sentence model: its token vectors are weaker at word level."""
    if ctx.key.model != DEFAULT_MODEL:
        return
    larger = "bert-base-chinese" if chinese else "bert-base-uncased"
    st.info(_(WEAK_MODEL).format(model=ctx.bundle.label, larger=larger),
            icon=":material/info:")
    offer_model(larger, key=f"ctx_offer_{larger}")


def link_value_note(key: str, valid: list[str], what: str) -> None:
    """A value the link gives for ``key`` that is not one of ``valid``: say so, drop it."""
    asked = st.query_params.get(key)
    if asked is not None and key not in st.session_state and asked not in valid:
        st.warning(_("The link asks for {what} {value}, which is not available here: showing "
                     "the default instead.").format(what=_(what), value=markdown_code(asked)),
                   icon=":material/link_off:")
        del st.query_params[key]


def layer_slider(ctx: Context, layers: tuple[int, ...]) -> int:
    """The layer (an index of hidden_states: 0 is the embedding output), default the last."""
    link_value_note(LAYER_KEY, [str(k) for k in layers], N_("layer"))
    if st.session_state.get(LAYER_KEY) not in (None, *layers):
        st.session_state[LAYER_KEY] = layers[-1]
    return int(st.select_slider(
        _("Layer"), options=list(layers), value=layers[-1], key=LAYER_KEY, bind="query-params",
        help=_("0 is the embedding output (the lookups, summed and normalised); k is the "
               "output of encoder layer k.")))


def input_notices(key: InputKey) -> None:
    """Sentence A cut at the model's limit (or at the character cap), said above every tab as
    on the other pages; a text core refuses is explained by the tab that reads it."""
    try:
        enc = get_encoding(key)
    except ExplorerError:
        return
    show_notices(enc)


def query_or_stop(ctx: Context) -> Query | None:
    try:
        return cache.get_query(ctx.key)
    except ExplorerError as exc:
        show_error(exc)
        return None


def token_picker(ctx: Context, query: Query, words: list[str]) -> int | None:
    """A word token of sentence A (its position in A's own encoding, [CLS] = 0); by default the
    first token that is a labelled corpus word, else the first word. The link carries the
    position as a number (``?ctx_token=5``)."""
    options = [p for p, special in enumerate(query.special) if not special]
    if not options:
        st.info(_("Sentence A has no word token to search from."), icon=":material/info:")
        return None
    link_value_note(TOKEN_KEY, [str(p) for p in options], N_("token position"))
    if st.session_state.get(TOKEN_KEY) not in (None, *options):
        del st.session_state[TOKEN_KEY]   # another sentence: its own default
    lowered = {w.lower() for w in words}
    default = next((p for p in options if query.tokens[p].lower() in lowered), options[0])
    asked = st.query_params.get(TOKEN_KEY)
    if TOKEN_KEY not in st.session_state and asked is not None and asked in map(str, options):
        default = int(asked)
    position = st.selectbox(
        _("Token of sentence A"), options, index=options.index(default), key=TOKEN_KEY,
        format_func=lambda p: f"{p}: {query.tokens[p]}",
        help=_("Numbered as in sentence A encoded alone: [CLS] is 0."))
    st.query_params[TOKEN_KEY] = str(position)
    return position


def notice(found: list[Neighbour], token: str, layer: int, first: list[Neighbour]) -> str:
    """What to notice, read off the neighbours at this layer and at layer 0."""
    same = [n for n in found if n.token == token]
    senses = [n.sense for n in same if n.word and n.sense and n.word.lower() == token.lower()]
    parts = [_("At layer {layer}, {same} of the {k} nearest tokens are “{token}” itself.").format(
        layer=layer, same=len(same), k=len(found), token=token)]
    if senses:
        counts = {s: senses.count(s) for s in dict.fromkeys(senses)}
        parts.append(_("Their senses: {senses}.").format(senses=", ".join(
            f"{sense_label(s)} {n}" for s, n in counts.items())))
        top = [n.sense for n in found[:5] if n.word and n.sense and n.token == token]
        if len(top) >= 3 and len(set(top)) == 1:
            parts.append(_("The five nearest that are labelled all share one sense: here the "
                           "layers have sorted this word by its context."))
        elif len(set(senses)) > 1:
            parts.append(_("Both senses are mixed among the nearest: at this layer the word "
                           "itself counts more than its context."))
    if layer > 0 and first:
        same0 = sum(n.token == token for n in first)
        parts.append(_("At layer 0 (the embedding output) {same} of {k} were “{token}”.").format(
            same=same0, k=len(first), token=token))
    return " ".join(parts)


# --- the sections -------------------------------------------------------------------------------

def draw_neighbours(ctx: Context) -> None:
    st.subheader(_("Nearest corpus tokens"))
    explain(_("Pick a token of sentence A (in the sidebar) and a layer: the table lists the "
              "{k} corpus tokens whose vectors at that layer have the largest cosine with it, "
              "every corpus sentence run alone. Labelled sentences are coloured by the sense of "
              "their word; [CLS] and [SEP] are never listed.").format(k=K))
    weak_model_note(ctx)
    corpus = builtin_corpus(ctx)
    query = query_or_stop(ctx)
    if corpus is None or query is None:
        return
    left, right = st.columns([1, 2])
    with left:
        position = token_picker(ctx, query, labelled_words(corpus))
    # Its own fragment, the layer slider drawn in its place beside the token: a layer move
    # redraws the slider, what to notice and the table, nothing else.
    run_part(draw_neighbour_table, ctx, corpus, query, position, right)
    explain(_("Corpus: {n} sentences, {t} tokens at {layers} layers of {model}, kept in "
              "float16 ({mb} MB); the pass took {s} s.").format(
        n=f"{len(corpus.records):,}", t=f"{corpus.n_tokens:,}", layers=corpus.n_layers,
        model=markdown_text(ctx.bundle.label), mb=f"{corpus.nbytes / 1e6:.1f}",
        s=f"{corpus.seconds:.1f}"))


def draw_neighbour_table(ctx: Context, corpus: ContextVectors, query: Query,
                         position: int | None, slider_place: DeltaGenerator) -> None:
    """The layer slider (in ``slider_place``), the nearest corpus tokens to the token at
    ``position`` and what to notice in them."""
    with slider_place:
        layer = layer_slider(ctx, corpus.layers)
    if position is None:
        return
    found = cache.get_neighbours(ctx.key, corpus, position, layer, K)
    first = cache.get_neighbours(ctx.key, corpus, position, 0, K) if layer else []
    token = query.tokens[position]
    senses = list(dict.fromkeys(n.sense for n in found if n.sense and n.word
                                and n.word.lower() == token.lower()))
    explain(notice(found, token, layer, first))
    st.html(neighbours_html(found, sense_colours(senses), "ctx_neighbours"))
    if token == ctx.bundle.tokenizer.unk_token:
        st.info(_("This token is [UNK]: {model}'s vocabulary has no entry for it, so its "
                  "neighbours are other unknown characters and say little.").format(
            model=ctx.bundle.label), icon=":material/help:")


def word_picker(words: list[str]) -> str:
    link_value_note(WORD_KEY, words, N_("word"))
    if st.session_state.get(WORD_KEY) not in (None, *words):
        st.session_state[WORD_KEY] = None
    default = DEFAULT_WORD if DEFAULT_WORD in words else words[0]
    return st.selectbox(_("Word"), words, index=words.index(default), key=WORD_KEY,
                        bind="query-params",
                        help=_("The built-in corpus holds each of these words in two senses, "
                               "six sentences each."))


def draw_senses(ctx: Context) -> None:
    st.subheader(_("Where the senses come apart"))
    explain(_("For each sentence of the word, leave it out, average the word's vectors of each "
              "sense over the other sentences, and guess the sense whose average is nearer (by "
              "cosine): the share guessed right at each layer. Beside it, self-similarity "
              "(Ethayarajh 2019): how alike the word's vectors in two different sentences are, "
              "against two random tokens."))
    corpus = builtin_corpus(ctx)
    if corpus is None:
        return
    word = word_picker(labelled_words(corpus))
    chinese = any(r.word == word and r.language == "zh" for r in corpus.records)
    weak_model_note(ctx, chinese)
    sep, mean, chance, words = cache.get_separation(ctx.key.model, word)
    values, baseline = cache.get_self_similarity(ctx.key.model, word)
    peak, first, last = sep.peak_layer, sep.accuracy[0], sep.accuracy[-1]
    explain(_("On {model}, the senses of “{word}” ({a}, {b}) are told apart {first} of the time "
              "at layer 0 and {last} at layer {last_layer}; chance is {chance}. The best layer "
              "is {peak} ({best}). The mean over the {n} words of its language is best at layer "
              "{mean_peak} ({mean_best}).").format(
        model=markdown_text(ctx.bundle.label), word=word,
        a=sense_label(sep.senses[0]), b=sense_label(sep.senses[1]), first=f"{first:.0%}",
        last=f"{last:.0%}", last_layer=sep.layers[-1], chance=f"{sep.chance:.0%}", peak=peak,
        best=f"{sep.accuracy.max():.0%}", n=len(words),
        mean_peak=sep.layers[int(mean.argmax())], mean_best=f"{mean.max():.0%}"))
    if chinese and ctx.key.model == DEFAULT_MODEL:
        st.info(_("{model} reads most Chinese characters as [UNK], so its vectors of “{word}” "
                  "start identical whatever the sense.").format(
            model=ctx.bundle.label, word=word), icon=":material/help:")
    left, right = st.columns(2)
    with left:
        show_figure(separation_figure(sep, mean, len(words), ctx.bundle.label),
                    _("sense_separation"), key="ctx_senses_chart")
    with right:
        show_figure(self_similarity_figure(word, corpus.layers, values, baseline,
                                           ctx.bundle.label),
                    _("self_similarity"), key="ctx_self_chart")
    explain(_("Self-similarity of “{word}” falls from {v0} at layer 0 to {vl} at layer {l}, "
              "where two random tokens have {b}: the further the blue line stays above the red "
              "one, the more the word keeps one meaning whatever the sentence.").format(
        word=word, v0=f"{values[0]:.3f}", vl=f"{values[-1]:.3f}", l=corpus.layers[-1],
        b=f"{baseline[-1]:.3f}"))


def draw_map(ctx: Context) -> None:
    st.subheader(_("A map of many sentences"))
    explain(_("Each point is one vector at the layer you pick, flattened to two dimensions by "
              "PCA fitted on these points at that layer: the axes are the two directions of "
              "largest spread there, so compare groupings from layer to layer, not positions. "
              "Hover a point (exact values on) to read its sentence."))
    corpus = builtin_corpus(ctx)
    if corpus is None:
        return
    words = labelled_words(corpus)
    left, mid = st.columns([1, 1])
    with left:
        kind = st.radio(_("Points"), (MAP_WORD, MAP_SENTENCES), format_func=_, key=MAP_KEY,
                        bind="query-params", horizontal=True)
    with mid:
        word = word_picker(words)
    layer = layer_slider(ctx, corpus.layers)
    exact = exact_toggle(EXACT_KEY)
    if kind == MAP_SENTENCES:
        proj = cache.get_sentence_map(ctx.key.model, layer)
        labels = [r.sense if r.word == word else None for r in
                  (corpus.records[int(s)] for s in proj.records)]
        title = _("Every corpus sentence (mean of its tokens), layer {layer}, {model}: “{word}” "
                  "sentences coloured by sense").format(layer=layer, model=ctx.bundle.label,
                                                          word=word)
    else:
        proj = cache.get_word_map(ctx.key.model, word, layer)
        labels = [corpus.records[int(s)].sense for s in proj.records]
        title = _("“{word}” in {n} sentences, layer {layer}, {model}").format(
            word=word, n=len(proj.records), layer=layer, model=ctx.bundle.label)
    sentences = [corpus.records[int(s)].sentence for s in proj.records]
    if exact:
        show_figure(map_figure(proj, labels, sentences, title), _("map"), key="ctx_map_chart")
    else:
        st.html(map_picture(proj, labels, title, "ctx_map"))
    acc = cache.get_separation(ctx.key.model, word)[0].accuracy[corpus.layers.index(layer)]
    explain(_("At layer {layer} the two axes hold {a} and {b} of the spread; the senses of "
              "“{word}” are told apart {acc} of the time (leave-one-out, all dimensions, not "
              "only these two).").format(layer=layer, a=f"{proj.explained[0]:.0%}",
                                         b=f"{proj.explained[1]:.0%}", word=word,
                                         acc=f"{acc:.0%}"))


# --- your own corpus ----------------------------------------------------------------------------

def _keep_text() -> None:
    st.session_state[KEPT_TEXT] = st.session_state.get(TEXT_KEY) or ""


def _keep_file() -> None:
    upload = st.session_state.get(FILE_KEY)
    st.session_state[KEPT_FILE] = None if upload is None else (upload.name, upload.getvalue())


def read_source() -> tuple[str, str | bytes] | None:
    """The pasted text or the uploaded file (which wins), kept apart from their widgets so the
    other tabs do not lose them; None when there is neither."""
    if TEXT_KEY not in st.session_state and KEPT_TEXT in st.session_state:
        st.session_state[TEXT_KEY] = st.session_state[KEPT_TEXT]
    text = st.text_area(_("Sentences, one a line (a tab and a label after a sentence colour the "
                          "map by label)"), key=TEXT_KEY, height=150, on_change=_keep_text,
                        placeholder="The bank raised its rates.\tmoney\n"
                                    "We sat on the river bank.\triver")
    upload = st.file_uploader(
        _("…or a file: one sentence a line (.txt), or a column of a CSV, TSV, JSON Lines or "
          "Parquet file"), type=["txt", "csv", "tsv", "jsonl", "json", "parquet"], key=FILE_KEY,
        max_upload_size=20, on_change=_keep_file)
    explain(_("At most {sentences} sentences or {tokens} tokens, whichever comes first; a file "
              "of at most 10 MB.").format(sentences=f"{MAX_SENTENCES:,}",
                                           tokens=f"{MAX_TOKENS:,}"))
    kept = st.session_state.get(KEPT_FILE)
    if upload is not None:
        return upload.name, upload.getvalue()
    if kept is not None:
        st.info(_("Using {name}, the file uploaded before.").format(name=markdown_code(kept[0])),
                icon=":material/upload_file:")
        return kept
    return ("text", text) if (text or "").strip() else None


def column_pickers(table, sentence: int, label: int | None) -> tuple[int, int | None]:
    names = [c or _("column {k}").format(k=k + 1) for k, c in enumerate(table.columns)]
    left, right = st.columns(2)
    chosen = left.selectbox(_("Sentence column"), range(len(names)), index=sentence,
                            format_func=lambda k: names[k], key=SENTENCE_COL_KEY)
    options = [None, *[k for k in range(len(names)) if k != chosen]]
    label = right.selectbox(_("Label column"), options,
                            index=options.index(label) if label in options else 0,
                            format_func=lambda k: _(NO_LABEL) if k is None else names[k],
                            key=LABEL_COL_KEY)
    return chosen, label


def report_corpus(corpus: UserCorpus, read: int) -> bool:
    """Say what was used and left out; False when there is nothing to run."""
    if corpus.refused:
        st.error(_(REFUSALS.get(corpus.refused, REFUSALS[Refusal.NOTHING])),
                 icon=":material/block:")
        return False
    parts = [_("{n} sentences ({t} tokens) of {read} rows.").format(
        n=f"{len(corpus.records):,}", t=f"{corpus.tokens:,}", read=f"{read:,}")]
    if corpus.empty:
        parts.append(_("{n} empty rows skipped.").format(n=f"{corpus.empty:,}"))
    if corpus.truncated:
        parts.append(_("{n} sentences are longer than the model reads and were cut.").format(
            n=f"{corpus.truncated:,}"))
    explain(" ".join(parts))
    if corpus.beyond:
        limit = (_("{tokens} tokens").format(tokens=f"{MAX_TOKENS:,}") if corpus.by_tokens
                 else _("{sentences} sentences").format(sentences=f"{MAX_SENTENCES:,}"))
        st.warning(_("Only the first {limit} are used: {n} more from line {line} on were not "
                     "read.").format(limit=limit, n=f"{corpus.beyond:,}",
                                     line=f"{corpus.beyond_from:,}"),
                   icon=":material/content_cut:")
    if len(corpus.labels) == 1:
        st.info(_("Every sentence has the same label ({label}): the map has nothing to colour "
                  "apart, so it is drawn in one colour.").format(
            label=markdown_code(corpus.labels[0])), icon=":material/info:")
    return True


def draw_own_corpus(ctx: Context) -> None:
    st.subheader(_("Your own corpus"))
    explain(_("Paste sentences or upload a file: they run through {model} in the background "
              "(the page keeps working), then sentence A's tokens find their nearest neighbours "
              "among yours, and your sentences are mapped, coloured by your labels. Everyone "
              "who brings the same sentences shares one run.").format(
        model=markdown_text(ctx.bundle.label)))
    source = read_source()
    if source is None:
        st.info(_("Paste sentences above or upload a file."), icon=":material/playlist_add:")
        return
    columns = (st.session_state.get(SENTENCE_COL_KEY), st.session_state.get(LABEL_COL_KEY))
    if LABEL_COL_KEY not in st.session_state:
        columns = (columns[0], None) if columns[0] is None else columns
    table, corpus, sentence, label = cache.get_user_corpus(ctx.key.model, source, columns)
    if not table.refused and table.width > 1:
        chosen = column_pickers(table, sentence, label)
        if chosen != (sentence, label):
            table, corpus, sentence, label = cache.get_user_corpus(ctx.key.model, source, chosen)
    if not report_corpus(corpus, len(table.rows)):
        return
    layers = layers_within(ctx.bundle, corpus.tokens - 2 * len(corpus.records),
                           cache.get_user_vectors.store.budget)
    vectors = user_vectors(ctx, corpus, layers)
    if vectors is None:
        return
    if len(layers) < ctx.bundle.config.num_hidden_layers + 1:
        explain(_("To stay within this server's memory for corpora, {n} of the model's layers "
                  "are kept for a corpus this large: {layers}.").format(
            n=len(layers), layers=", ".join(str(k) for k in layers)))
    draw_own_results(ctx, vectors)


def user_vectors(ctx: Context, corpus: UserCorpus, layers: tuple[int, ...]
                 ) -> ContextVectors | None:
    """The corpus's pass: from the cache, or its job (progress drawn while it runs)."""
    name = ctx.key.model
    if not cache.has_user_vectors(name, corpus, layers):
        job = cache.user_job(name, corpus, layers)
        if not job.done():
            try:
                job.future.exception(timeout=WAIT_IN_RUN_S)
            except TimeoutError:
                pass
        if not job.done():
            draw_progress(job, _("Your sentences through the model: {done} of {total} "
                                 "({seconds} s)"))
            return None
        if job.exception() is not None:
            st.error(_("The run over your sentences stopped with an error. Try again, or fewer "
                       "sentences."), icon=":material/error:")
            return None
    try:
        return cache.get_user_vectors(name, corpus.key(), layers)
    except LookupError:   # handed to the cache and dropped since: run it again
        st.rerun()
        return None


def draw_own_results(ctx: Context, vectors: ContextVectors) -> None:
    query = query_or_stop(ctx)
    if query is None:
        return
    left, right = st.columns([1, 2])
    with left:
        position = token_picker(ctx, query, BUILT_IN_WORDS)
    with right:
        layer = layer_slider(ctx, vectors.layers)
    if position is not None:
        found = cache.get_neighbours(ctx.key, vectors, position, layer, K)
        labels = list(dict.fromkeys(n.sense for n in found if n.sense))
        st.html(neighbours_html(found, sense_colours(labels), "ctx_own_neighbours", own=True))
    if len(vectors.records) < 2:
        st.info(_("A map needs at least two sentences."), icon=":material/info:")
        return
    exact = exact_toggle(EXACT_KEY)
    try:
        proj = sentence_map(vectors, layer)
    except InputError as exc:
        show_error(exc)
        return
    labelled = len({r.sense for r in vectors.records if r.sense}) >= 2
    labels = [vectors.records[int(s)].sense if labelled else None for s in proj.records]
    title = _("Your {n} sentences (mean of their tokens), layer {layer}, {model}").format(
        n=len(proj.records), layer=layer, model=ctx.bundle.label)
    sentences = [vectors.records[int(s)].sentence for s in proj.records]
    if exact:
        show_figure(map_figure(proj, labels, sentences, title, own=True), _("map"),
                    key="ctx_own_map")
    else:
        st.html(map_picture(proj, labels, title, "ctx_own_map", own=True))


# Tab labels are the values of ?ctx_section= in a shared link.
SECTIONS = (
    Section(label=N_("Neighbours"), draw=draw_neighbours),
    Section(label=N_("Senses by layer"), draw=draw_senses),
    Section(label=N_("Map"), draw=draw_map),
    Section(label=N_("Your own corpus"), draw=draw_own_corpus),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    input_notices(key)
    draw_sections(SECTIONS, SECTION_KEY, Context(key, model_of(key)))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
