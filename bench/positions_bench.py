"""Issue 4: what the Positions page costs on a first visit and on a warm rerun, in process.

`python bench/positions_bench.py [--reps N]` prints two markdown tables:

    1 the per-model work (core.positions on the learned and the sinusoidal table), median of N
    2 the page in AppTest: first visit with the position caches empty (model already loaded),
      warm reruns that only change sentence A, "Choose any range" turned on, and a new
      position range; with the number of model-level computations each run really did
      (pages.positions.cache.CALLS)
    3 the PCA tab's count switcher as it opens: the bytes of every count's picture together,
      raw (the shared style once) and as components.picture_switcher packs them

AppTest runs the script without a browser, so these are server-side times; bench/run.py measures
the same page end to end in Chromium.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/positions/page.py"
MODEL_LEVEL = ("table", "pca", "cosine", "offset", "probe", "norms")


def median_time(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def core_table(reps: int) -> list[str]:
    from core import load_model
    from core.positions import (
        TABLE_KINDS,
        pca_projection,
        position_cosines,
        position_probe,
        position_table,
        vector_norms,
    )

    bundle = load_model()
    lines = ["| step | learned | sinusoidal |", "| --- | ---: | ---: |"]
    steps: dict[str, dict[str, float]] = {}
    for kind in TABLE_KINDS:
        table = position_table(bundle, kind)
        for name, fn in (
            ("table", lambda kind=kind: position_table(bundle, kind)),
            ("PCA, all positions", lambda table=table: pca_projection(table)),
            ("cosine matrix", lambda table=table: position_cosines(table)),
            ("probe (5-fold)", lambda table=table: position_probe(table)),
            ("ridge probe (5-fold)", lambda table=table: position_probe(table, fit="ridge")),
            ("norms", lambda table=table: vector_norms(table)),
        ):
            steps.setdefault(name, {})[kind] = median_time(fn, reps)
    for name, by_kind in steps.items():
        lines.append(f"| {name} | {by_kind['learned'] * 1000:.1f} ms "
                     f"| {by_kind['sinusoidal'] * 1000:.1f} ms |")
    return lines


def timed_run(at, action: Callable[[], object]) -> tuple[float, dict[str, int]]:
    from pages.positions.cache import CALLS

    before = {k: CALLS[k] for k in MODEL_LEVEL}
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    return seconds, {k: CALLS[k] - before[k] for k in MODEL_LEVEL if CALLS[k] != before[k]}


def app_table(reps: int) -> list[str]:
    from streamlit.testing.v1 import AppTest

    from pages.positions.cache import clear_position_caches

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    start = time.perf_counter()
    at.run()                                     # loads the model (Home page)
    model_s = time.perf_counter() - start
    clear_position_caches()
    first_s, first_calls = timed_run(at, lambda: at.switch_page(PAGE).run())
    warm = [timed_run(at, lambda i=i: at.text_area(key="a").set_value(f"Sentence number {i} "
                                                                      "about positions").run())
            for i in range(reps)]
    bytes_lines = switcher_bytes(at)
    free_s, free_calls = timed_run(at, lambda: at.toggle(key="pos_free").set_value(True).run())
    range_s, range_calls = timed_run(
        at, lambda: at.slider(key="pos_range").set_value((0, 199)).run()
    )
    warm_s = statistics.median(s for s, _ in warm)
    warm_calls = {k: v for _, calls in warm for k, v in calls.items()}
    return [
        "| run | time | model-level computations run |",
        "| --- | ---: | --- |",
        f"| app start, model load (Home) | {model_s:.2f} s | - |",
        f"| /positions first visit (position caches empty) | {first_s:.2f} s | {first_calls} |",
        f"| warm rerun, new sentence A (median of {reps}) | {warm_s:.2f} s | "
        f"{warm_calls or 'none'} |",
        f"| rerun turning on Choose any range | {free_s:.2f} s | {free_calls or 'none'} |",
        f"| rerun with a new position range | {range_s:.2f} s | {range_calls} |",
        "",
        f"First visit / warm rerun: {first_s / warm_s:.1f}x.",
        "",
        *bytes_lines,
    ]


def switcher_bytes(at) -> list[str]:
    """The count switcher's data as the page sends it: packed (zlib, what goes over the
    websocket) and unpacked (its JSON), with each count's picture."""
    import json

    from components.picture_switcher import unpack

    packed = next(e.proto.bytes for e in at.get("bidi_component")
                  if "pos_count" in json.dumps(unpack(e.proto.bytes))[:2000])
    data = unpack(packed)
    raw = len(json.dumps(data, ensure_ascii=False).encode("utf-8"))
    axes = data.get("axes") or [data]   # one slider: its names at the top or in its axis
    names = axes[0]["names"]
    sizes = ", ".join(f"{name} {len(p.encode()) / 1000:.1f} kB"
                      for name, p in zip(names, data["pictures"], strict=True))
    return [f"Count switcher as it opens: {raw / 1000:.1f} kB unpacked, {len(packed) / 1000:.1f} "
            f"kB packed ({len(packed) / raw:.0%}); style sent once "
            f"{len(data['style'].encode()) / 1000:.1f} kB; pictures: {sizes}."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="repetitions per median")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Machine: {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min) at the start\n")
    print("## Positions: per-model work (core.positions, median of", args.reps, "runs)\n")
    print("\n".join(core_table(args.reps)))
    print("\n## Positions page in AppTest\n")
    print("\n".join(app_table(args.reps)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
