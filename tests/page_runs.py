"""What the page tests read from an AppTest run, and how they wait for its background work."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable

from streamlit.testing.v1 import AppTest

from serving import jobs


def settle(at: AppTest, *, wait_s: float, rounds: int = 3,
           boards: Iterable[jobs.JobBoard] = ()) -> AppTest:
    """Wait for the page's background jobs (on the process's board and ``boards``), then rerun,
    as its progress card would, until none is pending or the page shows an exception."""
    boards = (*boards, jobs.board())
    for _ in range(rounds):
        pending = [job for board in boards for job in board.jobs() if not job.done()]
        if not pending or at.exception:
            break
        for job in pending:
            with contextlib.suppress(Exception):
                job.result(timeout=wait_s)
        at.run()
    return at


def figure(at: AppTest, meta: str) -> dict:
    """The plotly figure whose layout's ``meta`` is ``meta``."""
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if spec.get("layout", {}).get("meta") == meta:
            return spec
    raise AssertionError(f"no figure {meta}")


def texts(at: AppTest, kind: str) -> list[str]:
    """The values of every element of ``kind`` ("warning", "markdown", ...)."""
    return [element.value for element in at.get(kind)]
