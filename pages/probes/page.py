"""Probes: which layer knows what. A linear classifier fitted on the frozen vectors of every
layer, with its control task (Hewitt & Liang 2019) and its expected layer (Tenney et al. 2019),
on built-in sets, a person's own file, and two models side by side.

Three sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

import streamlit as st

from components.analysis_view import encoding_or_none, model_of, show_error
from components.downloads import download_table
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.html_table import draw_table
from components.i18n import N_, _, every_language
from components.inputs import shared_inputs
from components.job_progress import show_job
from components.sections import Section, draw_sections
from components.two_models import pick_model_b
from components.url_values import option_in_link
from core import ExplorerError
from core.probes import (
    BuiltinSet,
    LayerProbe,
    ProbeTask,
    check_items,
    read_conllu,
    read_labelled_table,
)
from pages.probes import cache
from pages.probes import figures as figs
from pages.probes.records import Context

TITLE = N_("Probes")
EXPLANATION = N_(
    "Which layer knows what: a simple linear classifier (a probe) is trained on the vectors of "
    "one layer at a time to read something the model was never told, such as a word's part of "
    "speech or a sentence's tense. The control task gives the same probe random labels that "
    "only memorising can learn, so the gap between the two (the selectivity) is what the layer "
    "itself holds."
)

# URL keys (shared links must keep working: names and values stay as they are).
SECTION_KEY, SET_KEY, LANGUAGE_KEY = "prb_section", "prb_set", "prb_lang"
FORMAT_KEY, TASK_KEY = "prb_format", "prb_task"
MODEL_KEY, RANDOM_KEY = "prb_model", "prb_random"
TEXT_KEY, UPLOAD_KEY = "prb_text", "prb_upload"   # not in the link: a file is too long for one
CONLLU, TABLE = "CoNLL-U", "table"
FORMAT_NAMES = {CONLLU: "CoNLL-U", TABLE: N_("table")}
RUNNING = N_("Sentences read, then layers fitted: {amount} ({seconds} s)")
FAILED = N_("The probe stopped with an error. Reload the page to try again.")
WAITING = N_("The probe runs in the background: the model reads every sentence once, then a "
             "classifier is fitted for every layer and fold; the rest of the app keeps working "
             "meanwhile.")


def seed_from_link(key: str, options: list, labels: dict, default: object) -> None:
    """Before a picker first shows: the link's value for ``key``, an option itself or its
    label in either language (a link made in Chinese names 时态 for tense), else ``default``
    (Streamlit would drop a label it does not know)."""
    valid, _invalid = option_in_link(key, options, lambda o: every_language(labels[o]))
    if key not in st.session_state:
        st.session_state[key] = valid if valid is not None else default


def pick_set(ctx: Context) -> tuple[BuiltinSet, str]:
    """The built-in set and its language, both in the link."""
    # Tense by default: a probe of seconds (204 sentences, 3 labels) where parts of speech (400
    # sentences, 17 labels) take a minute or more of fits on a busy 2-core server.
    seed_from_link(SET_KEY, list(BuiltinSet), figs.SET_NAMES, BuiltinSet.TENSE)
    row = st.container(horizontal=True, vertical_alignment="bottom")
    kind = row.segmented_control(
        _("Probing set"), list(BuiltinSet), key=SET_KEY, bind="query-params", required=True,
        format_func=lambda k: _(figs.SET_NAMES[k]),
        help=_("What the probe must read from the vectors.")) or BuiltinSet.TENSE
    language = row.segmented_control(
        _("Language"), list(figs.LANGUAGE_NAMES), key=LANGUAGE_KEY, bind="query-params",
        default=ctx.language, required=True, format_func=lambda code: figs.LANGUAGE_NAMES[code],
        help=_("The set's sentences in English or in Chinese; by default the language of the "
               "model's vocabulary.")) or ctx.language
    kind = BuiltinSet(kind)
    explain(_(figs.SET_HELP[kind]))
    return kind, language


def draw_probe(probe: LayerProbe, model: str, set_name: str, key: str) -> None:
    """One probe's curves, what to notice, and its numbers."""
    show_figure(figs.probe_figure(probe), _("probe by layer"), key=key)
    explain(figs.notice(probe, model, set_name))
    explain(figs.set_line(probe) + " " + figs.vector_line(probe.task))
    with st.expander(_("The numbers, layer by layer, and the labels")):
        numbers = figs.numbers_frame(probe)
        draw_table(numbers, [""] * len(numbers), f"{key}_numbers")
        download_table(numbers, f"probe {model} {set_name}", key=f"{key}_csv")
        labels = figs.labels_frame(probe)
        draw_table(labels, [""] * len(labels), f"{key}_labels", max_height_px=320)


def draw_builtin(ctx: Context) -> None:
    explain(_("The solid line is the probe's share of right answers on sentences it was not "
              "trained on, at every layer (0 is the embedding output); the dashed line is the "
              "same probe on the control task; the band around each is its spread over the "
              "folds. The red line marks the expected layer: where, on average, the gains "
              "happen."))
    kind, language = pick_set(ctx)
    probe = show_job(cache.builtin_job(ctx.key.model, kind, language), _(RUNNING), _(FAILED),
                     explanation=_(WAITING))
    if probe is None:
        return
    draw_probe(probe, ctx.bundle.label, _(figs.SET_NAMES[kind]), "prb_builtin")


def own_items(fmt: str, task: ProbeTask, text: str) -> tuple[tuple, ...]:
    """A person's text as the task's items (InputError for what cannot be read)."""
    if fmt == CONLLU:
        read = read_conllu(text)
        if read.multiword_tokens or read.empty_nodes:
            explain(_("Read {sentences} sentences. Multiword tokens are read as their words "
                      "({multiword} left out as surface forms) and empty nodes are not words "
                      "of the sentence ({empty} left out).").format(
                sentences=len(read.items), multiword=read.multiword_tokens,
                empty=read.empty_nodes))
        return read.items
    return read_labelled_table(text, task).items


def draw_own(ctx: Context) -> None:
    explain(_("Your own set: a CoNLL-U file (a treebank: the part of speech of every word, "
              "fourth column), or a table with one example a row: text and label, text, word "
              "number (from 0) and label, or words and tags separated by spaces."))
    seed_from_link(FORMAT_KEY, [CONLLU, TABLE], FORMAT_NAMES, CONLLU)
    row = st.container(horizontal=True, vertical_alignment="bottom")
    fmt = row.segmented_control(_("Format"), [CONLLU, TABLE], key=FORMAT_KEY,
                                bind="query-params", required=True,
                                format_func=lambda f: _(FORMAT_NAMES[f])) or CONLLU
    task = ProbeTask.WORD_TAGS
    if fmt == TABLE:
        seed_from_link(TASK_KEY, list(ProbeTask), figs.TASK_NAMES, ProbeTask.SENTENCE_LABELS)
        task = ProbeTask(row.selectbox(
            _("Each row holds"), list(ProbeTask), key=TASK_KEY, bind="query-params",
            format_func=lambda t: _(figs.TASK_NAMES[t])) or ProbeTask.SENTENCE_LABELS)
    upload = st.file_uploader(_("A file"), type=["conllu", "conll", "txt", "csv", "tsv"],
                              key=UPLOAD_KEY)
    pasted = st.text_area(_("or paste it here"), key=TEXT_KEY, height=160)
    if upload is not None:
        text = upload.getvalue().decode("utf-8", errors="replace")
    else:
        text = pasted or ""
    if not text.strip():
        explain(_("Nothing given yet: upload a file or paste one."))
        return
    try:
        items = own_items(fmt, task, text)
        check_items(task, items, cache.FOLDS)   # before any job: a refusal is said at once
    except ExplorerError as exc:
        show_error(exc)
        return
    probe = show_job(cache.own_job(ctx.key.model, task, tuple(items)), _(RUNNING), _(FAILED),
                     explanation=_(WAITING))
    if probe is not None:
        draw_probe(probe, ctx.bundle.label, _("your set"), "prb_own")


def draw_two_models(ctx: Context) -> None:
    explain(_("The same probe on two models: model A is the sidebar's, model B is picked "
              "here (by default A with random weights, the network before any training). "
              "Solid lines are the probes' accuracy, dotted lines their selectivity."))
    name_b, label_b = pick_model_b(ctx.key.model, MODEL_KEY, RANDOM_KEY)
    kind, language = pick_set(ctx)
    probe_a = show_job(cache.builtin_job(ctx.key.model, kind, language), _(RUNNING),
                       _(FAILED), explanation=_(WAITING))
    probe_b = show_job(cache.builtin_job(name_b, kind, language), _(RUNNING), _(FAILED))
    if probe_a is None or probe_b is None:
        return
    show_figure(figs.two_models_figure(probe_a, probe_b, ctx.bundle.label, label_b),
                _("probes on two models"), key="prb_two")
    for probe, label in ((probe_a, ctx.bundle.label), (probe_b, label_b)):
        explain(figs.notice(probe, label, _(figs.SET_NAMES[kind])))


SECTIONS = (
    Section(label=N_("Built-in sets"), draw=draw_builtin),
    Section(label=N_("Your own set"), draw=draw_own),
    Section(label=N_("Two models"), draw=draw_two_models),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    encoding_or_none(key)   # the sidebar's notices, as on every page (the probes read none of it)
    draw_sections(SECTIONS, SECTION_KEY,
                  Context(key, model_of(key), cache.default_language(key.model)))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
