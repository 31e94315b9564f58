"""Pretraining: how BERT learned (MLM masking, [MASK] prediction, next sentence) and the four
ways it is fine-tuned, all on the current input."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.analysis_view import encoding_of, model_of, show_error
from components.controls import whole_number
from components.explain import explain, page_header
from components.html_table import draw_table
from components.i18n import N_, _
from components.inputs import shared_inputs
from components.labels import markdown_code, markdown_template, markdown_text
from components.model_picker import offer_model
from components.sections import Section, draw_sections
from components.unk_note import draw_unk_note
from components.url_values import number_in_link
from core import ExplorerError
from core.pretraining import MaskLens
from core.settings import prepare_command
from pages.pretraining import cache
from pages.pretraining import figures as fig
from pages.pretraining.records import Context, MaskSettings

TITLE = N_("Pretraining")
EXPLANATION = N_(
    "BERT learned from plain text with two tasks: the masked language model (hide some tokens, "
    "guess them back) and next-sentence prediction (does sentence B follow sentence A?). Then "
    "a small new layer on top is trained for each real task: fine-tuning. Every view here runs "
    "on the sentences in the sidebar."
)
SECTION_KEY = "pre_section"
SEED_KEY, PROB_KEY, WWM_KEY = "pre_seed", "pre_prob", "pre_wwm"
TEXT_KEY, SOURCE_KEY, PICK_KEY = "pre_text", "pre_source", "pre_pick"
TOPK_KEY, GUESS_KEY, REVEAL_KEY = "pre_topk", "pre_guess", "pre_reveal"
CLASSES_KEY = "pre_classes"
LENS_DECODER_KEY, LENS_MASK_KEY = "pre_lens_decoder", "pre_lens_mask"
NLI_CLASSES = 3   # entailment, neutral, contradiction
MAX_SEED = 10**6
PROB_MIN, PROB_MAX, PROB_STEP, PROB_DEFAULT = 0.05, 0.5, 0.05, 0.15
DEFAULT_TEXT = "The capital of France is [MASK]."
TYPED, FROM_A = N_("Type a text with [MASK]"), N_("Mask a token of sentence A")
# How to get a checkpoint with both heads (serving/download.py fetches config, vocabulary and the
# checkpoint's own model.safetensors, where a re-saved BertModel would have dropped cls.*).
HEADS_MODEL = "bert-base-uncased"
COMMANDS = (prepare_command(HEADS_MODEL), prepare_command(HEADS_MODEL, "--dir", "models"))
NO_HEAD = N_(
    "{name} was saved without BERT's pretraining heads, so it cannot {task}. The masking view "
    "works on any model. {model} has both heads: pick it below (a model not on this machine is "
    "downloaded once, with its progress shown). To prepare a machine with no internet in "
    "class, run {download} once on a connected one (it keeps the heads); with {dir} it writes "
    "a folder to copy, which the app reads once {setting} names the folder that holds it."
)
FILL_TASK, NSP_TASK = N_("fill in [MASK]"), N_("say whether sentence B follows sentence A")
LENS_TAB = N_("[MASK] by layer")


def _link_number(key: str, low: float, high: float, default: float) -> None:
    """A value a link gives for ``key`` that is not a number in [low, high]: say so and use the
    default (before the widget reads the link)."""
    asked = number_in_link(key, low, high)
    if asked is not None:
        st.warning(markdown_template(
            _("The link's value {value} is not a number from {low} to {high}; showing "
              "{default} instead."), value=asked[:40], low=low, high=high, default=default),
            icon=":material/edit_note:")
        st.query_params[key] = str(default)


def _next_draw() -> None:
    st.session_state[SEED_KEY] = float(min(int(st.session_state.get(SEED_KEY) or 0) + 1,
                                           MAX_SEED))


def mask_settings() -> MaskSettings:
    _link_number(SEED_KEY, 0, MAX_SEED, 0)
    _link_number(PROB_KEY, PROB_MIN, PROB_MAX, PROB_DEFAULT)
    left, right = st.columns(2)
    seed = whole_number(left, _("Draw number"), min_value=0, max_value=MAX_SEED, value=0,
                        key=SEED_KEY, help=_("The same number always gives the same draw."))
    left.button(_("New draw"), on_click=_next_draw, icon=":material/casino:")
    probability = right.slider(_("Share of tokens picked"), PROB_MIN, PROB_MAX, PROB_DEFAULT,
                               PROB_STEP, key=PROB_KEY, bind="query-params",
                               help=_("BERT picks 15% of the tokens."))
    whole_word = right.toggle(_("Whole-word masking"), key=WWM_KEY, bind="query-params")
    return MaskSettings(seed, round(float(probability), 2), bool(whole_word))


def draw_masking(ctx: Context) -> None:
    explain(_("To make training data from plain text, BERT picks each ordinary token with "
              "probability 15% (never [CLS], [SEP] or [PAD]). Of the picked tokens 80% become "
              "[MASK], 10% a random token and 10% stay as they are; the model must give back "
              "the original token at every picked position, and only there: every other "
              "label is -100, which the loss ignores."))
    s = mask_settings()
    if s.whole_word:
        explain(_("Whole-word masking: words are picked, not tokens. A word split into pieces "
                  "(“play ##ing”), or a Chinese word of several characters (北京, found by a "
                  "word segmenter), is picked as a whole, and all its pieces become [MASK] "
                  "together (or a random token, or stay): the model cannot guess “##ing” from "
                  "“play”, or 京 from 北, next to it. The 15% and 80/10/10 are then shares of "
                  "words."))
        explain(_("Which checkpoints were pretrained which way: the original BERT models "
                  "(bert-base-uncased, bert-base-chinese) with per-token masking; Google's "
                  "whole-word-masking BERT release of 2019 (bert-large-uncased-whole-word-"
                  "masking) and the Chinese BERT-wwm family (Cui et al. 2019: chinese-bert-wwm, "
                  "chinese-roberta-wwm-ext) with whole-word masking."))
    try:
        m = cache.get_masking(ctx.key, s.seed, s.probability, s.whole_word)
    except ExplorerError as exc:
        show_error(exc)
        return
    for column, (label, value) in zip(st.columns(4), fig.counts(m).items(), strict=True):
        column.metric(_(label), value)
    st.markdown(_("{picked} of the {candidates} ordinary tokens were picked.").format(
        picked=m.n_picked, candidates=m.n_candidates))
    if s.whole_word:
        words = m.word_counts()
        st.markdown(_("By word: picked {picked} of {candidates}; became [MASK]: {mask}; became a "
                      "random token: {random}; stayed as they were: {kept}.").format(
            picked=len(m.candidate_words) - words[None], candidates=len(m.candidate_words),
            mask=words["mask"], random=words["random"], kept=words["kept"]))
    draw_unk_note(m.encoding, ctx.bundle, _(
        "The masking never picks them: [UNK] is one of the tokenizer's special tokens, like "
        "[CLS] and [SEP], so the share is drawn from the other tokens only, and a text of "
        "mostly [UNK] gets few or no picks."))
    draw_table(fig.masking_frame(m), fig.kind_row_styles(m), "masking")
    st.markdown(_("Purple rows became [MASK], orange rows a random token, green rows were kept "
                  "unchanged but still have to be predicted. A label of -100 means “not "
                  "picked”: the loss skips that position. A short sentence may get no pick at "
                  "all: try a new draw or a larger share."))
    explain(_("Why not always [MASK]? When the model is used, its input never contains [MASK]. "
              "If every picked token were [MASK], the model would only learn about positions "
              "showing [MASK]; the random and unchanged 10% each mean it can never be sure a "
              "token it sees is the real one, so it builds a good vector for every token."))


def draw_no_head(name: str, task: str) -> None:
    st.info(markdown_template(_(NO_HEAD), name=name, task=_(task), model=HEADS_MODEL,
                              download=COMMANDS[0], dir="--dir models",
                              setting="BERT_EXPLORER_MODEL_DIRS").replace(
        markdown_code(_(task)), markdown_text(_(task))), icon=":material/info:")
    offer_model(HEADS_MODEL, key=f"offer_heads_{task}")
    for command in COMMANDS:   # wrapped: at 1024 px beside the sidebar the line is wider
        st.code(command, language="bash", wrap_lines=True)


def fill_input(ctx: Context) -> tuple[str, str | None]:
    """The text to fill in, and the hidden token when it was masked from sentence A."""
    source = st.radio(_("Text"), [TYPED, FROM_A], format_func=_, key=SOURCE_KEY,
                      bind="query-params", horizontal=True)
    if source != FROM_A:
        return st.text_input(_("Text with [MASK]"), DEFAULT_TEXT, key=TEXT_KEY, max_chars=1000,
                             bind="query-params"), None
    try:
        options = cache.maskable(ctx.key)
    except ExplorerError as exc:
        show_error(exc)
        return "", None
    if not options:
        st.info(_("Sentence A has no ordinary token to mask."), icon=":material/info:")
        return "", None
    labels = {f"{i} {t}": i for i, t in options}
    picked = st.selectbox(_("Token to mask"), list(labels), key=PICK_KEY, bind="query-params")
    position = labels.get(picked, options[0][0])
    text = cache.masked_text(ctx.key, position)
    st.markdown(_("The model reads: {text}").format(text=markdown_code(text)))
    return text, dict(options)[position]


def masked_input(ctx: Context) -> tuple[str, str | None] | None:
    """The text the MLM head reads and the token its [MASK] hides (None when typed), for the
    fill and by-layer tabs; None when the model has no MLM head (said on the page) or there is
    no text."""
    if not cache.heads(ctx.key.model)[0]:
        draw_no_head(ctx.bundle.label, FILL_TASK)
        return None
    text, hidden = fill_input(ctx)
    return (text, hidden) if text else None


def draw_fill(ctx: Context) -> None:
    explain(_("The masked-language-model head turns the last layer's vector at a [MASK] into "
              "a probability for every token of the vocabulary. Guess first, then reveal."))
    masked = masked_input(ctx)
    if masked is None:
        return
    text, hidden = masked
    top_k = whole_number(st, _("How many guesses to show"), min_value=1, max_value=20, value=5,
                         key=TOPK_KEY)
    try:
        preds = cache.get_predictions(ctx.key.with_texts(text), top_k)
    except ExplorerError as exc:
        show_error(exc)
        return
    guess = st.text_input(_("Your guess for the first [MASK]"), key=GUESS_KEY, max_chars=100)
    if not st.toggle(_("Reveal the model's answer"), key=REVEAL_KEY, bind="query-params"):
        return
    draw_answer(ctx, preds, guess, hidden)


def draw_answer(ctx: Context, preds: list, guess: str, hidden: str | None) -> None:
    first = preds[0]
    if guess.strip():
        rank = fig.guess_rank(guess, first)
        st.markdown(markdown_template(
            _("Your guess {guess} is number {rank} of the top {k}.") if rank else
            _("Your guess {guess} is not in the model's top {k}."),
            guess=guess.strip(), rank=rank, k=len(first)))
    if hidden is not None:
        st.markdown(markdown_template(_("The hidden token was {token}."), token=hidden))
    which = 0
    if len(preds) > 1:
        which = st.selectbox(_("Which [MASK]"), range(len(preds)),
                             format_func=lambda i: _("[MASK] number {n}").format(n=i + 1))
    st.plotly_chart(fig.predictions_figure(preds[which], ctx.bundle.label), width="stretch")
    st.markdown(_("Where in the network does this answer form? The {tab} tab applies the same "
                  "head to every layer.").format(tab=f"**{_(LENS_TAB)}**"))


def draw_lens(ctx: Context) -> None:
    explain(_("The masked-language-model head was trained on the last layer's vector only. "
              "Applied to the [MASK] vector after every layer (layer 0 is the embeddings' "
              "output), it shows what the model would fill in at that depth, and where its "
              "final answer forms. With bert-base-uncased the answer is often on top well "
              "before the last layer (Din et al. 2023)."))
    masked = masked_input(ctx)
    if masked is None:
        return
    text = masked[0]
    decoder_only = st.toggle(
        _("The decoder alone, without the head's transform"), key=LENS_DECODER_KEY,
        bind="query-params",
        help=_("The head's last step, the word table and its bias, on the raw vector."))
    try:
        lens = cache.get_lens(ctx.key.with_texts(text), not decoder_only)
        whole = cache.get_lens(ctx.key.with_texts(text), True) if decoder_only else None
    except ExplorerError as exc:
        show_error(exc)
        return
    mask = pick_mask(st.columns(2)[0], lens)
    st.markdown(fig.lens_sentence(lens, mask, ctx.bundle.label))
    if decoder_only:
        explain(_("The whole head first passes the vector through a dense layer, GELU and "
                  "LayerNorm, then multiplies it by the word table and adds a bias. The decoder "
                  "alone skips the first three: for bert-base-uncased its guesses are noise at "
                  "every layer (Din et al. 2023). The grey line is the whole head."))
    st.html(fig.lens_table_html(lens, mask, ctx.bundle.label))
    st.markdown(markdown_template(
        _("The highlighted cells are the model's answer {token}, the whole head's first guess at "
          "the last layer; a rank is its place among all {vocab} tokens."),
        token=lens.answer_tokens[mask], vocab=f"{ctx.bundle.config.vocab_size:,}"))
    st.plotly_chart(fig.lens_figure(lens, mask, ctx.bundle.label, whole), width="stretch")


def pick_mask(area: DeltaGenerator, lens: MaskLens) -> int:
    """Which [MASK] to follow, numbered from the left, when there are several. The options are
    the numbers themselves, so the link carries the same value in either language."""
    if len(lens.positions) == 1:
        return 0
    options = [str(n) for n in range(1, len(lens.positions) + 1)]
    picked = area.selectbox(_("Which [MASK], counted from the left"), options, key=LENS_MASK_KEY,
                            bind="query-params")
    return options.index(picked) if picked in options else 0


def draw_next_sentence(ctx: Context) -> None:
    explain(_("Half of BERT's training pairs were a sentence and the one that really follows "
              "it, half a sentence and a random one. The next-sentence head reads the pooled "
              "[CLS] vector and gives the probability that B follows A (IsNext)."))
    if not cache.heads(ctx.key.model)[1]:
        draw_no_head(ctx.bundle.label, NSP_TASK)
        return
    a, b = ctx.key.text_a, ctx.key.text_b
    if not b:
        st.info(_("Type sentence B in the sidebar: the one that may or may not follow "
                  "sentence A."), icon=":material/edit_note:")
        return
    other = cache.random_sentence(a, b)
    try:
        real = cache.get_is_next(ctx.key)
        swapped = cache.get_is_next(ctx.key.with_texts(a, other))
    except ExplorerError as exc:
        show_error(exc)
        return
    left, right = st.columns(2)
    left.metric(_("IsNext, A + B"), f"{real.is_next_probability:.3f}")
    right.metric(_("IsNext, A + a random sentence"), f"{swapped.is_next_probability:.3f}")
    st.markdown(markdown_template(_("The random sentence: {sentence}"), sentence=other))


def draw_finetuning(ctx: Context) -> None:
    explain(_("Fine-tuning keeps the pretrained model and adds one new linear layer, trained "
              "for the task. The four patterns differ only in which output vectors that layer "
              "reads: the pooled [CLS] vector, or every token's last-layer vector."))
    n_classes = whole_number(st, _("Number of classes"), min_value=2, max_value=20, value=2,
                             key=CLASSES_KEY)
    try:
        # Inference has three classes (entailment, neutral, contradiction) whatever the number
        # picked for the other tasks.
        patterns = [nli if p.key == "pair_class" else p
                    for p, nli in zip(cache.get_patterns(ctx.key.model, n_classes),
                                      cache.get_patterns(ctx.key.model, NLI_CLASSES), strict=True)]
        one = cache.tokens(ctx.key.with_texts(ctx.key.text_a))
        pair = cache.tokens(ctx.key.with_texts(ctx.key.text_a, ctx.key.text_b or "…"))
    except ExplorerError as exc:
        show_error(exc)
        return
    st.table(fig.patterns_frame(patterns), hide_index=True)
    explain(_("The number of classes is for the one-sentence tasks. Natural language inference "
              "always has {n}: entailment, neutral and contradiction.").format(n=NLI_CLASSES))
    if not ctx.key.text_b:
        st.markdown(_("Sentence B is empty, so the two-sentence diagrams use “…” as B."))
    for p in patterns:
        st.subheader(_(p.title))
        st.markdown(_(p.example))
        st.markdown(_("The new head: {head}, output shape {shape}.").format(
            head=markdown_code(f"{p.transformers_class}.{p.head_module}"),
            shape=markdown_code(p.output_shape)))
        st.graphviz_chart(fig.pattern_dot(p, pair if p.inputs == 2 else one, ctx.bundle.label),
                          width="stretch")
        st.markdown("[{text}](/finetune?ft_task={task})".format(
            text=_("Train this pattern live on the Fine-tuning page"),
            task=FINETUNE_TASKS.get(p.key, p.key)))


# The Fine-tuning page's name of each pattern (its ft_task in a link).
FINETUNE_TASKS = {"token_class": "token_tags"}


SECTIONS = (
    Section(label=N_("Masking"), draw=draw_masking),
    Section(label=N_("Fill the mask"), draw=draw_fill),
    Section(label=LENS_TAB, draw=draw_lens),
    Section(label=N_("Next sentence"), draw=draw_next_sentence),
    Section(label=N_("Fine-tuning patterns"), draw=draw_finetuning),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    encoding_of(key)   # the input's notices (truncation, the character cap), as on every page
    draw_sections(SECTIONS, SECTION_KEY, Context(key=key, bundle=bundle))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
