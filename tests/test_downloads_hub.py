"""Downloads from a model hub of our own on 127.0.0.1 (tests/fake_hub.py), with no internet.

The hub serves a small random BertForPreTraining with a Chinese-reading vocabulary, written by the
test (tests/pretraining_folders.py), at a throttled rate or stalling part-way. Checked: a hub
model loads with its own vocabulary, a cached one loads with the hub gone, progress is reported,
a stall is reported within the stall limit with the true message and a retry resumes, two
callers download once, two models download side by side, no download thread is left behind, each
failure says what happened, and the command a teacher runs (python3 -m serving.download) works
against the same hub.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import huggingface_hub.constants as hub_constants
import pytest
from safetensors import safe_open
from transformers import GPT2Config

from core import load_model, settings
from core.errors import (
    DownloadStalledError,
    ModelNotOnHubError,
    ModelUnavailableError,
    NotBertError,
    NotSafetensorsError,
)
from serving import hub
from serving.models import start_download
from tests.conftest import CLOSED_ENDPOINT, ROOT
from tests.fake_hub import FakeHub
from tests.pretraining_folders import make_chinese_checkpoint

REPO = "bert-base-chinese"
STALL_S = 2.0
WIDE = 2000   # intermediate size: ~1.1 MB of weights, a download that takes a moment when throttled


def _point_at(monkeypatch, endpoint: str) -> None:
    monkeypatch.setattr(hub_constants, "ENDPOINT", endpoint)
    # huggingface_hub builds file URLs from a template made from the endpoint at import time.
    monkeypatch.setattr(hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        endpoint + "/{repo_id}/resolve/{revision}/{filename}")


@pytest.fixture
def files(tmp_path) -> Path:
    """The hub's copy of the checkpoint, and a pickled file beside it that is never fetched."""
    folder = tmp_path / "hub-files" / REPO
    make_chinese_checkpoint(folder, intermediate_size=WIDE)
    (folder / "pytorch_model.bin").write_bytes(b"pickled weights are never fetched")
    return folder


@pytest.fixture
def serve(monkeypatch, tmp_path):
    """``serve(repos, **options)`` starts a FakeHub and points huggingface_hub at it, with an
    empty cache and a stall limit of 2 s; every hub started is stopped at the end."""
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(settings, "HUB_STALL_S", STALL_S)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub.forget_jobs()
    started: list[FakeHub] = []

    def start(repos: dict[str, Path], **options) -> FakeHub:
        fake = FakeHub(repos, **options).start()
        started.append(fake)
        _point_at(monkeypatch, fake.url)
        return fake

    yield start
    for fake in started:
        fake.stop()
    hub.forget_jobs()


def download_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("download ", "hub probe"))]


def no_download_thread_left(within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while download_threads() and time.monotonic() < end:
        time.sleep(0.1)
    return not download_threads()


def tokens(bundle, text: str) -> list[str]:
    return bundle.ids_to_tokens(bundle.tokenize(text)["input_ids"])


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- loading with its own vocabulary


def test_hub_model_loads_with_its_own_vocabulary(serve, files, monkeypatch):
    fake = serve({REPO: files})
    bundle = load_model(REPO)
    assert tokens(bundle, "我爱你") == ["[CLS]", "我", "爱", "你", "[SEP]"]
    assert len(bundle.tokenizer.get_vocab()) == bundle.config.vocab_size
    assert bundle.heads is not None and bundle.heads.predictions is not None
    fetched = {name for _repo, name in fake.gets}
    assert "model.safetensors" in fetched and "vocab.txt" in fetched
    assert "pytorch_model.bin" not in fetched      # only what the explorer reads
    assert all(count == 1 for count in fake.gets.values()), fake.gets
    assert no_download_thread_left()

    # The hub gone (a closed port): the cached copy loads, with the same vocabulary.
    fake.stop()
    _point_at(monkeypatch, CLOSED_ENDPOINT)
    hub.forget_jobs()
    again = load_model(REPO)
    assert tokens(again, "我爱你") == ["[CLS]", "我", "爱", "你", "[SEP]"]


def test_closed_hub_is_reported_at_once(serve, monkeypatch):
    _point_at(monkeypatch, CLOSED_ENDPOINT)
    start = time.monotonic()
    with pytest.raises(ModelUnavailableError, match="cannot be reached"):
        load_model(REPO)
    assert time.monotonic() - start < settings.HUB_TIMEOUT_S + 2


# ---------------------------------------------------------------- progress, stalls, resuming


def test_throttled_download_reports_progress(serve, files):
    size = sum(p.stat().st_size for p in files.iterdir() if p.name != "pytorch_model.bin")
    serve({REPO: files}, rate=400_000)   # ~1.1 MB at 400 kB/s: about 3 s
    chunk = hub_constants.DOWNLOAD_CHUNK_SIZE
    job = start_download(REPO)
    seen = []
    while not (state := job.state()).finished:
        seen.append(state)
        time.sleep(0.2)
    assert state.phase == "done", state.error
    # The download ran as a serving.jobs job: its future holds the same last state.
    assert job.job is not None and job.job.result(timeout=5) == state
    # huggingface_hub was set for the download only (serving.hub_settings), and is back.
    assert hub_constants.DOWNLOAD_CHUNK_SIZE == chunk != 64 * 1024
    moving = [s for s in seen if s.phase == "downloading" and 0 < s.done_bytes < size]
    assert len({s.done_bytes for s in moving}) >= 5, [s.done_bytes for s in seen]
    assert all(s.total_bytes == size for s in moving)
    done = [s.done_bytes for s in moving]
    assert done == sorted(done)
    rated = [s for s in moving if s.speed]
    assert rated and all(100_000 < s.speed < 1_000_000 for s in rated[2:]), [s.speed for s in rated]
    # Time left is what is left at the current speed (the first files are small, so early
    # estimates are rough).
    for s in rated:
        assert s.seconds_left == pytest.approx((size - s.done_bytes) / s.speed, rel=0.05)
    assert no_download_thread_left()


def test_stall_is_reported_in_time_and_a_retry_resumes(serve, files):
    cut = 300_000
    fake = serve({REPO: files}, stall_after=cut)
    start = time.monotonic()
    state = start_download(REPO).wait(timeout=30)
    elapsed = time.monotonic() - start
    assert isinstance(state.error, DownloadStalledError), state
    assert elapsed < STALL_S + 3, f"{elapsed:.1f} s"
    message = str(state.error)
    assert "stalled at" in message and "of 1.1 MB" in message and "resumes" in message
    assert "cannot be reached" not in message
    assert no_download_thread_left(STALL_S + 3)

    # The hub recovers: the retry asks only for the rest of the file, and the model is whole.
    fake.stall_after = None
    retry = start_download(REPO).wait(timeout=30)
    assert retry.phase == "done", retry.error
    [asked] = fake.ranges   # what the partial file held: up to the last whole 64 kB chunk
    assert cut - 64 * 1024 <= int(asked.removeprefix("bytes=").rstrip("-")) <= cut, asked
    assert sha(retry.folder / "model.safetensors") == sha(files / "model.safetensors")
    assert tokens(load_model(REPO), "我爱你") == ["[CLS]", "我", "爱", "你", "[SEP]"]


def test_a_notebooks_load_says_it_stalled_within_the_stall_time(serve, files):
    """core.load_model (a notebook's path, which had waited out huggingface_hub's retries of a
    silent body, 77 s, and then said the hub cannot be reached) on a hub that answers and then
    stalls: it says the download stalled and how far it got, within the stall limit, and a
    retry resumes where it stopped."""
    cut = 300_000
    fake = serve({REPO: files}, stall_after=cut)
    start = time.monotonic()
    with pytest.raises(DownloadStalledError) as info:
        load_model(REPO)
    elapsed = time.monotonic() - start
    assert STALL_S <= elapsed < STALL_S + 3, f"{elapsed:.1f} s"
    message = str(info.value)
    assert f"“{REPO}” stalled at " in message and " of 1.1 MB" in message, message
    small = sum(p.stat().st_size for p in files.iterdir()
                if p.name not in ("model.safetensors", "pytorch_model.bin"))
    assert f"stalled at {(small + cut) / 1e6:.1f} of" in message, message   # all that came
    assert f"nothing for {STALL_S:g} seconds" in message and "cannot be reached" not in message

    fake.stall_after = None
    bundle = load_model(REPO)
    assert tokens(bundle, "我爱你") == ["[CLS]", "我", "爱", "你", "[SEP]"]
    assert fake.ranges == [f"bytes={cut}-"]   # only the rest of the weights was asked for


def test_a_download_of_unknown_size_says_how_much_came(serve, files):
    """A mirror whose listing gives no sizes: the card counts MB so far, and a stall says how
    much had arrived, never "of ? MB"."""
    from components.job_progress import Unit, amount

    serve({REPO: files}, stall_after=300_000, sizes=False)
    download = start_download(REPO)
    state = download.wait(timeout=30)
    assert isinstance(state.error, DownloadStalledError), state
    message = str(state.error)
    assert "stalled after 0.3 MB" in message and "?" not in message, message
    progress = download.job.progress
    assert progress.total is None and 250_000 < progress.done <= 300_000
    assert amount(progress, Unit.BYTES) == "0.3 MB so far"
    assert no_download_thread_left(STALL_S + 3)


def test_two_callers_download_once(serve, files):
    fake = serve({REPO: files}, rate=1_000_000)
    bundles: list = []
    workers = [threading.Thread(target=lambda: bundles.append(load_model(REPO)))
               for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert len(bundles) == 2
    assert fake.gets[(REPO, "model.safetensors")] == 1, fake.gets
    assert no_download_thread_left()


def test_two_models_download_side_by_side(serve, files, tmp_path):
    other = tmp_path / "hub-files" / "other"
    make_chinese_checkpoint(other, intermediate_size=WIDE, seed=1)
    rate = 600_000
    serve({REPO: files, "someone/chinese-bert": other}, rate=rate)
    one_alone = (files / "model.safetensors").stat().st_size / rate
    start = time.monotonic()
    jobs = [start_download(REPO), start_download("someone/chinese-bert")]
    states = [job.wait(timeout=60) for job in jobs]
    elapsed = time.monotonic() - start
    assert all(s.phase == "done" for s in states), states
    assert elapsed < 1.6 * one_alone + 1.0, f"{elapsed:.1f} s for two, {one_alone:.1f} s each"
    assert no_download_thread_left()


# ---------------------------------------------------------------- each failure says what happened


def test_name_not_on_the_hub(serve, files):
    serve({REPO: files})
    with pytest.raises(ModelNotOnHubError, match="has no model named") as info:
        load_model("someone/no-such-bert")
    assert "cannot be reached" not in str(info.value)


def test_checkpoint_without_safetensors(serve, files, tmp_path):
    pickled = tmp_path / "hub-files" / "pickled"
    pickled.mkdir(parents=True)
    for name in ("config.json", "vocab.txt", "pytorch_model.bin"):
        (pickled / name).write_bytes((files / name).read_bytes())
    fake = serve({"someone/pickled-bert": pickled})
    with pytest.raises(NotSafetensorsError, match="safetensors"):
        load_model("someone/pickled-bert")
    assert not fake.gets


def test_not_bert_is_refused_before_any_weight_moves(serve, files, tmp_path):
    gpt = tmp_path / "hub-files" / "gpt"
    make_chinese_checkpoint(gpt)
    GPT2Config(n_embd=32, n_layer=2, n_head=4).save_pretrained(gpt)
    fake = serve({"someone/gpt": gpt})
    with pytest.raises(NotBertError, match="gpt2 model, not BERT"):
        load_model("someone/gpt")
    assert fake.gets[("someone/gpt", "model.safetensors")] == 0


# ---------------------------------------------------------------- the command a teacher runs


def test_download_command_into_a_folder_keeps_the_heads(serve, files, tmp_path, capsys):
    """What the command prints and writes (run in this process; the commands a user is shown
    run as they are typed below)."""
    from serving.download import main

    fake = serve({REPO: files, "bert-base-uncased": files})
    models = tmp_path / "models"
    assert main([REPO, "bert-base-uncased", "--dir", str(models)]) == 0
    out = capsys.readouterr().out
    for name in (REPO, "bert-base-uncased"):
        folder = models / name
        assert sorted(p.name for p in folder.iterdir()) == [
            "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
            "vocab.txt"]
        with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
            assert any(k.startswith("cls.predictions") for k in f.keys())
        assert f"{name}: ready in {folder}" in out
    assert "as its config says" in out and "heads: MLM, NSP" in out
    assert f"BERT_EXPLORER_MODEL_DIRS={models}" in out and "pick models/bert-base-chinese" in out
    assert "pytorch_model.bin" not in {name for _repo, name in fake.gets}
    # And the folder loads in the explorer with the heads (Fill the mask works on it).
    bundle = load_model(str(models / REPO))
    assert bundle.heads is not None and bundle.heads.predictions is not None

    assert main([REPO]) == 0   # already in the cache: found by its name, nothing to set
    assert "by its name" in capsys.readouterr().out
    assert main(["someone/no-such-bert"]) == 1
    assert "has no model named" in capsys.readouterr().err


def shown_commands() -> list[str]:
    """Every download command a user is shown: the Pretraining page's and the README's."""
    from pages.pretraining.page import COMMANDS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = [*COMMANDS, *re.findall(r"`(python3 -m serving\.download [^`]*)`", readme)]
    return list(dict.fromkeys(found))


def _model_names(words: list[str]) -> list[str]:
    """The model names a command fetches (its words after the module, options and --dir's
    folder aside)."""
    names, rest = [], words[3:]
    for i, word in enumerate(rest):
        if not word.startswith("-") and (i == 0 or rest[i - 1] != "--dir"):
            names.append(word)
    return names


def test_every_command_shown_works_against_the_hub(serve, files, tmp_path):
    """Each command as the user reads it, run as typed (a subprocess, HF_ENDPOINT at our hub, an
    empty HF_HOME): it succeeds, keeps the heads, and --dir writes the folder it names."""
    commands = shown_commands()
    assert len(commands) >= 3, commands
    named = {word for command in commands for word in _model_names(shlex.split(command))}
    fake = serve({REPO: files, "bert-base-uncased": files} | dict.fromkeys(named, files))
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")}

    def run_as_typed(number: int, command: str) -> None:
        words = shlex.split(command)
        assert words[:3] == ["python3", "-m", "serving.download"], command
        where = tmp_path / f"run-{number}"
        where.mkdir()
        env_here = {**env, "HF_ENDPOINT": fake.url, "HF_HOME": str(where / "home"),
                    "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, *words[1:]], cwd=where, env=env_here,
                              capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, (command, done.stderr)
        assert "heads: MLM, NSP" in done.stdout, (command, done.stdout)
        if "--dir" in words:
            folder = where / words[words.index("--dir") + 1] / words[3]
            assert (folder / "model.safetensors").is_file() and (folder / "vocab.txt").is_file()

    # Side by side, each in its own folder and cache (a command spends most of its time
    # importing torch, and one after another they took 40 s of this worker).
    with concurrent.futures.ThreadPoolExecutor(len(commands)) as pool:
        for ran in [pool.submit(run_as_typed, n, c) for n, c in enumerate(commands)]:
            ran.result()


# ---------------------------------------------------------------- in the app


def test_app_shows_progress_then_switches_to_the_model(serve, files):
    """/tokens?model=bert-base-chinese: the first run starts the download and shows its progress
    while the page works on the model in use; once it is here, the page reads 我爱你 with the
    model's own vocabulary. (The fragment's own polling needs a browser; AppTest reruns here.)"""
    from tests.conftest import assert_clean, html_tables, open_app

    serve({REPO: files}, rate=300_000)
    at = open_app("pages/tokens/page.py", model=REPO, a="我爱你")
    assert_clean(at)
    assert len(at.get("progress")) == 1
    # The card's line is body text under the bar (components/job_progress.py), as read: no code
    # or escapes.
    shown = " ".join(m.value for m in at.markdown).replace("`", "").replace("\\", "")
    assert "Downloading bert-base-chinese: " in shown and " of 1.1 MB" in shown, shown
    assert "keeps working on all-MiniLM-L6-v2" in shown, shown
    assert "all-MiniLM-L6-v2" in " ".join(c.value for c in at.sidebar.caption)
    assert html_tables(at)[0]["token"].tolist() == ["[CLS]", "我", "[UNK]", "[UNK]", "[SEP]"]
    assert not at.error

    state = hub.download_job(REPO).wait(timeout=30)
    assert state.phase == "done", state.error
    at.run()
    assert_clean(at)
    assert not at.get("progress") and not at.error
    assert html_tables(at)[0]["token"].tolist() == ["[CLS]", "我", "爱", "你", "[SEP]"]
    assert "bert-base-chinese" in " ".join(c.value for c in at.sidebar.caption)


@pytest.mark.browser
def test_browser_shows_progress_then_the_tokens(files, tmp_path, browser):
    """In Chromium, on a fresh server pointed at a throttled hub: /tokens?model=bert-base-chinese
    shows the download's progress moving, then the tokens of 我爱你 from the model's own
    vocabulary, with no reload."""
    from tests.conftest import TOKEN_TABLE, blank_tab, start_server, stop_server

    # ~11 s for the weights: long enough to be seen on a busy machine whose first run is slow.
    with FakeHub({REPO: files}, rate=100_000) as fake:
        proc, url = start_server(env={"HF_ENDPOINT": fake.url, "HF_HOME": str(tmp_path / "home"),
                                      "HF_HUB_OFFLINE": "0"})
        try:
            page = blank_tab(browser)
            page.goto(f"{url}/tokens?model={REPO}&a=我爱你")
            bar = page.locator("[data-testid='stProgress']")
            bar.first.wait_for(timeout=90_000)
            line = page.locator("[data-testid='stMarkdownContainer']",
                                has_text="Downloading").first
            first = line.inner_text()
            assert "Downloading" in first and "1.1" in first, first
            # It moves (the card redraws it every half second), or it is done and gone.
            page.wait_for_function(
                "first => { const el = [...document.querySelectorAll("
                "\"[data-testid='stMarkdownContainer']\")].find("
                "e => e.innerText.includes('Downloading'));"
                " return !el || el.innerText !== first; }",
                arg=first, timeout=30_000)
            table = page.locator(TOKEN_TABLE)
            # 120 s: the suite's other browser tests share the two cores (a fresh clone's full
            # run once took over 60 s here; alone it takes seconds).
            page.wait_for_function(
                "sel => document.querySelector(sel)?.innerText.includes('爱')",
                arg=TOKEN_TABLE, timeout=120_000)
            assert "[UNK]" not in table.first.inner_text()
            assert bar.count() == 0
            page.close()
        finally:
            stop_server(proc)


# ---------------------------------------------------------------- what each model can do


def test_model_facts_from_the_hub_then_from_this_machine(serve, files, monkeypatch):
    """Before the download: its size from the hub's listing, its heads from the weights' header
    (a Range request, no weight moves), its vocabulary; after: its size on disk. The numbers are
    counted here from the files the hub serves."""
    from core.vocabulary import is_cjk
    from serving.model_facts import model_facts
    from tests.pretraining_folders import CHINESE_VOCAB

    fake = serve({REPO: files})
    before = model_facts(REPO, timeout=3)
    wanted = ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
              "model.safetensors")
    assert not before.on_machine
    assert before.size_bytes == sum((files / n).stat().st_size for n in wanted)
    assert (before.mlm_head, before.nsp_head) == (True, True)
    assert before.vocab_size == len(CHINESE_VOCAB)
    assert before.cjk_characters == sum(1 for t in CHINESE_VOCAB if len(t) == 1 and is_cjk(t))
    assert fake.gets[(REPO, "model.safetensors")] == 1 and fake.ranges   # the header only
    load_model(REPO)
    after = model_facts(REPO, timeout=3)
    assert after.on_machine and after.size_bytes == before.size_bytes
    assert (after.vocab_size, after.cjk_characters) == (before.vocab_size, before.cjk_characters)

    _point_at(monkeypatch, CLOSED_ENDPOINT)   # the hub gone: unknown, never an error
    unknown = model_facts("bert-base-uncased", timeout=1)
    assert unknown.size_bytes is None and unknown.mlm_head is None


def test_default_model_facts(bundle):
    """The shipped vocabulary holds 244 single CJK characters (DESIGN.md's reference figure)."""
    from serving.model_facts import model_facts

    facts = model_facts("all-MiniLM-L6-v2", timeout=1)
    assert facts.on_machine and (facts.mlm_head, facts.nsp_head) == (False, False)
    assert (facts.vocab_size, facts.cjk_characters) == (30522, 244)


@pytest.mark.parametrize("allowlist", [None, ""])
def test_no_head_notice_offers_the_model_that_has_them(allowlist, monkeypatch):
    """Pretraining's "no MLM head" notice: one click to bert-base-uncased where this server lets
    a visitor pick it, else the command (the one tested above) that prepares the machine."""
    from pages.pretraining.page import SECTIONS
    from tests.conftest import assert_clean, open_app

    if allowlist is None:
        monkeypatch.delenv("BERT_EXPLORER_ALLOWED_MODELS", raising=False)
    else:
        monkeypatch.setenv("BERT_EXPLORER_ALLOWED_MODELS", allowlist)
    fill = SECTIONS[1].label
    at = open_app("pages/pretraining/page.py", pre_section=fill)
    assert_clean(at)
    buttons = [b.label for b in at.button]
    codes = [c.value for c in at.code]
    if allowlist is None:
        assert "Use bert-base-uncased" in buttons
    else:
        assert "Use bert-base-uncased" not in buttons
        assert "python3 -m serving.download bert-base-uncased" in codes


def test_a_sentence_models_recipe_comes_down_with_it(serve, files):
    """A hub model with its own sentence recipe ([CLS], normalised, as bge-small has it): the
    facts say so before the download, and the downloaded copy reads as that recipe."""
    import json

    from core.similarity.pairs import recipe_of
    from core.similarity.recipe import Pooling
    from serving.model_facts import model_facts

    (files / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"}]))
    (files / "1_Pooling").mkdir()
    (files / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 32, "pooling_mode_cls_token": True,
         "pooling_mode_mean_tokens": False}))
    serve({REPO: files})
    assert model_facts(REPO, timeout=3).pooling == ("cls",)
    load_model(REPO)
    recipe = recipe_of(REPO)
    assert recipe.own and recipe.pooling == (Pooling.CLS,) and recipe.normalize
    assert model_facts(REPO, timeout=3).pooling == ("cls",)
