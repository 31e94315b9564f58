"""The download of a hub model, drawn for each session while the page goes on with the model in
use.

The download itself is a ``serving.hub.DownloadJob``: one job per model on the process's job
pool (serving.jobs), held in serving's process-wide registry, so every session asking for the
same model watches the same job (two students asking start one download). A session draws it in
a fragment that reruns every second on its own (``st.fragment(run_every=...)``): calls made from
the job's worker thread would never reach the browser, and one ``st.progress`` drawn once does
not move. When the job ends, the fragment reruns the whole page once: a finished model is then on
this machine and loads like any other; a failed one shows what happened, with a button to try
again (which resumes).
"""

from __future__ import annotations

import time

import streamlit as st

from components.i18n import N_, _
from components.labels import markdown_template
from core.errors import DownloadStalledError, ModelLoadError
from core.models import model_source
from serving import hub
from serving.hub import DownloadPhase
from serving.models import start_download

POLL_S = 1.0
RETRY_AFTER_S = 5.0
PROGRESS = N_("Downloading {name}: {done} of {total} MB ({percent}%).")
SPEED = N_("{speed} MB/s, about {left} left.")
MEANWHILE = N_("The page keeps working on {current} meanwhile and switches to {name} when it "
               "is here.")
CONNECTING = N_("Asking the model hub for {name}…")


def downloading(name: str) -> bool:
    """Whether ``name``'s download is running in this process (this or another session's)."""
    job = hub.download_job(model_source(name))
    return job is not None and not job.state().finished


def draw_download(name: str, shown_name: str, current: str) -> None:
    """Start (or join) the download of hub model ``name`` and draw its progress.

    Raises the job's ``ModelLoadError`` when it failed (the hub does not answer: within the hub
    timeout, in this run), so the caller shows it like any load error. A failed job is tried
    again when the model is asked for after ``RETRY_AFTER_S`` (a retry resumes the partial file),
    not on every rerun of every session that still has it picked; a stalled one also gets a
    button in the sidebar.
    """
    job = hub.download_job(model_source(name))
    state = job.state() if job is not None else None
    ago = time.monotonic() - job.ended_at if job is not None and job.ended_at else 0.0
    if state is not None and state.phase == DownloadPhase.DONE and ago <= RETRY_AFTER_S:
        # Finished a moment ago and still not found complete: say so rather than rerun forever.
        raise ModelLoadError(N_("“{name}” was downloaded, but its files are not complete in "
                                "the cache; try again."), name=shown_name)
    if state is None or (state.finished and ago > RETRY_AFTER_S):
        # A retry (which resumes), or a model whose files have left the cache since.
        state = start_download(name, again=True).wait_until_started()
    if state.error is not None:
        if isinstance(state.error, DownloadStalledError):
            st.sidebar.button(_("Try the download again"), key="download_retry",
                              icon=":material/refresh:", on_click=_retry, args=(name,),
                              help=_("It resumes where it stopped."))
        raise state.error
    _progress(name, shown_name, current)


def _retry(name: str) -> None:
    """The retry button's click: the download again, resuming where it stopped."""
    start_download(name)


@st.fragment(run_every=POLL_S)
def _progress(name: str, shown_name: str, current: str) -> None:
    job = hub.download_job(model_source(name))
    state = job.state() if job is not None else None
    if state is None or state.finished:
        st.rerun()   # the whole page once: the model loads now, or its message shows
        return
    if state.phase == DownloadPhase.CONNECTING:
        st.info(markdown_template(_(CONNECTING), name=shown_name), icon=":material/cloud:")
        return
    parts = [markdown_template(
        _(PROGRESS), name=shown_name, done=hub.megabytes(state.done_bytes),
        total=hub.megabytes(state.total_bytes), percent=f"{100 * state.fraction:.0f}")]
    if state.speed and state.seconds_left is not None:
        parts.append(markdown_template(_(SPEED), speed=f"{state.speed / 1e6:.1f}",
                                       left=_duration(state.seconds_left)))
    parts.append(markdown_template(_(MEANWHILE), current=current, name=shown_name))
    st.progress(state.fraction, text=" ".join(parts))


def _duration(seconds: float) -> str:
    if seconds < 90:
        return _("{n} s").format(n=max(1, round(seconds)))
    return _("{n} min").format(n=round(seconds / 60))
