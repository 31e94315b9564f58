"""A model hub of our own on 127.0.0.1, for tests that download with no internet.

It answers what huggingface_hub asks (DESIGN.md "Models"): ``HEAD/GET /<repo>/resolve/<rev>/<file>``
with ``X-Repo-Commit``, ``ETag`` and ``Content-Length``, a ``Range: bytes=N-`` request with 206 and
the rest of the file, 404 with ``X-Error-Code: EntryNotFound`` for a missing file and
``RepoNotFound`` for a missing repository, ``GET /api/models/<repo>[/revision/<rev>]`` with
``siblings`` (and their sizes) and ``GET /api/models/<repo>/tree/<rev>``.

Two ways to be a bad network: ``rate`` (bytes per second for every file body) and
``stall_after`` (a body stops after that many bytes and the connection stays open, silent, until
the hub is stopped). Both can be changed while it runs. ``sizes=False`` is a mirror whose listing
gives no file sizes (a download of unknown total). ``gets`` counts the body requests per
(repo, file); ``ranges`` records the Range headers asked for.

Run as a script (``python3 -m tests.fake_hub FOLDER REPO [--rate B/s]``) it serves one folder.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import http.server
import json
import re
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "c0ffee" + "0" * 34
_RESOLVE = re.compile(r"^/(?P<repo>.+?)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_TREE = re.compile(r"^/api/models/(?P<repo>.+?)/tree/(?P<rev>[^/]+)/?$")
_INFO = re.compile(r"^/api/models/(?P<repo>.+?)(?:/revision/(?P<rev>[^/]+))?/?$")
_PIECE = 16 * 1024


class FakeHub:
    """``repos`` maps a repository name (``bert-base-chinese``, ``org/name``) to a folder whose
    files it serves. Use as a context manager, or ``start()`` / ``stop()``."""

    def __init__(self, repos: dict[str, Path], rate: float | None = None,
                 stall_after: int | None = None, sizes: bool = True) -> None:
        self.repos = {name: Path(folder) for name, folder in repos.items()}
        self.rate = rate
        self.stall_after = stall_after
        self.sizes = sizes
        self.gets: collections.Counter[tuple[str, str]] = collections.Counter()
        self.ranges: list[str] = []
        self.stopping = threading.Event()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="fake hub")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()   # stalled bodies wake up and end
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def files(self, repo: str) -> dict[str, Path]:
        folder = self.repos.get(repo)
        if folder is None:
            return {}
        # Files in folders too (a sentence-transformers Pooling folder), by their path.
        return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
                if p.is_file()}


def _etag(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _handler(hub: FakeHub) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
            self._answer(body=False)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(body=True)

        def _json(self, data: object, status: int = 200, error: str | None = None) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            if error:
                self.send_header("X-Error-Code", error)
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(raw)

        def _answer(self, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            if path.rstrip("/") == "/api/models":
                return self._json([])
            if (match := _TREE.match(path)) or (match := _INFO.match(path)):
                files = hub.files(match["repo"])
                if not files:
                    return self._json({"error": "Repository not found"}, 404, "RepoNotFound")
                if _TREE.match(path):
                    return self._json([{"type": "file", "path": n, "size": p.stat().st_size,
                                        "oid": _etag(p)} for n, p in files.items()])
                return self._json({
                    "id": match["repo"], "modelId": match["repo"], "sha": COMMIT,
                    "siblings": [{"rfilename": n, **({"size": p.stat().st_size} if hub.sizes
                                                       else {})}
                                 for n, p in files.items()]})
            match = _RESOLVE.match(path)
            if not match:
                return self._json({"error": "not found"}, 404)
            files = hub.files(match["repo"])
            if not files:
                return self._json({"error": "Repository not found"}, 404, "RepoNotFound")
            file = files.get(match["file"])
            if file is None:
                return self._json({"error": "Entry not found"}, 404, "EntryNotFound")
            self._send_file(match["repo"], file, body)

        def _send_file(self, repo: str, file: Path, body: bool) -> None:
            whole = file.read_bytes()
            start, data = 0, whole
            asked = self.headers.get("Range")
            if asked and body:
                hub.ranges.append(asked)
                first, last = re.match(r"bytes=(\d+)-(\d*)", asked).groups()
                start = int(first)
                data = whole[:int(last) + 1] if last else whole   # a header read asks an end
            self.send_response(206 if asked and body else 200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{_etag(file)}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(data) - start))
            if asked and body:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(whole)}")
            self.end_headers()
            if not body:
                return
            hub.gets[(repo, file.name)] += 1
            sent = start
            began = time.monotonic()
            while sent < len(data):
                if hub.stall_after is not None and sent >= hub.stall_after:
                    hub.stopping.wait()   # silent, connection open, until the hub stops
                    return
                end = min(len(data), sent + _PIECE)
                if hub.stall_after is not None and sent < hub.stall_after:
                    end = min(end, hub.stall_after)
                try:
                    self.wfile.write(data[sent:end])
                    self.wfile.flush()
                except OSError:
                    return
                sent = end
                if hub.rate:
                    ahead = (sent - start) / hub.rate - (time.monotonic() - began)
                    if ahead > 0 and hub.stopping.wait(ahead):
                        return

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("repo")
    parser.add_argument("--rate", type=float, default=None, help="bytes per second")
    args = parser.parse_args()
    with FakeHub({args.repo: args.folder}, rate=args.rate) as hub:
        print(hub.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
