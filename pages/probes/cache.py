"""Caching for the probes page.

A probe reads every sentence of its set through the model, then fits a classifier per layer and
fold, twice (the task and its control): seconds to a minute, so it runs as a background job on
the process's board (serving.jobs), shared by every session asking for the same (model, set,
language, folds); its result is a few arrays of a dozen numbers. Model B of the comparison is
named as on the Compare page (a loaded model, or a model's random-weights copy:
components.two_models).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from components.two_models import CORPUS_LANGUAGE, get_default_corpus, second_model
from core.probes import TASK_OF, BuiltinSet, LayerProbe, ProbeTask, builtin_items, layer_probe
from serving import jobs

FOLDS = 5


def default_language(model_name: str) -> str:
    """The built-in sets' language for a model: Chinese for a Chinese vocabulary, else
    English (the Compare page's rule)."""
    return CORPUS_LANGUAGE[get_default_corpus(model_name)]


def builtin_job(model_name: str, kind: BuiltinSet, language: str, folds: int = FOLDS
                ) -> jobs.Job[LayerProbe]:
    """The probe of built-in set ``kind`` in ``language`` on model ``model_name`` (a loaded
    model, or a random-weights copy's name): the one running or finished, or a new one. An
    input core refuses ends the job with its ``ExplorerError`` (shown by show_job)."""
    def work(job: jobs.Job[LayerProbe]) -> LayerProbe:
        bundle = second_model(model_name)
        return layer_probe(bundle, TASK_OF[kind], builtin_items(kind, language, bundle),
                           folds=folds, progress=job.report)

    return jobs.submit(("probes: built-in", model_name, str(kind), language, folds), work,
                       name=f"probe of {kind} ({language}) on {model_name}")


def items_key(task: ProbeTask, items: tuple[Any, ...]) -> str:
    """A hash of a person's items: the same set, however it was given, is one job."""
    payload = json.dumps([str(task), items], ensure_ascii=False, default=list)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def own_job(model_name: str, task: ProbeTask, items: tuple[Any, ...], folds: int = FOLDS
            ) -> jobs.Job[LayerProbe]:
    """The probe of a person's own set on the model of the sidebar."""
    def work(job: jobs.Job[LayerProbe]) -> LayerProbe:
        return layer_probe(second_model(model_name), task, items, folds=folds,
                           progress=job.report)

    return jobs.submit(("probes: own set", model_name, items_key(task, items), folds), work,
                       name=f"probe of {len(items)} own sentences on {model_name}")
