"""A class of browserless students following their teacher (issue 35, part 5).

One server, one class (the pretraining lesson, from step 2), ``students`` websocket sessions
(bench/ws_client.py) and a teacher's presenter session, for ``seconds`` seconds:

- each student's page runs its follower fragment every FOLLOW_S (3 s), as the browser's timer does
  (``st.fragment(run_every=...)``); when the teacher has moved, that fragment reruns the whole
  page on the new step, and the student answers the step's question (a random choice, sent as
  the browser sends a widget change inside a fragment), a few seconds later at random;
- the teacher's page runs its count fragment every second, as its browser does, and presses
  Next every ``step_s`` seconds.

Measured: the time from a student sending its answer to the end of the first teacher count
that started after the answer was stored (an upper bound of what the teacher waits; p50/p95),
the time from the teacher's Next to a student's page showing the new step (p50/p95), and
whether each step's last count is exact: every answer stored before that count began, and no
more than those plus the answers then sent but not yet acknowledged. Errors: exception
elements, timeouts, closed websockets. The machine's load average is recorded beside them.

    python3 bench/class_poll_bench.py --students 100 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import server as bench_server  # noqa: E402
from bench.report import Row, fmt_s, markdown, percentile  # noqa: E402
from bench.ws_client import StreamlitClientError, StreamlitSession  # noqa: E402
from pages.lesson.figures import LESSONS  # noqa: E402
from pages.lesson.poll_view import FOLLOW_S  # noqa: E402
from tests import class_sessions  # noqa: E402

STEPS = LESSONS["pretraining"][1]
HEADING = re.compile(r"^(\d+)\. ")
P95_GOAL_S = 2.0


@dataclass
class Figures:
    students: int
    seconds: float
    answers: list[tuple[int, float, float]] = field(default_factory=list)  # step, sent, stored
    counts: list[tuple[int, float, float, int]] = field(default_factory=list)  # step, start, end, n
    moves: list[tuple[int, float]] = field(default_factory=list)   # step, teacher's Next done
    follows: list[tuple[int, float]] = field(default_factory=list)   # step, student shows it
    polls: list[float] = field(default_factory=list)   # seconds each follower run took
    errors: list[str] = field(default_factory=list)
    load: list[float] = field(default_factory=list)   # the machine's 1-minute load average


def step_of(texts: list[str]) -> int | None:
    for text in texts:
        found = HEADING.match(text.strip())
        if found:
            return int(found.group(1))
    return None


async def student(session: StreamlitSession, figures: Figures, deadline: float,
                  rng: random.Random) -> None:
    step = step_of(session.first.texts) or class_sessions.STEP
    answered: set[int] = set()
    follower = next(iter(session.auto_reruns))
    next_answer = time.perf_counter() + rng.uniform(0.5, 4.0)
    next_poll = time.perf_counter() + rng.uniform(0, FOLLOW_S)
    try:
        while time.perf_counter() < deadline:
            now = time.perf_counter()
            if step not in answered and now >= next_answer:
                question = STEPS[step - 1].question
                widget = session.widget_id(question)
                choice = STEPS[step - 1].choices[rng.randrange(len(STEPS[step - 1].choices))]
                sent = time.perf_counter()
                result = await session.rerun(widget_states={widget: choice},
                                             fragment_id=session.widget_fragments.get(widget))
                if result.exception:
                    figures.errors.append("; ".join(result.exceptions))
                figures.answers.append((step, sent, time.perf_counter()))
                answered.add(step)
                continue
            if now >= next_poll:
                next_poll = now + FOLLOW_S
                result = await session.rerun(fragment_id=follower, auto=True)
                figures.polls.append(result.elapsed)
                if result.exception:
                    figures.errors.append("; ".join(result.exceptions))
                shown = step_of(result.texts)
                if shown is not None and shown != step:
                    step = shown
                    figures.follows.append((step, time.perf_counter()))
                    next_answer = time.perf_counter() + rng.uniform(0.5, 4.0)
                    follower = next(iter(session.auto_reruns), follower)
                continue
            await asyncio.sleep(max(0.01, min(next_poll, next_answer) - now))
    except StreamlitClientError as exc:
        figures.errors.append(repr(exc))
    finally:
        await session.close()


def count_fragment(teacher: StreamlitSession) -> str:
    return next(f for f, every in teacher.auto_reruns.items() if every <= 1.0)


async def teacher_loop(teacher: StreamlitSession, figures: Figures, deadline: float,
                       step_s: float) -> None:
    step = class_sessions.STEP
    moved = time.perf_counter()
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        result = await teacher.rerun(fragment_id=count_fragment(teacher), auto=True)
        figures.counts.append((step, start, time.perf_counter(),
                               class_sessions.answered(result)))
        if time.perf_counter() - moved >= step_s and step < len(STEPS):
            result = await class_sessions.press(teacher, "Next")
            step += 1
            moved = time.perf_counter()
            figures.moves.append((step, moved))
        await asyncio.sleep(max(0.0, start + 1.0 - time.perf_counter()))
    # The last count of the last step, once every answer in flight has landed.
    await asyncio.sleep(3.0)
    start = time.perf_counter()
    result = await teacher.rerun(fragment_id=count_fragment(teacher), auto=True)
    figures.counts.append((step, start, time.perf_counter(), class_sessions.answered(result)))


async def run_class(url: str, students: int, seconds: float, step_s: float) -> Figures:
    figures = Figures(students, seconds)
    teacher, code = await class_sessions.start_class(url)
    # Open the class's pages ten at a time before the clock starts (a shared link's burst is
    # bench/ws_load.py's measure); then everyone answers and follows for ``seconds``.
    opened: list[StreamlitSession] = []
    for first in range(0, students, 10):
        opened += await asyncio.gather(*(class_sessions.student(url, code)
                                         for _ in range(first, min(students, first + 10))))
    await teacher.rerun()
    figures.load.append(os.getloadavg()[0])
    start = time.perf_counter()
    tasks = [asyncio.create_task(student(s, figures, start + seconds, random.Random(i)))
             for i, s in enumerate(opened)]
    try:
        await teacher_loop(teacher, figures, start + seconds, step_s)
        await asyncio.gather(*tasks)
    finally:
        await teacher.close()
    figures.load.append(os.getloadavg()[0])
    return figures


def summary(figures: Figures) -> dict:
    waits = []
    for step, sent, stored in figures.answers:
        later = [end for s, begin, end, _ in figures.counts if s == step and begin >= stored]
        if later:
            waits.append(min(later) - sent)
    follow = []
    for step, shown in figures.follows:
        moved = [t for s, t in figures.moves if s == step]
        if moved:
            follow.append(shown - moved[0])
    exact = []
    for step in sorted({s for s, *_ in figures.counts}):
        last = max((c for c in figures.counts if c[0] == step), key=lambda c: c[1])
        stored = sum(1 for s, _, t in figures.answers if s == step and t <= last[1])
        in_flight = sum(1 for s, sent, t in figures.answers if s == step and sent <= last[1] < t)
        total = sum(1 for s, *_ in figures.answers if s == step)
        exact.append({"step": step, "teacher_count": last[3], "answers_stored": stored,
                      "in_flight": in_flight, "answers_in_all": total,
                      "exact": stored <= last[3] <= stored + in_flight})
    return {
        "students": figures.students, "seconds": figures.seconds,
        "answers": len(figures.answers), "steps_led": len(figures.moves) + 1,
        "answer_to_count_p50_s": percentile(waits, 50),
        "answer_to_count_p95_s": percentile(waits, 95), "answer_to_count_n": len(waits),
        "follow_p50_s": percentile(follow, 50), "follow_p95_s": percentile(follow, 95),
        "follow_n": len(follow),
        # Exact: the teacher's last count of a step holds every answer stored before it began,
        # and no more than those plus the answers sent but not yet acknowledged then.
        "counts_exact": all(e["exact"] for e in exact),
        "load_average_1min_start_end": figures.load,
        "per_step": exact, "errors": figures.errors[:10], "n_errors": len(figures.errors),
    }


def rows(s: dict) -> list[Row]:
    who = f"{s['students']} students (websocket) following a teacher, {s['seconds']:.0f} s"
    return [
        Row("4 Many users", f"{who}: a student's answer -> the teacher's count, p50 / p95 "
            f"({s['answer_to_count_n']} answers)",
            f"{fmt_s(s['answer_to_count_p50_s'])} / {fmt_s(s['answer_to_count_p95_s'])}",
            f"p95 ≤ {P95_GOAL_S:.0f} s", s["answer_to_count_p95_s"] <= P95_GOAL_S),
        Row("4 Many users", f"{who}: the teacher's Next -> a student's page on the new step, "
            f"p50 / p95 ({s['follow_n']} moves)",
            f"{fmt_s(s['follow_p50_s'])} / {fmt_s(s['follow_p95_s'])}"),
        Row("4 Many users", f"{who}: every step's count equals the answers stored "
            f"({s['steps_led']} steps)", "exact" if s["counts_exact"] else "off",
            "exact", s["counts_exact"]),
        Row("4 Many users", f"{who}: errors", str(s["n_errors"]), "0", s["n_errors"] == 0),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--step-s", type=float, default=12.0)
    parser.add_argument("--url", help="a running server (else one is started)")
    args = parser.parse_args(argv)
    server = None if args.url else bench_server.start_server(str(ROOT / "app.py"))
    url = args.url or server.url
    try:
        figures = asyncio.run(run_class(url, args.students, args.seconds, args.step_s))
    finally:
        if server is not None:
            server.stop()
    result = summary(figures)
    out = bench_server.RESULTS / "class_poll.json"
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "per_step"}, indent=1))
    print(json.dumps(result["per_step"]))
    print(markdown(rows(result)))
    return 0 if result["counts_exact"] and not result["n_errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
