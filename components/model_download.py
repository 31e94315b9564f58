"""The download of a hub model, drawn for each session while the page goes on with the model in
use.

The download itself is a ``serving.hub.DownloadJob``: the work of one job per model on the
process's job board (serving.jobs, keyed on the repository), so every session asking for the same
model watches the same job (two students asking start one download). A session draws it with the
one progress card of background work (components/job_progress.py: a fragment polling the job's
progress, in MB, with the speed and the time left; "so far" while the hub gave no size). When the
job ends, the card reruns the whole page once: a finished model is then on this machine and loads
like any other; a failed one shows what happened, with a button to try again (which resumes).
"""

from __future__ import annotations

import time

import streamlit as st

from components.explain import explain
from components.i18n import N_, _
from components.job_progress import Unit, progress_card
from components.labels import markdown_template
from core.errors import DownloadStalledError, ModelLoadError
from core.models import model_source
from serving import hub
from serving.hub import DownloadPhase
from serving.models import start_download

RETRY_AFTER_S = 5.0
PROGRESS = N_("Downloading {name}: {amount}.")
MEANWHILE = N_("The page keeps working on {current} meanwhile and switches to {name} when it "
               "is here.")
CONNECTING = N_("Asking the model hub for {name}…")


def downloading(name: str) -> bool:
    """Whether ``name``'s download is running in this process (this or another session's)."""
    download = hub.download_job(model_source(name))
    return download is not None and not download.state().finished


def draw_download(name: str, shown_name: str, current: str) -> None:
    """Start (or join) the download of hub model ``name`` and draw its progress.

    Raises the job's ``ModelLoadError`` when it failed (the hub does not answer: within the hub
    timeout, in this run), so the caller shows it like any load error. A failed job is tried
    again when the model is asked for after ``RETRY_AFTER_S`` (a retry resumes the partial file),
    not on every rerun of every session that still has it picked; a stalled one also gets a
    button in the sidebar.
    """
    download = hub.download_job(model_source(name))
    state = download.state() if download is not None else None
    ago = time.monotonic() - download.ended_at if download is not None and download.ended_at \
        else 0.0
    if state is not None and state.phase == DownloadPhase.DONE and ago <= RETRY_AFTER_S:
        # Finished a moment ago and still not found complete: say so rather than rerun forever.
        raise ModelLoadError(N_("“{name}” was downloaded, but its files are not complete in "
                                "the cache; try again."), name=shown_name)
    if download is None or state is None or (state.finished and ago > RETRY_AFTER_S):
        # A retry (which resumes), or a model whose files have left the cache since.
        download = start_download(name, again=True)
        state = download.wait_until_started()
    if state.error is not None:
        if isinstance(state.error, DownloadStalledError):
            st.sidebar.button(_("Try the download again"), key="download_retry",
                              icon=":material/refresh:", on_click=_retry, args=(name,),
                              help=_("It resumes where it stopped."))
        raise state.error
    assert download.job is not None   # started: the job the board shares for this model
    progress_card(download.job, _(PROGRESS), phases={DownloadPhase.CONNECTING: _(CONNECTING)},
                  unit=Unit.BYTES, name=shown_name)
    explain(markdown_template(_(MEANWHILE), current=current, name=shown_name))


def _retry(name: str) -> None:
    """The retry button's click: the download again, resuming where it stopped."""
    start_download(name)
