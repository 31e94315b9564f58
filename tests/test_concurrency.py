"""Concurrent sessions share one model and one tokenizer: each must still get its own numbers.

The fast tokenizer keeps truncation and padding as state inside its Rust object, so before the
lock (core.models.tokenizer_lock) 8 threads with mixed options got 841 of 3,840 encodings wrong.
These tests run the same mixed work in one thread and in eight at once and compare.
"""

from __future__ import annotations

import asyncio
import itertools
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import numpy as np
import pytest
from transformers import AutoTokenizer

from bench.ws_client import StreamlitSession
from core import analyze, encode
from core.models import default_model_path
from tests.conftest import run_async

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


def metric(texts: list[str], label: str) -> str:
    """The value of the metric labelled ``label``: a metric arrives as its label, then its value
    (bench/ws_client.py), and a number follows no other text of that name."""
    values = [value for name, value in itertools.pairwise(texts)
              if name == label and value.replace(",", "").isdigit()]
    assert len(values) == 1, (label, texts[:20])
    return values[0]


def test_sessions_at_once_each_see_their_own_table(server, reference_tokenizer):
    """Six sessions open the Tokens page at the same moment, each with its own max length: each
    page's counts are the ones the tokenizer gives for that max length alone. The sessions speak
    Streamlit's own protocol (bench/ws_client.py), as six browsers would, without drawing."""
    text = "The quick brown fox jumps over the lazy dog. " * 30
    lengths = [16, 64, 128, 300, 24, 200]
    full = len(reference_tokenizer(text)["input_ids"])

    async def one(max_length: int):
        query = urlencode({"a": text, "max_length": max_length})
        async with StreamlitSession(server, path="tokens", query=query,
                                    first_run_timeout_s=120) as session:
            return session.first

    async def every_session_at_once():   # every request out before any run has finished
        return await asyncio.gather(*(one(n) for n in lengths))

    firsts = run_async(asyncio.wait_for(every_session_at_once(), 240))
    for max_length, first in zip(lengths, firsts, strict=True):
        assert not first.exception, first.exceptions
        kept = min(full, max_length)
        assert metric(first.texts, "Tokens") == str(kept), max_length
        assert metric(first.texts, "Cut by truncation") == str(full - kept), max_length


def blas_threads() -> set[int]:
    """The thread counts of the BLAS libraries loaded in this process (numpy's)."""
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_the_server_gives_each_model_run_one_thread_unless_told(monkeypatch):
    """frame.startup.set_compute_threads, called when the server starts: torch and numpy's BLAS
    on 1 thread by default, the environment's number otherwise, never below 1."""
    import torch
    from threadpoolctl import threadpool_limits

    from frame.startup import set_compute_threads

    assert blas_threads(), "numpy's BLAS is loaded"
    before = torch.get_num_threads()
    with threadpool_limits(user_api="blas"):   # puts numpy's thread count back at the end
        try:
            monkeypatch.delenv("BERT_EXPLORER_TORCH_THREADS", raising=False)
            assert set_compute_threads() == 1 and torch.get_num_threads() == 1
            assert blas_threads() == {1}
            monkeypatch.setenv("BERT_EXPLORER_TORCH_THREADS", "2")
            assert set_compute_threads() == 2 and torch.get_num_threads() == 2
            assert blas_threads() == {2}
            monkeypatch.setenv("BERT_EXPLORER_TORCH_THREADS", "0")
            assert set_compute_threads() == 1 and blas_threads() == {1}
        finally:
            torch.set_num_threads(before)
