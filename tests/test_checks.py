"""Published figures reproduced live (core.checks, python3 -m serving.checks, the Checks page),
against sentence-transformers, transformers and scipy computed here, not through the app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from transformers import AutoTokenizer, BertForPreTraining, BertModel
from transformers.utils import logging as transformers_logging

from core import checks
from core.checks import Verdict
from core.errors import InputError
from core.models import default_model_path
from core.parameters.presets import preset_config
from core.settings import PREPARE_COMMAND
from core.similarity import pair_lists, sentences
from serving import checks as command
from tests.conftest import ARTIFACTS, ROOT, assert_clean, html_tables, open_app, open_in_browser
from tests.pretraining_folders import (
    make_chinese_checkpoint,
    make_hub_cache_copy,
    make_pretraining_folder,
)

PAGE = "pages/checks/page.py"

# A small scored list written here (sentence 1, sentence 2, score 0-5), as a file is uploaded.
SMALL_LIST = [
    ("A man is playing a guitar.", "A man plays the guitar.", 4.8),
    ("A woman is slicing an onion.", "A woman is cutting an onion.", 4.2),
    ("A dog runs in the park.", "A cat sleeps on the sofa.", 0.6),
    ("The children are playing outside.", "Kids play in the yard.", 3.9),
    ("A man is driving a car.", "A man is riding a horse.", 1.2),
    ("Stocks fell sharply on Monday.", "The market dropped at the start of the week.", 3.6),
    ("A girl is brushing her hair.", "A girl is styling her hair.", 2.5),
    ("He ate a sandwich for lunch.", "The train leaves at noon.", 0.2),
    ("Two men are fighting in a ring.", "Two men fistfight in a ring.", 4.6),
    ("A bird is flying over the sea.", "A plane lands at the airport.", 0.8),
]
SMALL_FILE = "sentence1\tsentence2\tscore\n" + "".join(
    f"{a}\t{b}\t{s}\n" for a, b, s in SMALL_LIST)


@pytest.fixture(scope="module")
def sbert():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(default_model_path()), device="cpu")


@pytest.fixture(scope="module")
def rows(bundle, closed_hub_module):
    return {r.key: r for r in checks.published_checks(bundle)}


@pytest.fixture(scope="module")
def closed_hub_module(tmp_path_factory):
    """No model but the shipped one on this machine (an empty Hugging Face cache), whatever the
    developer's own cache holds: the rows needing a model say so everywhere alike."""
    from huggingface_hub import constants

    mp = pytest.MonkeyPatch()
    mp.setattr(constants, "HF_HUB_CACHE", str(tmp_path_factory.mktemp("hub-cache")))
    yield
    mp.undo()


# --- the published figures ----------------------------------------------------------------------

def test_every_published_figure_is_a_constant_with_its_source():
    assert len(checks.PUBLISHED) == 13
    for published in checks.PUBLISHED:
        assert isinstance(published, checks.Published)
        assert isinstance(published.source, str) and len(published.source) > 10
    values = [p.value for p in checks.PUBLISHED]
    assert values[:3] == [0.6660, 0.1046, 0.1411]
    assert [22_713_216, 109_482_240, 110_106_428, 102_267_648, 102_882_442] == values[3:8]
    assert checks.TEST_SENTENCE_IDS.value == (101, 2023, 2003, 1037, 3231, 6251, 102)
    assert checks.FILL_MASK_TOP5.value[0] == ("fashion", 0.1073)
    assert checks.STS_SPEARMAN.value == 0.8203 and checks.STS_PAIRS == 1379
    assert "README" in checks.README_SOURCE and "MTEB" in checks.STS_SPEARMAN.source


def test_every_row_shows_a_published_figure_and_its_source(rows):
    sources = {p.source for p in checks.PUBLISHED}
    for row in rows.values():
        assert row.source in sources, row.key
        assert row.published
    assert {r.group for r in rows.values()} == set(checks.Group)


# --- computed live, with the real model ---------------------------------------------------------

def test_the_readme_cosines_hold_and_equal_sentence_transformers(rows, sbert):
    vectors = sbert.encode(list(checks.README_SENTENCES), convert_to_numpy=True)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for (i, j), published in checks.README_COSINES:
        row = rows[f"readme_cosine_{i}{j}"]
        expected = float(vectors[i] @ vectors[j])
        assert row.verdict == Verdict.HELD
        assert abs(float(row.ours) - expected) < 1e-4
        assert abs(expected - published.value) <= checks.COSINE_TOLERANCE
        assert row.difference < 1e-4 and row.tolerance == 5e-4


def test_the_parameter_rows_hold_against_the_models_built_on_the_meta_device(rows, bundle):
    assert rows["parameters_minilm"].ours == "22,713,216"
    assert sum(p.numel() for p in bundle.model.parameters()) == 22_713_216
    for name, plain, heads in (("bert-base-uncased", 109_482_240, 110_106_428),
                               ("bert-base-chinese", 102_267_648, 102_882_442)):
        with torch.device("meta"):
            model = BertModel(preset_config(name))
            full = BertForPreTraining(preset_config(name))
        assert sum(p.numel() for p in model.parameters()) == plain
        assert sum(p.numel() for p in full.parameters()) == heads
        assert rows[f"parameters_{name}_plain"].ours == f"{plain:,}"
        assert rows[f"parameters_{name}_heads"].ours == f"{heads:,}"
        assert rows[f"parameters_{name}_plain"].verdict == Verdict.HELD
        assert rows[f"parameters_{name}_heads"].verdict == Verdict.HELD


def test_googles_110m_is_explained_by_the_vocabulary_gap(rows):
    row = rows["parameters_110m"]
    assert row.verdict == Verdict.EXPLAINED and row.held
    assert (30_522 - 21_128) * 768 == 7_214_592 == 109_482_240 - 102_267_648
    assert row.ours == "102,267,648 = 109,482,240 − 7,214,592"
    assert "(30,522 − 21,128) × 768 = 7,214,592" in row.text(row.note)


def test_the_tutorials_token_ids(rows):
    tokenizer = AutoTokenizer.from_pretrained(str(default_model_path()))
    ids = tokenizer(checks.TEST_SENTENCE)["input_ids"]
    assert ids == [101, 2023, 2003, 1037, 3231, 6251, 102]
    assert rows["tokens_test_sentence"].ours == str(ids)
    assert rows["tokens_test_sentence"].verdict == Verdict.HELD


def test_rows_needing_a_model_not_here_say_so_with_the_command(rows):
    for key, model in (("tokens_chinese", "bert-base-chinese"), ("fill_mask", "bert-base-uncased")):
        row = rows[key]
        assert row.verdict == Verdict.NEEDS_MODEL and row.ours is None and not row.ran
        assert row.command == f"{PREPARE_COMMAND} {model}" == f"python3 -m serving.download {model}"
        assert checks.verdict_text(row) == f"needs {model}"
    assert rows["fill_mask"].published.startswith("fashion 0.1073, role 0.0877, new 0.0534")
    assert rows["sts"].verdict == Verdict.NEEDS_FILE
    assert "1,379 pairs" in rows["sts"].text(rows["sts"].note)


def test_with_bert_base_chinese_here_its_tokens_are_checked(bundle, closed_hub, tmp_path):
    """A Chinese-reading checkpoint laid out as the cache's copy of bert-base-chinese (built
    here, a small vocabulary): the row runs, and holds where the characters are single tokens."""
    from huggingface_hub import constants

    make_chinese_checkpoint(tmp_path / "folder")
    make_hub_cache_copy(Path(constants.HF_HUB_CACHE), "bert-base-chinese", tmp_path / "folder")
    row = {r.key: r for r in checks.token_ids(bundle)}["tokens_chinese"]
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path / "folder"))
    ids = tokenizer(checks.CHINESE_SENTENCE)["input_ids"]
    assert row.verdict == Verdict.HELD and row.command is None
    assert row.ours == "[CLS] 我 爱 你 [SEP]  [" + ", ".join(map(str, ids)) + "]"


def test_with_a_random_bert_base_uncased_here_the_fill_mask_row_is_off(bundle, closed_hub,
                                                                        tmp_path):
    """A random checkpoint with both heads in the cache's place of bert-base-uncased: the row
    runs on it, and its guesses are not the model card's."""
    from huggingface_hub import constants

    make_pretraining_folder(tmp_path / "folder", bundle.tokenizer)
    make_hub_cache_copy(Path(constants.HF_HUB_CACHE), "bert-base-uncased", tmp_path / "folder")
    row = checks.fill_mask_check()
    assert row.ran and row.verdict == Verdict.OFF and row.off_by == "other tokens"
    assert len(row.ours.split(", ")) == 5


# --- a planted error turns a row red ------------------------------------------------------------

def test_skipping_the_normalisation_turns_the_cosines_off(bundle, monkeypatch):
    monkeypatch.setattr(sentences, "normalize", lambda x: x)   # mean pooling, not normalised
    cosines = checks.readme_cosines(bundle)
    assert [r.verdict for r in cosines] == [Verdict.OFF] * 3
    assert all(r.off_by and not r.held for r in cosines)
    assert checks.verdict_text(cosines[0]).startswith("off by +")


def test_the_cls_vector_instead_of_the_mean_turns_the_cosines_off(bundle, monkeypatch):
    monkeypatch.setattr(sentences, "mean_pool",
                        lambda analysis, stage, positions=None: analysis.stages[stage][0])
    assert {r.verdict for r in checks.readme_cosines(bundle)} == {Verdict.OFF}


def test_a_wrong_count_turns_the_row_off(bundle, monkeypatch):
    monkeypatch.setattr(checks, "count_with_heads", lambda config: 1)
    rows = {r.key: r for r in checks.parameter_counts(bundle)}
    assert rows["parameters_bert-base-uncased_heads"].verdict == Verdict.OFF
    assert rows["parameters_bert-base-uncased_heads"].off_by == "-110,106,427"
    assert rows["parameters_bert-base-uncased_plain"].verdict == Verdict.HELD


# --- the terminal -------------------------------------------------------------------------------

def run(*args: str) -> subprocess.CompletedProcess:
    """The command in a process of its own, offline: nothing may be downloaded."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_the_command_exits_0_here_and_1_with_a_planted_error(monkeypatch, capsys):
    good = run("-m", "serving.checks")
    assert good.returncode == 0, good.stderr[-2000:]
    out = good.stdout
    for figure in ("0.6660", "0.1046", "0.1411", "22,713,216", "109,482,240", "110,106,428",
                   "102,267,648", "102,882,442", "7,214,592",
                   "[101, 2023, 2003, 1037, 3231, 6251, 102]", "0.8203"):
        assert figure in out
    assert "sentence-transformers README" in out and "0 off;" in out
    (ARTIFACTS / "checks-terminal.txt").write_text(out)
    # The same command's main with the normalisation skipped, in this process: the command as
    # typed ran above, and a second interpreter would only load torch and the model again.
    monkeypatch.setattr(sentences, "normalize", lambda x: x)
    # main turns transformers' progress bars off for its own terminal: not for this worker's.
    monkeypatch.setattr(transformers_logging, "disable_progress_bar", lambda: None)
    assert command.main([]) == 1
    assert capsys.readouterr().out.count("off by") == 3


def test_the_old_command_says_where_the_command_is():
    """core holds the checks only; typing the command as it was must not exit 0 in silence."""
    import runpy

    with pytest.raises(SystemExit) as stopped:   # what `python3 -m core.checks` runs
        runpy.run_path(str(ROOT / "core" / "checks.py"), run_name="__main__")
    assert "python3 -m serving.checks" in str(stopped.value.code)


def test_the_commands_sts_file_is_read_or_refused(bundle, tmp_path, capsys):
    path = tmp_path / "sts-small.tsv"
    path.write_text(SMALL_FILE, encoding="utf-8")
    parsed = pair_lists.read_file(SMALL_FILE.encode("utf-8"))
    assert command.read_sts(bundle, path) == checks.sts_check(bundle, parsed.pairs,
                                                              parsed.scores)
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="No pair could be read"):
        command.read_sts(bundle, empty)
    assert command.main(["--sts", str(tmp_path / "missing.tsv")]) == 2
    assert "missing.tsv" in capsys.readouterr().err


# --- the benchmark from a file ------------------------------------------------------------------

def test_a_small_scored_file_gives_scipys_spearman_on_sentence_transformers(bundle, sbert):
    parsed = pair_lists.read_file(SMALL_FILE.encode("utf-8"))
    assert len(parsed.pairs) == len(SMALL_LIST)
    seen = []
    row = checks.sts_check(bundle, parsed.pairs, parsed.scores,
                           progress=lambda done, total: seen.append((done, total)))
    a = sbert.encode([p[0] for p in SMALL_LIST], convert_to_numpy=True)
    b = sbert.encode([p[1] for p in SMALL_LIST], convert_to_numpy=True)
    cosines = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    expected = spearmanr(cosines, [p[2] for p in SMALL_LIST]).statistic
    assert row.ours == f"{expected:.4f}"
    assert abs(float(row.ours) - 0.8203) == pytest.approx(row.difference, abs=1e-4)
    assert row.verdict == (Verdict.HELD if row.difference <= 5e-4 else Verdict.OFF)
    assert "10 scored pairs where the test split has 1,379" in row.text(row.note)
    assert seen and seen[-1] == (20, 20)


def test_a_file_without_scores_is_refused_with_what_to_give(bundle):
    with pytest.raises(InputError, match="at least three lines"):
        checks.sts_check(bundle, [("a b", "c d")] * 4, [None] * 4)


# --- the page -----------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_the_table_in_both_languages(lang, closed_hub_module):
    at = open_app(PAGE, lang=lang)
    assert_clean(at)
    table = html_tables(at)[0]
    assert len(table) == 13
    held, explained = ("held", "explained") if lang == "en" else ("相符", "已解释")
    verdicts = list(table.iloc[:, -1])
    assert verdicts[:3] == [f"✓ {held}"] * 3
    assert verdicts[3:8] == [f"✓ {held}"] * 5 and verdicts[8] == f"✓ {explained}"
    ours = [cell.split("\n")[0] for cell in table.iloc[:, 2]]
    assert ours[:3] == ["0.6660", "0.1046", "0.1411"]
    assert "22,713,216" in ours and "102,267,648 = 109,482,240 − 7,214,592" in ours
    tolerance = "tolerance: ±0.0005" if lang == "en" else "容差：±0.0005"
    assert table.iloc[0, 2] == f"0.6660\n{tolerance}"
    published = " ".join(table.iloc[:, 1])
    assert ("source: sentence-transformers README" if lang == "en"
            else "出处：sentence-transformers 的 README") in published
    commands = [c.value for c in at.code]
    assert commands == [f"{PREPARE_COMMAND} bert-base-chinese",
                        f"{PREPARE_COMMAND} bert-base-uncased"]
    assert at.title[0].value == ("Checks" if lang == "en" else "核对")


def test_the_home_page_links_to_the_checks():
    at = open_app()
    assert_clean(at)
    assert any(link.proto.page.endswith("checks") or "checks" in link.proto.page
               for link in at.get("page_link"))


def test_uploading_a_file_in_chromium_puts_its_spearman_in_the_table(server, browser, sbert,
                                                                     tmp_path):
    page = open_in_browser(browser, f"{server}/checks", width=1024, height=768)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "sts-small.tsv", "mimeType": "text/tab-separated-values",
                "buffer": SMALL_FILE.encode("utf-8")}])
    page.wait_for_selector("text=10 pairs read, 10 of them with a score.", timeout=90_000)
    a = sbert.encode([p[0] for p in SMALL_LIST], convert_to_numpy=True)
    b = sbert.encode([p[1] for p in SMALL_LIST], convert_to_numpy=True)
    cosines = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    expected = f"{spearmanr(cosines, [p[2] for p in SMALL_LIST]).statistic:.4f}"
    row = page.locator("[data-table='checks'] tbody tr").last
    row.locator(f"text={expected}").wait_for(timeout=30_000)
    assert "10 scored pairs where the test split has 1,379" in row.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTIFACTS / "checks-upload-1024x768.png"), full_page=True)
    page.close()
