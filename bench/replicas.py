"""Part 4c: the class of browserless students through deploy/'s HAProxy in front of replicas.

One server process answers a rerun at a time for most of its work (Python's lock), so a class
of 100 students queues on it however many cores the machine has; deploy/ runs replicas behind
HAProxy with sticky sessions for that. This starts ``replicas`` app servers on this machine
(each warmed by a tour of every page, as the one-server class's server was by the earlier
parts), HAProxy with deploy/haproxy.cfg in front of them (the same file compose.yaml and the
proxy test use), and plays the same class (bench/ws_load.py) through the proxy. On a machine
with as many cores as replicas it shows what the recipe buys; on this 2-core machine the
replicas, the proxy and the students' client share the same two cores.

CLI: ``python3 bench/replicas.py [--replicas 2] [--students 100] [--seconds 60]``.
For bench/run.py: ``rows = report.class_rows(run_replica_class(...), through=...)``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # `python3 bench/replicas.py` puts bench/, not the repo, first
    sys.path.insert(0, str(ROOT))

from bench.long_text import warm_tour  # noqa: E402
from bench.server import Server, free_port, healthy, start_server  # noqa: E402
from bench.ws_load import DEFAULT_PAGES, run_ws_load, server_rss  # noqa: E402

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
CONFIG = ROOT / "deploy" / "haproxy.cfg"
HEALTHY_WITHIN_S = 60.0


def haproxy_env(backends: list[str], bind: str) -> dict[str, str]:
    """The environment deploy/haproxy.cfg reads: replica addresses (host:port) and its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACKEND_")}
    env.update({f"BACKEND_{i}": b for i, b in enumerate(backends, start=1)}, HAPROXY_BIND=bind)
    return env


def start_proxy(backends: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    """HAProxy with deploy/haproxy.cfg on a free loopback port, once it answers healthy."""
    port = free_port()
    with open(log, "w") as out:   # the child keeps its own handle
        proc = subprocess.Popen([HAPROXY, "-db", "-f", str(CONFIG)], stdout=out,
                                stderr=subprocess.STDOUT,
                                env=haproxy_env(backends, f"127.0.0.1:{port}"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HEALTHY_WITHIN_S
    while not healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"HAProxy did not answer healthy (its log: {log})")
        time.sleep(0.5)
    return proc, url


def run_replica_class(replicas: int = 2, students: int = 100, seconds: float = 60.0, *,
                      think_s: float = 1.0, pages: Sequence[str] = DEFAULT_PAGES,
                      factory=None, folder: Path = ROOT) -> dict | None:
    """The class through the proxy; its ws_load summary, with ``replica_rss_end_bytes`` (each
    replica's RSS as the class ends), ``replica_cpu_s`` (each replica's processor time during
    the class), ``client_cpu_s`` (this process's: the students' client), and ``replicas``.
    ``folder``: the app's checkout. None where HAProxy is not installed."""
    if not os.path.exists(HAPROXY):
        return None
    with replica_cluster(replicas, folder=folder) as (servers, url):
        cpu0, client0 = [s.cpu_seconds() for s in servers], time.process_time()
        figures = run_ws_load(url, users=students, seconds=seconds, think_s=think_s,
                              pages=list(pages), pid=servers[0].proc.pid, factory=factory)
        summary = figures.summary()
        summary["replicas"] = replicas
        summary["replica_cpu_s"] = [s.cpu_seconds() - c
                                    for s, c in zip(servers, cpu0, strict=True)]
        summary["client_cpu_s"] = time.process_time() - client0
        summary["replica_rss_end_bytes"] = [server_rss(s.proc.pid) for s in servers]
        return summary



@contextmanager
def replica_cluster(replicas: int, env: dict[str, str] | None = None, folder: Path = ROOT,
                    ) -> Iterator[tuple[list[Server], str]]:
    """``replicas`` app servers (``env`` set for each), each warmed by a tour of every page,
    and HAProxy with deploy/haproxy.cfg in front of them: yields the servers and the proxy's
    URL; stops them all on leaving."""
    servers: list[Server] = []
    proxy = None
    try:
        servers = [start_server("app.py", env=env, folder=folder) for _ in range(replicas)]
        for server in servers:
            asyncio.run(warm_tour(server.url))
        proxy, url = start_proxy([urlsplit(s.url).netloc for s in servers],
                                 servers[0].log.with_name(f"haproxy-{servers[0].log.stem}.log"))
        yield servers, url
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=15)
        for server in servers:
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--against", type=Path,
                        help="another checkout of the app, played in alternating rounds")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    from bench import report

    trees = [("this tree", ROOT)] + ([("before", args.against.resolve())] if args.against else [])
    for round_ in range(args.rounds):
        for name, folder in (trees if round_ % 2 == 0 else trees[::-1]):
            summary = run_replica_class(args.replicas, args.students, args.seconds,
                                        folder=folder)
            if summary is None:
                print("HAProxy is not installed (apt-get install haproxy)")
                return 1
            print(f"### round {round_ + 1}, {name} (load average "
                  f"{psutil.getloadavg()[0]:.1f})", flush=True)
            print(report.markdown(report.class_rows(summary) + report.class_cost_rows(summary)),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
