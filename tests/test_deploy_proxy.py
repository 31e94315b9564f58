"""deploy/haproxy.cfg in front of two replicas of the app, driven by bench/ws_client.py.

The same file a deployment uses, with the replicas' and the proxy's addresses given through the
environment variables it expands; the replicas run with deploy/Dockerfile's ENV and with
deploy/streamlit-public.toml as their user's Streamlit config, as in the image. Checked: those
settings are in force (model allowlist, no model folders, agent API off, no embedding hosts);
each session keeps the replica its SERVERID cookie names (and the replicas' own session counts
agree); /_stcore/metrics is refused through the proxy; framing is refused on every answer; a
websocket with a foreign Host header is refused by the replicas (server.allowedHosts); and when
one replica dies its sessions fail at once with a clear error while the other replica's sessions
go on and new sessions land on the survivor; and one class poll whose teacher and students are
spread over both replicas has one tally, kept in the Redis they share (as compose.yaml runs it),
started with the deployment's teacher passphrase (a visitor without it starts none); and the
replicas get the address the proxy saw in X-Forwarded-For, never one the visitor claims.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import pytest

from bench.replicas import CONFIG, HAPROXY, haproxy_env, start_proxy
from bench.server import healthy, start_redis
from bench.ws_client import SessionClosed, StreamlitSession, http_get
from serving.classpoll import REDIS_ENV
from tests import class_sessions
from tests.conftest import ARTIFACTS, ROOT, free_port, run_async, start_server, stop_server

REDIS_SERVER = shutil.which("redis-server")   # the class poll's shared store (optional here)
DEPLOY = ROOT / "deploy"
# The image's own settings are taken from deploy/Dockerfile, except where it runs: the address
# and port (start_server's flags win over them anyway) and the image's paths.
NOT_FROM_IMAGE = {"STREAMLIT_SERVER_ADDRESS", "STREAMLIT_SERVER_PORT", "HF_HOME"}
# What compose.yaml / k8s set per deployment: the names students type, the teacher passphrase,
# and the proxy's X-Forwarded-For trusted.
TEACHER_PASSPHRASE = "3fa9c1-07be44-9d2e10"
DEPLOYMENT_ENV = {"STREAMLIT_SERVER_ALLOWED_HOSTS": "127.0.0.1 localhost",
                  "BERT_EXPLORER_TEACHER_PASSPHRASE": TEACHER_PASSPHRASE,
                  "FORWARDED_ALLOW_IPS": "*"}
WAIT_S = 60.0          # replicas and proxy healthy
CLOSED_WITHIN_S = 10.0  # a dead replica's session fails within this

pytestmark = pytest.mark.skipif(not os.path.exists(HAPROXY),
                                reason="HAProxy is not installed (.ci/run installs it)")


def image_env() -> dict[str, str]:
    """The ENV instructions of deploy/Dockerfile, as the image's processes see them."""
    logical = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    env: dict[str, str] = {}
    for line in logical.splitlines():
        if line.startswith("ENV "):
            for token in shlex.split(line[4:]):
                key, _, value = token.partition("=")
                env[key] = value
    return {k: v for k, v in env.items() if k not in NOT_FROM_IMAGE}


def replica_env(home, poll_store: str | None = None) -> dict[str, str]:
    """A replica as the image runs it: its ENV, its user's global Streamlit config, and the
    class poll's shared store as compose.yaml gives it."""
    (home / ".streamlit").mkdir(parents=True, exist_ok=True)
    shutil.copy(DEPLOY / "streamlit-public.toml", home / ".streamlit" / "config.toml")
    store = {REDIS_ENV: poll_store} if poll_store else {}
    return {**image_env(), **DEPLOYMENT_ENV, **store, "HOME": str(home),
            "HF_HOME": str(home / ".cache" / "huggingface")}


def start_poll_store(folder) -> tuple[subprocess.Popen | None, str | None]:
    """A Redis with a password and no persistence, as compose.yaml's poll-store runs."""
    if REDIS_SERVER is None:
        return None, None
    return start_redis(folder, password="test-" + os.urandom(8).hex())


@dataclass
class Cluster:
    proxy: str                  # http://127.0.0.1:port of HAProxy
    replicas: dict[str, str]    # SERVERID cookie value -> replica base URL
    procs: dict[str, subprocess.Popen]
    haproxy: subprocess.Popen
    poll_store: str | None      # the Redis URL both replicas share, if redis-server is here


def run(coro, timeout_s: float = 120.0):
    return run_async(asyncio.wait_for(coro, timeout_s))


def wait_for(check, timeout_s: float, what: str, pause_s: float = 0.25):
    """Call ``check`` until it returns something truthy, at most ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (OSError, TimeoutError, SessionClosed) as exc:
            last = exc
        time.sleep(pause_s)
    raise AssertionError(f"{what} not within {timeout_s:.0f} s (last: {last!r})")


async def active_sessions(replica: str) -> int:
    """The replica's own count of connected sessions (its metrics, read directly)."""
    body = (await http_get(f"{replica}/_stcore/metrics", timeout_s=5)).body.decode()
    match = re.search(r"^active_sessions (\d+)", body, re.MULTILINE)
    assert match, body[:500]
    return int(match.group(1))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    procs: list[subprocess.Popen] = []
    haproxy: subprocess.Popen | None = None
    store, store_url = start_poll_store(tmp_path_factory.mktemp("poll-store"))
    try:
        urls = []
        for i in range(2):
            home = tmp_path_factory.mktemp(f"replica{i + 1}-home")
            proc, url = start_server(env=replica_env(home, store_url))
            procs.append(proc)
            urls.append(url)
        for url in urls:
            wait_for(lambda u=url: healthy(u), WAIT_S, f"replica {url} healthy")
        haproxy, proxy = start_proxy([urlsplit(u).netloc for u in urls],
                                     ARTIFACTS / f"haproxy-{urlsplit(urls[0]).port}.log")
        yield Cluster(proxy, {"app1": urls[0], "app2": urls[1]},
                      {"app1": procs[0], "app2": procs[1]}, haproxy, store_url)
    finally:
        if haproxy is not None:
            haproxy.terminate()
            try:
                haproxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                haproxy.kill()
                haproxy.wait()
        for proc in procs:
            stop_server(proc)
        if store is not None:
            store.terminate()
            store.wait(timeout=10)


async def open_session(proxy: str, text: str, jar: dict[str, str] | None = None,
                       ) -> tuple[StreamlitSession, dict[str, str]]:
    jar = {} if jar is None else jar
    session = StreamlitSession(proxy, path="tokens", query="a=" + text.replace(" ", "+"),
                               cookies=jar, timeout_s=30)
    await session.open()
    return session, jar


def test_the_config_is_valid_for_both_address_modes():
    for extra in ({}, {"DNS_RESOLVER": "127.0.0.11:53"}):
        env = {**haproxy_env(["127.0.0.1:1", "127.0.0.1:2"], "127.0.0.1:1"), **extra}
        check = subprocess.run([HAPROXY, "-c", "-f", str(CONFIG)], env=env, check=False,
                               capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr


class _SlowHealth(http.server.BaseHTTPRequestHandler):
    """A replica busy with a class: every answer comes, its health answer after 3 s."""

    def do_GET(self) -> None:
        if self.path.startswith("/_stcore/health"):
            time.sleep(3.0)
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:   # quiet
        pass


def test_a_busy_replica_is_not_taken_out():
    """Under a full class a replica's health answer took over 2 s; with the check's timeout left
    at its 2 s interval HAProxy marked the replica down and shut all 50 of its sessions. With
    ``timeout check`` a slow answer still counts as healthy: 10 s later the replica serves."""
    replica = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SlowHealth)
    threading.Thread(target=replica.serve_forever, daemon=True).start()
    port = free_port()
    env = haproxy_env([f"127.0.0.1:{replica.server_address[1]}"], f"127.0.0.1:{port}")
    proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(CONFIG)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(10.0)   # five checks, each answered after 3 s
        response = run(http_get(f"http://127.0.0.1:{port}/tokens", timeout_s=10), 15)
        assert response.status == 200, "the busy replica was taken out of the proxy"
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        replica.shutdown()


class _EchoForwardedFor(http.server.BaseHTTPRequestHandler):
    """A replica that answers with the X-Forwarded-For lines it was sent."""

    def do_GET(self) -> None:
        body = json.dumps(self.headers.get_all("X-Forwarded-For") or []).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:   # quiet
        pass


def test_replicas_get_the_visitors_address_and_never_one_it_claims():
    """The class poll bounds the classes one address starts, and the replicas take the address
    from the proxy's X-Forwarded-For (FORWARDED_ALLOW_IPS). A visitor's own X-Forwarded-For,
    which a script would change on every request, never reaches them: only the address the
    proxy saw (this machine, here)."""
    replica = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoForwardedFor)
    threading.Thread(target=replica.serve_forever, daemon=True).start()
    proxy, url = start_proxy([f"127.0.0.1:{replica.server_address[1]}"],
                             ARTIFACTS / "haproxy-forwarded-for.log")
    try:
        for claimed in (None, "203.0.113.1", "203.0.113.1, 10.0.0.1"):
            headers = {"X-Forwarded-For": claimed} if claimed else {}
            response = run(http_get(f"{url}/lesson", headers=headers, timeout_s=10), 15)
            assert json.loads(response.body) == ["127.0.0.1"], (claimed, response.body)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        replica.shutdown()


def test_framing_is_refused_on_every_answer(cluster):
    for path in ("/", "/tokens?a=Hello", "/_stcore/health"):
        response = run(http_get(cluster.proxy + path))
        assert response.status == 200, path
        assert response.header("X-Frame-Options") == "DENY", path
        assert response.header("Content-Security-Policy") == "frame-ancestors 'none'", path


def test_metrics_are_refused_through_the_proxy_in_every_spelling(cluster):
    replica = cluster.replicas["app1"]
    # The replica serves them (an operator reads them there, on the private side) ...
    assert run(http_get(f"{replica}/_stcore/metrics")).status == 200
    assert run(http_get(f"{replica}/%5Fstcore/metrics")).status == 200  # Starlette decodes it
    # ... and the public side never does.
    for path in ("/_stcore/metrics", "/_stcore/metrics?format=json", "/%5Fstcore/metrics",
                 "/_stcore/%6Detrics", "//_stcore//metrics", "/_STCORE/METRICS"):
        response = run(http_get(cluster.proxy + path))
        assert response.status == 403, (path, response.status)
        assert b"active_sessions" not in response.body


async def _upgrade_status(base: str, host: str) -> str:
    """The status line a websocket upgrade to /_stcore/stream gets with this Host header."""
    parts = urlsplit(base)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write((
            "GET /_stcore/stream HTTP/1.1\r\n"
            f"Host: {host}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Protocol: streamlit, PLACEHOLDER_AUTH_TOKEN\r\n\r\n").encode())
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
    finally:
        writer.close()


def test_a_websocket_for_a_foreign_host_is_refused(cluster):
    """server.allowedHosts (DNS rebinding): a page served under another name gets no session."""
    netloc = urlsplit(cluster.proxy).netloc
    assert run(_upgrade_status(cluster.proxy, netloc)).split()[1] == "101"
    assert run(_upgrade_status(cluster.proxy, "attacker.example")).split()[1] == "403"


def test_the_image_settings_are_in_force_behind_the_proxy(cluster):
    """deploy/Dockerfile's ENV and deploy/streamlit-public.toml, as the replicas run them."""
    env = image_env()
    assert env["BERT_EXPLORER_ALLOWED_MODELS"] == "all-MiniLM-L6-v2"
    assert env["BERT_EXPLORER_MODEL_DIRS"] == ""
    host_config = json.loads(run(http_get(cluster.proxy + "/_stcore/host-config")).body)
    assert host_config["allowedOrigins"] == []           # client.allowedOrigins
    agent = run(http_get(cluster.proxy + "/_stcore/agent/openapi.json")).body.decode()
    assert "switched off" in agent                       # server.enableAgentApi

    async def main():
        firsts = []
        for model in ("bert-base-uncased", "/app", str(ROOT)):
            async with StreamlitSession(cluster.proxy, path="tokens",
                                        query=urlencode({"a": "Hello world", "model": model})
                                        ) as s:
                firsts.append((model, s.first))
        return firsts

    for model, first in run(main()):
        assert not first.exception, first.exceptions
        # Refused with a message that names it; the page goes on with the embedded model.
        assert any(model in t for t in first.texts), (model, first.texts[:6])
        assert "hello" in first.texts


def test_sessions_keep_their_replica(cluster):
    texts = ["green apple", "small river", "open door", "quiet lake", "red house", "cold tea"]
    for url in cluster.replicas.values():   # earlier tests' websockets are gone
        wait_for(lambda u=url: run(active_sessions(u)) == 0, 15, f"no session left on {url}")

    async def main():
        sessions = [await open_session(cluster.proxy, t) for t in texts]
        try:
            cookies = [dict(jar) for _, jar in sessions]
            counts = {name: await active_sessions(url) for name, url in cluster.replicas.items()}
            results = []
            for round_ in range(3):   # every session reruns, interleaved with the others
                for i, (session, _) in enumerate(sessions):
                    word = ["lemon", "forest", "window"][round_]
                    results.append((i, word, await session.rerun(
                        widget_states={"Sentence A": f"{texts[i]} {word}"}, expect=word)))
            return cookies, counts, results, [dict(jar) for _, jar in sessions]
        finally:
            await asyncio.gather(*(s.close() for s, _ in sessions))

    cookies, counts, results, cookies_after = run(main())
    replicas = [c["SERVERID"] for c in cookies]
    assert set(replicas) == {"app1", "app2"}, replicas          # the class is spread
    assert cookies_after == cookies                              # and nobody moved
    # Each replica holds exactly the sessions whose cookie names it.
    assert counts == {name: replicas.count(name) for name in ("app1", "app2")}, counts
    for i, word, result in results:
        assert not result.exception, result.exceptions
        assert result.found and word in result.texts, (texts[i], word)


def test_one_class_spread_over_both_replicas_has_one_tally(cluster):
    """The teacher's tab on one replica (started with the deployment's teacher passphrase),
    students' tabs on both (the proxy places each new tab by its connections, not by its
    class): every answer is in the teacher's tally."""
    if cluster.poll_store is None:
        pytest.skip("redis-server is not installed (.ci/run installs it)")

    async def main():
        visitor = await class_sessions.presenter(cluster.proxy, cookies={})
        try:
            refused = [await class_sessions.try_start(visitor, typed)
                       for typed in (None, "let me in")]
        finally:
            await visitor.close()
        assert [code for code, _ in refused] == [None, None]
        assert any("teacher passphrase" in t for t in refused[1][1].texts)
        teacher, code = await class_sessions.start_class(cluster.proxy, cookies={},
                                                         passphrase=TEACHER_PASSPHRASE)
        students: list[StreamlitSession] = []
        try:
            for _ in range(10):   # leastconn spreads them; stop once each replica has three
                students.append(await class_sessions.student(cluster.proxy, code, cookies={}))
                on = [s.cookies["SERVERID"] for s in students]
                if on.count("app1") >= 3 and on.count("app2") >= 3:
                    break
            picks = [i % 3 for i in range(len(students))]
            await asyncio.gather(*(class_sessions.answer(s, c)
                                   for s, c in zip(students, picks, strict=True)))
            count = class_sessions.answered(await teacher.rerun())
            shown = await class_sessions.press(teacher, "Reveal the answer")
            # A student on the other replica than the teacher sees the reveal too.
            other = next(s for s in students
                         if s.cookies["SERVERID"] != teacher.cookies["SERVERID"])
            late = await other.rerun()
            return (teacher.cookies["SERVERID"], [s.cookies["SERVERID"] for s in students],
                    picks, count, class_sessions.revealed_counts(shown), late)
        finally:
            await asyncio.gather(teacher.close(), *(s.close() for s in students))

    teacher_on, students_on, picks, count, counts, late = run(main(), timeout_s=180)
    assert set(students_on) == {"app1", "app2"}, students_on       # the class is spread
    assert count == len(students_on)
    assert counts == tuple(picks.count(i) for i in range(3)), (counts, picks)
    assert any("-100 is the label" in t for t in late.texts), late.texts[:20]
    assert teacher_on in ("app1", "app2")


def test_when_a_replica_dies_its_sessions_fail_fast_and_the_rest_go_on(cluster):
    """Last in this module: it kills replica app1."""
    async def main():
        sessions = []
        for i in range(8):   # leastconn spreads them; stop once each replica has two
            sessions.append(await open_session(cluster.proxy, f"green apple {i}"))
            on = [jar["SERVERID"] for _, jar in sessions]
            if on.count("app1") >= 2 and on.count("app2") >= 2:
                break
        on = [jar["SERVERID"] for _, jar in sessions]
        assert on.count("app1") >= 1 and on.count("app2") >= 1, on

        cluster.procs["app1"].kill()             # a crash, not a clean shutdown
        cluster.procs["app1"].wait(timeout=10)

        outcomes = []
        for session, jar in sessions:
            start = time.perf_counter()
            try:
                result = await session.rerun(widget_states={"Sentence A": "after the crash"},
                                             expect="crash")
                outcomes.append((jar["SERVERID"], "ok", result, time.perf_counter() - start))
            except SessionClosed as exc:
                outcomes.append((jar["SERVERID"], "closed", exc, time.perf_counter() - start))
        # A student whose tab reloads keeps the dead replica's cookie; one who just arrives
        # has none. Both land on the survivor.
        dead_jar = dict(next(jar for _, jar in sessions if jar["SERVERID"] == "app1"))
        reloaded, reloaded_jar = await open_session(cluster.proxy, "reloaded tab", dead_jar)
        newcomers = [await open_session(cluster.proxy, f"new student {i}") for i in range(3)]
        firsts = [reloaded.first, *(s.first for s, _ in newcomers)]
        landed = [reloaded_jar["SERVERID"], *(jar["SERVERID"] for _, jar in newcomers)]
        await asyncio.gather(*(s.close() for s, _ in [*sessions, *newcomers]), reloaded.close())
        return outcomes, firsts, landed

    outcomes, firsts, landed = run(main(), timeout_s=180)
    for replica, status, detail, seconds in outcomes:
        if replica == "app1":
            assert status == "closed", (replica, detail)
            assert "connection closed" in str(detail)
            assert seconds < CLOSED_WITHIN_S, seconds
        else:
            assert status == "ok", (replica, detail)
            assert not detail.exception and detail.found, detail.exceptions
    assert landed == ["app2"] * 4, landed
    for first in firsts:
        assert first is not None and not first.exception, first and first.exceptions
