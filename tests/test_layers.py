"""The layers: importing core (or serving) changes nothing in the process, and imports run one way.

(a) In a fresh Python: every huggingface_hub constant, transformers' logging verbosity and
    progress-bar switch, torch's thread count, the warning filters and the number of threads are
    the same before and after ``import core``, ``from core import load_model`` and the import of
    each serving module. huggingface_hub is patched only while a managed download runs, and put
    back after (``serving.hub_settings.hub_settings``).
(b) pages -> components -> serving -> core, read from every .py file's syntax tree: core imports
    none of serving, components, pages, frame or streamlit; serving none of components, pages,
    frame or streamlit (one listed exception); components no pages.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import threading
from pathlib import Path

import huggingface_hub.constants as hub_constants
import pytest

from tests.conftest import ROOT

SNAPSHOT = r"""
import json, sys, threading, warnings
import huggingface_hub.constants as constants
import torch
from transformers.utils import logging as transformers_logging
import scipy.sparse, scipy.special, sympy   # their own warning filters, set as they are imported

def snapshot():
    return {
        "hub": {k: repr(getattr(constants, k)) for k in dir(constants) if k.isupper()},
        "verbosity": transformers_logging.get_verbosity(),
        "progress_bar": transformers_logging.is_progress_bar_enabled(),
        "torch_threads": torch.get_num_threads(),
        "warning_filters": len(warnings.filters),
        "threads": threading.active_count(),
    }

steps = {"before": snapshot()}
for statement in sys.argv[1:]:
    exec(statement)
    steps[statement] = snapshot()
print(json.dumps(steps))
"""

CORE_THEN_SERVING = [
    "import core",
    "from core import load_model",
    "import core.models, core.model_files, core.settings",
    "import serving",
    "import serving.jobs",
    "import serving.hub",
    "import serving.models",
    "import serving.download",
    "import serving.model_facts",
    "import serving.budget",
    "import serving.session_memory",
    "import serving.streamlit_private, serving.hub_private",
    "import serving.classpoll, serving.classpoll_redis",
    "import serving.checks",
]


def _steps(statements: list[str]) -> dict[str, dict]:
    done = subprocess.run([sys.executable, "-c", SNAPSHOT, *statements], cwd=ROOT,
                          capture_output=True, text=True, timeout=180, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_core_and_serving_changes_nothing():
    steps = _steps(CORE_THEN_SERVING)
    before = steps.pop("before")
    for statement, after in steps.items():
        changed = {k: (before["hub"][k], v) for k, v in after["hub"].items()
                   if before["hub"].get(k) != v}
        assert not changed, f"{statement!r} changed huggingface_hub constants: {changed}"
        for what in ("verbosity", "progress_bar", "torch_threads", "warning_filters", "threads"):
            assert after[what] == before[what], (
                f"{statement!r} changed {what}: {before[what]} -> {after[what]}")


def test_serving_jobs_alone_starts_no_thread():
    """``import serving.jobs`` first, in a fresh process: its pool makes threads on the first
    submit only."""
    steps = _steps(["import serving", "import serving.jobs", "serving.jobs.board()"])
    threads = {statement: step["threads"] for statement, step in steps.items()}
    assert len(set(threads.values())) == 1, threads


def test_hub_settings_hold_only_while_a_download_runs():
    """The managed download's settings: on while one download (or two side by side) runs, the
    old values back once the last ends, also when it ends with an error."""
    from huggingface_hub import get_session

    from serving.hub_settings import CHUNK_BYTES, hub_settings

    old = (hub_constants.DOWNLOAD_CHUNK_SIZE, hub_constants.HF_HUB_DOWNLOAD_TIMEOUT)
    client_before = type(get_session())
    with hub_settings(7.0):
        assert hub_constants.DOWNLOAD_CHUNK_SIZE == CHUNK_BYTES != old[0]
        assert hub_constants.HF_HUB_DOWNLOAD_TIMEOUT == 7
        with pytest.raises(RuntimeError), hub_settings(7.0):   # a second download, failing
            raise RuntimeError("the second download fails")
        assert hub_constants.DOWNLOAD_CHUNK_SIZE == CHUNK_BYTES   # the first still runs
    assert (hub_constants.DOWNLOAD_CHUNK_SIZE, hub_constants.HF_HUB_DOWNLOAD_TIMEOUT) == old
    assert type(get_session()) is client_before
    assert not [t for t in threading.enumerate() if t.name.startswith("download ")]


# ---------------------------------------------------------------- imports run one way

LAYERS = ("core", "serving", "components", "pages", "frame")
MAY_NOT_IMPORT = {
    "core": ("serving", "components", "pages", "frame", "streamlit"),
    "serving": ("components", "pages", "frame", "streamlit"),
    "components": ("pages",),
}
# (file, module) pairs allowed across the rule, each with its reason.
EXCEPTIONS = {
    # Session clean-up reads Streamlit's runtime (which sessions still live) to let go of what
    # ended sessions hold: a service of the server's, but one that can only ask Streamlit. Every
    # such read is in the one adapter of Streamlit's private names.
    ("serving/streamlit_private.py", "streamlit"),
}


def imported_modules(source: str, package: tuple[str, ...]) -> set[str]:
    """Every module ``source`` (a file of ``package``) imports, at the top or inside a function,
    relative ones resolved."""
    tree = ast.parse(source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join((*base, node.module) if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def layer_files(layer: str) -> list[Path]:
    return sorted(p for p in (ROOT / layer).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("layer", sorted(MAY_NOT_IMPORT))
def test_imports_run_one_way(layer):
    files = layer_files(layer)
    assert files, f"no Python file under {layer}/"
    wrong = []
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        for module in imported_modules(source, path.relative_to(ROOT).parent.parts):
            top = module.split(".")[0]
            if top in MAY_NOT_IMPORT[layer] and (name, top) not in EXCEPTIONS:
                wrong.append(f"{name} imports {module}")
    assert not wrong, f"{layer}/ may not import {', '.join(MAY_NOT_IMPORT[layer])}:\n" + "\n".join(
        sorted(set(wrong)))


def test_the_import_check_sees_what_it_must():
    """The checker itself: imports at the top, inside functions, and relative ones."""
    sample = ("import streamlit as st\n\ndef f():\n    from components import cache\n"
              "    from . import jobs\n    from .hub import megabytes\n")
    found = imported_modules(sample, ("serving",))
    assert {"streamlit", "components", "components.cache", "serving", "serving.jobs",
            "serving.hub", "serving.hub.megabytes"} <= found
    assert all(layer_files(layer) for layer in LAYERS)
