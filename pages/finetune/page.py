"""Fine-tuning: the tutorial's four patterns (and a sentence model on scored pairs) trained live
on the loaded model, the loss as it falls, the held-out score before and after beside frozen
features, and what training changed, layer by layer (issue 60)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from components.analysis_view import encoding_or_none, model_of, show_error
from components.controls import whole_number
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.i18n import N_, _, every_language, language, set_language
from components.inputs import shared_inputs
from components.job_progress import WAIT_IN_RUN_S, duration, progress_card
from components.labels import markdown_template
from components.sections import Section, draw_sections
from core import ExplorerError
from core.finetune import FineTuneRun
from core.finetune.tasks import FineTuneTask
from core.settings import allowed_name, folder_label
from pages.finetune import cache, data_view
from pages.finetune import figures as figs
from pages.finetune.records import Context, DataSource, Mode
from serving import jobs, training
from serving.training import Request

TITLE = N_("Fine-tuning")
EXPLANATION = N_(
    "Train the model named in the sidebar, live, on one of the tutorial's four patterns: a new "
    "linear layer on top, trained from scratch together with the model's own weights, or alone "
    "on frozen features as ELMo's vectors were used. Watch the loss fall, then compare the "
    "held-out score before and after, and see which layers training changed."
)

# URL keys (shared links must keep working: names and values stay as they are).
SECTION_KEY, TASK_KEY, DATA_KEY, MODE_KEY = "ft_section", "ft_task", "ft_data", "ft_mode"
EPOCHS_KEY, RATE_KEY, BATCH_KEY = "ft_epochs", "ft_lr", "ft_batch"
PAIR_KEY = "ft_pair"
RUN_KEY = "ft_run"            # the run this tab started: after a restart, said to be gone
STARTED_KEY = "ft_started"    # run ids this session started (its Stop button)
EXPLORED_KEY = "ft_explored"  # the tuned folder this session switched to, and its base model

TASK_NAMES = {
    FineTuneTask.SENTENCE_CLASS: N_("1. A sentence to a class"),
    FineTuneTask.TOKEN_TAGS: N_("2. A tag for every word"),
    FineTuneTask.PAIR_CLASS: N_("3. A pair of sentences to a class"),
    FineTuneTask.SPAN: N_("4. A question and a passage to an answer span"),
    FineTuneTask.PAIR_SCORE: N_("A sentence model tuned on scored pairs"),
}
TASK_WORDS = {
    FineTuneTask.SENTENCE_CLASS: N_("The pooled [CLS] vector goes through a new linear layer to "
                                    "one score per class (BertForSequenceClassification)."),
    FineTuneTask.TOKEN_TAGS: N_("Every word's last-layer vector (its first piece) goes through "
                                "a new linear layer to one score per tag, as in slot filling "
                                "(BertForTokenClassification)."),
    FineTuneTask.PAIR_CLASS: N_("[CLS] A [SEP] B [SEP], with token types 0 and 1: the pooled "
                                "[CLS] vector to true, false or unknown "
                                "(BertForSequenceClassification)."),
    FineTuneTask.SPAN: N_("[CLS] question [SEP] passage [SEP]: every passage token gets a "
                          "start score and an end score; the answer runs from the best start "
                          "to the best end (BertForQuestionAnswering)."),
    FineTuneTask.PAIR_SCORE: N_("No new layer: the model's own sentence vectors, their cosine "
                                "pulled towards each pair's score scaled to 0..1 "
                                "(sentence-transformers' CosineSimilarityLoss)."),
}
DATA_NAMES = data_view.DATA_NAMES
MODE_NAMES = figs.MODE_NAMES
RATES = (1e-5, 2e-5, 3e-5, 5e-5, 1e-4, 3e-4, 1e-3)
BATCHES = (4, 8, 16, 32)
EXAMPLES_SHOWN = 8
POLL_S = 0.5

RESTARTED = N_("This page's link names a run this server no longer has: the server restarted, "
               "or the run ended long ago. Nothing was lost but the run: press Start to train "
               "it again.")
DROPPED = N_("The tuned model of this run was dropped to keep this server within its memory "
             "for training ({budget} MB). Train again to see it.")


# --- the controls --------------------------------------------------------------------------------

def choice(where: Any, label: str, key: str, options: Sequence[Any], names: Mapping[Any, str],
           default: Any, **kwargs: Any) -> Any:
    """A select box of ``options`` shown by their translated ``names``, bound to the link; a
    link made in either language (or an option's own value, ``?ft_task=span``) opens the same
    option, and a language switch keeps it."""
    shown = [_(names[o]) for o in options]
    current = st.session_state.get(key)
    if current not in shown:
        asked = current if current is not None else st.query_params.get(key)
        linked = next((o for o in options if asked is not None and (
            asked == str(o) or asked in every_language(names[o]))), default)
        st.session_state[key] = _(names[linked])
    draw = where.radio if kwargs.pop("radio", False) else where.selectbox
    picked = draw(label, shown, key=key, bind="query-params", **kwargs)
    return options[shown.index(picked)] if picked in shown else default


# Settings under which a pattern's built-in set learns visibly (measured, core/finetune/builtin.py):
# three-way inference and answer spans barely move in one epoch at 5e-5; a pattern picked on the
# page starts at these (a link's own values are kept).
SLOW = {FineTuneTask.PAIR_CLASS, FineTuneTask.SPAN}
SETTINGS = {True: (3.0, 1e-4), False: (1.0, 5e-5)}   # slow: (epochs, learning rate)


def _pattern_picked() -> None:
    picked = st.session_state.get(TASK_KEY)
    slow = any(picked in every_language(TASK_NAMES[task]) for task in SLOW)
    st.session_state[EPOCHS_KEY], st.session_state[RATE_KEY] = SETTINGS[slow]


def draw_controls() -> tuple[FineTuneTask, DataSource, Mode, int, float, int]:
    top = st.columns(2)
    task = choice(top[0], _("Pattern"), TASK_KEY, list(FineTuneTask), TASK_NAMES,
                  FineTuneTask.SENTENCE_CLASS, on_change=_pattern_picked)
    own = DataSource.CHINESE if language() == "zh" else DataSource.ENGLISH
    source = choice(top[1], _("Data"), DATA_KEY, list(DataSource), DATA_NAMES, own)
    explain(_(TASK_WORDS[task]))
    if task in SLOW:
        explain(_("On the built-in set this pattern learns slowly: 3 epochs at a learning "
                  "rate of 1e-4 show it learning, one epoch at 5e-5 barely moves it."))
    if task is FineTuneTask.PAIR_SCORE:   # no new layer: nothing to train on frozen features
        mode = Mode.FULL
    else:
        mode = choice(st, _("What is trained"), MODE_KEY, list(Mode), MODE_NAMES, Mode.FULL,
                      radio=True, horizontal=True,
                      help=_("Full fine-tuning trains every weight with the new layer. Frozen "
                             "features train the new layer alone on the model's vectors, which "
                             "stay exactly as they were: ELMo's way of using a pretrained "
                             "model."))
    row = st.columns(3)
    epochs = whole_number(row[0], _("Epochs"), min_value=1, max_value=10, value=1,
                          key=EPOCHS_KEY, help=_("Passes over the training items."))
    rate = row[1].selectbox(_("Learning rate"), RATES, index=RATES.index(5e-5), key=RATE_KEY,
                            bind="query-params", format_func=lambda v: f"{v:g}",
                            help=_("How far each step moves the weights (AdamW, with a linear "
                                   "warm-up over the first tenth of the steps)."))
    batch = row[2].selectbox(_("Batch size"), BATCHES, index=BATCHES.index(16), key=BATCH_KEY,
                             bind="query-params", help=_("Items per step."))
    return task, source, mode, epochs, float(rate), int(batch)


# --- the sections --------------------------------------------------------------------------------

def draw_training(ctx: Context) -> None:
    if ctx.request is None or ctx.data is None:
        explain(_("Pick data the model can read, above, to train."))
        return
    request, job = ctx.request, training.find(ctx.request)
    if job is None and training.kept_run(request) is not None:
        ended(ctx, None)    # its job left the board; the tuned model is still kept
        return
    if job is None:
        if st.query_params.get(RUN_KEY) == request.run_id:
            st.warning(_(RESTARTED), icon=":material/restart_alt:")
        explain(_("Items to train on: {train}. Epochs: {epochs}, of {steps} steps each. Model: "
                  "{model}.").format(
            train=len(ctx.data.train), epochs=request.epochs,
            steps=-(-len(ctx.data.train) // request.batch_size), model=ctx.bundle.label))
        if st.button(_("Start training"), key="ft_start", type="primary",
                     icon=":material/play_arrow:"):
            if start(ctx) is not None:
                st.rerun()   # the page again without the Start button: the run shows below
        return
    if not job.done():
        live_view(job, request, language())
        return
    ended(ctx, job)


def start(ctx: Context, request: Request | None = None, again: bool = False
          ) -> jobs.Job[training.Outcome] | None:
    """Ask for the run (shared with whoever asked for the same); None when it is refused."""
    request = request or ctx.request
    assert request is not None and ctx.data is not None
    try:
        job = training.start(request, ctx.bundle, ctx.data.train, ctx.data.held_out,
                             ctx.data.labels, again=again,
                             tokens=data_view.longest(ctx.bundle, ctx.task, ctx.data))
    except ExplorerError as exc:
        show_error(exc)
        return None
    st.session_state.setdefault(STARTED_KEY, set()).add(request.run_id)
    st.query_params[RUN_KEY] = request.run_id
    return job


def live_view(job: jobs.Job[training.Outcome], request: Request, lang: str) -> None:
    mine = request.run_id in st.session_state.get(STARTED_KEY, set())
    _live(job, request, lang, mine)


@st.fragment(run_every=POLL_S)
def _live(job: jobs.Job[training.Outcome], request: Request, lang: str, mine: bool) -> None:
    """The run as it trains: its place in the queue, or the bar, the step rate, the time left
    and the loss curve, redrawn from the job twice a second; the page reruns when it ends."""
    set_language(lang)
    if job.done():
        st.rerun()
        return
    state = training.live(job)
    if state.place is not None:
        st.info(_("Waiting for the runs before it to end: this run is number {place} in the "
                  "queue. The server trains {runs} at a time; other pages keep working "
                  "meanwhile.").format(place=state.place, runs=training.training_runs()),
                icon=":material/hourglass_top:")
    else:
        st.progress(state.step / state.total if state.total else 0.0)
        words = _("Step {step} of {total}.").format(step=state.step, total=state.total) \
            if state.total else _("Starting: the model is copied, and scored on the held-out "
                                  "items before training.")
        if state.rate:
            words += " " + _("{rate} steps a second, about {left} left.").format(
                rate=f"{state.rate:.2f}", left=duration(state.seconds_left or 0.0))
        explain(words)
        if state.losses:
            show_figure(figs.loss_figure(state.losses, state.total), _("training loss"),
                        key="ft_live_loss")
    if mine:
        st.button(_("Stop"), key="ft_stop", icon=":material/stop:", on_click=training.stop,
                  args=(request.key,))


def ended(ctx: Context, job: jobs.Job[training.Outcome] | None) -> None:
    assert ctx.request is not None
    if job is not None and job.failed:
        error = job.exception()
        if isinstance(error, ExplorerError):
            show_error(error)
        elif isinstance(error, jobs.Cancelled):
            st.warning(_("This run ended without a result: it was stopped before its first "
                         "step, or nobody watched it for a while, so the server ended it."),
                       icon=":material/stop_circle:")
        else:
            st.error(_("The run failed; the server's log says why. Try again."),
                     icon=":material/error:")
        again_button(ctx)
        return
    run = training.kept_run(ctx.request)
    if run is None:
        st.warning(_(DROPPED).format(**training.memory_words()), icon=":material/delete:")
        again_button(ctx)
        return
    draw_run_summary(run)
    show_figure(figs.loss_figure(run.losses, run.steps), _("training loss"), key="ft_loss")
    again_button(ctx)


def draw_run_summary(run: FineTuneRun) -> None:
    if run.stopped:
        st.warning(_("Stopped after {steps} steps, part-way: what is shown is the model as "
                     "it was then.").format(steps=run.steps), icon=":material/stop_circle:")
    explain(_("{steps} steps in {seconds} s ({rate} steps a second); the loss went from "
              "{first} to {last}.").format(
        steps=run.steps, seconds=f"{run.seconds:.1f}",
        rate=f"{run.steps / run.seconds:.2f}" if run.seconds > 0 else "–",
        first=f"{run.losses[0]:.4f}" if run.losses else "–",
        last=f"{run.losses[-1]:.4f}" if run.losses else "–"))
    if run.truncated:
        st.warning(_("Inputs longer than {limit} tokens, cut to {limit}: {count}. The model "
                     "trained on their first {limit} tokens only.").format(count=run.truncated,
                                        limit=run.settings.get("max_length", data_view.MAX_LENGTH)),
                   icon=":material/content_cut:")


def again_button(ctx: Context) -> None:
    if st.button(_("Train again"), key="ft_again", icon=":material/replay:"):
        start(ctx, again=True)
        st.rerun()


def kept_or_say(ctx: Context) -> FineTuneRun | None:
    """The run's tuned model, or why there is none to show here."""
    if ctx.request is None:
        explain(_("Pick data the model can read, above, to train."))
        return None
    run = training.kept_run(ctx.request)
    if run is None:
        if training.was_dropped(ctx.request):
            st.warning(_(DROPPED).format(**training.memory_words()), icon=":material/delete:")
        else:
            explain(_("Train the model first (the Training tab); this tab then shows the "
                      "run."))
    return run


def draw_scores(ctx: Context) -> None:
    run = kept_or_say(ctx)
    if run is None or ctx.request is None or ctx.data is None:
        return
    if run.before is None or run.after is None:
        explain(_("This run has no held-out items to score."))
        return
    twin_request = ctx.request.frozen_twin()
    twin = training.kept_run(twin_request)
    mode = Mode.FROZEN if run.freeze_encoder else Mode.FULL
    other = Mode.FULL if run.freeze_encoder else Mode.FROZEN
    after = {mode: run.after}
    if twin is not None and twin.after is not None:
        after[other] = twin.after
    explain(_("The held-out items, scored before training and after it; the same data, "
              "settings and order of batches for both ways of training."))
    st.table(figs.scores_frame(run.before, after), hide_index=True)
    if twin is None and run.task is not FineTuneTask.PAIR_SCORE:   # pair_score has no head
        job = training.find(twin_request)
        if job is not None and not job.done():
            live_view(job, twin_request, language())
        elif st.button(_("Also train with: {mode}").format(mode=_(MODE_NAMES[other])),
                       key="ft_twin", icon=":material/compare:"):
            if start(ctx, twin_request) is not None:
                st.rerun()
    right, wrong = figs.changed_indices(run.before, run.after)
    st.subheader(_("Now right: {n} held-out items").format(n=len(right)))
    if right:   # a table, not a data frame: long sentences wrap instead of being cut
        st.table(figs.examples_frame(run.task, ctx.data.held_out, right[:EXAMPLES_SHOWN],
                                     run.before, run.after), hide_index=True)
    st.subheader(_("Still wrong: {n} held-out items").format(n=len(wrong)))
    if wrong:
        st.table(figs.examples_frame(run.task, ctx.data.held_out, wrong[:EXAMPLES_SHOWN],
                                     run.before, run.after), hide_index=True)


def draw_changes(ctx: Context) -> None:
    run = kept_or_say(ctx)
    if run is None or ctx.request is None:
        return
    explain(_("The layer map: linear CKA of every layer of the model before training against "
              "every layer of the tuned model, over the built-in corpus. The diagonal shows "
              "which layers moved: 1 is a layer unchanged up to a rotation and a scale."))
    if run.freeze_encoder:
        st.info(_("Frozen features: no weight of the encoder changed, so every diagonal cell "
                  "is exactly 1; only the new layer on top learned."), icon=":material/info:")
    job = cache.map_job(ctx.request)
    if not job.wait(WAIT_IN_RUN_S):
        progress_card(job, _("Both models over the built-in corpus: {amount} sentences."))
        return
    if job.exception() is not None:
        st.error(_("The layer map could not be made; reload the page to try again."),
                 icon=":material/error:")
        return
    result = job.result()
    if isinstance(result, ExplorerError):
        show_error(result)
        return
    show_figure(figs.change_figure(result, ctx.bundle.label, run.bundle.label),
                _("layer map"), key="ft_map")
    explain(figs.diagonal_words(result))
    if run.task in (FineTuneTask.PAIR_CLASS, FineTuneTask.PAIR_SCORE) and ctx.data \
            and ctx.data.source is not DataSource.FILE and ctx.data.held_out:
        draw_pair_split(ctx)


def draw_pair_split(ctx: Context) -> None:
    assert ctx.request is not None and ctx.data is not None
    st.subheader(_("One pair's cosine, split by token pairs, before and after"))
    index = whole_number(st, _("Held-out pair"), min_value=1, max_value=len(ctx.data.held_out),
                         value=1, key=PAIR_KEY) - 1
    item = ctx.data.held_out[index]
    st.markdown(markdown_template(_("A: {a}  B: {b}  The right answer: {answer}"),
                                  a=str(item[0]), b=str(item[1]),
                                  answer=figs.answer_words(ctx.task, item)))
    try:
        split = cache.get_pair_split(ctx.key.model, ctx.request, index)
    except ExplorerError as exc:
        show_error(exc)
        return
    if split is None:
        return
    before, after = split
    left, right = st.columns(2)
    left.metric(_("cosine before"), f"{before.cosine:.3f}")
    right.metric(_("cosine after"), f"{after.cosine:.3f}", f"{after.cosine - before.cosine:+.3f}")
    explain(_("The token pairs that add most to the cosine (the mean of the last layer's "
              "vectors; the parts add up to it exactly)."))
    st.table(figs.split_frame(before, after), hide_index=True)


def draw_tuned(ctx: Context) -> None:
    run = kept_or_say(ctx)
    if run is None or ctx.request is None:
        return
    request = ctx.request
    explain(_("The tuned model as a folder (zipped): transformers' from_pretrained reads it, "
              "with the tokenizer and the sentence recipe of the model before it."))
    st.download_button(_("Download the tuned model (zip)"), data=lambda: cache.zipped(request),
                       file_name=f"tuned-{request.run_id}.zip", mime="application/zip",
                       key="ft_zip", icon=":material/download:", on_click="ignore")
    root = training.tuned_root()
    if allowed_name(str(root)) is None:
        st.info(_("This server does not offer its tuned models in the model picker. Whoever "
                  "runs it can add the folder of tuned models (BERT_EXPLORER_TUNED_DIR) to "
                  "the model folders it offers (BERT_EXPLORER_MODEL_DIRS)."),
                icon=":material/info:")
        return
    explain(_("Explore the tuned model: every page then runs on it, and Compare shows it "
              "beside the model before it."))
    st.button(_("Explore the tuned model"), key="ft_explore", type="primary",
              icon=":material/travel_explore:", on_click=_explore, args=(request,))


def _explore(request: Request) -> None:
    folder = cache.saved_folder(request)
    if folder is not None:
        st.session_state["model"] = folder_label(str(folder))
        st.session_state[EXPLORED_KEY] = (str(folder), request.model)


def draw_explored(model: str) -> None:
    """When the sidebar's model is the tuned folder this session opened: the way to Compare
    with the model before it as B, and back to that model."""
    explored = st.session_state.get(EXPLORED_KEY)
    if not isinstance(explored, tuple) or allowed_name(model) != allowed_name(explored[0]):
        return
    folder, base = explored
    link = "/compare?" + urllib.parse.urlencode(
        {"model": folder_label(folder), "cmp_model": base, "cmp_random": "false"})
    st.success(markdown_template(
        _("Every page now runs on the tuned model; the model before it was {base}."),
        base=base) + f" [{_('Compare the tuned model with the model before it')}]({link})",
        icon=":material/travel_explore:")


SECTIONS = (
    Section(label=N_("Training"), draw=draw_training),
    Section(label=N_("Scores"), draw=draw_scores),
    Section(label=N_("What changed"), draw=draw_changes),
    Section(label=N_("Tuned model"), draw=draw_tuned),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    encoding_or_none(key)   # the sidebar's notices, as on every page (this page goes on)
    draw_explored(key.model)
    task, source, mode, epochs, rate, batch = draw_controls()
    data = data_view.builtin_data(task, source) if source is not DataSource.FILE \
        else data_view.read_file(task)
    if data is not None and not (data_view.checked(task, data)
                                 and data_view.readable(bundle, task, data)):
        data = None
    request = None if data is None else Request(
        key.model, task.value, data.key, mode is Mode.FROZEN, epochs, rate, batch,
        max_length=data_view.max_length(bundle))
    draw_sections(SECTIONS, SECTION_KEY, Context(key, bundle, task, request, data))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
