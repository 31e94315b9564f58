"""Starting and stopping a `streamlit run` server for the benchmark, and reading its memory."""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psutil

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"   # server logs; git-ignored
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    """Whether the server or proxy at ``url`` answers its health check (False if it does not).

    Plain blocking HTTP, not asyncio: the test suite calls this while sync Playwright keeps an
    event loop running in the main thread, where asyncio.run refuses to start. http.client
    reads no proxy from the environment, so this stays on loopback.
    """
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=2)
    try:
        conn.request("GET", "/_stcore/health")
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    started: float        # time.perf_counter() just before the process was spawned
    listening_s: float    # seconds until the port accepted a connection
    log: Path

    def rss_bytes(self) -> int:
        """Resident memory of the server and every process it started."""
        root = psutil.Process(self.proc.pid)
        procs = [root, *root.children(recursive=True)]
        total = 0
        for proc in procs:
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def cpu_seconds(self) -> float:
        """Processor seconds (user + system) the server and every process it started have used."""
        root = psutil.Process(self.proc.pid)
        total = 0.0
        for proc in (root, *root.children(recursive=True)):
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_server(script: str, timeout_s: float = 90.0,
                 env: dict[str, str] | None = None, folder: Path = ROOT) -> Server:
    """Spawn ``streamlit run script`` on a free loopback port; return once the port answers.
    ``env``: variables set for this server on top of this process's environment; ``folder``:
    the app's folder (another checkout of it, for a run against the code before)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = RESULTS / f"server-{Path(script).stem}-{port}.log"
    started = time.perf_counter()
    with open(log, "w") as out:  # the child keeps its own handle
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
        )
    deadline = started + timeout_s
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}; see {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            listening = time.perf_counter() - started
            return Server(proc, f"http://127.0.0.1:{port}", started, listening, log)
        except OSError:
            time.sleep(0.05)
    proc.terminate()
    raise RuntimeError(f"streamlit did not listen within {timeout_s:.0f} s; see {log}")


def start_redis(folder: Path, password: str | None = None,
                timeout_s: float = 10.0) -> tuple[subprocess.Popen, str]:
    """A throwaway Redis on a free loopback port with no persistence, as deploy/compose.yaml's
    poll store runs (``password``: its requirepass); returns once it answers a ping, with its
    URL. The bench's classes and the tests' replicas share their class polls through it."""
    import redis

    port = free_port()
    auth = ["--requirepass", password] if password else []
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", *auth,
                             "--save", "", "--appendonly", "no"], cwd=folder,
                            stdout=subprocess.DEVNULL)
    client = redis.Redis(port=port, password=password)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    secret = f":{password}@" if password else ""
    return proc, f"redis://{secret}127.0.0.1:{port}/0"
