"""Where a class's server time goes, page by page: one student's new sentences, one at a time.

The class of 100 (bench/ws_load.py, bench/replicas.py) types new sentences on six pages at once;
its latency is the queue in front of the servers' processor time, shared on this 2-core machine
with the students' own client. This plays the same rerun (a new 12-word sentence in "Sentence A",
bench/texts.py) on each page alone, one at a time on a warmed server, and reads for each rerun:

- the server's processor time (bench.server.Server.cpu_seconds; the mean over a
  page's runs, the kernel counting in 10 ms ticks), what a class queues for;
- the client's processor time (this process: reading the websocket, decoding the protobuf
  messages), what the class's own client takes from the same two cores;
- the bytes the run sent and its wall time.

With ``--against FOLDER`` (another checkout of the app, for instance ``git archive 44a19ae``) the
two trees are measured in alternating rounds, each on its own warmed server, and the table gives
the ratio of the medians. The class of 100's mix is the six pages in equal shares
(ws_load.DEFAULT_PAGES), so the "class" row is the mean over pages of the per-page medians.

CLI: ``python3 bench/class_cost.py [--reps 15] [--rounds 2] [--against FOLDER]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # `python3 bench/class_cost.py` puts bench/, not the repo, first
    sys.path.insert(0, str(ROOT))

from bench.long_text import warm_tour  # noqa: E402
from bench.server import Server, start_server  # noqa: E402
from bench.ws_client import StreamlitSession  # noqa: E402
from bench.ws_load import DEFAULT_PAGES, INPUT_LABEL, RERUN_TIMEOUT_S, default_factory  # noqa: E402


@dataclass
class PageCost:
    server_s: list[float] = field(default_factory=list)
    client_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)

    def medians(self) -> dict[str, float]:
        return {"server_s": statistics.mean(self.server_s),
                "client_s": statistics.median(self.client_s),
                "wall_s": statistics.median(self.wall_s),
                "bytes": statistics.median(self.bytes),
                "messages": statistics.median(self.messages)}


async def measure_page(server: Server, page: str, reps: int, factory, into: PageCost) -> None:
    """``reps`` new sentences typed on ``page``, each timed alone (the server otherwise idle)."""
    first = factory.sentence(12)
    async with StreamlitSession(server.url, path=page, query=urlencode({"a": first.text}),
                                timeout_s=RERUN_TIMEOUT_S) as session:
        # The kernel counts a process's time in ticks of 10 ms, as long as a run: the server's
        # time is read across all the page's runs and shared out (its after-run work included).
        await asyncio.sleep(0.5)
        server_start = server.cpu_seconds()
        for _ in range(reps):
            sentence = factory.sentence(12)
            await asyncio.sleep(0.3)   # the server's own after-run work (its cache) settles
            client0, wall0 = time.process_time(), time.perf_counter()
            result = await session.rerun(widget_states={INPUT_LABEL: sentence.text},
                                         expect=sentence.marker)
            wall = time.perf_counter() - wall0
            client = time.process_time() - client0
            into.client_s.append(client)
            into.wall_s.append(wall)
            into.bytes.append(result.bytes_received)
            into.messages.append(result.messages)
            if result.exception:
                raise RuntimeError(f"/{page}: the run failed ({result.exceptions[0]})")
        await asyncio.sleep(0.5)   # the last run's messages leave the server's loop
        into.server_s.append((server.cpu_seconds() - server_start) / reps)


async def measure_pages(server: Server, pages: list[str], reps: int, factory,
                        costs: dict[str, PageCost], idle: int) -> None:
    """Each page's runs, with ``idle`` other sessions open on the server (a class's students
    between two sentences: each has typed one on its page, in the class's share of pages)."""
    sessions = []
    try:
        for i in range(idle):
            sentence = factory.sentence(12)
            session = StreamlitSession(server.url, path=pages[i % len(pages)],
                                       query=urlencode({"a": sentence.text}),
                                       timeout_s=RERUN_TIMEOUT_S)
            await session.open()
            sessions.append(session)
        for page in pages:
            await measure_page(server, page, reps, factory, costs.setdefault(page, PageCost()))
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


def measure_tree(folder: Path, pages: list[str], reps: int, factory,
                 costs: dict[str, PageCost], idle: int = 0) -> None:
    server = start_server("app.py", folder=folder)
    try:
        asyncio.run(warm_tour(server.url))
        asyncio.run(measure_pages(server, pages, reps, factory, costs, idle))
    finally:
        server.stop()


def rows(costs: dict[str, PageCost]) -> list:
    """bench/run.py's rows: each page's processor time per new sentence, then the class's mix."""
    from bench.report import Row

    found = []
    for page, cost in costs.items():
        f = cost.medians()
        found.append(Row("4 Many users", f"a new sentence on /{page}, alone on a warm server: "
                         "server / client processor time, bytes sent",
                         f"{f['server_s'] * 1000:.1f} ms / {f['client_s'] * 1000:.1f} ms / "
                         f"{f['bytes'] / 1000:.1f} kB"))
    mix = statistics.mean(c.medians()["server_s"] for c in costs.values())
    found.append(Row("4 Many users", "the class's mix (its pages in equal shares): server "
                     "processor time per new sentence", f"{mix * 1000:.1f} ms"))
    return found


def measure(pages: list[str], reps: int, factory, idle: int = 0) -> dict[str, PageCost]:
    """Each page's costs on a fresh warmed server of this tree (bench/run.py's part)."""
    costs: dict[str, PageCost] = {}
    measure_tree(ROOT, [p.strip("/") for p in pages], reps, factory, costs, idle)
    return costs


def table(trees: dict[str, dict[str, PageCost]], pages: list[str]) -> str:
    names = list(trees)
    head = ["page"]
    for name in names:
        head += [f"server ms ({name})", f"client ms ({name})", f"kB sent ({name})",
                 f"messages ({name})"]
    if len(names) == 2:
        head += ["server ratio", "client ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sums: dict[str, dict[str, float]] = {
        n: {"server_s": 0.0, "client_s": 0.0, "bytes": 0.0, "messages": 0.0} for n in names}

    def row(label: str, figures: dict[str, dict[str, float]]) -> str:
        cells = [label]
        for name in names:
            f = figures[name]
            cells += [f"{f['server_s'] * 1000:.1f}", f"{f['client_s'] * 1000:.1f}",
                      f"{f['bytes'] / 1000:.1f}", f"{f['messages']:.0f}"]
        if len(names) == 2:
            a, b = figures[names[0]], figures[names[1]]
            cells += [f"{a['server_s'] / b['server_s']:.2f}x",
                      f"{a['client_s'] / b['client_s']:.2f}x"]
        return "| " + " | ".join(cells) + " |"

    for page in pages:
        figures = {n: trees[n][page].medians() for n in names}
        for n in names:
            for key in sums[n]:
                sums[n][key] += figures[n][key] / len(pages)
        lines.append(row("/" + page, figures))
    lines.append(row("class mix (mean of the pages)", sums))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15, help="new sentences per page and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--against", type=Path, help="another checkout of the app")
    parser.add_argument("--pages", nargs="+", default=list(DEFAULT_PAGES),
                        help="URL paths (the class's six by default; '' is Home)")
    parser.add_argument("--idle", type=int, default=0,
                        help="other sessions kept open meanwhile (50: one replica's half of "
                             "a class of 100)")
    args = parser.parse_args(argv)
    factory = default_factory()
    pages = list(args.pages)
    trees: dict[str, tuple[Path, dict[str, PageCost]]] = {"this tree": (ROOT, {})}
    if args.against:
        trees["before"] = (args.against.resolve(), {})
    for round_ in range(args.rounds):
        order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
        for name, (folder, costs) in order:
            print(f"round {round_ + 1}: {name}", file=sys.stderr)
            measure_tree(folder, pages, args.reps, factory, costs, args.idle)
    load = psutil.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; medians of "
          f"{args.reps * args.rounds} reruns a page, {args.idle} other sessions open")
    print(table({name: costs for name, (_, costs) in trees.items()}, pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
