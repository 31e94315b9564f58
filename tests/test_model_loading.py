"""core.load_model's failure paths: every model name that must not load, and a folder that must.

No Streamlit here. The hub is made deterministic by the ``closed_hub`` fixture (tests/conftest.py:
huggingface_hub pointed at a closed local port, an empty cache), so these tests behave the same on
a laptop with internet and in offline CI. Model folders are built in code (tests/model_folders.py),
never downloaded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest
import torch
from transformers import BertConfig, BertModel

from core import (
    KNOWN_MODELS,
    ModelLoadError,
    ModelTooLargeError,
    ModelUnavailableError,
    NotBertError,
    analyze,
    load_config,
    load_model,
)
from core.settings import MAX_PARAMETERS
from tests.conftest import LOAD_DEADLINE_S, ROOT
from tests.model_folders import (
    HUGE,
    make_bin_only_folder,
    make_huge_config_folder,
    make_not_bert_folder,
    make_tiny_bert_folder,
    save_tokenizer,
    write_config,
)


def meta_parameter_count(config: BertConfig) -> int:
    """Parameters of BertModel(config) built on the meta device: exact, and no memory is used."""
    with torch.device("meta"):
        model = BertModel(config)
    return sum(p.numel() for p in model.parameters())


def timed_load(name: str) -> tuple[BaseException | None, float]:
    """load_model(name) in a worker thread; gives up waiting after the deadline plus a margin."""
    outcome: list[BaseException | None] = []

    def work() -> None:
        try:
            load_model(name)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - the test inspects whatever came out
            outcome.append(exc)

    start = time.monotonic()
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(LOAD_DEADLINE_S + 2)
    elapsed = time.monotonic() - start
    assert outcome, f"load_model({name!r}) still running after {elapsed:.1f} s"
    return outcome[0], elapsed


# ---------------------------------------------------------------- unreachable hub


@pytest.mark.parametrize("name", [*KNOWN_MODELS, "someone/some-bert"])
def test_unreachable_hub_model_fails_fast(closed_hub, name):
    error, elapsed = timed_load(name)
    assert isinstance(error, ModelUnavailableError), repr(error)
    assert elapsed < LOAD_DEADLINE_S, f"{elapsed:.1f} s"
    message = str(error)
    assert name in message and "cannot be reached" in message and "folder" in message


def test_offline_switch_fails_fast(closed_hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    error, elapsed = timed_load("bert-base-uncased")
    assert isinstance(error, ModelUnavailableError) and elapsed < LOAD_DEADLINE_S


# The end of both child scripts: load a hub model in a thread, print the outcome and the time.
LOAD_IN_CHILD = r"""
from core import ModelLoadError, load_model
outcome = {"error": None}
def work():
    try:
        load_model("bert-base-uncased")
        outcome["error"] = "loaded"
    except ModelLoadError as exc:
        outcome["error"] = type(exc).__name__
    except BaseException as exc:
        outcome["error"] = "uncaught " + type(exc).__name__ + ": " + str(exc)[:200]
start = time.monotonic()
worker = threading.Thread(target=work, daemon=True)
worker.start()
worker.join(float(sys.argv[2]) + 5)
print(json.dumps({**outcome, "elapsed": time.monotonic() - start}), flush=True)
import os; os._exit(0)
"""


# Run in a child process: a load stuck on a silent socket cannot be stopped from Python, and a
# thread left behind in this process would retry against the real hub once the patch is undone.
SILENT_HUB_CHILD = r"""
import json, socket, sys, threading, time
import huggingface_hub.constants as hub_constants
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(16)
threading.Thread(target=lambda: [server.accept() for _ in iter(int, 1)], daemon=True).start()
hub_constants.ENDPOINT = f"http://127.0.0.1:{server.getsockname()[1]}"
hub_constants.HF_HUB_CACHE = sys.argv[1]
""" + LOAD_IN_CHILD


def test_silent_hub_fails_within_deadline(hub_children):
    """A hub that accepts connections and never answers (a captive portal, a stuck proxy): the
    HTTP probe times out, so the load fails within the deadline instead of hanging for good."""
    outcome = hub_children("silent")
    assert outcome["error"] == "ModelUnavailableError", outcome
    assert outcome["elapsed"] < LOAD_DEADLINE_S, outcome


# A hub that answers the quick check at once, then stalls: it sends the headers of every other
# request and a few bytes of body, then nothing (seen on a congested school network). Child process,
# for the same reason as above.
STALLING_HUB_CHILD = r"""
import http.server, json, sys, threading, time
import huggingface_hub.constants as hub_constants

class Stalling(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def _answer(self, body):
        if self.path.rstrip("/") == "/api/models":   # the quick check only
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            if body:
                self.wfile.write(b"[]")
            return
        self.send_response(200)
        self.send_header("Content-Length", "100000000")
        self.send_header("ETag", '"abc"')
        self.send_header("X-Repo-Commit", "0" * 40)
        self.end_headers()
        if body:
            self.wfile.write(b"{" + b" " * 100)
            self.wfile.flush()
        time.sleep(600)
    def do_HEAD(self):
        self._answer(False)
    def do_GET(self):
        self._answer(True)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
hub_constants.ENDPOINT = f"http://127.0.0.1:{server.server_address[1]}"
hub_constants.HF_HUB_CACHE = sys.argv[1]
""" + LOAD_IN_CHILD


def test_stalling_hub_fails_within_deadline(hub_children):
    """A hub that answers the quick check and then never answers the listing of the repository:
    the named model gives its message within the deadline (a stall once the download has begun
    is tests/test_downloads_hub.py's)."""
    outcome = hub_children("stalling")
    assert outcome["error"] == "ModelUnavailableError", outcome
    assert outcome["elapsed"] < LOAD_DEADLINE_S, outcome


@pytest.fixture(scope="module")
def hub_children(tmp_path_factory):
    """Both hubs' child processes started at once (each mostly waits out the deadline; one
    after the other they took 33 s of this worker); ``hub_children(name)`` is that child's
    outcome."""
    offline = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")  # the socket path is what is tested
    env = {k: v for k, v in os.environ.items() if k not in offline}
    children = {
        name: subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path_factory.mktemp(name) / "hub-cache"),
             str(LOAD_DEADLINE_S)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, code in (("silent", SILENT_HUB_CHILD), ("stalling", STALLING_HUB_CHILD))}

    def outcome(name: str) -> dict:
        out, err = children[name].communicate(timeout=120)
        assert children[name].returncode == 0, err[-2000:]
        return json.loads(out.strip().splitlines()[-1])

    yield outcome
    for child in children.values():
        if child.poll() is None:
            child.kill()
            child.wait()


# ---------------------------------------------------------------- folders that are not loadable


@pytest.mark.parametrize("kind", ["gpt2", "distilbert"])
def test_not_bert_folder(tmp_path, bundle, kind):
    folder = make_not_bert_folder(tmp_path / kind, kind, bundle.tokenizer)
    with pytest.raises(NotBertError, match=rf"is a {kind} model, not BERT"):
        load_model(str(folder))


def test_huge_config_refused_before_any_weight_is_read(tmp_path):
    folder = make_huge_config_folder(tmp_path / "huge")
    # A corrupt weights file next to it: reading it would raise a SafetensorError instead.
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    start = time.monotonic()
    with pytest.raises(ModelTooLargeError) as info:
        load_model(str(folder))
    assert time.monotonic() - start < 2.0
    stated = int(re.search(r"has ([\d,]+) parameters", str(info.value)).group(1).replace(",", ""))
    assert stated == meta_parameter_count(BertConfig(**HUGE)) > MAX_PARAMETERS
    assert f"{MAX_PARAMETERS:,}" in str(info.value)


def test_parameter_budget_boundary(tmp_path):
    """bert-large's shape (335M) fits the default budget; 28 wider layers (~417M) do not."""
    large = {"num_hidden_layers": 24, "hidden_size": 1024, "num_attention_heads": 16,
             "intermediate_size": 4096}
    too_big = {**large, "num_hidden_layers": 28, "hidden_size": 1088}
    assert meta_parameter_count(BertConfig(**large)) <= MAX_PARAMETERS
    assert meta_parameter_count(BertConfig(**too_big)) > MAX_PARAMETERS
    BertConfig(**large).save_pretrained(tmp_path / "large")
    BertConfig(**too_big).save_pretrained(tmp_path / "too_big")
    assert load_config(str(tmp_path / "large")).num_hidden_layers == 24
    with pytest.raises(ModelTooLargeError):
        load_config(str(tmp_path / "too_big"))


def test_bin_only_folder_refused(tmp_path, bundle):
    folder = make_bin_only_folder(tmp_path / "bin_only", bundle.tokenizer)
    with pytest.raises(ModelLoadError, match="safetensors"):
        load_model(str(folder))


def test_config_without_weights_refused(tmp_path, bundle):
    folder = write_config(tmp_path / "no_weights")
    save_tokenizer(folder, bundle.tokenizer)
    with pytest.raises(ModelLoadError, match="safetensors"):
        load_model(str(folder))


def test_folder_without_config_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="could not be read as a model"):
        load_model(str(tmp_path / "empty"))


UNREADABLE = "could not be read as a model"   # config.json that transformers rejects
UNLOADABLE = "could not be loaded"            # a config that reads, weights that do not fit it
UNUSABLE = r"has a config.json the explorer cannot use: {} must be whole numbers of at least 1"


@pytest.mark.parametrize(
    ("overrides", "weights", "message"),
    [
        pytest.param({"hidden_size": "abc"}, None, UNREADABLE, id="field-of-wrong-type"),
        pytest.param({"model_type": ["bert"]}, None, UNREADABLE, id="model_type-list"),
        pytest.param({}, b"not safetensors", UNLOADABLE, id="corrupt-safetensors"),
        pytest.param({"intermediate_size": 50}, "tiny", UNLOADABLE, id="weights-mismatch-config"),
        # Nonsense sizes are refused by name before torch is asked to build anything.
        pytest.param({"hidden_size": -8}, "tiny", UNUSABLE.format("hidden_size"),
                     id="negative-hidden-size"),
        pytest.param({"num_hidden_layers": -1}, "tiny", UNUSABLE.format("num_hidden_layers"),
                     id="negative-layers"),
        pytest.param({"vocab_size": 0}, "tiny", UNUSABLE.format("vocab_size"), id="zero-vocab"),
        pytest.param({"num_attention_heads": 7}, "tiny", UNLOADABLE,
                     id="heads-do-not-divide-hidden"),
        pytest.param({"hidden_act": "bogus"}, "tiny", UNLOADABLE, id="unknown-activation"),
    ],
)
def test_broken_folder_is_a_clear_error(tmp_path, bundle, overrides, weights, message):
    """A folder someone edited by hand: every way it can be broken ends in a ModelLoadError."""
    folder = tmp_path / "broken"
    if weights == "tiny":
        make_tiny_bert_folder(folder, bundle.tokenizer)  # real weights, then a config that lies
    elif weights is not None:
        save_tokenizer(folder, bundle.tokenizer)
        (folder / "model.safetensors").write_bytes(weights)
    else:
        save_tokenizer(folder, bundle.tokenizer)
    write_config(folder, **overrides)
    with pytest.raises(ModelLoadError, match=message) as info:
        load_model(str(folder))
    assert str(info.value).startswith(f"“{folder}”")  # the message says which folder it read


# ---------------------------------------------------------------- names that are not models

# Names no file system accepts as a path: one component over the 255-byte limit, a home folder
# of a user who does not exist. Checking them for a folder must say "no", not raise.
NAME_TOO_LONG = "b" * 300


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("/no/such/model/folder", "There is no model folder"),
        ("./no-such-folder", "There is no model folder"),
        ("../../no/such/place", "There is no model folder"),
        ("not a model name!", "neither a model name"),
        ("org/name/extra", "neither a model name"),
        ("org/../../etc", "neither a model name"),
        ("https://evil.example/bert", "neither a model name"),
        ("<img src=x onerror=alert(1)>", "neither a model name"),
        ("x" * 97, "neither a model name"),
        pytest.param(NAME_TOO_LONG, "neither a model name", id="name-too-long"),
        pytest.param("~no-such-user-h7/bert", "There is no model folder", id="unknown-home"),
    ],
)
def test_bad_names_are_clear_errors(closed_hub, name, fragment):
    with pytest.raises(ModelLoadError, match=fragment):
        load_model(name)


def test_existing_folder_that_is_not_a_model(tmp_path, monkeypatch):
    """A path traversal to a real folder (here ../.. from a nested cwd) reads no model from it."""
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    with pytest.raises(ModelLoadError, match="could not be read as a model"):
        load_model("../..")


def test_empty_name_is_the_default_model(bundle):
    assert load_model("  ").name == bundle.name == "all-MiniLM-L6-v2"


# ---------------------------------------------------------------- a folder that must load


def _resident_share_of_mapping(address: int) -> float:
    """Of the file mapping that holds ``address`` (/proc/self/smaps), the share resident."""
    inside = False
    size = 0
    for line in open("/proc/self/smaps"):
        head = re.match(r"^([0-9a-f]+)-([0-9a-f]+) ", line)
        if head:
            start, end = int(head[1], 16), int(head[2], 16)
            inside = start <= address < end
            size = end - start
        elif inside and line.startswith("Rss:"):
            return int(line.split()[1]) * 1024 / size
    raise AssertionError("no mapping holds that address")


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads Linux's memory map")
def test_loaded_model_has_every_weight_in_memory():
    """safetensors maps the file and reads a page when it is first touched: without reading
    every weight at load, the word table's rows stayed on disk until a sentence used them (a
    fresh load had 11 of the shipped model's 87 MB resident), and the server grew during a
    class by the model's own pages."""
    fresh = load_model()   # a new mapping of the file, whatever earlier tests touched
    table = fresh.model.embeddings.word_embeddings.weight
    assert _resident_share_of_mapping(table.data_ptr()) > 0.95


def test_tiny_bert_folder_loads_and_matches_the_in_memory_model(tmp_path, bundle):
    folder = tmp_path / "tiny_bert"
    reference = make_tiny_bert_folder(folder, bundle.tokenizer)
    loaded = load_model(str(folder))

    assert loaded.name == str(folder)
    assert not loaded.model.training
    # eager attention (transformers' default gives no attention weights)
    assert len(loaded.model(torch.tensor([[101, 102]]), output_attentions=True).attentions) == (
        loaded.config.num_hidden_layers)
    for field in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                  "intermediate_size", "max_position_embeddings", "type_vocab_size"):
        assert getattr(loaded.config, field) == getattr(reference.config, field), field
    # The tokenizer saved alongside gives the seed's IDs.
    assert loaded.tokenizer("This is a test sentence")["input_ids"] == [
        101, 2023, 2003, 1037, 3231, 6251, 102]

    enc = bundle.tokenizer("What is your name?", "My name is BERT.", return_tensors="pt")
    with torch.no_grad():
        want = reference(**enc, output_hidden_states=True, output_attentions=True)
        got = loaded.model(**enc, output_hidden_states=True, output_attentions=True)
    torch.testing.assert_close(got.last_hidden_state, want.last_hidden_state, rtol=0, atol=1e-6)
    torch.testing.assert_close(got.pooler_output, want.pooler_output, rtol=0, atol=1e-6)
    for g, w in zip(got.attentions, want.attentions, strict=True):
        torch.testing.assert_close(g, w, rtol=0, atol=1e-6)

    # And the core's stage-by-stage analysis of the loaded folder ends at the same vectors.
    result = analyze(loaded, "What is your name?", "My name is BERT.")
    assert result.layer_names == ["layer_1", "layer_2"]
    torch.testing.assert_close(torch.from_numpy(result.stages["layer_2"]),
                               want.last_hidden_state[0], rtol=0, atol=1e-5)


# ---------------------------------------------------------------- the model's own vocabulary


def test_folder_without_vocabulary_is_a_clear_error(tmp_path):
    """Without vocab.txt or tokenizer.json transformers would build a 5-token tokenizer that turns
    every word into [UNK]: a message instead."""
    from core.errors import VocabularyError
    from tests.pretraining_folders import make_chinese_checkpoint

    folder = tmp_path / "no_vocab"
    make_chinese_checkpoint(folder, vocab=False)
    with pytest.raises(VocabularyError, match="has no vocabulary"):
        load_model(str(folder))


def test_vocabulary_of_another_model_is_a_clear_error(tmp_path, bundle):
    """The shipped 30,522-token vocabulary next to a 72-row word table: IDs past the table."""
    from core.errors import VocabularyError
    from tests.pretraining_folders import make_chinese_checkpoint

    folder = tmp_path / "wrong_vocab"
    make_chinese_checkpoint(folder, vocab=False)
    save_tokenizer(folder, bundle.tokenizer)
    wrong = r"vocabulary of 30,522 tokens but a table of \d+ token"
    with pytest.raises(VocabularyError, match=wrong):
        load_model(str(folder))


def test_least_recently_used_model_is_dropped_first(tmp_path, bundle, monkeypatch):
    """BERT_EXPLORER_MAX_MODELS (2 by default) models besides the embedded one stay loaded; a
    third pushes out the one used longest ago (the embedded model has a cache of its own)."""
    from components import cache
    from core.settings import MAX_MODELS

    assert MAX_MODELS == 2 and cache.MODEL_CACHE_ENTRIES == 3
    names = {}
    for key in "abc":
        make_tiny_bert_folder(tmp_path / key, bundle.tokenizer)
        names[key] = str(tmp_path / key)
    loads: list[str] = []
    real_load = cache.load_model
    monkeypatch.setattr(cache, "load_model", lambda name: loads.append(name) or real_load(name))
    cache._other_model.clear()
    for key in "abacab":   # c pushes out b (a was used after b); then b is loaded again
        cache.get_model(names[key])
    assert loads == [names["a"], names["b"], names["c"], names["b"]]
    cache._other_model.clear()
