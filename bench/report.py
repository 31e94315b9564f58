"""The one table: each measured figure next to its goal and whether it was met."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench.app_bench import (
    BARE_IMAGE_TITLE,
    BARE_PLOTLY_TITLE,
    BARE_TITLE,
    FRAME_MODEL_TITLE,
    FRAME_TITLE,
    REFERENCES,
    AppFigures,
    PageRuns,
    median_s,
)
from bench.core_bench import CacheFigures, ForwardFigures
from bench.load_bench import RERUN_TIMEOUT_S, LoadFigures

FORWARD_GOAL = 1.3       # analyze / bare forward
CACHE_GOAL = 0.01        # cached repeat / first call
COLD_GOAL = 5.0          # seconds, a fresh server's first deep link (issue 17)
LOADING_GOAL = 1.0       # seconds until something shows on that first visit
RERUN_GOAL = 1.5         # a page's warm rerun / the app's frame alone (issue 29)
FRAME_GOAL = 1.5         # the app's frame alone / a bare Streamlit page (issue 29)
SWITCH_GOAL = 1.0        # seconds, a page opened from the top navigation (median of 5)
NEW_TAB_GOAL = 1.5       # seconds, a page's link opened in a new tab (median of 5)
LONG_GOAL = 3.0          # a page's warm rerun / /tokens', both with a 512-token pair
PAIR_GOAL = 2.0          # /stages / /tokens, 64-token pair
WS_GOAL = 1.5e6          # bytes per rerun per page
RSS_GOAL = 1.2e9         # server RSS
LEVEL_OFF = 0.10         # RSS may grow at most 10% over the second half of the memory run
CLASS_P95_GOAL = 1.0     # seconds, 100 students (issue 29)
P95_GOAL = 3.0           # seconds, many users


@dataclass(frozen=True)
class Row:
    part: str
    measure: str
    value: str
    goal: str = "—"
    met: bool | None = None


def fmt_s(seconds: float) -> str:
    if math.isnan(seconds):
        return "n/a"
    if seconds < 1e-3:   # a cache hit
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def fmt_bytes(n: float) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.2f} GB"
    return f"{n / 1e6:.2f} MB" if n >= 1e6 else f"{n / 1e3:.1f} KB"


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _notable(off: float, on: float) -> bool:
    """Attentions on gets its own row only when it changes the picture."""
    return abs(on - off) > 0.1 * off


def core_rows(forward: list[ForwardFigures], cache: list[CacheFigures]) -> list[Row]:
    rows = []
    sizes = sorted({f.n_tokens for f in forward})
    for n in sizes:
        off, on = (next(f for f in forward if f.n_tokens == n and f.attentions is a)
                   for a in (False, True))
        both = _notable(off.ratio, on.ratio) or (off.ratio <= FORWARD_GOAL) != (
            on.ratio <= FORWARD_GOAL)
        for f in (off, on) if both else (off,):
            label = "on" if f.attentions else "off"
            extra = "" if both else f"; attentions on: {on.ratio:.2f}x"
            rows.append(Row(
                "1 Core", f"analyze / bare forward, {n}-token pair, attentions {label}"
                + (" (the bare forward returns them too)" if f.attentions else ""),
                f"{f.ratio:.2f}x ({fmt_s(f.analyze_s)} vs {fmt_s(f.bare_s)}){extra}",
                f"≤ {FORWARD_GOAL}x", f.ratio <= FORWARD_GOAL))
    for n in sizes:
        off, on = (next(c for c in cache if c.n_tokens == n and c.attentions is a)
                   for a in (False, True))
        both = _notable(off.ratio, on.ratio) or (off.ratio < CACHE_GOAL) != (
            on.ratio < CACHE_GOAL)
        for c in (off, on) if both else (off,):
            label = "on" if c.attentions else "off"
            extra = "" if both else f"; attentions on: {on.ratio:.2%}"
            rows.append(Row(
                "1 Core", f"cached repeat / first call (get_analysis), {n} tokens, "
                f"attentions {label}",
                f"{c.ratio:.2%} ({fmt_s(c.repeat_s)} vs {fmt_s(c.first_s)}){extra}",
                f"< {CACHE_GOAL:.0%}", c.ratio < CACHE_GOAL))
    return rows


FIGURE_KINDS = {"images": "image", "interactive": "interactive figure", "diagrams": "diagram",
                "tables": "table", "grids": "data grid"}


def figure_list(figures: dict[str, int]) -> str:
    """ "2 images, 1 interactive figure" from the counts a tab reported; "text only" if none."""
    parts = [f"{n} {name}{'s' if n != 1 else ''}" for kind, name in FIGURE_KINDS.items()
             if (n := figures.get(kind, 0))]
    return ", ".join(parts) or "text only"


def _page_name(runs: PageRuns) -> str:
    return f"{runs.title} (/{runs.path})"


def app_rows(app: AppFigures) -> list[Row]:
    cold = app.cold
    ok = cold.status == "ok" and cold.shows_tokens
    rows = [Row("2 App", "cold start: server spawned -> /tokens rendered with the tokens",
                f"{fmt_s(cold.render_s)} (port open after {fmt_s(cold.listening_s)}; server "
                f"CPU {fmt_s(cold.cpu_s)}; bench/cold_start_bench.py for medians and phases)"
                + ("" if ok else f"; {cold.status}, tokens shown: {cold.shows_tokens}"),
                f"≤ {COLD_GOAL:.0f} s", ok and cold.render_s <= COLD_GOAL),
            Row("2 App", "cold start: request sent -> loading card visible",
                fmt_s(cold.loading_s) if cold.loading_s == cold.loading_s else "never seen",
                f"≤ {LOADING_GOAL:.0f} s", cold.loading_s <= LOADING_GOAL)]
    bare = next(p for p in app.pages if p.title == BARE_TITLE)
    bare_s = median_s(bare.new)
    rows.append(Row("2 App", f"bare Streamlit page rerun (reference, {len(bare.new)} sentences)",
                    f"{fmt_s(bare_s)}; seen sentence {fmt_s(median_s(bare.repeat))}"))
    for title, what in ((BARE_PLOTLY_TITLE, "the floor for a page with an interactive figure"),
                        (BARE_IMAGE_TITLE, "the floor for a page with a picture")):
        runs = next((p for p in app.pages if p.title == title), None)
        if runs is not None:
            ref_s = median_s(runs.new)
            rows.append(Row("2 App", f"{title} (reference: {what})",
                            f"{fmt_s(ref_s)} = {ref_s / bare_s:.1f}x bare"))
    frame = next((p for p in app.pages if p.title == FRAME_TITLE), None)
    frame_s = median_s(frame.new) if frame else float("nan")
    rows.append(Row("2 App", f"{FRAME_TITLE} (reference: what every page of the app costs "
                    "before its content)", f"{fmt_s(frame_s)} = {frame_s / bare_s:.2f}x bare",
                    f"≤ {FRAME_GOAL}x bare", frame_s / bare_s <= FRAME_GOAL))
    model = next((p for p in app.pages if p.title == FRAME_MODEL_TITLE), None)
    model_s = median_s(model.new) if model else float("nan")
    if model is not None:
        rows.append(Row("2 App", f"{FRAME_MODEL_TITLE} (reference: the floor under a page that "
                        "shows the model's numbers for a sentence the server has not seen)",
                        f"{fmt_s(model_s)} = {model_s / frame_s:.2f}x the frame"))
    for runs in app.pages:
        if runs.title in REFERENCES:
            continue
        new, seen = median_s(runs.new), median_s(runs.repeat)
        errors = f"; {runs.errors} errors" if runs.errors else ""
        rows.append(Row(
            "2 App", f"warm rerun, new sentence A, median of {len(runs.new)}: {_page_name(runs)}"
            f" — draws {figure_list(runs.figures)}",
            f"{fmt_s(new)} = {new / frame_s:.2f}x the frame, {new / model_s:.2f}x the frame "
            f"with the model's run, {new / bare_s:.1f}x bare (seen sentence: {fmt_s(seen)} = "
            f"{seen / frame_s:.2f}x the frame){errors}",
            f"≤ {RERUN_GOAL}x the frame", new / frame_s <= RERUN_GOAL and not runs.errors))
    for runs in app.pages:
        if runs.title in REFERENCES:
            continue
        sizes = [r.ws_bytes for r in runs.new + runs.repeat]
        rows.append(Row(
            "2 App", f"websocket bytes server -> browser per rerun: {_page_name(runs)}",
            f"median {fmt_bytes(float(np.median(sizes)))}, max {fmt_bytes(max(sizes))}",
            f"≤ {fmt_bytes(WS_GOAL)}", max(sizes) <= WS_GOAL))
    rows += _pair_rows(app.pair)
    rows.append(_positions_row(app.positions))
    return rows + switch_rows(app) + long_rows(app)


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def switch_rows(app: AppFigures) -> list[Row]:
    """Every page opened from the top navigation (first and second time in a tab) and from a
    link in a new tab (bench/switch_bench.py), medians over the rounds."""
    rows = []
    for runs in app.switches or []:
        name = f"{runs.target.title} (/{runs.target.path})"
        first, second, new_tab = (_median(v) for v in (runs.first, runs.second, runs.new_tab))
        errors = [e for e in runs.errors if not e.startswith("new tab")]
        tab_errors = [e for e in runs.errors if e.startswith("new tab")]
        rows.append(Row(
            "2 App", f"page switch from the top navigation, same tab, click -> drawn, median of "
            f"{len(runs.first)}: {name}",
            f"first time {fmt_s(first)}, second time {fmt_s(second)}"
            + (f"; {len(errors)} failed ({errors[0]})" if errors else ""),
            f"≤ {SWITCH_GOAL:.0f} s", max(first, second) <= SWITCH_GOAL and not errors))
        rows.append(Row(
            "2 App", f"page opened from its link in a new tab, warm server, median of "
            f"{len(runs.new_tab)}: {name}",
            fmt_s(new_tab) + (f"; {len(tab_errors)} failed ({tab_errors[0]})"
                              if tab_errors else ""),
            f"≤ {NEW_TAB_GOAL} s", new_tab <= NEW_TAB_GOAL and not tab_errors))
    for title, seconds in (app.reference_tabs or {}).items():
        rows.append(Row(
            "2 App", f"{title} opened from its link in a new tab, median of {len(seconds)} "
            "(reference: the floor under a page of the app in a new tab)", fmt_s(_median(seconds)),
            "—", None))
    return rows


def long_rows(app: AppFigures) -> list[Row]:
    """Every page with a 512-token pair against /tokens, and its websocket bytes per rerun
    (bench/long_bench.py)."""
    from bench.long_bench import LONG_TOKENS

    if not app.long or "tokens" not in app.long:
        return []
    tokens_s = median_s(app.long["tokens"][1])
    rows = []
    for path, (title, runs) in app.long.items():
        name = f"{title} (/{path})"
        errors = sum(r.status != "ok" for r in runs)
        failed = f"; {errors} errors" if errors else ""
        page_s = median_s(runs)
        if path != "tokens":
            rows.append(Row(
                "2 App", f"{LONG_TOKENS}-token pair, warm rerun vs /tokens, median of "
                f"{len(runs)}: {name}",
                f"{page_s / tokens_s:.2f}x ({fmt_s(page_s)} vs {fmt_s(tokens_s)}){failed}",
                f"≤ {LONG_GOAL:.0f}x /tokens", page_s / tokens_s <= LONG_GOAL and not errors))
        else:
            rows.append(Row("2 App", f"{LONG_TOKENS}-token pair, warm rerun, median of "
                            f"{len(runs)}: {name} (the reference)", fmt_s(page_s) + failed))
        sizes = [r.ws_bytes for r in runs] or [0]
        rows.append(Row(
            "2 App", f"{LONG_TOKENS}-token pair, websocket bytes server -> browser per rerun: "
            f"{name}", f"median {fmt_bytes(float(np.median(sizes)))}, max "
            f"{fmt_bytes(max(sizes))}", f"≤ {fmt_bytes(WS_GOAL)}", max(sizes) <= WS_GOAL))
    return rows


def _pair_rows(pair: dict | None) -> list[Row]:
    measure = "/stages vs /tokens warm rerun, 64-token pair"
    if pair is None:
        return [Row("2 App", measure, "n/a: a page is missing", f"≤ {PAIR_GOAL:.0f}x")]
    tokens = median_s(pair["tokens"])
    errors = sum(r.status != "ok" for runs in pair.values() for r in runs)
    rows = []
    for name, what, goal in (("stages", "as it opens (one heatmap, stage slider)", True),
                             ("stages_stacked", "every stage stacked (?st_layout=stacked)", False),
                             ("encoder", "/encoder as it opens (one layer, one step)", True),
                             ("pretraining", "/pretraining as it opens (masking)", True)):
        if name not in pair:
            continue
        stages = median_s(pair[name])
        rows.append(Row(
            "2 App", f"{measure.replace('/stages', '/' + name.split('_')[0])}, {what}, "
            f"median of {len(pair[name])}",
            f"{stages / tokens:.2f}x ({fmt_s(stages)} vs {fmt_s(tokens)})"
            + (f"; {errors} errors in the three" if errors else ""),
            f"≤ {PAIR_GOAL:.0f}x" if goal else "—",
            (stages / tokens <= PAIR_GOAL and not errors) if goal else None))
    return rows


def _positions_row(visits: dict | None) -> Row:
    measure = "/positions first visit vs warm rerun"
    if visits is None:
        return Row("2 App", measure, "n/a: the page does not exist yet")
    first, second, warm = (median_s(visits[k]) for k in ("first", "second", "warm"))
    return Row("2 App", measure,
               f"first visit {fmt_s(first)}; second visit (new tab) {fmt_s(second)}; "
               f"warm rerun {fmt_s(warm)} (median of {len(visits['warm'])}) = "
               f"{first / warm:.1f}x faster than the first visit")


def memory_rows(app: AppFigures) -> list[Row]:
    rows = [Row("3 Memory", "server RSS after visiting every page",
                fmt_bytes(app.rss_after_pages), f"≤ {fmt_bytes(RSS_GOAL)}",
                app.rss_after_pages <= RSS_GOAL)]
    counts = " / ".join(str(n) for n, _ in app.rss_series)
    values = " / ".join(fmt_bytes(rss) for _, rss in app.rss_series)
    (mid_n, mid), (last_n, last) = app.rss_series[len(app.rss_series) // 2], app.rss_series[-1]
    growth = (last - mid) / mid
    errors = f"; {app.memory_errors} errors" if app.memory_errors else ""
    rows.append(Row(
        "3 Memory", f"server RSS after {counts} distinct sentences on every page",
        f"{values} ({growth:+.1%} from {mid_n} to {last_n}){errors}",
        f"levels off (< +{LEVEL_OFF:.0%} from {mid_n} to {last_n}), ≤ {fmt_bytes(RSS_GOAL)}",
        growth < LEVEL_OFF and last <= RSS_GOAL))
    return rows


def load_rows(load: LoadFigures, rss_after: int) -> list[Row]:
    who = f"{load.users} users, {load.seconds:.0f} s, {load.think_s:g} s think time"
    p50, p95 = percentile(load.latencies, 50), percentile(load.latencies, 95)
    return [
        Row("4 Many users", f"{who}: rerun latency p50 / p95",
            f"{fmt_s(p50)} / {fmt_s(p95)} ({len(load.latencies)} reruns)",
            f"p95 ≤ {P95_GOAL:.0f} s", p95 <= P95_GOAL),
        Row("4 Many users", f"{who}: errors (exception box or {RERUN_TIMEOUT_S:.0f} s timeout)",
            f"{load.errors} ({load.exceptions} exception boxes, {load.timeouts} timeouts)"
            + "".join(f"; {n}x “{text[:80]}”" for text, n in load.details.most_common(2)),
            "0", load.errors == 0),
        Row("4 Many users", f"{load.users} users opening the app at once: first render p50 / p95",
            f"{fmt_s(percentile(load.opens, 50))} / {fmt_s(percentile(load.opens, 95))}"),
        Row("4 Many users", "server RSS after the many-users run", fmt_bytes(rss_after),
            f"≤ {fmt_bytes(RSS_GOAL)}", rss_after <= RSS_GOAL),
    ]


def class_rows(figures: dict) -> list[Row]:
    """Part 4b: a class of browserless students (bench/ws_load.py), from its summary(); 4c: the
    same through HAProxy in front of replicas (bench/replicas.py), when it names them."""
    replicas = figures.get("replicas")
    through = f", through HAProxy to {replicas} replicas on this machine" if replicas else ""
    who = (f"{figures['users']} students (websocket, no browser){through}, "
           f"{figures['seconds']:.0f} s")
    p95 = figures["rerun_p95_s"] or float("nan")
    rows = [
        Row("4 Many users", f"{who}: rerun p50 / p95",
            f"{fmt_s(figures['rerun_p50_s'] or float('nan'))} / {fmt_s(p95)} "
            f"({figures['reruns']} reruns)", f"p95 ≤ {CLASS_P95_GOAL:.0f} s",
            p95 <= CLASS_P95_GOAL),
        Row("4 Many users", f"{who}: errors (exception element, timeout, closed)",
            str(figures["errors"]), "0", figures["errors"] == 0),
        Row("4 Many users", f"{figures['users']} students opening one link within "
            f"{figures['burst_window_s']:.0f} s: first render p50 / p95",
            f"{fmt_s(figures['first_render_p50_s'] or float('nan'))} / "
            f"{fmt_s(figures['first_render_p95_s'] or float('nan'))}"),
    ]
    if figures.get("rss_peak_bytes"):
        whose = "the first replica's" if replicas else "server"
        rows.append(Row("4 Many users", f"{who}: {whose} RSS start / peak / end",
                        " / ".join(fmt_bytes(figures[k]) for k in
                                   ("rss_start_bytes", "rss_peak_bytes", "rss_end_bytes")),
                        f"≤ {fmt_bytes(RSS_GOAL)}", figures["rss_peak_bytes"] <= RSS_GOAL))
    if replicas:
        ends = figures["replica_rss_end_bytes"]
        rows.append(Row("4 Many users", f"{who}: each replica's RSS as the class ended",
                        " / ".join(fmt_bytes(b) for b in ends), f"≤ {fmt_bytes(RSS_GOAL)} each",
                        max(ends) <= RSS_GOAL))
    return rows


def class_cost_rows(figures: dict) -> list[Row]:
    """Where the class's time went: each page's rerun p50 / p95 as the students saw it, and the
    processor time of each replica and of the students' own client over the class."""
    who = f"{figures['users']} students"
    rows = [Row("4 Many users", f"{who}, rerun p50 / p95 on {page}",
                f"{fmt_s(p50)} / {fmt_s(p95)}")
            for page, (p50, p95) in figures.get("page_rerun_p50_p95_s", {}).items()]
    if figures.get("replica_cpu_s"):
        rows.append(Row("4 Many users", f"{who}: processor time of each replica / the client "
                        f"over {figures['wall_s']:.0f} s",
                        " / ".join(f"{s:.1f} s" for s in figures["replica_cpu_s"])
                        + f" / {figures['client_cpu_s']:.1f} s"))
    return rows


def markdown(rows: list[Row]) -> str:
    lines = ["| part | measure | value | goal | met? |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        met = "—" if r.met is None else ("yes" if r.met else "**no**")
        cells = (r.part, r.measure, r.value, r.goal, met)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
