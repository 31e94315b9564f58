"""The page half of background work (serving.jobs): one progress card for any job, and one
recipe to read a job on a page.

A page asks its cache for the job, then shows it with one call, whatever the work (a download's
card aside: components/model_download.py), a list of pairs, a corpus pass, a benchmark file):

    job = cache.the_job(...)
    value = show_job(job, _("Sentences through the model: {amount}."),
                     _("The pass stopped with an error. Reload the page to try again."),
                     model=name)
    if value is None:
        return        # its card is drawn (it reruns the page when the job ends), or its error

``show_job`` waits ``WAIT_IN_RUN_S`` in the run, so a fast job shows its result without a card;
while the job runs it draws the caller's explanation (if any) and ``progress_card``: an
``st.fragment(run_every=POLL_S)`` that redraws the bar and one line of body text from the job's
``Progress`` and, once the job is done, stops polling and reruns the whole page. A failed job
shows the caller's message (the job's own error is in the server's log), or, when the work
refused its input with an ``ExplorerError``, core's own words for it. Calls made from the
worker's thread never reach the browser, and one ``st.progress`` drawn once does not move
(DESIGN.md, "Progress of work that outlives a script run").

The line is the caller's, translated in its run: ``{amount}`` (how much is done, and of what
total: "1,234 of 5,678", "1.5 of 440 MB (0%)", or, with no total known, "1,234 so far",
"1.5 MB so far": never a "?"), ``{seconds}`` (how long the job has run), and the caller's own
values (names, counts), shown as code so a name from a link stays text. A phase the job reports
(the caller's StrEnum) can have its own line (``phases``). When the work reports a rate, the
speed and the time left follow the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

import streamlit as st

from components.analysis_view import show_error
from components.explain import explain
from components.i18n import _, language, set_language
from components.labels import markdown_template, markdown_text
from core.errors import ExplorerError
from serving.hub import megabytes
from serving.jobs import Job, Progress

T = TypeVar("T")

POLL_S = 0.5           # the card's redraw: a bar that moves, at a cost of one small fragment run
WAIT_IN_RUN_S = 1.5    # a job that ends within this shows its result with no card at all


class Unit(StrEnum):
    """What a job's ``done`` and ``total`` count."""

    ITEMS = "items"    # sentences, pairs, files: shown as whole numbers
    BYTES = "bytes"    # a download: shown in MB


def show_job(job: Job[T], line: str, failed: str, *, explanation: str = "",
             phases: Mapping[str, str] | None = None, unit: Unit = Unit.ITEMS,
             wait_s: float = WAIT_IN_RUN_S, **values: str) -> T | None:
    """The page half of ``job`` in one call: its result once it ended well, else None with
    what the page shows instead drawn here.

    Waits up to ``wait_s`` seconds in this run. A job still running draws ``explanation`` (a
    translated sentence, if any) and its progress card with ``line`` (``progress_card``), which
    reruns the page when the job ends. A failed job shows ``failed`` as an error, or core's own
    words when the work raised an ``ExplorerError`` (an input it refuses). A result another
    session has moved into a bounded cache since (``Job.take``) reruns the page, which asks for
    the job again. A work that returns None cannot be told from one still running: none does."""
    if not job.wait(wait_s):
        if explanation:
            explain(explanation)
        progress_card(job, line, phases=phases, unit=unit, **values)
        return None
    error = job.exception()
    if isinstance(error, ExplorerError):
        show_error(error)
        return None
    if error is not None:
        st.error(failed, icon=":material/error:")
        return None
    try:
        return job.result()
    except LookupError:   # taken into a bounded cache by another session, and dropped since
        st.rerun()
        return None


def progress_card(job: Job[Any], line: str, *, phases: Mapping[str, str] | None = None,
                  unit: Unit = Unit.ITEMS, **values: str) -> None:
    """Draw ``job``'s progress (a bar, and ``line`` under it in body text: a bar's own label is
    small for a projector) and keep it moving until the job ends, then rerun the page.

    ``line`` and the ``phases`` lines are translated by the caller's run; ``values`` fill the
    caller's placeholders."""
    _card(job, line, dict(phases or {}), unit, dict(values), language())


@st.fragment(run_every=POLL_S)
def _card(job: Job[Any], line: str, phases: dict[str, str], unit: Unit,
          values: dict[str, str], lang: str) -> None:
    # A fragment's own reruns do not pass through the router, which sets the run's language:
    # the run that drew the card hands its language over.
    set_language(lang)
    if job.done():
        st.rerun()   # the whole page once: the result shows, or the page's failure message
        return
    progress = job.progress
    st.progress(progress.fraction or 0.0)
    explain(progress_text(progress, phases.get(progress.phase, line), unit, job.seconds,
                          values))


def progress_text(progress: Progress, line: str, unit: Unit, seconds: float,
                  values: Mapping[str, str]) -> str:
    """The card's line as markdown: ``line`` with ``{amount}`` and ``{seconds}`` filled as our
    own words and the caller's ``values`` as code, then the speed and time left if known."""
    own = {"amount": amount(progress, unit), "seconds": f"{seconds:.0f}"}
    text = markdown_template(line.format_map(_Keep(own)), **values)
    rate = rate_words(progress, unit)
    return f"{text} {markdown_text(rate)}" if rate else text


def amount(progress: Progress, unit: Unit) -> str:
    """How much is done: of the total (in MB with the percentage, as downloads say it), or, with
    no total known, so far."""
    if unit is Unit.BYTES:
        done = megabytes(progress.done)
        if progress.total is None:
            return _("{done} MB so far").format(done=done)
        return _("{done} of {total} MB ({percent}%)").format(
            done=done, total=megabytes(progress.total), percent=_percent(progress))
    if progress.total is None:
        return _("{done} so far").format(done=f"{progress.done:,}")
    return _("{done} of {total}").format(done=f"{progress.done:,}", total=f"{progress.total:,}")


def rate_words(progress: Progress, unit: Unit) -> str:
    """The speed (downloads) and the time left at that speed, when the work reports a rate."""
    if not progress.rate:
        return ""
    left = progress.seconds_left
    if unit is Unit.BYTES:
        speed = f"{progress.rate / 1e6:.1f}"
        if left is None:
            return _("{speed} MB/s.").format(speed=speed)
        return _("{speed} MB/s, about {left} left.").format(speed=speed, left=duration(left))
    return "" if left is None else _("About {left} left.").format(left=duration(left))


def duration(seconds: float) -> str:
    """A time left in words: seconds under a minute and a half, whole minutes above."""
    if seconds < 90:
        return _("{n} s").format(n=max(1, round(seconds)))
    return _("{n} min").format(n=round(seconds / 60))


def _percent(progress: Progress) -> str:
    return f"{100 * (progress.fraction or 0.0):.0f}"


class _Keep(dict[str, str]):
    """Fill our placeholders, keep the caller's (``{name}``) for markdown_template."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
