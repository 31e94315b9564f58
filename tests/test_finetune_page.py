"""The Fine-tuning page in AppTest: the numbers it shows are what core.fine_tune returns, in both
languages; a set the model reads as [UNK] is refused with its measured share; a user's file with
every bad line named and core's refusals said at once (one class, numbers mixed with words,
fewer than 8 rows, an answer not in its passage, a text cut at the model's positions); the
queue (a second run waits with its place, a second session shares the first's run), Stop
part-way, a server that restarted, not enough memory.

Runs are the real shipped model on a few items (one step or a few), except one run of the
built-in set at the page's settings, the real-model check."""

from __future__ import annotations

import io
import threading
import time
import zipfile

import numpy as np
import pytest

from components.kept_upload import KeptFile
from core import fine_tune, layer_similarity, load_model
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.finetune import builtin_set
from core.finetune.tasks import FineTuneTask
from pages.finetune import cache as finetune_cache
from serving import jobs, training
from serving.training import Request
from tests.conftest import assert_clean, open_app, plotly_values
from tests.model_folders import make_tiny_bert_folder
from tests.page_runs import figure, texts
from tests.page_runs import settle as settle_jobs

PAGE = "pages/finetune/page.py"
WAIT_S = 300
MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(autouse=True)
def fresh_training():
    """Every test starts with no run on the server, and leaves none running."""
    training.shutdown()
    yield
    training.shutdown()
    for job in jobs.board().jobs():
        job.cancel()


def settle(at):
    """Wait for the runs and the page's background work, then rerun (as the polling fragment
    would)."""
    return settle_jobs(at, wait_s=WAIT_S, boards=(training.board(),))


def with_file(name: str, text: str, **query: str):
    """The page with ``text`` uploaded as the reader's file (kept as the uploader keeps it)."""
    data = text.encode("utf-8")
    at = open_app(PAGE, ft_data="file", **query)
    at.session_state["ft_file_kept"] = KeptFile(name, data, len(data))
    at.run()
    return at


def click_start(at):
    at.button(key="ft_start").click().run()
    return at


# --- the real-model check: the page's numbers are fine_tune's ------------------------------------

def test_the_numbers_are_fine_tunes(bundle):
    """The built-in English sentence classes at batch 32 (8 steps): the loss curve, the held-out
    table and the right/wrong examples are what fine_tune gives for the same items and settings,
    computed here apart; the Chinese interface then shows the same run (one run a request)."""
    query = {"ft_data": "en", "ft_batch": "32"}
    at = settle(click_start(open_app(PAGE, **query)))
    assert_clean(at)
    assert at.title[0].value == "Fine-tuning"
    data = builtin_set("sentence_class", "en")
    run = fine_tune(bundle, "sentence_class", data.train, held_out=data.held_out, epochs=1,
                    batch_size=32, learning_rate=5e-5, seed=0, max_length=128)
    shown = plotly_values(figure(at, "finetune_loss")["data"][0]["y"])
    np.testing.assert_allclose(shown, run.losses, rtol=1e-3, atol=1e-4)
    assert any(f"{run.steps} steps in" in m for m in texts(at, "markdown"))

    scores = settle(open_app(PAGE, ft_section="Scores", **query))
    assert_clean(scores)
    table = scores.table[0].value
    for row, metric in enumerate(run.before.metrics):
        assert float(table.iloc[row, 1]) == pytest.approx(run.before.metrics[metric], abs=1e-3)
        assert float(table.iloc[row, 2]) == pytest.approx(run.after.metrics[metric], abs=2e-3)
    right = [i for i, (b, a) in enumerate(zip(run.before.correct, run.after.correct,
                                              strict=True)) if a and not b]
    assert str(len(right)) in texts(scores, "subheader")[0]
    first = scores.table[1].value
    assert list(first.iloc[:, 0]) == [data.held_out[i].text for i in right[:8]]

    again = settle(open_app(PAGE, lang="zh", **query))    # the same run, not a second one
    assert_clean(again)
    assert again.title[0].value == "微调"
    np.testing.assert_array_equal(
        plotly_values(figure(again, "finetune_loss")["data"][0]["y"]), shown)
    assert len(_requests()) == 1


def test_what_changed_is_cores_layer_map(bundle, folder_models_allowed):
    """On a tiny random model (a folder the picker offers): the map of the tuned model against
    the model before it is core's layer_similarity over the built-in corpus, its diagonal said
    in words, in Chinese; frozen features leave the diagonal at 1."""
    make_tiny_bert_folder(folder_models_allowed / "tiny", bundle.tokenizer)
    query = {"model": f"{folder_models_allowed.name}/tiny", "ft_data": "en", "ft_batch": "32",
             "lang": "zh"}
    settle(click_start(open_app(PAGE, **query)))
    changed = settle(open_app(PAGE, ft_section="What changed", **query))
    assert_clean(changed)
    run = training.kept_run(_requests()[0])
    base = load_model(str(folder_models_allowed / "tiny"))
    corpus = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == "en"]
    expected = layer_similarity(base, run.bundle, corpus).cka
    shown = plotly_values(figure(changed, "finetune_map")["data"][0]["z"])
    np.testing.assert_allclose(shown, expected, atol=1e-5)   # float32 in the figure
    moved = int(np.argmin(np.diag(expected)))
    assert any(f"第 {moved} 层变化最大" in m for m in texts(changed, "markdown"))


def test_the_tuned_model_downloads_and_opens(bundle, folder_models_allowed, monkeypatch):
    """A small run: its zip holds a folder with the weights and the tokenizer, and "Explore
    the tuned model" switches the app's model to the saved folder, with the way to Compare."""
    monkeypatch.setenv("BERT_EXPLORER_TUNED_DIR", str(folder_models_allowed / "tuned"))
    settle(click_start(with_file("few.tsv", SMALL)))
    request = _requests()[0]
    with zipfile.ZipFile(io.BytesIO(finetune_cache.zipped(request))) as archive:
        names = set(archive.namelist())
    assert {"tuned-model/config.json", "tuned-model/model.safetensors"} <= names
    at = with_file("few.tsv", SMALL, ft_section="Tuned model")
    assert_clean(at)
    assert [b.label for b in at.get("download_button")] == ["Download the tuned model (zip)"]
    at.button(key="ft_explore").click().run()
    assert_clean(at)
    assert at.session_state["model"] == f"{folder_models_allowed.name}/tuned/{request.run_id}"
    assert any("cmp_model=all-MiniLM-L6-v2" in s for s in texts(at, "success"))


# --- data the model cannot read, and bad files ---------------------------------------------------

def test_a_chinese_set_on_an_english_vocabulary_is_refused_with_its_share(bundle):
    """In Chinese the page opens on the Chinese set; MiniLM reads much of it as [UNK]: the share
    is measured and said, and nothing is offered to train."""
    at = open_app(PAGE, lang="zh")
    assert_clean(at)
    data = builtin_set("sentence_class", "zh")
    texts_zh = [item.text for item in (*data.train, *data.held_out)]
    ids = bundle.tokenizer(texts_zh, add_special_tokens=False)["input_ids"]
    share = sum(r.count(bundle.tokenizer.unk_token_id) for r in ids) / sum(map(len, ids))
    warning = next(w.replace("\\", "") for w in texts(at, "warning") if "UNK" in w)
    assert f"`{share:.0%}`" in warning and "[UNK]" in warning
    assert not [b for b in at.button if b.key == "ft_start"]
    at.button(key="ft_other_set").click().run()    # the English set, one click away
    assert_clean(at)
    assert [b for b in at.button if b.key == "ft_start"]


SMALL = "sentence\tlabel\n" + "".join(
    f"{text}\t{label}\n" for text, label in [
        ("The match ended in a draw.", "sports"), ("Rain is expected tonight.", "weather"),
        ("She scored twice in the final.", "sports"), ("A cold front arrives soon.", "weather"),
        ("The striker was sent off.", "sports"), ("Snow fell on the hills.", "weather"),
        ("They won the relay race.", "sports"), ("The fog lifted by noon.", "weather"),
        ("He kicked the ball wide.", "sports"), ("Thunder rolled all night.", "weather"),
    ])


@pytest.mark.parametrize("lines, words", [
    ("".join(f"sentence {i}\tsports\n" for i in range(12)),
     ("Every training item has the label", "")),
    ("".join(f"sentence {i}\t{'3' if i % 2 else 'sports'}\n" for i in range(12)),
     ("The labels mix numbers", "")),
    ("a\tsports\nb\tweather\nc\tsports\n", ("fine-tuning needs at least", "")),
])
def test_core_refuses_bad_items_at_once(bundle, lines, words):
    """One class, numbers and words mixed, fewer than 8 rows: core's message, before any run."""
    at = with_file("bad.tsv", lines)
    assert_clean(at)
    said = " ".join(texts(at, "warning")).replace("\\", "")
    assert words[0] in said, said
    assert not [b for b in at.button if b.key == "ft_start"]
    assert not training.board().jobs()


def test_every_bad_line_of_a_file_is_named(bundle):
    """Span items whose answer is not in the passage, and a row missing a field: each line
    named with its reason; the rest read."""
    rows = ["question\tpassage\tanswer"]
    for i in range(10):
        rows.append(f"Who rang {i}?\tThe bell rang at noon, said Ann {i}.\tAnn {i}")
    rows.insert(3, "Who?\tNobody came.\tAnn")        # line 4: answer not in the passage
    rows.insert(6, "Who?\tOnly two fields")           # line 7: a field missing
    at = with_file("spans.tsv", "\n".join(rows) + "\n", ft_task="span")
    assert_clean(at)
    said = texts(at, "warning")
    assert any("not in its passage: 4" in w.replace("\\", "") for w in said), said
    assert any("fewer fields" in w and "7" in w for w in said), said
    assert any("8 items to train on, 2 held out" in m for m in texts(at, "markdown"))


def test_a_text_longer_than_the_positions_is_cut_counted_and_said(bundle):
    long_text = " ".join(["rain"] * 400)
    text = SMALL + f"{long_text}\tweather\n"
    at = settle(click_start(with_file("long.tsv", text, ft_batch="16")))
    assert_clean(at)
    run = training.kept_run(next(iter(_requests())))
    assert run is not None and run.truncated == 1
    assert any("cut to 128: 1." in w for w in texts(at, "warning"))


def _requests() -> list[Request]:
    return [j.work.request for j in training.board().jobs()
            if isinstance(j.work, training.Training)]


# --- the server: the queue, a shared run, Stop, a restart, memory --------------------------------

def test_a_second_run_waits_with_its_place_and_a_class_shares_one(bundle):
    """The one training worker busy and another run waiting: the page's run is third in line
    and says so; a second session opening the same options follows the same run."""
    release = threading.Event()
    blocker = training.board().submit(("blocker",), lambda job: release.wait(WAIT_S))
    waiting = training.board().submit(("waiting",), lambda job: None)
    try:
        at = click_start(with_file("few.tsv", SMALL))
        assert_clean(at)
        info = " ".join(texts(at, "info"))
        assert "number 2 in the queue" in info, info
        student = with_file("few.tsv", SMALL)       # the same link, no Start pressed
        assert "number 2 in the queue" in " ".join(texts(student, "info"))
        assert len(_requests()) == 1
        assert not [b for b in student.button if b.key == "ft_stop"]   # not the student's
    finally:
        release.set()
    blocker.wait(WAIT_S)
    waiting.wait(WAIT_S)
    at = settle(at)
    assert_clean(at)
    assert any("steps in" in m for m in texts(at, "markdown"))


def test_stop_part_way_shows_the_partial_run(bundle):
    many = "sentence\tlabel\n" + "".join(
        f"{'Goal' if i % 2 else 'Rain'} number {i} today.\t{'sports' if i % 2 else 'weather'}\n"
        for i in range(200))
    at = click_start(with_file("many.tsv", many, ft_batch="4", ft_epochs="5"))
    job = training.board().jobs()[-1]
    deadline = time.monotonic() + WAIT_S
    while training.live(job).step < 2 and time.monotonic() < deadline and not job.done():
        time.sleep(0.1)
    at.run()
    live = plotly_values(figure(at, "finetune_loss")["data"][0]["y"])   # the curve so far
    assert len(live) >= 2 and any(m.startswith("Step ") for m in texts(at, "markdown"))
    at.button(key="ft_stop").click().run()
    at = settle(at)
    assert_clean(at)
    run = training.kept_run(job.work.request)
    assert run is not None and run.stopped and 2 <= run.steps < 5 * 40
    assert any(f"Stopped after {run.steps} steps" in w for w in texts(at, "warning"))
    np.testing.assert_array_equal(live, run.losses[:len(live)])   # drawn as it fell


def test_a_restarted_server_says_the_run_is_gone(bundle):
    request = Request(MODEL, "sentence_class", "builtin:en", False, 1, 5e-5, 16, 0, 128)
    at = open_app(PAGE, ft_data="en", ft_run=request.run_id)
    assert_clean(at)
    assert any("no longer has" in w for w in texts(at, "warning"))
    assert [b for b in at.button if b.key == "ft_start"]


def test_a_run_that_cannot_fit_is_refused(bundle, monkeypatch):
    """A training budget smaller than the run's memory: refused when asked, with both figures,
    nothing queued; the page stays usable."""
    monkeypatch.setenv("BERT_EXPLORER_TRAINING_MB", "100")
    at = click_start(with_file("few.tsv", SMALL))
    assert_clean(at)
    said = " ".join(texts(at, "warning"))
    assert "keeps `100` MB for training" in said, said
    assert not training.board().jobs()
    assert [b for b in at.button if b.key == "ft_start"]


def test_a_kept_model_dropped_for_room_is_said(bundle, monkeypatch):
    """A training budget that holds one run but not a kept model beside it: the second run
    drops the first run's tuned model, and the first run's page says so."""
    from core.finetune import training_bytes
    from pages.finetune import data_view
    from pages.finetune.records import Data, DataSource

    first = with_file("few.tsv", SMALL)
    rows = SMALL.splitlines()
    swapped = "\n".join([rows[0], rows[2], rows[1], *rows[3:]]) + "\n"   # other data, same sizes
    data = Data(DataSource.FILE, "", tuple((line.split("\t")[0], line.split("\t")[1])
                                           for line in rows[1:]), ())
    need = training_bytes(bundle, "sentence_class", batch_size=16,
                          max_length=data_view.longest(bundle, FineTuneTask.SENTENCE_CLASS, data))
    monkeypatch.setenv("BERT_EXPLORER_TRAINING_MB", str(need / 2**20 + 10))
    settle(click_start(first))
    assert_clean(first)
    settle(click_start(with_file("swapped.tsv", swapped)))
    again = with_file("few.tsv", SMALL)
    assert_clean(again)
    assert any("was dropped" in w for w in texts(again, "warning"))
    assert [b for b in again.button if b.key == "ft_again"]


def test_a_run_nobody_watches_stops(bundle, monkeypatch):
    """Nobody reads the run's progress for the board's ABANDONED_S: it ends at its next step,
    and a page opened later says it ended without a result and offers to train again."""
    monkeypatch.setattr(jobs, "ABANDONED_S", 0.5)
    many = "sentence\tlabel\n" + "".join(
        f"{'Goal' if i % 2 else 'Rain'} number {i} today.\t{'sports' if i % 2 else 'weather'}\n"
        for i in range(200))
    click_start(with_file("many.tsv", many, ft_batch="4", ft_epochs="5"))
    job = training.board().jobs()[-1]
    deadline = time.monotonic() + WAIT_S
    while not job.done() and time.monotonic() < deadline:   # done() reads without watching
        time.sleep(0.2)
    assert job.cancelled
    later = with_file("many.tsv", many, ft_batch="4", ft_epochs="5")
    assert_clean(later)
    assert any("nobody watched it" in w for w in texts(later, "warning"))
    assert [b for b in later.button if b.key == "ft_again"]
