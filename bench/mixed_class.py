"""Part 4d: a classroom through deploy/'s HAProxy to replicas that share one Redis poll store.

The class of bench/replicas.py types a new sentence every second or so, every student at once:
a whole-page run each time, the heaviest class there is. A lesson is lighter and is what a
teacher runs: here, at the same moment and through the same proxy,

- half the class follows the teacher's lesson (bench/class_poll_bench.py: the pretraining
  lesson, the teacher pressing Next every ``step_s`` seconds; each student's page checks for the
  teacher's step every 3 s as its browser's timer does, and answers each step's question a few
  seconds after seeing it);
- the other half explores the pages (bench/ws_load.py: reads for about ``think_s`` seconds, then
  types a new sentence).

The replicas share the class through Redis (``BERT_EXPLORER_POLL_REDIS``), as deploy/compose.yaml
runs them, so a student on either replica follows a teacher on the other. Measured: every run a
student or the teacher waited for (an answer, a check for the teacher's step, the teacher's
count, a new sentence), p50 / p95, and each kind apart; runs per second per replica; each
replica's processor seconds; errors (exception elements, timeouts, closed websockets); whether
every step's count was exact.

    python3 bench/mixed_class.py [--students 100] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # `python3 bench/mixed_class.py` puts bench/, not the repo, first
    sys.path.insert(0, str(ROOT))

from bench import class_poll_bench  # noqa: E402
from bench.replicas import HAPROXY, replica_cluster  # noqa: E402
from bench.report import CLASS_P95_GOAL, Row, fmt_s, markdown, percentile  # noqa: E402
from bench.server import REDIS, RESULTS, start_redis  # noqa: E402
from bench.ws_load import DEFAULT_PAGES, simulate_class  # noqa: E402
from serving.classpoll import REDIS_ENV  # noqa: E402

STEP_S = 12.0   # the teacher's pace: a step every 12 s, five steps a minute


async def _both(url: str, lesson_students: int, page_students: int, seconds: float,
                step_s: float, think_s: float, pages: tuple[str, ...], pid: int, factory):
    return await asyncio.gather(
        class_poll_bench.run_class(url, lesson_students, seconds, step_s),
        simulate_class(url, page_students, seconds, think_s=think_s, pages=pages, pid=pid,
                       factory=factory))


def run_mixed_class(replicas: int = 2, students: int = 100, seconds: float = 60.0, *,
                    step_s: float = STEP_S, think_s: float = 1.0,
                    pages: tuple[str, ...] = DEFAULT_PAGES, factory=None) -> dict | None:
    """The class (half on the lesson, half on the pages) through the proxy; its figures, or
    None where HAProxy or Redis is not installed."""
    if not (os.path.exists(HAPROXY) and os.path.exists(REDIS)):
        return None
    RESULTS.mkdir(parents=True, exist_ok=True)
    store, store_url = start_redis(RESULTS)
    try:
        with replica_cluster(replicas, env={REDIS_ENV: store_url}) as (servers, url):
            cpu_before = [s.cpu_seconds() for s in servers]
            started = time.perf_counter()
            lesson, explore = asyncio.run(_both(url, students // 2, students - students // 2,
                                                seconds, step_s, think_s, pages,
                                                servers[0].proc.pid, factory))
            wall = time.perf_counter() - started
            cpu = [s.cpu_seconds() - b for s, b in zip(servers, cpu_before, strict=True)]
    finally:
        store.terminate()
        store.wait(timeout=10)
    return summary(lesson, explore, replicas, wall, cpu)


def summary(lesson: class_poll_bench.Figures, explore, replicas: int, wall: float,
            cpu: list[float]) -> dict:
    poll = class_poll_bench.summary(lesson)
    kinds = {
        "an answer": [stored - sent for _, sent, stored in lesson.answers],
        "a check for the teacher's step": lesson.polls,
        "the teacher's count": [end - begin for _, begin, end, _ in lesson.counts],
        "a new sentence": explore.reruns,
    }
    every = [t for times in kinds.values() for t in times]
    return {
        "students": lesson.students + explore.users, "lesson_students": lesson.students,
        "page_students": explore.users, "seconds": lesson.seconds, "replicas": replicas,
        "wall_s": wall, "runs": len(every), "runs_per_s_per_replica": len(every) / wall / replicas,
        "p50_s": percentile(every, 50), "p95_s": percentile(every, 95),
        "kinds": {k: {"n": len(v), "p50_s": percentile(v, 50), "p95_s": percentile(v, 95)}
                  for k, v in kinds.items()},
        "replica_cpu_s": cpu,
        "follow_p50_s": poll["follow_p50_s"], "follow_p95_s": poll["follow_p95_s"],
        "answer_to_count_p95_s": poll["answer_to_count_p95_s"],
        "counts_exact": poll["counts_exact"], "steps_led": poll["steps_led"],
        "errors": poll["n_errors"] + explore.errors,
        "error_details": [*poll["errors"], *dict(explore.details.most_common(5))],
    }


def rows(s: dict) -> list[Row]:
    who = (f"{s['students']} students (websocket), {s['lesson_students']} on the lesson and "
           f"{s['page_students']} on the pages, through HAProxy to {s['replicas']} replicas "
           f"sharing a Redis poll store, {s['seconds']:.0f} s")
    kinds = "; ".join(f"{k} {fmt_s(v['p95_s'])} ({v['n']})" for k, v in s["kinds"].items())
    return [
        Row("4 Many users", f"{who}: every run a student or the teacher waited for, p50 / p95",
            f"{fmt_s(s['p50_s'])} / {fmt_s(s['p95_s'])} ({s['runs']} runs, "
            f"{s['runs_per_s_per_replica']:.1f} a second per replica over the "
            f"{s['wall_s']:.0f} s the class ran, opening included)",
            f"p95 ≤ {CLASS_P95_GOAL:.0f} s", s["p95_s"] <= CLASS_P95_GOAL),
        Row("4 Many users", f"{who}: p95 (runs) by kind", kinds),
        Row("4 Many users", f"{who}: the teacher's Next -> a student's page on the new step "
            "(checked every 3 s), p50 / p95",
            f"{fmt_s(s['follow_p50_s'])} / {fmt_s(s['follow_p95_s'])}"),
        Row("4 Many users", f"{who}: every step's count equals the answers stored "
            f"({s['steps_led']} steps)", "exact" if s["counts_exact"] else "off", "exact",
            s["counts_exact"]),
        Row("4 Many users", f"{who}: processor seconds used by each replica",
            " / ".join(f"{c:.1f} s" for c in s["replica_cpu_s"])),
        Row("4 Many users", f"{who}: errors (exception element, timeout, closed)",
            str(s["errors"]), "0", s["errors"] == 0),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    result = run_mixed_class(args.replicas, args.students, args.seconds)
    if result is None:
        print("HAProxy or Redis is not installed (apt-get install haproxy redis-server)")
        return 1
    print(markdown(rows(result)))
    for detail in result["error_details"]:
        print("error:", detail)
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
