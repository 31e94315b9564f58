"""Encoder: one encoder layer taken apart, attention by head, the feed-forward block, the pooler
and one token's path through every layer. Only the open tab's section runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import streamlit as st

from components.analysis_view import (
    analysis_of,
    model_of,
    show_error,
    show_notices,
    stop_on_input_error,
)
from components.check import draw_check as check_widget
from components.controls import by_word_toggle
from components.downloads import download_matrix, from_cache
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import draw_heatmap, exact_toggle
from components.i18n import N_, _, language
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import plotly_text, token_labels
from components.pickers import head_axis, layer_axis, layer_picker
from components.picture_switcher import Axis, Drawn, axis_slider, picture_grid
from components.sections import Section, open_section, run_part, run_section
from components.value_picture import value_picture
from core import ExplorerError, ModelBundle
from core.encoder import (
    CLARK_2019,
    STEP_NAMES,
    EncoderSteps,
    HeadView,
    head_slice,
    residual_shares,
    token_trajectory,
    without_specials,
)
from core.encoder.ffn import feed_forward_checks
from pages.encoder import cache
from pages.encoder import figures as fg
from pages.encoder.records import AttentionMaps, Context, Pick

TITLE = N_("Encoder")
EXPLANATION = N_(
    "Each encoder layer does two things to every token: self-attention mixes in information from "
    "the other tokens (each attention head with its own queries, keys and values), then a "
    "feed-forward network rewrites each token on its own. Both are added back to the token "
    "through a residual connection and normalised with LayerNorm. Pick a layer and a head; every "
    "number below is computed live and checked against the model."
)
SECTION_KEY, LAYER_KEY, HEAD_KEY = "enc_section", "enc_layer", "enc_head"
STEP_KEY, TOKEN_KEY, HEAD_VIEW_KEY = "enc_step", "enc_token", "enc_head_view"
HEAD_STEPS_KEY = "enc_head_steps"
EXACT_KEY = "enc_exact"
# The tabs that pick a layer (their English labels, as the sections name them).
WALK, ATTENTION, FEED_FORWARD = N_("Layer walk"), N_("Attention"), N_("Feed-forward")

WORDS_KEY = "enc_words"
# Every layer's and head's attention sent at once (layers x heads x tokens²): 6 x 12 x 64² cells
# is 72 pictures of 64 tokens. Longer inputs, or more layers and heads, pick the layer on the
# server and send that layer's heads only.
GRID_CELLS = 6 * 12 * 64 ** 2


# Float32 steps against float64 formulas: rounding grows with the size of the values (a sum of
# 1,536 products reaching |30| differs by ~1e-4), so the tolerance is relative to the largest
# |value| of the step.
RELATIVE_TOLERANCE = 1e-5
POOLER_TOLERANCE = 1e-5   # |tanh| <= 1


def layers_in_browser(label: str, exact: bool, key: InputKey, bundle: ModelBundle) -> bool:
    """Does the open tab switch its layer (and head) in the browser? The Attention tab and the
    Layer walk as images, when every layer's and head's picture together stay small
    (GRID_CELLS); else the layer is picked on the server, and the Attention tab picks its head
    with the head's map (draw_head_map: switched in the browser, or exact on the server)."""
    if label not in HEAD_TABS or exact:
        return False
    config = bundle.config
    with stop_on_input_error():
        tokens = len(analysis_of(key).encoding.tokens)   # its notices, shown once here
    return config.num_hidden_layers * config.num_attention_heads * tokens ** 2 <= GRID_CELLS


def draw_pickers(bundle: ModelBundle, with_head: bool) -> Pick:
    """The layer picker, and the head picker where the tab shows one head."""
    config = bundle.config
    left, right = st.columns(2)
    layer = layer_picker(LAYER_KEY, range(1, config.num_hidden_layers + 1), _("Encoder layer"),
                         default=1, named=True, where=left)
    head = 0
    if with_head:
        head = axis_slider(head_slider(range(config.num_attention_heads)),
                           where=right)
    return Pick(layer, head)


def labels_of(ctx: Context) -> list[str]:
    return token_labels(ctx.encoding.tokens)


def model_title(ctx: Context, what: str) -> str:
    return _("{what} · {model}, layer {layer}").format(what=what, model=ctx.bundle.label,
                                                        layer=ctx.layer_steps.layer)


def steps_again(ctx: Context) -> Callable[[], EncoderSteps]:
    """How a download gets this layer's steps back when it is clicked: from the cache, by the
    input's key (components.downloads.from_cache says why not the arrays)."""
    return from_cache(cache.get_steps, ctx.key, ctx.layer_steps.layer)


def step_of(name: str) -> Callable[[EncoderSteps], np.ndarray]:
    """What a download takes out of a layer's steps: the step ``name``."""
    def part(steps: EncoderSteps) -> np.ndarray:
        return steps.steps[name]
    return part


def show_matrix(ctx: Context, matrix: np.ndarray, name: str, title: str, exact: bool,
                rebuild: Callable[[], np.ndarray], **kw) -> None:
    """A heatmap of ``matrix`` (an image, or with ``exact`` the interactive figure) with its
    CSV/NPY downloads of the whole matrix, which ``rebuild`` makes again on click."""
    labels = labels_of(ctx)
    draw_heatmap(fg.matrix_image(matrix, labels, title, **kw), f"fig_{name}", exact,
                 lambda: fg.matrix_figure(matrix, labels, title, **kw))
    download_matrix(name, rebuild, [f"{i}:{t}" for i, t in enumerate(ctx.encoding.tokens)],
                    key=name)


def step_tolerance(values: np.ndarray) -> float:
    """RELATIVE_TOLERANCE times the step's largest |value| (at least 1), to two digits; the
    padded keys' float32 minimum among the scores is no value to scale by."""
    real = np.abs(values[np.abs(values) < 1e30])
    scale = max(1.0, float(real.max())) if real.size else 1.0
    return float(f"{RELATIVE_TOLERANCE * scale:.2g}")


def draw_check(ctx: Context, name: str) -> None:
    """One step's live check: ours against the model or a float64 formula, with its verdict."""
    values = ctx.layer_steps.steps[name]
    # Softmax weights are compared bit for bit with the model's own: no scale to allow for.
    tolerance = RELATIVE_TOLERANCE if name == "attention_probs" else step_tolerance(values)
    check_widget(ctx.layer_steps.checks[name], tolerance,
                 _("{step}, ours vs {what}").format(step=name, what=_(fg.STEP_TEXT[name][1])))


def draw_layer_diagram(bundle: ModelBundle) -> None:
    """The Layer walk's title and its diagram, above the tab's fragment: the browser lays a
    diagram out again whenever it is sent, so it is drawn once per page run, not on every move
    of the layer or head picker. T, not this input's length, and no layer number: the same
    figure for every layer and sentence."""
    st.subheader(_("One encoder layer, step by step"))
    st.graphviz_chart(fg.layer_dot(bundle.config, "T"))


def draw_layer_walk(ctx: Context) -> None:
    """One step of the picked layer at a time, then the picked head's attention (the diagram
    is above: draw_layer_diagram). As images with every layer sent (ctx.steps None), the layer,
    and the head of a per-head step, are switched in the browser (draw_walk_pictures)."""
    explain(_("T = {n}: the tokens of this input.").format(n=len(ctx.encoding.tokens)))
    name = st.select_slider(_("Step"), STEP_NAMES, key=STEP_KEY, bind="query-params")
    exact = ctx.exact
    explain(_(fg.STEP_TEXT[name][0]))
    first = ctx.steps if ctx.steps is not None else cache.get_steps(ctx.key, 1)
    is_square = name in ("attention_scores", "attention_probs")
    if name == "attention_scores" and first.mask_bias is not None:
        explain(_("Padded key columns hold float32's lowest value (about −3.4e38) so softmax "
                  "gives them 0; they are drawn at the lowest real score, or the colour scale "
                  "would hide every real difference."))
    width = first.steps[name].shape[-1]
    if not is_square and width > fg.MAX_COLUMNS:
        explain(_("The first {k} of {n} columns are drawn; the downloads hold them all.").format(
            k=fg.MAX_COLUMNS, n=width))
    if ctx.steps is None:
        run_part(draw_walk_pictures, ctx, name)
        return
    draw_step(ctx, name, exact)
    draw_check(ctx, name)
    draw_head_steps(ctx, exact)


def step_title(ctx: Context, name: str) -> tuple[str, str]:
    """The step's title on its figure and its download's name, for the picked layer and head."""
    what, file = fg.step_name(ctx.layer_steps, name, ctx.head_view.head)
    return model_title(ctx, what), file


def draw_step(ctx: Context, name: str, exact: bool) -> None:
    """The step of the picked layer (and head), with its downloads."""
    is_square = name in ("attention_scores", "attention_probs")
    title, file = step_title(ctx, name)
    again, head = steps_again(ctx), ctx.head_view.head
    show_matrix(ctx, fg.step_matrix(ctx.layer_steps, name, head), file, title, exact,
                lambda: fg.step_matrix(again(), name, head),
                cols=labels_of(ctx) if is_square else None, probs=name == "attention_probs")


def draw_walk_pictures(ctx: Context, name: str) -> None:
    """The step of every layer (and of every head, for a per-head step) sent once and switched
    in the browser, keyed fig_<download name> as draw_step's; a move reports the layer and
    head to this fragment, which then redraws what the server draws from them: the step's
    downloads and live check, and the head's matrices. For a step of the whole layer the head
    is picked on the server, above the head's matrices it picks."""
    config = ctx.bundle.config
    layers, heads = range(1, config.num_hidden_layers + 1), list(range(config.num_attention_heads))
    per_head = cache.get_steps(ctx.key, 1).steps[name].ndim == 3
    key, lang, n_heads = ctx.key, language(), len(heads) if per_head else 1

    def one(i: int) -> str:
        layer, head = divmod(i, n_heads)
        steps = cache.get_steps(key, layer + 1)
        return fg.walk_picture(steps, name, head, token_labels(steps.encoding.tokens),
                               ctx.bundle.label)

    axes: list[Axis] = [layer_axis(LAYER_KEY, layers, _("Encoder layer"), default=1)]
    if per_head:
        axes.append(head_slider(heads))
    picked = picture_grid(axes, Drawn(one, lambda: cache.get_walk_pictures(key, name, lang)))
    layer = int(picked[0])
    head = int(picked[1]) if per_head else axis_slider(head_slider(heads))
    steps = cache.get_steps(ctx.key, layer)
    shown = Context(ctx.key, ctx.bundle, steps, head_slice(steps, head))
    again = steps_again(shown)
    download_matrix(step_title(shown, name)[1], lambda: fg.step_matrix(again(), name, head),
                    [f"{i}:{t}" for i, t in enumerate(shown.encoding.tokens)],
                    key=step_title(shown, name)[1])
    draw_check(shown, name)
    draw_head_steps(shown, exact=False)


def head_slider(heads: Iterable[int]) -> Axis[int]:
    """The head slider's values: "head 3" in the reader's language."""
    return head_axis(HEAD_KEY, heads, _("Attention head"))


def draw_head_steps(ctx: Context, exact: bool) -> None:
    v = ctx.head_view
    st.subheader(_("Head {n}: Q, K, V, scores, softmax, weights × V").format(n=v.head))
    explain(_("One head works in {d} dimensions: its scores are its queries against its keys "
              "divided by √{d}, softmax turns each row into weights, and the weights mix its "
              "values.").format(d=ctx.layer_steps.head_dim))
    views: dict[str, tuple[str, Callable[[HeadView, EncoderSteps], np.ndarray], bool]] = {
        "q": (N_("query Q"), lambda h, _s: h.query, False),
        "k": (N_("key K"), lambda h, _s: h.key, False),
        "v": (N_("value V"), lambda h, _s: h.value, False),
        "scores": (N_("scores"), lambda h, s: fg.clipped_scores(h.scores, s.mask_bias), True),
        "probs": (N_("softmax"), lambda h, _s: h.probs, True),
        "wv": (N_("weights × V"), lambda h, _s: h.weighted, False),
    }
    # One matrix at a time, and only when asked for: each plotly figure that changes is rebuilt
    # in the browser on every rerun, and six at once made this tab several times slower.
    if not st.toggle(_("Show this head's matrices"), key=HEAD_STEPS_KEY, bind="query-params"):
        return
    key = st.segmented_control(_("Matrix"), list(views), format_func=lambda k: _(views[k][0]),
                               default="q", key=HEAD_VIEW_KEY, bind="query-params",
                               required=True) or "q"
    title, matrix_of, square = views[key]
    again, head = steps_again(ctx), v.head

    def rebuild() -> np.ndarray:
        steps = again()
        return matrix_of(head_slice(steps, head), steps)

    layer = ctx.layer_steps.layer
    show_matrix(ctx, matrix_of(v, ctx.layer_steps), f"head{v.head}_{key}_layer{layer}",
                model_title(ctx, _(title)), exact, rebuild,
                cols=labels_of(ctx) if square else None, probs=key == "probs")


def attention_shown(steps: EncoderSteps, hide: bool) -> np.ndarray:
    """(heads, T, T) attention of the layer, or without [CLS], [SEP] and padding, renormalised."""
    probs = steps.steps["attention_probs"]
    enc = steps.encoding
    return without_specials(probs, enc.special_tokens_mask, enc.attention_mask) if hide \
        else probs


def explain_attention(hide: bool, by_word: bool) -> None:
    """What the maps below show: by word (Clark et al.), with [CLS], [SEP] and padding hidden
    (exBERT), or both."""
    if by_word:
        explain(_("By word, as Clark et al. 2019 do: attention to a word is the sum of the "
                  "attention to its pieces, attention from a word the mean over its pieces' rows, "
                  "so each row still sums to 1. Each word keeps its first token's position."))
        if hide:
            explain(_("[CLS], [SEP] and padding are dropped after grouping, and each row is "
                      "divided by its sum, so it adds up to 1 over the words left."))
    elif hide:
        explain(_("As exBERT does: the rows and columns of [CLS], [SEP] and padding are dropped "
                  "and each row is divided by its sum, so it adds up to 1 over the words left. "
                  "A cell now reads “of this token's attention to words, the share this word "
                  "gets”; a head that mostly looks at [SEP] shows its small leftovers enlarged."))


def explain_rows(by_word: bool, boundary: int | None) -> None:
    """How to read a map, and where to go to ask whether attention shows what matters."""
    rows = _("Rows are query words, columns the words they attend to; each row sums to 1.") \
        if by_word else _("Rows are queries, columns the keys they attend to; each row sums to 1.")
    explain(rows + (" " + _("The red lines mark where sentence B starts.")
                    if boundary is not None else ""))
    st.page_link("pages/attribution/page.py", icon=":material/insights:", label=_(
        "Does attention show what matters? Attribution sets it beside rollout, flow and gradients"))


def draw_every_head(ctx: Context, probs: np.ndarray, layer: int, by_word: bool,
                    boundary: int | None, rebuild: Callable[[], np.ndarray]) -> None:
    """Every head of the layer as small maps, and their download (``rebuild`` makes the
    (heads, n, n) array again on click)."""
    word = "_by_word" if by_word else ""
    st.subheader((_("Every head of layer {n}, by word") if by_word
                  else _("Every head of layer {n}")).format(n=layer))
    title = _("{what} · {model}, layer {layer}").format(
        what=_("all heads, by word") if by_word else _("all heads"), model=ctx.bundle.label,
        layer=layer)
    show_figure(fg.head_grid(probs, title, boundary), f"all_heads{word}_layer{layer}",
                key="fig_att_grid")
    width = probs.shape[-1]
    download_matrix(f"all_heads{word}_layer{layer}", lambda: rebuild().reshape(-1, width),
                    key="all_heads")


def draw_attention(ctx: Context) -> None:
    """The picked head as a token x token map, then every head of the layer."""
    st.subheader(_("Who attends to whom"))
    enc = ctx.encoding
    left, right = st.columns(2)
    hide = left.toggle(_("Hide [CLS] and [SEP]"), key="enc_hide_specials")
    by_word = by_word_toggle(WORDS_KEY, right)
    if ctx.steps is None:
        draw_attention_grid(ctx, hide, by_word)
        return
    if by_word:
        draw_attention_by_word(ctx, hide)
        return
    probs = attention_shown(ctx.layer_steps, hide)
    explain_attention(hide, by_word=False)
    shown = fg.token_rows(enc, hide)
    if not shown.labels:
        st.info(_("This input has no tokens left once [CLS] and [SEP] are hidden."))
        return
    labels, rows, boundary = list(shown.labels), list(shown.rows), shown.boundary
    again, layer = steps_again(ctx), ctx.layer_steps.layer
    run_part(draw_head_map, ctx, probs, labels, boundary, _("head {n}"),
             f"attention_layer{layer}_head{{n}}",
             lambda h: attention_shown(again(), hide)[h], rows)
    explain_rows(False, boundary)
    draw_every_head(ctx, probs, layer, False, boundary, lambda: attention_shown(again(), hide))


def draw_head_map(ctx: Context, probs: np.ndarray, labels: list[str], boundary: int | None,
                  what: str, name: str, head_matrix: Callable[[int], np.ndarray],
                  rows: list[str]) -> None:
    """The picked head's map (components.value_picture): every head of the layer sent once and
    switched in the browser by the head slider, or with exact values the server's head slider
    and the head's interactive figure. A move reruns this fragment, which then redraws only the
    head's downloads under the map."""
    heads = list(range(probs.shape[0]))
    model, layer = ctx.bundle.label, ctx.layer_steps.layer

    def figure(head: int) -> None:
        fig = fg.matrix_figure(probs[head], labels, model_title(ctx, what.format(n=head)),
                               cols=labels, probs=True)
        show_figure(fg.add_boundary(fig, boundary), name.format(n=head), key="fig_att_head")

    head = value_picture(head_slider(heads), lambda h: fg.head_picture(
        probs, labels, boundary, what, model, layer, h), figure, exact=ctx.exact)
    download_matrix(name.format(n=head), lambda: head_matrix(head), rows,
                    key=name.format(n=head))


def draw_attention_grid(ctx: Context, hide: bool, by_word: bool) -> None:
    """The Attention tab with every layer's and head's map sent once: the layer and the head
    are two sliders switched in the browser (draw_grid_pictures), the rest as draw_attention."""
    maps = cache.get_attention_maps(ctx.key, hide, by_word)
    explain_attention(hide, by_word)
    if not maps.labels:
        st.info(_("This input has no tokens left once [CLS] and [SEP] are hidden."))
        return
    run_part(draw_grid_pictures, ctx, maps, hide, by_word)
    explain_rows(by_word, maps.boundary)


def draw_grid_pictures(ctx: Context, maps: AttentionMaps, hide: bool, by_word: bool) -> None:
    """The picked layer's and head's map, every one sent once and switched in the browser by the
    layer and head sliders. A move reports both to this fragment, which then redraws only what
    the server draws from them: the head's downloads, and every head of the layer."""
    config = ctx.bundle.config
    layers, heads = range(1, config.num_hidden_layers + 1), list(range(config.num_attention_heads))
    key, word, lang, model = ctx.key, "_by_word" if by_word else "", language(), ctx.bundle.label
    layer, head = picture_grid([
        layer_axis(LAYER_KEY, layers, _("Encoder layer"), default=1), head_slider(heads)],
        Drawn(lambda i: fg.attention_picture(maps, model, by_word, i),
              lambda: cache.get_attention_pictures(key, hide, by_word, lang)))

    def shown() -> np.ndarray:
        return cache.get_attention_maps(key, hide, by_word).probs[layer - 1]

    name = f"attention{word}_layer{layer}_head{head}"
    download_matrix(name, lambda: shown()[head], list(maps.rows), key=name)
    draw_every_head(ctx, maps.probs[layer - 1], layer, by_word, maps.boundary, shown)


def draw_attention_by_word(ctx: Context, hide: bool) -> None:
    """The Attention tab by word: the picked head as a word x word map, then every head."""
    layer = ctx.layer_steps.layer
    shown = cache.get_word_attention(ctx.key, layer, hide)
    explain_attention(hide, by_word=True)
    if not shown.words:
        st.info(_("This input has no tokens left once [CLS] and [SEP] are hidden."))
        return
    named = fg.word_rows(shown.words)
    labels, rows, boundary = list(named.labels), list(named.rows), named.boundary
    key = ctx.key
    run_part(draw_head_map, ctx, shown.probs, labels, boundary, _("head {n}, by word"),
             f"attention_by_word_layer{layer}_head{{n}}",
             lambda h: cache.get_word_attention(key, layer, hide).probs[h], rows)
    explain_rows(True, boundary)
    draw_every_head(ctx, shown.probs, layer, True, boundary,
                    lambda: cache.get_word_attention(key, layer, hide).probs)


def draw_atlas(ctx: Context) -> None:
    """Layers x heads of one measure, for this input and over the corpus, beside Clark et al."""
    st.subheader(_("Head atlas"))
    explain(_("Each cell summarises one head by where its attention goes on average, as Clark "
              "et al. 2019 did for bert-base."))
    by_word = by_word_toggle(WORDS_KEY)
    names = fg.WORD_MEASURES if by_word else fg.MEASURES
    measure = st.radio(_("Measure"), list(names), format_func=lambda m: _(names[m]),
                       horizontal=True, key="enc_measure")
    if by_word:
        explain(_("By word: each input's attention grouped into words first (to a word the sum "
                  "over its pieces, from a word the mean), so “previous” and “next” mean the "
                  "neighbouring word and a word's own pieces count as itself."))
    with st.spinner(_("Averaging the attention over the corpus…")):
        corpus = cache.get_corpus_atlas(ctx.bundle.name, by_word)
    for atlas, what, key in ((cache.get_input_atlas(ctx.key, by_word), _("this input"),
                              "input"),
                             (corpus, _("corpus of {n} sentences").format(n=corpus.n_inputs),
                              "corpus")):
        title = _("{measure} · {what} · {model}").format(
            measure=_(names[measure]), what=what, model=ctx.bundle.label)
        show_figure(fg.atlas_figure(atlas, measure, title), f"atlas_{measure}_{key}",
                    key=f"fig_atlas_{key}")
        download_matrix(f"atlas_{measure}_{key}", fg.atlas_matrix(atlas, measure),
                        key=f"atlas_{key}")
    draw_clark(ctx)


def draw_clark(ctx: Context) -> None:
    c = CLARK_2019
    st.subheader(_("Clark et al. 2019, for comparison"))
    explain(_("These figures are for another model, {ref} (12 layers, measured on {data}); the "
              "maps above are for the loaded model, {model} ({n} layers).").format(
        ref=c.model, data=_("1,000 Wikipedia segments of at most 128 tokens"),
        model=ctx.bundle.label, n=ctx.bundle.config.num_hidden_layers))
    st.markdown("\n".join("- " + line for line in (
        _("In layers {a}–{b}, over {share:.0%} of all attention goes to [SEP].").format(
            a=c.sep_layers[0], b=c.sep_layers[1], share=c.sep_share_min),
        _("[SEP] sends over {share:.0%} of its attention to [SEP].").format(
            share=c.sep_to_sep_min),
        _("{p} heads put over {t:.0%} on the previous token, {n} on the next.").format(
            p=c.prev_heads, n=c.next_heads, t=c.head_threshold),
        _("[CLS]'s attention in the last layer has entropy {e} nats.").format(
            e=c.last_layer_cls_entropy),
        _("Broad heads of the first layers put at most {m:.0%} on any one word.").format(
            m=c.broad_max_share),
    )))
    explain(_("Source: {source}.").format(source=c.source))


def draw_ffn_diagram(bundle: ModelBundle) -> None:
    """The Feed-forward tab's title and its diagram, above the tab's fragment (as
    draw_layer_diagram)."""
    config = bundle.config
    st.subheader(_("Feed-forward network"))
    explain(_("Every token goes through the same two linear layers on its own: {h} → {i} → {h}, "
              "with GELU between them.").format(h=config.hidden_size, i=config.intermediate_size))
    st.graphviz_chart(fg.widening_dot(config, "T"))


def draw_ffn(ctx: Context) -> None:
    """Before/after GELU and the residual stream against its updates (the widening is above:
    draw_ffn_diagram)."""
    s = ctx.layer_steps.steps
    real = np.asarray(ctx.encoding.attention_mask, dtype=bool)
    explain(_("T = {n}: the tokens of this input.").format(n=len(ctx.encoding.tokens)))
    show_figure(fg.ffn_histogram(s["intermediate.dense"][real], s["intermediate"][real],
                                 model_title(ctx, _("before and after GELU"))),
                f"gelu_layer{ctx.layer_steps.layer}", key="fig_gelu")
    rows = [f"{i}:{t}" for i, t in enumerate(ctx.encoding.tokens)]
    for step, name, key in (("intermediate.dense", "intermediate_dense", "ffn_before"),
                            ("intermediate", "intermediate", "ffn_after")):
        download_matrix(f"{name}_layer{ctx.layer_steps.layer}",
                        from_cache(cache.get_steps, ctx.key, ctx.layer_steps.layer,
                                   part=step_of(step)),
                        rows, key=key)
    draw_ffn_checks(ctx)
    st.subheader(_("Residual connection: how much each update changes a token"))
    shares = residual_shares(ctx.layer_steps)
    explain(_("The norm of the layer input beside the norms of the attention update and the "
              "feed-forward update added to it. Updates much smaller than the input mean the "
              "layer only nudges the token, which is why a token stays recognisable."))
    show_figure(fg.residual_figure(shares, labels_of(ctx), model_title(ctx, _("norms"))),
                f"residual_layer{ctx.layer_steps.layer}", key="fig_residual")
    download_matrix(f"residual_norms_layer{ctx.layer_steps.layer}", fg.residual_matrix(shares),
                    rows, key="residual")


def draw_ffn_checks(ctx: Context) -> None:
    """Each step of the block against its float64 formula, then the model's own intermediate
    and output modules run on our attention.output."""
    st.subheader(_("Live checks of the feed-forward block"))
    for name in ("intermediate.dense", "intermediate", "output.dense", "output"):
        draw_check(ctx, name)
    module = feed_forward_checks(ctx.bundle, ctx.layer_steps)
    s = ctx.layer_steps.steps
    check_widget(module.intermediate, step_tolerance(s["intermediate"]),
                 _("GELU(intermediate.dense), ours vs the model's own layer.intermediate "
                   "module on our attention.output"))
    check_widget(module.output, step_tolerance(s["output"]),
                 _("LayerNorm(output.dense + attention.output), ours vs the model's own "
                   "layer.output module on our intermediate and attention.output"))
    explain(_("Tolerance: {rel:g} times the step's largest |value|, the rounding of float32 "
              "sums.").format(rel=RELATIVE_TOLERANCE))


def draw_pooler(ctx: Context) -> None:
    st.subheader(_("Pooler"))
    explain(_("The pooler takes only the last layer's [CLS] vector, applies a linear layer "
              "(pooler.dense) and tanh. BERT's next-sentence prediction head was trained on "
              "this vector, and sentence classification after fine-tuning usually reads it."))
    try:
        pooled = cache.pooler_of(ctx.key, ctx.analysis())
    except ExplorerError as exc:  # a model saved without a pooler
        show_error(exc)
        return
    title = _("first {k} dimensions · {model}").format(k=fg.MAX_COLUMNS, model=ctx.bundle.label)
    show_figure(fg.pooler_figure(pooled, title), "pooler", key="fig_pooler")
    check_widget(pooled.error, POOLER_TOLERANCE,
                 _("tanh(pooler.dense([CLS])), ours vs the model's pooler_output"))
    download_matrix("pooler_cls_dense_tanh", fg.pooler_matrix(pooled), key="pooler")


def token_label(tokens: list[str]) -> Callable[[int], str]:
    return lambda i: f"{i} {tokens[i]}"


def draw_layers(ctx: Context) -> None:
    st.subheader(_("One token across the layers"))
    tokens = ctx.encoding.tokens
    position = st.selectbox(_("Token"), list(range(len(tokens))), key=TOKEN_KEY,
                            bind="query-params", format_func=token_label(tokens))
    path = token_trajectory(ctx.analysis(), int(position or 0))
    explain(_("Its norm at every stage, and its cosine to itself one layer earlier and to its "
              "input embedding: a cosine near 1 means the layer kept the direction it was "
              "given."))
    title = _("{token} · {model}").format(token=plotly_text(path.token), model=ctx.bundle.label)
    show_figure(fg.trajectory_figure(path, title), "token_trajectory", key="fig_trajectory")
    download_matrix("token_trajectory", fg.trajectory_matrix(path), list(path.stages),
                    key="trajectory")


SECTIONS = (
    Section(label=WALK, draw=draw_layer_walk),
    Section(label=ATTENTION, draw=draw_attention),
    Section(label=N_("Head atlas"), draw=draw_atlas),
    Section(label=FEED_FORWARD, draw=draw_ffn),
    Section(label=N_("Pooler"), draw=draw_pooler),
    Section(label=N_("Across layers"), draw=draw_layers),
)


# The tabs that read the picked layer, and of those the ones that show one head.
LAYER_TABS, HEAD_TABS = {WALK, ATTENTION, FEED_FORWARD}, {WALK, ATTENTION}
# What a tab draws above its pickers, outside its fragment: the same for every layer and head.
DIAGRAMS: dict[str, Callable[[ModelBundle], None]] = {
    WALK: draw_layer_diagram, FEED_FORWARD: draw_ffn_diagram}


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    label, area = open_section([s.label for s in SECTIONS], SECTION_KEY)
    if label in DIAGRAMS:
        with area:
            DIAGRAMS[label](bundle)
    # A fragment: the layer and head pickers and the tab's options rerun only the tab.
    run_section(area, draw_tab, label, key, bundle)


def draw_tab(label: str, key: InputKey, bundle: ModelBundle) -> None:
    """The open tab, with the exact-values switch and the layer and head pickers only where
    they change what it shows (layers_in_browser).

    The whole model's analysis only for the tabs that use it (Context.analysis): the same cached
    one as the other pages, without attention weights; only the head atlas asks for every
    layer's weights.
    """
    # Drawn first: how the layer and head are picked depends on it.
    exact = exact_toggle(EXACT_KEY) if label in HEAD_TABS else False
    if layers_in_browser(label, exact, key, bundle):
        context = Context(key, bundle, None, None)   # every layer: switched in the browser
    elif label in LAYER_TABS:
        # The Attention tab picks its head with the head's map (draw_head_map).
        pick = draw_pickers(bundle, with_head=label == WALK)
        with stop_on_input_error():
            steps = cache.get_steps(key, pick.layer)
        show_notices(steps.encoding)
        context = Context(key, bundle, steps, head_slice(steps, pick.head), exact)
    else:
        context = Context(key, bundle, None, None)
        analysis_of(key)   # its notices (too long, cut), or why the text cannot be read
    next(s for s in SECTIONS if s.label == label).draw(context)


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
