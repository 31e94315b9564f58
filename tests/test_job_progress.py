"""The one progress card of background work (components/job_progress.py): what its line says for
every kind of progress, in both languages, and that a page waits, then shows it, then reruns.

The card's words come from a job's ``Progress`` (serving.jobs) as a real job reports it.
"""

from __future__ import annotations

import threading

import pytest
from streamlit.testing.v1 import AppTest

from components.i18n import set_language
from components.job_progress import Unit, amount, progress_text, rate_words
from serving import jobs
from serving.jobs import Progress


@pytest.fixture
def english():
    set_language("en")
    yield
    set_language("en")


def test_amount_says_of_what_total_or_how_much_so_far(english) -> None:
    assert amount(Progress(1234, 5678), Unit.ITEMS) == "1,234 of 5,678"
    assert amount(Progress(1234, None), Unit.ITEMS) == "1,234 so far"
    assert amount(Progress(1_500_000, 440_000_000), Unit.BYTES) == "1.5 of 440 MB (0%)"
    assert amount(Progress(1_500_000, None), Unit.BYTES) == "1.5 MB so far"
    for progress in (Progress(0, None), Progress(1_500_000, None), Progress(3, None)):
        for unit in Unit:
            assert "?" not in amount(progress, unit) and "…" not in amount(progress, unit)
    set_language("zh")
    assert amount(Progress(1_500_000, None), Unit.BYTES) == "已收到 1.5 MB"
    assert amount(Progress(1234, 5678), Unit.ITEMS) == "1,234 / 5,678"


def test_the_rate_gives_the_speed_and_the_time_left(english) -> None:
    # 2 MB/s with 6 MB to go: 3 s left.
    moving = Progress(4_000_000, 10_000_000, "downloading", rate=2_000_000.0)
    assert moving.seconds_left == pytest.approx(3.0)
    assert rate_words(moving, Unit.BYTES) == "2.0 MB/s, about 3 s left."
    assert rate_words(Progress(4_000_000, None, rate=2e6), Unit.BYTES) == "2.0 MB/s."
    assert rate_words(Progress(10, 1000, rate=1.0), Unit.ITEMS) == "About 16 min left."
    assert rate_words(Progress(10, 1000), Unit.ITEMS) == ""


def test_the_line_fills_our_words_as_text_and_the_callers_values_as_code(english) -> None:
    line = "Downloading {name}: {amount}."
    text = progress_text(Progress(500_000, None), line, Unit.BYTES, 4.2,
                         {"name": "[evil](http://x)"})
    # The name from a link is a code span (never a link); our own words are plain text.
    assert text == "Downloading `[evil](http://x)`\\: 0\\.5 MB so far\\."
    phases = progress_text(Progress(3, 10), "{amount} ({seconds} s)", Unit.ITEMS, 4.2, {})
    assert phases == "3 of 10 \\(4 s\\)"


GATE = threading.Event()   # the test lets the page's job finish

CARD_APP = """
import streamlit as st
from components.job_progress import show_job
from serving import jobs
from tests.test_job_progress import GATE

def work(job):
    job.report(1, 4)
    GATE.wait(30)
    return "the result"

job = jobs.submit("test: the card", work)
value = show_job(job, "Counting: {amount}.", "It failed.", explanation="It runs once.",
                 wait_s=0.2)
if value is not None:
    st.write(value)
"""


def test_a_page_shows_the_card_while_the_job_runs_then_its_result() -> None:
    """The page waits its short while, draws the card (a bar and the line under it) while the
    job runs, and shows the result on the run after it ends (in a browser the card's fragment
    makes that run; AppTest does not tick fragments)."""
    GATE.clear()
    try:
        at = AppTest.from_string(CARD_APP, default_timeout=30).run()
        assert not at.exception
        [bar] = at.get("progress")
        assert bar.proto.value == 25
        # The caller's explanation, then the card's line under its bar.
        assert [m.value for m in at.markdown] == ["It runs once.", "Counting\\: 1 of 4\\."]
        job = jobs.board().get("test: the card")
        assert job is not None and not job.done()
    finally:
        GATE.set()
    assert job.wait(10)
    at.run()
    assert not at.exception and not at.get("progress")
    assert [m.value for m in at.markdown] == ["the result"]
    assert jobs.board().forget("test: the card")


FAILING_APP = """
import streamlit as st
from components.job_progress import show_job
from core.errors import InputError
from serving import jobs

def broken(job):
    raise RuntimeError("a bug")

def refused(job):
    raise InputError("“{text}” is not a sentence.", text="**x**")

for key, work in (("test: broken", broken), ("test: refused", refused)):
    value = show_job(jobs.submit(key, work), "Working: {amount}.", "It stopped.", wait_s=5)
    st.write(repr(value))
"""


def test_a_failed_job_shows_the_callers_words_and_a_refusal_cores_own(english) -> None:
    """A job whose work raised shows the page's error (the log has the traceback); one whose
    work refused its input (an ExplorerError) shows core's words, its value as text; neither
    gives the page a value."""
    try:
        at = AppTest.from_string(FAILING_APP, default_timeout=30).run()
        assert not at.exception
        assert [e.value for e in at.error] == ["It stopped."]
        [warning] = at.warning
        assert warning.value == "“`**x**`” is not a sentence\\."   # the value as code
        assert [m.value for m in at.markdown][-2:] == ["None", "None"]
        assert not at.get("progress")
    finally:
        for key in ("test: broken", "test: refused"):
            jobs.board().forget(key)
