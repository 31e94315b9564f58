"""`streamlit run app.py` in a process forked from one that has already imported the heavy
libraries, instead of a new interpreter that imports them again.

A new `python3 -m streamlit run app.py` spends about 6 of its 11 s of processor time at start
importing torch and transformers (measured here), and the suite starts about ten servers on a
machine whose two cores the tests keep busy. A forkserver (the standard library's) imports them
once per test worker; each server is then a fork of it that runs Streamlit's own command line,
`streamlit run app.py --server.port N`, in its main thread, as `python3 -m streamlit` does. The
app, its caches and its start-up (the warm-up included) are new in each server, as before.

What the preloaded libraries read from the environment when imported (the hub's addresses and
folders, thread and allocator settings, ...) is read once, in the forkserver. A server whose
environment differs there (the hub tests, the replicas started as the image runs them) is
started as a new interpreter instead, so it reads its own.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from multiprocessing import forkserver
from pathlib import Path

# The libraries every server imports before it can answer (the bulk of a start), imported once.
PRELOAD = ["torch", "transformers", "transformers.models.bert.modeling_bert", "streamlit.web.cli",
           "plotly.graph_objects", "pandas", "sklearn.decomposition"]
# Environment variables those libraries read when imported, by prefix: a server that needs other
# values than the forkserver had gets a new interpreter.
IMPORT_TIME = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "TOKENIZERS_", "TORCH", "PYTORCH_", "OMP_",
               "MKL_", "OPENBLAS_", "MALLOC_", "PYTHON", "LD_", "SKLEARN_", "STREAMLIT_", "HOME",
               "XDG_")

_STARTED: list[dict[str, str]] = []   # the forkserver's import-time environment, once started
# The test worker's own __main__, kept before any AppTest runs: Streamlit's script runner makes
# the script it runs ``sys.modules["__main__"]`` and never puts the old one back, and a
# forkserver child runs the parent's __main__ file again before its target (multiprocessing's
# spawn preparation), so a server started after an AppTest.from_function test died in its
# script ("name '__args' is not defined").
_WORKER_MAIN = sys.modules["__main__"]


def _import_time(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME)}


def can_fork(env: dict[str, str]) -> bool:
    """Whether a server with environment ``env`` may be forked: the forkserver runs (started
    now if not yet) with the same import-time environment."""
    if sys.platform != "linux":
        return False
    if not _STARTED:
        multiprocessing.set_forkserver_preload(PRELOAD)
        forkserver.ensure_running()
        _STARTED.append(_import_time(dict(os.environ)))
    return _import_time(env) == _STARTED[0]


def _serve(argv: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    """In the forked process: the server's environment, folder and output, then Streamlit's
    command line (SystemExit carries its exit status)."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.argv = argv
    from streamlit.web.cli import main

    main(prog_name="streamlit")


class ForkedServer:
    """The part of ``subprocess.Popen`` the tests use, for a forked server."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        context = multiprocessing.get_context("forkserver")
        # Daemonic: a server a failed test left running is stopped when the worker exits.
        self._process = context.Process(target=_serve, args=(argv, env, str(cwd), str(log)),
                                        daemon=True, name="streamlit-server")
        shown = sys.modules["__main__"]
        sys.modules["__main__"] = _WORKER_MAIN
        try:
            self._process.start()
        finally:
            sys.modules["__main__"] = shown
        self.pid = self._process.pid
        self.args = argv

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._process.exitcode

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()
