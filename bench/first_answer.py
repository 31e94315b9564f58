"""The README's start command to the first page's HTML: `python bench/first_answer.py [--runs 5]
[--against DIR ...] [--silent-dns]`.

bench/cold_start_bench.py starts its servers on 127.0.0.1, as the tests do, and Streamlit then
prints one URL and looks nothing up. The README's `python3 -m streamlit run app.py` listens on
every interface, and its welcome lines (a headless server's) once asked a website for the
address the internet sees, before the app was loaded (frame/welcome.py). This starts that exact
command, round by round with each copy of the app (``--against``), and times it from spawn to the
first answered /tokens; the median of each.

``--silent-dns`` (root, Linux): the runs see a name server that never answers, as on a
classroom Wi-Fi with no way out: they run under `unshare -m` with /etc/resolv.conf bind-mounted
to one naming 192.0.2.1 (an address reserved for documentation, routed nowhere).
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 60.0
SILENT_RESOLVER = "nameserver 192.0.2.1\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(folder: Path) -> float:
    """Seconds from spawning the README's command in ``folder`` to /tokens answered."""
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py",
                             "--server.port", str(port)], cwd=folder,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - started < TIMEOUT_S:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
                conn.request("GET", "/tokens")
                conn.getresponse().read()
                return time.perf_counter() - started
            except OSError:
                time.sleep(0.01)
        return float("nan")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def with_silent_dns(argv: list[str]) -> int:
    """This script again, in a mount namespace whose resolv.conf names a silent server."""
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as conf:
        conf.write(SILENT_RESOLVER)
    inner = " ".join([sys.executable, str(Path(__file__).resolve()),
                      *[a for a in argv if a != "--silent-dns"]])
    try:
        return subprocess.run(["unshare", "-m", "sh", "-c",
                               f"mount --bind {conf.name} /etc/resolv.conf && {inner}"],
                              check=False).returncode
    finally:
        os.unlink(conf.name)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, nargs="*", default=[])
    parser.add_argument("--silent-dns", action="store_true")
    args = parser.parse_args(argv)
    if args.silent_dns:
        return with_silent_dns(argv)
    codes = {"this": ROOT, **{f.resolve().name: f.resolve() for f in args.against}}
    seen: dict[str, list[float]] = {code: [] for code in codes}
    for i in range(args.runs):
        order = list(codes.items())
        for code, folder in order[i % len(order):] + order[:i % len(order)]:
            seen[code].append(first_answer(folder))
            print(f"run {i + 1} {code}: {seen[code][-1]:.2f} s", file=sys.stderr, flush=True)
    for code, values in seen.items():
        print(f"{code} ({codes[code]}): first /tokens answered {statistics.median(values):.2f} s "
              f"(median of {len(values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
