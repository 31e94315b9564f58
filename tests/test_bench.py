"""The benchmark runs to its end: its marker words never run out, and its table is written part
by part, so a part that fails loses only its own rows (bench/texts.py, bench/parts.py).

Plain Python, no server and no model run: the marker words come from the shipped model's own
tokenizer, the parts are stand-ins (a part of the real bench takes minutes)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from transformers import AutoTokenizer

from bench.parts import Slot, Table
from bench.report import Row
from bench.texts import MIN_MARKERS, MarkerSupply, SentenceFactory, app_words
from core.models import default_model_path


@pytest.fixture(scope="module")
def factory() -> SentenceFactory:
    return SentenceFactory(AutoTokenizer.from_pretrained(str(default_model_path())))


# --- the marker words ---------------------------------------------------------------------------

def test_the_supply_goes_round_its_words_without_end():
    words = [f"w{i}" for i in range(MIN_MARKERS)]
    supply = MarkerSupply(words)
    drawn = list(itertools.islice(supply, 3 * MIN_MARKERS + 7))
    assert len(drawn) == 3 * MIN_MARKERS + 7
    for start in (0, 1, MIN_MARKERS - 1, 2 * MIN_MARKERS + 3):   # any run of len(words) differs
        assert len(set(drawn[start:start + MIN_MARKERS])) == MIN_MARKERS
    assert drawn[MIN_MARKERS] == drawn[0] == "w0"   # back only after every other word


def test_a_supply_too_small_or_with_a_word_twice_is_refused():
    with pytest.raises(ValueError, match="at least"):
        MarkerSupply([f"w{i}" for i in range(MIN_MARKERS - 1)])
    with pytest.raises(ValueError, match="different"):
        MarkerSupply(["same"] * (MIN_MARKERS + 1))


T = TypeVar("T")


def run_alone(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` in a thread of its own: a browser test earlier on this worker may leave
    an event loop running in the main thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_more_sentences_than_marker_words_in_a_coroutine(factory):
    """The full run's crash: a class typing more sentences than there are marker words, inside
    asyncio (where a StopIteration turned into a RuntimeError). Every marker stays one token of
    the vocabulary, in none of the app's text, never a filler word, and each run of
    ``len(words)`` sentences has all different markers."""
    pool = factory.markers.words
    assert len(pool) >= MIN_MARKERS

    async def a_class() -> list[str]:
        return [factory.sentence(12).marker for _ in range(len(pool) + 50)]

    markers = run_alone(a_class())
    assert len(set(markers[:len(pool)])) == len(pool)
    assert markers[len(pool):] == list(pool[:50])
    excluded = app_words()
    assert not excluded & set(pool)
    assert {"tokens", "sentence", "layer"} <= excluded   # read from pages/ and its subfolders
    vocab = factory._tokenizer.get_vocab()
    assert all(word in vocab for word in pool)
    filler = set(factory._filler)
    assert not filler & set(pool)
    # Still exact token counts past the end of the first round.
    for n_tokens in (16, 64):
        a, b = factory.pair(n_tokens)
        assert len(factory._tokenizer(a.text, b)["input_ids"]) == n_tokens
        assert a.text.split()[0] == a.marker


# --- the table, part by part --------------------------------------------------------------------

SLOTS = (
    Slot("first", "1 Core", "the first part"),
    Slot("second", "2 App", "the second part"),
    Slot("second_more", "3 Memory", "the second part's other rows"),
    Slot("third", "4 Many users", "a class as a lesson runs"),
    Slot("fourth", "4 Many users", "what needs the third"),
)


def _table(out) -> Table:
    return Table(SLOTS, header=lambda: ["## Benchmark (test)"], footer=lambda: ["the end"],
                 out=out)


def test_each_part_is_written_as_it_ends_and_a_failure_keeps_the_rows_before(tmp_path):
    out = tmp_path / "bench.md"
    table = _table(out)
    assert table.measure("first", lambda: 0.25, lambda v: [Row("1 Core", "ratio", f"{v}")]) \
        == 0.25
    written = out.read_text()
    assert "| 1 Core | ratio | 0.25 |" in written
    assert "Still running: the second part;" in written
    table.measure(("second", "second_more"), lambda: (1, 2), lambda v: {
        "second": [Row("2 App", "rerun", f"{v[0]} s")],
        "second_more": [Row("3 Memory", "RSS", f"{v[1]} GB")]})
    seen_before_failing: list[str] = []

    def fails_in_a_coroutine() -> None:
        seen_before_failing.append(out.read_text())

        async def student() -> str:
            return next(iter([]))   # the old marker supply, empty

        run_alone(student())

    assert table.measure("third", fails_in_a_coroutine, lambda v: []) is None
    table.skip("fourth", needs="third")
    # The rows of the parts that ended were on disk before the third one started.
    assert "| 2 App | rerun | 1 s |" in seen_before_failing[0]
    assert "| 3 Memory | RSS | 2 GB |" in seen_before_failing[0]
    final = out.read_text()
    assert final == table.text()
    lines = final.splitlines()
    rows = [line for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert rows == [
        "| 1 Core | ratio | 0.25 | — | — |",
        "| 2 App | rerun | 1 s | — | — |",
        "| 3 Memory | RSS | 2 GB | — | — |",
        "| 4 Many users | a class as a lesson runs: failed | RuntimeError: coroutine raised "
        "StopIteration | runs to its end | **no** |",
        "| 4 Many users | what needs the third: failed | not run: it needs a class as a lesson "
        "runs, which failed | runs to its end | **no** |",
    ]
    assert lines[0] == "## Benchmark (test)" and lines[-1] == "the end"
    assert "Parts that failed (their rows say why): a class as a lesson runs; what needs the " \
           "third." in final
    assert not table.ok


def test_a_run_stopped_in_a_part_keeps_what_was_measured(tmp_path):
    out = tmp_path / "bench.md"
    table = _table(out)
    table.measure("first", lambda: 1, lambda v: [Row("1 Core", "ratio", "1")])

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        table.measure(("second", "second_more"), interrupted, lambda v: [])
    written = out.read_text()
    assert "| 1 Core | ratio | 1 |" in written
    assert "The run was stopped during the second part" in written
    assert not table.ok


def test_all_parts_done_the_table_says_nothing_more(tmp_path):
    table = _table(tmp_path / "bench.md")
    for slot in SLOTS:
        table.measure(slot.key, lambda: None, lambda v, s=slot: [Row(s.part, s.key, "ok")])
    text = (tmp_path / "bench.md").read_text()
    assert "Still running" not in text and "failed" not in text and table.ok


def test_first_answer_times_the_readme_command_to_the_first_page():
    """bench/first_answer.py starts the README's command as it is written and times it to
    /tokens answered (a server that never answers would give nan)."""
    import math

    from bench.first_answer import ROOT as BENCH_ROOT
    from bench.first_answer import first_answer

    seconds = first_answer(BENCH_ROOT)
    assert not math.isnan(seconds) and 0.1 < seconds < 60
