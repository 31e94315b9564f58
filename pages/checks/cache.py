"""The Checks page's data: the published checks per model, and a benchmark file's comparison as a
shared background job (serving.jobs) with progress.

The checks are a per-model table (``st.cache_resource``), keyed too on which of the models they
need are on this machine, so a model prepared meanwhile is checked on the next visit. A file runs
as one job keyed on the model and the file's hash: every session that gives the same file shares
one run and one progress, and a rerun with a file already compared costs a hash.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from components.cache import MODEL_CACHE_ENTRIES, get_model
from core import ModelBundle, checks
from core.errors import ExplorerError
from core.models import local_folder
from core.settings import DEFAULT_MODEL
from core.similarity.pair_lists import read_file
from pages.checks.records import StsOutcome
from serving import jobs

OPTIONAL_MODELS = (checks.UNCASED, checks.CHINESE)


def models_here() -> tuple[bool, ...]:
    """Whether each of OPTIONAL_MODELS is on this machine (a look at the disk, no download)."""
    return tuple(local_folder(name) is not None for name in OPTIONAL_MODELS)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_published_checks(model_name: str, here: tuple[bool, ...]) -> tuple[checks.CheckRow, ...]:
    """Every published check but the benchmark's (``here``: ``models_here()``, part of the key
    only). Rows hold English templates and numbers, never translated text."""
    return tuple(r for r in checks.published_checks(get_model(model_name), load=get_model)
                 if r.key != "sts")


def _compare_file(bundle: ModelBundle, data: bytes, job: jobs.Job[StsOutcome]) -> StsOutcome:
    """Read the file and compare its pairs (in a worker thread: no Streamlit call)."""
    parsed = read_file(data)
    if parsed.refused or not parsed.pairs:
        return StsOutcome(parsed)
    try:
        row = checks.sts_check(bundle, parsed.pairs, parsed.scores,
                               progress=job.report)
    except ExplorerError as exc:
        return StsOutcome(parsed, error=exc)
    return StsOutcome(parsed, row)


def sts_job(data: bytes) -> jobs.Job[StsOutcome]:
    """The shared job comparing this file on the embedded model (started if need be)."""
    digest = hashlib.sha256(data).hexdigest()
    bundle = get_model(DEFAULT_MODEL)   # here, in the script's thread
    return jobs.submit(("checks: benchmark file", DEFAULT_MODEL, digest),
                       lambda job: _compare_file(bundle, data, job), name="checks: benchmark file")
