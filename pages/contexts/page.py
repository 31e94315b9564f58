"""Contexts: one word across many sentences: its nearest corpus tokens at every layer, where its
senses come apart, a map of many sentences, and a corpus of your own.

Four sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from typing import TypeVar

import streamlit as st

from components.analysis_view import model_of, show_error, show_notices
from components.builtin_corpus import show_builtin_corpus
from components.cache import get_encoding
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import exact_toggle
from components.i18n import DEFAULT_LANGUAGE, N_, _, language, ngettext
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import markdown_code, markdown_text
from components.model_picker import offer_model
from components.neighbours_table import neighbours_html, sense_colours, sense_label
from components.pickers import layer_axis, layer_picker
from components.picture_switcher import Drawn, picture_slider, with_words
from components.sections import Section, draw_sections, run_part
from components.url_values import option_in_link
from core import DEFAULT_MODEL, ExplorerError, InputError
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.contexts.first_look import Found, Start, suggestion
from core.contexts.neighbours import Neighbour, Query
from core.contexts.senses import labelled_words, sentence_map
from core.contexts.vectors import ContextVectors, layers_within
from pages.contexts import cache
from pages.contexts.figures import (
    map_figure,
    map_picture,
    self_similarity_figure,
    separation_figure,
)
from pages.contexts.own_corpus import column_pickers, read_source, report_corpus, user_vectors
from pages.contexts.records import Context, PageState

T = TypeVar("T")
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
STATE_KEY = "ctx_state"   # the session's PageState (not in the URL)
K = 10
LAYER_HELP = N_("0 is the embedding output (the lookups, summed and normalised); k is the "
                "output of encoder layer k.")
BUILT_IN_WORDS = tuple(dict.fromkeys(r.word for r in NEIGHBOUR_CORPUS if r.word))
BUILT_IN = ("built-in",)   # the built-in corpus, as the caches name a corpus
MAP_WORD, MAP_SENTENCES = N_("one word in every sentence"), N_("every sentence")
WEAK_MODEL = N_(
    "{model} was trained to make sentence vectors: its token vectors tell word senses apart less "
    "well than bert-base's (a 12-layer model trained only on masked words). For a sharper view, "
    "use {larger}.")


# --- shared parts -------------------------------------------------------------------------------

def weak_model_note(ctx: Context, chinese: bool = False) -> None:
    """With the embedded sentence model: its token vectors are weaker at word level."""
    if ctx.key.model != DEFAULT_MODEL:
        return
    larger = "bert-base-chinese" if chinese else "bert-base-uncased"
    st.info(_(WEAK_MODEL).format(model=ctx.bundle.label, larger=larger),
            icon=":material/info:")
    offer_model(larger, key=f"ctx_offer_{larger}")


def page_state() -> PageState:
    """The session's PageState: the one place this page reads and writes state of its own."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, PageState):
        state = st.session_state[STATE_KEY] = PageState()
    return state


def forget_stale(key: str, options: Sequence[object]) -> None:
    """A widget's value kept from before that is not an option now (another sentence, another
    corpus): dropped, so the widget starts on its default."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def link_value(key: str, options: Sequence[T], what: str) -> T | None:
    """On a session's first run, the option the link gives for ``key``; a value that is not
    one says so in a line and is dropped from the link."""
    valid, invalid = option_in_link(key, options, lambda _option: set())
    if invalid is not None:
        st.warning(_("The link asks for {what} {value}, which is not available here: showing "
                     "the default instead.").format(what=_(what), value=markdown_code(invalid)),
                   icon=":material/link_off:")
        del st.query_params[key]
    return valid


def layer_slider(layers: tuple[int, ...]) -> int:
    """The layer (an index of hidden_states: 0 is the embedding output), default the last."""
    return layer_picker(LAYER_KEY, layers, _("Layer"), help=_(LAYER_HELP))


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


# The sentence (its tokens) the link's token position was last written for in this session.
WRITTEN_FOR_KEY = "ctx_token_written_for"


def token_picker(query: Query, start: Start) -> int | None:
    """A word token of sentence A (its position in A's own encoding, [CLS] = 0); by default
    ``start``, the first token whose word the corpus holds (core.contexts.first_look). The link
    carries the position as a number (``?ctx_token=5``)."""
    options = [p for p, special in enumerate(query.special) if not special]
    if not options:
        st.info(_("Sentence A has no word token to search from."), icon=":material/info:")
        return None
    asked = link_value(TOKEN_KEY, [str(p) for p in options], N_("token position"))
    if st.session_state.get(WRITTEN_FOR_KEY, query.tokens) != query.tokens:
        # The link's position was this session's own, written for another sentence: a new
        # sentence opens on its own first token (a shared link's position is still read).
        asked = None
        st.session_state.pop(TOKEN_KEY, None)
    forget_stale(TOKEN_KEY, options)   # another sentence: its own default
    default = int(asked) if asked is not None else (
        start.position if start.position in options else options[0])
    position = st.selectbox(
        _("Token of sentence A"), options, index=options.index(default), key=TOKEN_KEY,
        format_func=lambda p: f"{p}: {query.tokens[p]}",
        help=_("Numbered as in sentence A encoded alone: [CLS] is 0."))
    st.query_params[TOKEN_KEY] = str(position)
    st.session_state[WRITTEN_FOR_KEY] = list(query.tokens)
    return position


def try_line(ctx: Context, start: Start) -> None:
    """When sentence A holds no word the corpus has in two senses: one line naming a sentence
    that does, as this page's link with that sentence (the reader's language, this model; the
    Neighbours tab, the first). Only values this run chose go into it, none copied from the
    link it was opened with."""
    if start.found == Found.TWO_SENSES:
        return
    sentence = suggestion(language())
    query = {"lang": language()} if language() != DEFAULT_LANGUAGE else {}
    if ctx.key.model != DEFAULT_MODEL:
        query["model"] = ctx.key.model
    link = "?" + urllib.parse.urlencode(query | {"a": sentence}, quote_via=urllib.parse.quote)
    shown = f"[{markdown_text(sentence)}]({link})"
    if start.found > Found.NOT_IN_CORPUS:
        word = cache.get_first_word(ctx.key.model, language()) or BUILT_IN_WORDS[0]
        explain(_("Sentence A has no word the corpus holds in two senses (such as “{word}”), "
                  "so its neighbours show little of context. Try: {sentence}").format(
            word=word, sentence=shown))
    else:
        explain(_("No word of sentence A is in the corpus, so its neighbours say little. Try: "
                  "{sentence}").format(sentence=shown))


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
    corpus = show_builtin_corpus(ctx.key.model, ctx.bundle.label)
    query = query_or_stop(ctx)
    if corpus is None or query is None:
        return
    start = cache.get_start(ctx.key, BUILT_IN, BUILT_IN_WORDS, corpus)
    try_line(ctx, start)
    left, _right = st.columns([1, 2])
    with left:
        position = token_picker(query, start)
    if position is not None:
        draw_neighbour_layers(ctx, corpus, query, position)
    explain(_("Corpus: {n} sentences, {t} tokens at {layers} layers of {model}, kept in "
              "float16 ({mb} MB); the pass took {s} s.").format(
        n=f"{len(corpus.records):,}", t=f"{corpus.n_tokens:,}", layers=corpus.n_layers,
        model=markdown_text(ctx.bundle.label), mb=f"{corpus.nbytes / 1e6:.1f}",
        s=f"{corpus.seconds:.1f}"))


def neighbours_or_stop(ctx: Context, source: tuple, position: int, layer: int,
                       corpus: ContextVectors) -> list[Neighbour] | None:
    """``core.contexts.nearest_to_query`` of token ``position`` at ``layer`` (cached); None,
    its message shown, for what core refuses."""
    try:
        return cache.get_neighbours(ctx.key, source, position, layer, K, corpus)
    except ExplorerError as exc:
        show_error(exc)
        return None


def neighbour_picture(ctx: Context, corpus: ContextVectors, query: Query, position: int,
                      layer: int, first: list[Neighbour]) -> str:
    """The nearest corpus tokens to the token at ``position`` at ``layer`` (core.contexts'
    nearest_to_query, cached) as a table under what to notice in it (``first``: layer 0's)."""
    found = neighbours_or_stop(ctx, BUILT_IN, position, layer, corpus)
    if found is None:   # its message shown; core checked the position at layer 0 already
        return ""
    token = query.tokens[position]
    senses = list(dict.fromkeys(n.sense for n in found if n.sense and n.word
                                and n.word.lower() == token.lower()))
    table = neighbours_html(found, sense_colours(senses), "ctx_neighbours",
                            figure=f"ctx_neighbours_layer{layer}")
    return with_words(notice(found, token, layer, first if layer else []), table)


def draw_neighbour_layers(ctx: Context, corpus: ContextVectors, query: Query,
                          position: int) -> None:
    """The layer slider over every layer's neighbours, switched in the browser
    (components.picture_switcher), then a note on [UNK]. Nothing when core refuses the token
    (its message shown)."""
    first = neighbours_or_stop(ctx, BUILT_IN, position, 0, corpus)
    if first is None:
        return
    layers = list(corpus.layers)
    # Drawn here, outside the slider's fragment: a move's report reruns it with what it drew.
    run_part(draw_layer_switcher, layers,
             Drawn(lambda i: neighbour_picture(ctx, corpus, query, position, layers[i], first)))
    if query.tokens[position] == ctx.bundle.tokenizer.unk_token:
        st.info(_("This token is [UNK]: {model}'s vocabulary has no entry for it, so its "
                  "neighbours are other unknown characters and say little.").format(
            model=ctx.bundle.label), icon=":material/help:")


def draw_layer_switcher(layers: list[int], pictures: Drawn) -> None:
    """In a fragment of its own, holding nothing else: a move reports the layer (nothing here
    is redrawn), so the server's copy of the address has it when the token picker or a tab
    reruns the page later. Each layer's picture is drawn when sent."""
    picture_slider(layer_axis(LAYER_KEY, layers, _("Layer"), named=False, help=_(LAYER_HELP)),
                   pictures)


def word_picker(ctx: Context, words: list[str]) -> str:
    """A labelled word of the built-in corpus; by default the first of the reader's language
    that the model reads without [UNK] (core.contexts.first_look.first_word)."""
    link_value(WORD_KEY, words, N_("word"))
    forget_stale(WORD_KEY, words)
    default = cache.get_first_word(ctx.key.model, language()) or words[0]
    default = default if default in words else words[0]
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
    corpus = show_builtin_corpus(ctx.key.model, ctx.bundle.label)
    if corpus is None:
        return
    word = word_picker(ctx, labelled_words(corpus))
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
    corpus = show_builtin_corpus(ctx.key.model, ctx.bundle.label)
    if corpus is None:
        return
    words = labelled_words(corpus)
    left, mid = st.columns([1, 1])
    with left:
        kind = st.radio(_("Points"), (MAP_WORD, MAP_SENTENCES), format_func=_, key=MAP_KEY,
                        bind="query-params", horizontal=True)
    with mid:
        word = word_picker(ctx, words)
    layer = layer_slider(corpus.layers)
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
        title = ngettext(
            "“{word}” in {n} sentence, layer {layer}, {model}",
            "“{word}” in {n} sentences, layer {layer}, {model}",
            len(proj.records)).format(
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

def draw_own_corpus(ctx: Context) -> None:
    st.subheader(_("Your own corpus"))
    explain(_("Paste sentences or upload a file: they run through {model} in the background "
              "(the page keeps working), then sentence A's tokens find their nearest neighbours "
              "among yours, and your sentences are mapped, coloured by your labels. Everyone "
              "who brings the same sentences shares one run.").format(
        model=markdown_text(ctx.bundle.label)))
    state = page_state()
    source = read_source(state)
    if source is None:
        st.info(_("Paste sentences above or upload a file."), icon=":material/playlist_add:")
        return
    columns = (state.sentence_column, state.label_column)
    table, corpus, sentence, label = cache.get_user_corpus(ctx.key.model, source, columns)
    if not table.refused and table.width > 1:
        chosen = column_pickers(table, sentence, label)
        if chosen != (sentence, label):
            state.sentence_column, state.label_column = chosen
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
    draw_own_results(ctx, vectors, corpus.key())


def draw_own_results(ctx: Context, vectors: ContextVectors, digest: str) -> None:
    query = query_or_stop(ctx)
    if query is None:
        return
    source = ("own", digest, vectors.layers)
    left, right = st.columns([1, 2])
    with left:
        position = token_picker(query, cache.get_start(ctx.key, source, BUILT_IN_WORDS,
                                                       vectors))
    with right:
        layer = layer_slider(vectors.layers)
    found = None if position is None else neighbours_or_stop(ctx, source, position, layer,
                                                             vectors)
    if found is not None:
        senses = list(dict.fromkeys(n.sense for n in found if n.sense))
        st.html(neighbours_html(found, sense_colours(senses), "ctx_own_neighbours", own=True))
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
    title = ngettext(
        "Your {n} sentence (the mean of its tokens), layer {layer}, {model}",
        "Your {n} sentences (mean of their tokens), layer {layer}, {model}",
        len(proj.records)).format(
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
