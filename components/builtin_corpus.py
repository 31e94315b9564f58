"""The built-in corpus through a model, as every page that reads it shares it: the Contexts
page's neighbours and senses, the Compare page's neighbours in two models, the Similarity page's
baselines.

The pass is a background job on the process's job board (serving.jobs), one per model, keyed
on the model's name: a trained model's pass, or a random-weights copy's (components.two_models).
The board holds the finished pass like any job's result and starts a failed one anew; no copy
is kept beside it. ``show_builtin_corpus`` is the page half: the pass, or its progress card.
"""

from __future__ import annotations

import streamlit as st

from components.cache import MODEL_CACHE_ENTRIES, get_model
from components.i18n import N_, _
from components.job_progress import show_job
from components.labels import markdown_text
from components.two_models import get_random_model
from core.compare import trained_name
from core.contexts import corpus_pass
from core.contexts.vectors import ContextVectors
from core.similarity import anisotropy
from core.similarity.anisotropy import CorpusStats
from serving import jobs

RUNNING = N_("The corpus runs through {model} once, in the background; the rest of the app "
             "keeps working meanwhile.")
PROGRESS = N_("Corpus sentences through the model: {amount} ({seconds} s)")
FAILED = N_("The corpus pass stopped with an error. Reload the page to try again.")


def builtin_job(model_name: str) -> jobs.Job[ContextVectors]:
    """The built-in corpus through model ``model_name`` (a random-weights copy's name included):
    the board's job for it, started if none ran or the last one failed."""
    trained = trained_name(model_name)
    if trained is None:
        return jobs.submit(("built-in corpus", model_name),
                           lambda job: corpus_pass(get_model(model_name), progress=job.report),
                           name=f"built-in corpus on {model_name}")
    return jobs.submit(("built-in corpus, random weights", trained),
                       lambda job: corpus_pass(get_random_model(trained), progress=job.report),
                       name=f"built-in corpus on {trained} with random weights")


def show_builtin_corpus(model_name: str, label: str) -> ContextVectors | None:
    """The built-in corpus through the model (``label``: its name as shown); None, with its
    progress card or its error drawn, until the pass is there."""
    return show_job(builtin_job(model_name), _(PROGRESS), _(FAILED),
                    explanation=_(RUNNING).format(model=markdown_text(label)))


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_corpus_stats(model_name: str) -> CorpusStats:
    """Baselines of the built-in corpus for this model, computed once per model."""
    return anisotropy.corpus_statistics(get_model(model_name))
