"""Part 3, long texts: a class pasting 512-token pairs into every page, and the server's memory.

A fresh app server (its own process, so the figures are its own); one session first opens every
page once with a short sentence (the server as a class finds it: models loaded, pages imported):
RSS *start*. Then ``users`` websocket sessions (bench/ws_client.py) open at once, session ``i`` on
target ``i % len(TARGETS)`` (every page; the Encoder's Head atlas, Attention and layer walk at
every layer), and until ``seconds`` have passed each types a new 512-token pair (bench/texts.py:
sentence A with a fresh marker word, sentence B) after a think time, and waits for the run. RSS
(the server and its children, psutil) is sampled every second: *peak*. Then every session closes
and RSS is sampled for ``after_s`` seconds: *after* is the last sample.

Goals (issue 24): peak at most 1.2 GB with the default budget (BERT_EXPLORER_MEMORY_MB 1200), and
after within 10% of the start.

CLI: ``python3 bench/long_text.py [--users 30] [--seconds 90] [--after 60] [--out FILE]``; prints
the machine, the figures as report rows (markdown) and, with ``--json``, the raw figures.
For bench/run.py: ``rows = long_text_rows(run_long_texts(factory, users=30))``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # `python3 bench/long_text.py` puts bench/, not the repo, first
    sys.path.insert(0, str(ROOT))

from bench.memory_map import growth, rss_by_kind  # noqa: E402
from bench.ws_client import StreamlitClientError, StreamlitSession  # noqa: E402
from bench.ws_load import server_rss  # noqa: E402

if TYPE_CHECKING:
    from bench.report import Row
    from bench.texts import SentenceFactory

TOKENS = 512
RERUN_TIMEOUT_S = 120.0   # 30 long runs queued on 2 cores take a while; a timeout is an error
SAMPLE_S = 1.0
# (URL path, extra query): every page, and the Encoder's heavy tabs at every layer.
TARGETS: tuple[tuple[str, dict[str, str]], ...] = (
    ("", {}), ("tokens", {}), ("stages", {}), ("positions", {}), ("similarity", {}),
    ("pairs", {}), ("pretraining", {}), ("parameters", {}), ("attribution", {}), ("lesson", {}),
    *(("encoder", {"enc_section": "Head atlas", "enc_layer": str(n)}) for n in (1, 6)),
    *(("encoder", {"enc_section": "Attention", "enc_layer": str(n)}) for n in (2, 5)),
    *(("encoder", {"enc_section": "Layer walk", "enc_layer": str(n)}) for n in range(1, 7)),
    ("encoder", {"enc_section": "Feed-forward", "enc_layer": "3"}),
    ("encoder", {"enc_section": "Across layers"}),
)
INPUTS = ("Sentence A", "Sentence B (optional)")


@dataclass
class LongTextFigures:
    users: int
    seconds: float
    after_s: float
    tokens: int = TOKENS
    env: dict[str, str] = field(default_factory=dict)   # the memory settings the server had
    rss_launch: int = 0      # the server listening, nothing opened
    rss_start: int = 0       # every page opened once with a short sentence
    rss_peak: int = 0        # during the class
    rss_end_of_load: int = 0  # the moment the sessions close
    rss_after: int = 0       # ``after_s`` seconds later
    rss_idle: list[tuple[float, int]] = field(default_factory=list)   # (seconds after, RSS)
    runs: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    marker_seen: int = 0
    wall_s: float = 0.0
    # Resident bytes by kind of mapping (bench/memory_map.py) at the start and ``after_s`` later.
    map_start: dict[str, int] = field(default_factory=dict)
    map_after: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict:
        return {**asdict(self), "errors": dict(self.errors)}


async def _sample(pid: int, samples: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(server_rss(pid))
        try:
            await asyncio.wait_for(stop.wait(), SAMPLE_S)
        except TimeoutError:
            pass
    samples.append(server_rss(pid))


async def warm_tour(url: str) -> None:
    """Open every page once with the default sentence, as a teacher's first tour does."""
    for path, extra in TARGETS:
        async with StreamlitSession(url, path=path, query=urlencode(extra),
                                    timeout_s=RERUN_TIMEOUT_S):
            pass


async def _student(url: str, index: int, factory: SentenceFactory, deadline: float,
                   figures: LongTextFigures, rng: random.Random) -> None:
    path, extra = TARGETS[index % len(TARGETS)]
    a, b = factory.pair(TOKENS)
    session = StreamlitSession(url, path=path, query=urlencode({**extra, "a": a.text, "b": b}),
                               timeout_s=RERUN_TIMEOUT_S, expect=a.marker)
    try:
        first = await session.open()
        figures.runs += 1
        figures.marker_seen += bool(first.found)
        while time.perf_counter() < deadline:
            await asyncio.sleep(rng.uniform(0.5, 1.5))
            a, b = factory.pair(TOKENS)
            result = await session.rerun(widget_states=dict(zip(INPUTS, (a.text, b),
                                                                strict=True)), expect=a.marker)
            figures.runs += 1
            figures.marker_seen += bool(result.found)
            if result.exception:
                figures.errors[f"{path or 'home'} {extra}: {result.exceptions[0][:100]}"] += 1
    except StreamlitClientError as exc:
        figures.errors[f"{path or 'home'} {extra}: {type(exc).__name__}: {str(exc)[:80]}"] += 1
    finally:
        await session.close()


async def _class(url: str, pid: int, factory: SentenceFactory, figures: LongTextFigures) -> None:
    figures.rss_launch = server_rss(pid)
    await warm_tour(url)
    figures.rss_start = server_rss(pid)
    figures.map_start = dict(rss_by_kind(pid))
    samples: list[int] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample(pid, samples, stop))
    rng = random.Random(24)
    deadline = time.perf_counter() + figures.seconds
    started = time.perf_counter()
    await asyncio.gather(*(_student(url, i, factory, deadline, figures,
                                    random.Random(rng.random())) for i in range(figures.users)))
    figures.wall_s = time.perf_counter() - started
    figures.rss_end_of_load = server_rss(pid)
    stop.set()
    await sampler
    figures.rss_peak = max(samples)
    waited = 0.0
    while waited < figures.after_s:   # every 30 s, to see when memory comes back
        step = min(30.0, figures.after_s - waited)
        await asyncio.sleep(step)
        waited += step
        figures.rss_idle.append((waited, server_rss(pid)))
    figures.rss_after = server_rss(pid)
    figures.map_after = dict(rss_by_kind(pid))


MEMORY_ENV = ("BERT_EXPLORER_MEMORY_MB", "BERT_EXPLORER_CACHE_MB", "BERT_EXPLORER_CACHE_IDLE_S",
              "BERT_EXPLORER_CACHE_REST_MB", "MALLOC_ARENA_MAX")


def run_long_texts(factory: SentenceFactory, users: int = 30, seconds: float = 90.0,
                   after_s: float = 60.0) -> LongTextFigures:
    """Start a fresh app server, run the class against it, stop it; see the module docstring."""
    from bench.app_bench import log
    from bench.server import start_server

    figures = LongTextFigures(users, seconds, after_s,
                              env={k: os.environ[k] for k in MEMORY_ENV if k in os.environ})
    server = start_server("app.py")
    try:
        log(f"long texts: {users} sessions, {TOKENS}-token pairs, {seconds:.0f} s, "
            f"then {after_s:.0f} s idle")
        asyncio.run(_class(server.url, server.proc.pid, factory, figures))
    finally:
        server.stop()
    return figures


GOAL_AFTER_S = 60.0   # issue 24: back within 10% of the start a minute after the class closed


def rss_at(f: LongTextFigures, seconds: float) -> int:
    """The RSS sample taken ``seconds`` after the sessions closed (the last one before it)."""
    taken = [rss for waited, rss in f.rss_idle if waited <= seconds]
    return taken[-1] if taken else f.rss_end_of_load


def long_text_rows(f: LongTextFigures) -> list[Row]:
    from bench.report import RSS_GOAL, Row, fmt_bytes

    who = f"{f.users} sessions, {f.tokens}-token pairs on every page, {f.seconds:.0f} s"
    errors = sum(f.errors.values())
    rows = [
        Row("3 Memory", f"{who}: server RSS start / peak", f"{fmt_bytes(f.rss_start)} / "
            f"{fmt_bytes(f.rss_peak)} ({f.runs} runs, {errors} errors)",
            f"peak ≤ {fmt_bytes(RSS_GOAL)}", f.rss_peak <= RSS_GOAL),
    ]
    # The goal's minute, then the end of the idle time (past Streamlit's 120 s for a closed
    # tab's session, when nothing of the class is left but the caches' resting size).
    goal_s = min(GOAL_AFTER_S, f.after_s)
    for seconds, rss, goal in ((goal_s, rss_at(f, goal_s), True),
                               (f.after_s, f.rss_after, False)):
        if seconds == goal_s and not goal:
            break   # the idle time was the goal's minute: one row says it
        back = (rss - f.rss_start) / f.rss_start
        rows.append(Row(
            "3 Memory", f"{who}: server RSS {seconds:.0f} s after the sessions closed",
            f"{fmt_bytes(rss)} ({back:+.1%} from the start; "
            f"{fmt_bytes(f.rss_end_of_load)} as they closed)",
            "within 10% of the start" if goal else "—", abs(back) <= 0.10 if goal else None))
    if f.map_start and f.map_after:   # where what stayed lives (bench/memory_map.py)
        parts = [f"{kind} {change / 2**20:+.0f} MB"
                 for kind, change in growth(f.map_start, f.map_after).items()
                 if abs(change) >= 2**20]
        rows.append(Row("3 Memory", f"{who}: what the server gained from the start to "
                        f"{f.after_s:.0f} s after, by kind of memory",
                        "; ".join(parts) or "nothing over 1 MB", "—", None))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--after", type=float, default=60.0, help="idle seconds after the class")
    parser.add_argument("--out", type=Path, help="also write the rows as markdown here")
    parser.add_argument("--json", action="store_true", help="also print the raw figures")
    args = parser.parse_args(argv)
    from bench import machine, report
    from bench.ws_load import default_factory

    load_at_start = machine.load_average()
    figures = run_long_texts(default_factory(), args.users, args.seconds, args.after)
    text = "\n".join([
        f"Load average (1/5/15 min): {load_at_start} at start, {machine.load_average()} at "
        f"the end; server memory settings: {figures.env or 'defaults'}", "",
        report.markdown(long_text_rows(figures)), ""])
    print(text)
    if args.json:
        print(json.dumps(figures.summary(), indent=2))
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
