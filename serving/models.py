"""The app's way to a hub model: ask whether the hub answers, download in the background with
progress and a stall watchdog (``serving.hub``), then load from the cache with core.

core.models loads a model from a folder or the local cache (and, for a notebook, downloads it
plainly in the calling thread); what the app adds is here: the hub probe that gives up on a
silent network within seconds, the shared background download every session watches, and
``load_model``, which downloads that way before core reads the model.
"""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from core.model_files import unavailable
from core.models import ModelBundle, local_folder, model_source, read_config
from core.models import load_model as load_from_folder
from core.settings import HUB_TIMEOUT_S
from serving import jobs

# serving.hub and huggingface_hub are imported where a hub model is asked for: a model on this
# machine (the default, a folder) needs neither, and a fresh server's first page loads this
# module on its way to its tokens (core.models says what the import cost).
if TYPE_CHECKING:
    from serving import hub


def quiet_libraries() -> None:
    """transformers' progress bars and length warnings go to the server's terminal, not to the
    user: the server calls this once at start-up (a notebook keeps transformers as it is)."""
    # Here, not at import: importing transformers is half a second a fresh server's first
    # page does without (core.tokenizer_files).
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()


def hub_reachable(timeout: float | None = None) -> bool:
    """True when the model hub answers an HTTP request within ``timeout`` seconds.

    An open TCP connection is not enough: a captive portal or a stuck proxy can accept it and never
    answer, and huggingface_hub's own client has no read timeout, so the load would hang for good.
    """
    timeout = HUB_TIMEOUT_S if timeout is None else timeout
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        return False
    if timeout <= 0:
        return False
    from huggingface_hub import constants

    from serving import hub
    # Name resolution has no timeout of its own, so the probe runs as a job (serving.jobs) we stop
    # waiting for; sessions asking while one runs share it, and one that ended is not reused
    # (the hub may have come back or gone since).
    endpoint = constants.ENDPOINT
    job = jobs.submit(("hub probe", endpoint, timeout), lambda _job: _probe(endpoint, timeout),
                      name="hub probe", renew=jobs.Job.done)
    if not job.wait(timeout + 1.0):
        if not job.running():
            # Still queued: every worker is busy (downloads, most likely). Do not hold a worker
            # for it later; a download receiving bytes right now says the hub answers.
            job.cancel()
            return hub.any_download_moving()
        return False
    return not job.failed and job.result()


def _probe(endpoint: str, timeout: float) -> bool:
    """One HEAD request to the hub, run on the job pool under the thread name "hub probe"."""
    thread = threading.current_thread()
    pool_name, thread.name = thread.name, "hub probe"
    request = urllib.request.Request(f"{endpoint}/api/models", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # it answered, if only with an error status
    except (OSError, ValueError):
        return False
    finally:
        thread.name = pool_name


def start_download(name: str, again: bool = False) -> hub.DownloadJob:
    """The shared background download of hub model ``name`` (started if none is running; with
    ``again``, also if one finished). The config is checked (BERT, size) as soon as it arrives,
    before any weight is fetched."""
    from serving import hub

    name = name.strip()
    return hub.start_download(model_source(name), lambda path: read_config(name, path), again)


def download_job(name: str) -> hub.DownloadJob | None:
    """The background download of ``name`` if one was started in this process."""
    from serving import hub

    return hub.download_job(model_source(name))


def fetch(name: str) -> Path:
    """The folder of ``name`` on this machine, downloading it first if need be (blocking, with no
    total deadline: only a stall stops it). Raises a ``ModelLoadError`` that says what happened."""
    folder = local_folder(name)
    if folder is not None:
        return folder
    if not hub_reachable():
        raise unavailable(name)
    state = start_download(name).wait()
    if state.error is not None:
        raise state.error
    assert state.folder is not None
    return state.folder


def load_model(name: str | None = None) -> ModelBundle:
    """``core.load_model`` of ``name`` after the app's download (``fetch``), so a hub model
    comes through the shared, watched download rather than a plain one."""
    fetch(name or "")
    return load_from_folder(name)
