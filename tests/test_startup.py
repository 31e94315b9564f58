"""Importing the cache layer changes nothing in the process; the server's start-up does the
process-wide settings, once (frame/startup.py, ``prepare_process``).

In a fresh Python, with glibc's ``mallopt`` recorded (serving.budget's handle on the C library
wrapped before anything calls it): ``import components.cache`` starts no thread, calls no
``mallopt`` and registers no sweep hook; ``prepare_process`` then sets glibc's mmap threshold and
arena count and registers the ended-sessions clean-up, and a second call does nothing more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from serving import budget
from tests.conftest import ROOT

PROBE = r"""
import json, threading
import serving.budget as budget

calls = []


class Recorder:
    def __init__(self, libc):
        self.libc = libc

    def mallopt(self, param, value):
        calls.append([param, value])
        return self.libc.mallopt(param, value)

    def __getattr__(self, name):
        return getattr(self.libc, name)


budget._LIBC = Recorder(budget._LIBC)


def state():
    return {"threads": sorted(t.name for t in threading.enumerate()), "mallopt": list(calls),
            "hooks": [h.__qualname__ for h in budget._ACCOUNTANT.sweep_hooks]}


steps = {"before": state()}
import components.cache  # noqa: E402
steps["import components.cache"] = state()
from frame import startup  # noqa: E402
steps["import frame.startup"] = state()
tuned = startup.prepare_process()
steps["prepare_process"] = state()
again = startup.prepare_process()
steps["prepare_process again"] = state()
steps["tuned"] = [tuned, again]
print(json.dumps(steps))
"""


def test_importing_the_cache_layer_sets_nothing_and_the_start_up_sets_it_once():
    env = {k: v for k, v in os.environ.items()
           if k not in ("MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_")}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=180, check=True, env=env)
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    before = steps["before"]
    assert before["mallopt"] == [] and before["hooks"] == []
    for step in ("import components.cache", "import frame.startup"):
        assert steps[step] == before, step   # no thread, no mallopt, no sweep hook
    assert budget.SWEEPER not in steps["prepare_process"]["threads"]   # it starts with a result
    expected = [[budget.M_MMAP_THRESHOLD, budget.MMAP_THRESHOLD],
                [budget.M_ARENA_MAX, budget.ARENAS]]
    assert steps["prepare_process"]["mallopt"] == expected
    assert steps["prepare_process"]["hooks"] == ["forget_ended_sessions"]
    assert steps["prepare_process again"] == steps["prepare_process"]
    tuned = {"mmap_threshold": budget.MMAP_THRESHOLD, "arena_max": budget.ARENAS}
    assert steps["tuned"] == [tuned, tuned]


FIRST_PAGE_PATH = r"""
import json, sys
import frame.router, frame.startup, pages.tokens.page, pages.home.page, components.cache
heavy = ("torch", "transformers", "sklearn", "scipy.stats", "core.attribution",
         "core.similarity.anisotropy", "core.compare", "core.encoder", "core.pretraining",
         "huggingface_hub", "httpx2")
print(json.dumps([name for name in heavy if name in sys.modules]))
"""


def test_the_first_pages_modules_import_no_torch_nor_scikit_learn():
    """A fresh server's first page (the router, /tokens, Home, the cache layer the warm-up loads
    the model through) imports neither torch nor transformers (seconds: the page shows its
    tokens from the tokenizer's files while the model loads), nor scikit-learn, scipy.stats,
    the attribution, similarity, contexts, encoder and pretraining code, nor huggingface_hub
    and its HTTP client (the default model is on this machine; bench/cold_start_bench.py).
    ``core`` imports its names when they are first asked for."""
    done = subprocess.run([sys.executable, "-c", FIRST_PAGE_PATH], cwd=ROOT, capture_output=True,
                          text=True, timeout=180, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_every_name_core_lists_is_its_modules():
    """``from core import X`` (and ``core.similarity``'s) gives the object its module defines,
    for every name either lists; a name neither lists is an AttributeError."""
    import importlib

    import core
    import core.similarity

    for package in (core, core.similarity):
        for name in package.__all__:
            value = getattr(package, name)
            home = importlib.import_module(getattr(value, "__module__", "") or package.__name__)
            assert getattr(home, name, value) is value, name
        assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError):
        core.no_such_name  # noqa: B018 - the lookup is the test



TOKENS_WITHOUT_MODEL = r"""
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120)
at.session_state["a"] = "This is a test sentence"
at.session_state["b"] = "我爱你"
at.run()
heavy = [name for name in ("torch", "transformers") if name in sys.modules]
from tests.conftest import html_tables
table = html_tables(at)[0]
print(json.dumps({"heavy": heavy, "exceptions": [str(e.value) for e in at.exception],
                  "title": [t.value for t in at.title], "metrics": [m.value for m in at.metric],
                  "ids": [int(i) for i in table["input_id"]],
                  "types": [int(i) for i in table["token_type_id"]],
                  "positions": [int(i) for i in table.iloc[:, 0]],
                  "download": [b.label for b in at.get("download_button")]}))
"""


def test_the_tokens_page_is_complete_without_the_model(bundle):
    """In a fresh interpreter, /tokens draws its whole view (counts, table, download) from the
    tokenizer's files, and neither torch nor transformers is imported: what a fresh server's
    first visitor sees while the model loads. Its ids are the loaded model's tokenizer's."""
    from core import encode

    page = str(ROOT / "pages" / "tokens" / "page.py")
    done = subprocess.run([sys.executable, "-c", TOKENS_WITHOUT_MODEL, page], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["heavy"] == [] and seen["exceptions"] == []
    assert seen["title"] == ["Tokens"]
    expected = encode(bundle, "This is a test sentence", "我爱你")
    assert seen["ids"] == expected.input_ids
    assert seen["types"] == expected.token_type_ids
    assert seen["positions"] == expected.position_ids
    assert seen["metrics"][0] == str(expected.n_real)
    assert len(seen["download"]) == 1


WARM_FIRST_PAGE = r"""
import json, sys
import streamlit  # the server has it
from frame import startup
startup.warm_first_page()
from components.cache import get_encoding, get_tokenizer_files, model_ready
from components.input_key import InputKey
from components.inputs import DEFAULT_SENTENCE
from core.settings import DEFAULT_MODEL
key = InputKey(DEFAULT_MODEL, DEFAULT_SENTENCE, None)
print(json.dumps({
    "heavy": [m for m in ("torch", "transformers", "huggingface_hub") if m in sys.modules],
    "pages": [m for m in ("frame.router", "pages.tokens.page", "pages.home.page")
              if m in sys.modules],
    "cached": (key,) in get_encoding.store, "ready": model_ready(DEFAULT_MODEL),
    "ids": get_encoding(key).input_ids,
    "limit": get_tokenizer_files(DEFAULT_MODEL).config.max_position_embeddings}))
"""


def test_the_warm_up_first_readies_the_first_page_without_torch(bundle):
    """The warm-up's first step imports the router's and the first pages' modules and puts the
    default sentence's tokens in the shared cache, importing neither torch nor transformers (so
    the first visitor's page is not slowed by them); the model comes after it."""
    done = subprocess.run([sys.executable, "-c", WARM_FIRST_PAGE], cwd=ROOT, capture_output=True,
                          text=True, timeout=180, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["heavy"] == [] and seen["ready"] is False
    assert seen["pages"] == ["frame.router", "pages.tokens.page", "pages.home.page"]
    assert seen["cached"] is True
    assert seen["ids"] == bundle.tokenizer("This is a test sentence")["input_ids"]
    assert seen["limit"] == bundle.config.max_position_embeddings


SCAN = r"""
import importlib.metadata, json, sys
import streamlit
if sys.argv[1] == "server":
    from serving.streamlit_private import skip_installed_component_scan
    skip_installed_component_scan()
listed = []
every = importlib.metadata.distributions
importlib.metadata.distributions = lambda *a, **k: listed.append(1) or every(*a, **k)
from streamlit.components.v2.component_manager import BidiComponentManager
BidiComponentManager().discover_and_register_components(start_file_watching=False)
print(json.dumps(len(listed)))
"""


@pytest.mark.parametrize("process,lists", [("server", 0), ("plain", 1)])
def test_the_server_lists_no_installed_package_for_components(process, lists):
    """Streamlit's runtime lists every installed package for custom components before a fresh
    server's first answer; the server skips that (serving/streamlit_private.py), a plain
    process does not (the check can fail)."""
    done = subprocess.run([sys.executable, "-c", SCAN, process], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == lists


def test_the_readme_command_prints_where_to_open_the_app_and_asks_no_website():
    """The README's first command, as a teacher runs it (every interface, headless by the app's
    settings): the server prints its Local and Network URLs once it answers, and never looks up
    the address the internet sees (Streamlit's own welcome asked checkip.amazonaws.com first,
    which here, with no network, logged "Did not auto detect external IP")."""
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py",
                             "--server.port", str(port)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/tokens", timeout=5) as r:
                    assert r.status == 200
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(1.0)   # the lines are printed as the server starts answering
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert f"Local URL: http://localhost:{port}" in out
    assert "External URL" not in out and "external IP" not in out
