"""Concurrent sessions share one model and one tokenizer: each must still get its own numbers.

The fast tokenizer keeps truncation and padding as state inside its Rust object, so before the
lock (core.models.tokenizer_lock) 8 threads with mixed options got 841 of 3,840 encodings wrong.
These tests run the same mixed work in one thread and in eight at once and compare.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import numpy as np
import pytest
from transformers import AutoTokenizer

from core import analyze, encode
from core.models import default_model_path
from tests.conftest import wait_for_app

TEXTS = [
    ("The quick brown fox jumps over the lazy dog. " * 30, None),
    ("What is your name?", "My name is BERT."),
    ("Short one.", None),
    ("A river bank at dawn, " * 40, "and a savings bank at noon. " * 20),
]
OPTIONS = [  # (max_length, truncation, pad_to_max_length)
    (None, True, False),
    (16, True, False),
    (64, True, True),
    (128, True, True),
    (24, True, False),
]
JOBS = list(itertools.product(range(len(TEXTS)), range(len(OPTIONS))))


def _encoding_key(bundle, job):
    (a, b), (max_length, truncation, pad) = TEXTS[job[0]], OPTIONS[job[1]]
    enc = encode(bundle, a, b, max_length, truncation, pad)
    return (tuple(enc.input_ids), tuple(enc.token_type_ids), tuple(enc.attention_mask),
            enc.truncated, enc.full_length)


def test_threads_encode_exactly_as_one_thread(bundle):
    single = {job: _encoding_key(bundle, job) for job in JOBS}
    work = JOBS * 24   # 480 encodings in random-ish interleavings over 8 threads
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda job: (job, _encoding_key(bundle, job)), work))
    wrong = [job for job, key in got if key != single[job]]
    assert not wrong, f"{len(wrong)} of {len(got)} encodings differ from one thread's"


def test_threads_analyse_exactly_as_one_thread(bundle):
    jobs = [(t, o) for t, o in JOBS if OPTIONS[o][0] is not None]   # short runs keep this quick

    def run(job):
        (a, b), (max_length, truncation, pad) = TEXTS[job[0]], OPTIONS[job[1]]
        r = analyze(bundle, a, b, max_length, truncation, pad, attentions=False)
        return r.input_ids, r.stages["layer_6"], r.stages["LayerNorm"]

    single = {job: run(job) for job in jobs}
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda job: (job, run(job)), jobs * 3))
    for job, (ids, last, normed) in got:
        want_ids, want_last, want_normed = single[job]
        assert ids == want_ids, job
        np.testing.assert_allclose(last, want_last, rtol=0, atol=1e-5, err_msg=str(job))
        np.testing.assert_allclose(normed, want_normed, rtol=0, atol=1e-6, err_msg=str(job))


@pytest.fixture(scope="module")
def reference_tokenizer():
    """The shipped tokenizer loaded separately, used by one thread only: the independent count."""
    return AutoTokenizer.from_pretrained(default_model_path())


@pytest.mark.browser
def test_sessions_at_once_each_see_their_own_table(server, browser, reference_tokenizer):
    """Six browser sessions open the Tokens page at the same moment, each with its own max
    length: each page's counts are the ones the tokenizer gives for that max length alone."""
    text = "The quick brown fox jumps over the lazy dog. " * 30
    lengths = [16, 64, 128, 300, 24, 200]
    full = len(reference_tokenizer(text)["input_ids"])
    pages = []
    try:
        for max_length in lengths:   # every request out before any run has finished
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{server}/tokens?a={quote(text)}&max_length={max_length}",
                      wait_until="commit")
            pages.append(page)
        for max_length, page in zip(lengths, pages, strict=True):
            wait_for_app(page, timeout_ms=120_000)
            metrics = dict(zip(
                page.locator("[data-testid='stMetricLabel']").all_inner_texts(),
                page.locator("[data-testid='stMetricValue']").all_inner_texts(), strict=True))
            kept = min(full, max_length)
            assert metrics["Tokens"] == str(kept), (max_length, metrics)
            assert metrics["Cut by truncation"] == str(full - kept), (max_length, metrics)
            assert page.locator("[data-testid='stException']").count() == 0
    finally:
        for page in pages:
            page.close()


def test_the_server_gives_each_model_run_one_thread_unless_told(monkeypatch):
    """frame.startup.set_torch_threads, called when the server starts: 1 by default, the
    environment's number otherwise, never below 1."""
    import torch

    from frame.startup import set_torch_threads

    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("BERT_EXPLORER_TORCH_THREADS", raising=False)
        assert set_torch_threads() == 1 and torch.get_num_threads() == 1
        monkeypatch.setenv("BERT_EXPLORER_TORCH_THREADS", "2")
        assert set_torch_threads() == 2 and torch.get_num_threads() == 2
        monkeypatch.setenv("BERT_EXPLORER_TORCH_THREADS", "0")
        assert set_torch_threads() == 1
    finally:
        torch.set_num_threads(before)
