"""A browserless Streamlit client: one session over Streamlit's own websocket protocol.

It does what the browser frontend of Streamlit 1.67 does, read from its bundle
(``streamlit/static/static/js/index.*.js``) and from the server
(``streamlit/web/server/starlette/starlette_websocket.py``, ``streamlit/runtime/app_session.py``):

1. HTTP ``GET`` of the page itself, of ``/_stcore/health`` and of ``/_stcore/host-config``, the
   requests a tab makes before it opens its websocket. They matter behind a proxy: a sticky
   HAProxy or ingress answers the first of them with its affinity cookie (``SERVERID``), and the
   websocket upgrade then carries it to the same replica. The health answer also sets Streamlit's
   ``_streamlit_xsrf`` cookie.
2. A websocket to ``/_stcore/stream`` whose ``Sec-WebSocket-Protocol`` list is, as the browser
   sends it, ``["streamlit", <the _streamlit_xsrf cookie or "PLACEHOLDER_AUTH_TOKEN">]``: the
   server selects the first entry and reads the second as the XSRF token (only used to trust an
   auth cookie; this app has none). A third entry would be a session id to resume; a new tab has
   none. ``Origin`` is the page's own origin, as a browser sends it: Streamlit accepts a
   same-origin websocket and, with ``server.allowedHosts`` set, checks the ``Host`` header.
3. Nothing runs until the client asks: the browser's first message is a ``BackMsg.rerun_script``
   with the URL's query string, the page's *name* (the URL path, e.g. ``"stages"``; the page's
   script hash is not known yet) and ``context_info`` (timezone, locale, URL, embedded, colour
   scheme: what ``st.context`` reads). That run's messages are this session's first render.
4. Every later rerun sends ``rerun_script`` with the query string the server last put in the URL
   (``ForwardMsg.page_info_changed``), the current page's script hash (from
   ``ForwardMsg.navigation.page_script_hash`` in an ``st.navigation`` app, else from
   ``new_session``), the state of every widget drawn in the last run as the browser's widget
   manager holds it (the server's value when it set one, else what the caller typed, else the
   default), and the hashes of the large messages it keeps (see below). A widget bound to the
   URL (``bind="query-params"``) also rewrites the query string, as the browser does.
5. A run is over at a ``ForwardMsg.script_finished`` whose status is not
   ``FINISHED_EARLY_FOR_RERUN`` (``st.rerun``, ``st.switch_page`` and a rerun request during a run
   end a run early and start another, which sends its own ``new_session``), and only after the
   ``new_session`` of a run started by our request: a ``script_finished`` of an older run, late
   after a timeout, is not taken for ours.

Message cache: like the browser, the client keeps every ForwardMsg the server marks
``metadata.cacheable`` (large ``new_element`` deltas) and lists their hashes in
``cached_message_hashes``; the server then sends a short ``ref_hash`` instead of an element the
client already holds. Entries expire after ``new_session.config.max_cached_message_age`` finished
runs without use, as in the browser. So ``bytes_received`` is what a browser tab receives.

Texts: headings, markdown (captions too), alerts, ``st.text``, code, metrics, the cells of
``st.table`` / ``st.dataframe`` (Arrow IPC, decoded with pyarrow) and the text of ``st.html``
(the token table, image heatmaps' labels) are collected per run, so a load test can check
that the new sentence's tokens arrived. An ``Element.exception`` (an
exception box; deprecation warnings, ``is_warning``, apart) or a script compile error is an
exception.

Errors: a rerun that does not finish within its timeout raises :class:`RerunTimeout`; a websocket
closed by the server or a proxy (a replica stopped, say) raises :class:`SessionClosed` at once,
with the close code. Both are :class:`StreamlitClientError`. Everything is bounded in time.

Usage::

    async with StreamlitSession("http://127.0.0.1:8501", path="tokens",
                                query="a=Hello+world") as s:
        print(s.first.elapsed, s.first.texts)
        result = await s.rerun(query_string="a=Another+sentence")
        result = await s.rerun(widget_states={"Sentence A": "typed like a user"})
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

STREAM_PATH = "_stcore/stream"
XSRF_COOKIE = "_streamlit_xsrf"
# What the browser sends as the token when it has neither a host token nor the XSRF cookie.
PLACEHOLDER_TOKEN = "PLACEHOLDER_AUTH_TOKEN"
# server.maxMessageSize defaults to 200 MB; the browser takes any size the server sends.
MAX_MESSAGE_BYTES = 200 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30.0
_WIDGET_ELEMENTS = ("text_area", "text_input", "selectbox", "checkbox", "number_input",
                    "slider", "radio", "multiselect", "button", "toggle", "button_group",
                    "date_input", "time_input", "color_picker", "chat_input")
_OPTION_WIDGETS = ("selectbox", "radio", "multiselect", "button_group")


class StreamlitClientError(Exception):
    """A session could not be opened, was closed, or a run did not finish in time."""


class SessionClosed(StreamlitClientError):
    """The server or a proxy closed the websocket (or refused it)."""


class RerunTimeout(StreamlitClientError):
    """A script run did not finish within the timeout."""


@dataclass
class RunResult:
    """What one script run sent: timing, bytes, texts and exceptions."""

    elapsed: float = 0.0                  # seconds from the request to the run's end
    bytes_received: int = 0               # websocket payload bytes received during the run
    messages: int = 0                     # ForwardMsgs received
    runs: int = 0                         # script runs it took (more after st.rerun)
    status: str = ""                      # the final script_finished status name
    texts: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)   # "Type: message" of exception boxes
    warnings: list[str] = field(default_factory=list)     # exception elements with is_warning
    page_not_found: str | None = None     # the page name, if the server said it has no such page
    query_string: str = ""                # the query string after the run (the browser's URL)
    http_bytes: int = 0                   # first render only: bytes of the HTTP requests before
    found: bool | None = None             # whether ``expect`` arrived (None: nothing expected)

    @property
    def exception(self) -> bool:
        return bool(self.exceptions)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def header_values(self, name: str) -> list[str]:
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]


def update_cookies(jar: MutableMapping[str, str], set_cookie_values: list[str]) -> None:
    """Keep name=value of each ``Set-Cookie`` (one host, so attributes are not needed)."""
    for value in set_cookie_values:
        parsed: SimpleCookie = SimpleCookie()
        try:
            parsed.load(value)
        except Exception:  # a cookie we cannot parse is one we do not keep
            continue
        for name, morsel in parsed.items():
            jar[name] = morsel.value


def cookie_header(jar: Mapping[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in jar.items())


async def http_get(url: str, headers: Mapping[str, str] | None = None,
                   timeout_s: float = 10.0) -> HttpResponse:
    """A plain HTTP/1.1 GET (``Connection: close``), bounded by ``timeout_s``.

    Written here rather than with urllib so that it is async, sends exactly these headers, and
    never goes through a proxy taken from the environment: load tests only talk to loopback.
    """
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise ValueError(f"only http:// URLs are supported, not {url!r}")
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [f"GET {target} HTTP/1.1", f"Host: {parts.netloc}", "Connection: close",
             "Accept: */*", "User-Agent: bench-ws-client"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    async with asyncio.timeout(timeout_s):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(request)
            await writer.drain()
            raw = await reader.read(-1)
        finally:
            writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError) as exc:
        raise StreamlitClientError(f"no HTTP answer from {url}: {status_line!r}") from exc
    parsed = [tuple(h.split(":", 1)) for h in header_lines if ":" in h]
    resp_headers = [(k.strip(), v.strip()) for k, v in parsed]
    response = HttpResponse(status, resp_headers, body)
    if (response.header("transfer-encoding") or "").lower() == "chunked":
        response = HttpResponse(status, resp_headers, _dechunk(body))
    return response


def _dechunk(body: bytes) -> bytes:
    out, rest = bytearray(), body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        rest = rest[size + 2:]
    return bytes(out)


def _widget_state(widget_id: str, value: Any) -> WidgetState:
    """A WidgetState for a plain Python value, in the field the frontend uses for it."""
    if isinstance(value, WidgetState):
        state = WidgetState()
        state.CopyFrom(value)
        state.id = widget_id
        return state
    state = WidgetState(id=widget_id)
    if isinstance(value, bool):       # before int: bool is an int
        state.bool_value = value
    elif isinstance(value, int):
        state.int_value = value
    elif isinstance(value, float):
        state.double_value = value
    elif isinstance(value, str):
        state.string_value = value
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        state.string_array_value.data.extend(value)
    else:
        raise TypeError(f"no widget state for {type(value).__name__} values; pass a WidgetState")
    return state


def _url_value(value: Any) -> str | None:
    """A widget value as the browser writes it into the URL (JavaScript's String(value))."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    return None   # lists, options by index, protos: leave the URL as it is


def _set_param(query: str, key: str, value: str | None) -> str:
    """``query`` with ``key`` set to ``value`` in its place (URLSearchParams.set), or appended;
    removed for None."""
    pairs = parse_qsl(query, keep_blank_values=True)
    at = next((i for i, (k, _) in enumerate(pairs) if k == key), len(pairs))
    pairs = [(k, v) for k, v in pairs if k != key]
    if value is not None:
        pairs.insert(at, (key, value))
    return urlencode(pairs)


class _HtmlText(HTMLParser):
    """The text nodes of an HTML fragment, unescaped; style sheets left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if not self._in_style and data.strip():
            self.texts.append(data.strip())


def _html_texts(fragment: str) -> list[str]:
    """What st.html shows as text: table cells, figure labels (one entry per text node)."""
    parser = _HtmlText()
    parser.feed(fragment)
    return parser.texts


def _table_texts(arrow_bytes: bytes) -> list[str]:
    """The cells of an Arrow IPC table as strings (what st.table / st.dataframe show)."""
    if not arrow_bytes:
        return []
    try:
        import pyarrow as pa

        table = pa.ipc.open_stream(arrow_bytes).read_all()
    except Exception:  # a table we cannot read adds no text; it is no error
        return []
    cells = [str(name) for name in table.column_names]
    for column in table.columns:
        cells += [str(v) for v in column.to_pylist() if v is not None]
    return cells


@dataclass
class _CachedMsg:
    data: bytes
    run_count: int


class StreamlitSession:
    """One browser tab's session, without the browser. Use as ``async with``.

    ``url_base``: the app's address, e.g. ``http://127.0.0.1:8501`` (a ``server.baseUrlPath``
    prefix included). ``path``: the page's URL path (``""`` for the default page). ``query``: the
    URL's query string without ``?``. ``cookies``: a cookie jar (name -> value) kept across
    requests and updated from every ``Set-Cookie``; pass your own dict to share or inspect it
    (``SERVERID`` from a sticky proxy lands there). ``headers``: extra headers for every request
    and the websocket upgrade. ``timeout_s``: the hard limit for one script run,
    ``open_timeout_s`` for the HTTP requests and the websocket handshake each,
    ``first_run_timeout_s`` for the first run (a cold server loads the model first; default the
    larger of ``timeout_s`` and 120 s). ``locale``/``timezone`` go into ``context_info`` as the
    browser's. ``fetch_page``: GET the page's HTML first, as a tab does. ``expect``: a word to
    look for in the first run (``first.found``).
    """

    def __init__(self, url_base: str, path: str = "", query: str = "", *,
                 cookies: MutableMapping[str, str] | None = None,
                 headers: Mapping[str, str] | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, open_timeout_s: float = 10.0,
                 first_run_timeout_s: float | None = None,
                 locale: str = "en-US", timezone: str = "UTC",
                 fetch_page: bool = True, expect: str | None = None) -> None:
        parts = urlsplit(url_base.rstrip("/"))
        if parts.scheme not in ("http", "ws"):
            raise ValueError("url_base must be http://host:port[/base]")
        self.http_base = f"http://{parts.netloc}{parts.path}"
        self.ws_url = f"ws://{parts.netloc}{parts.path}/{STREAM_PATH}"
        self.origin = f"http://{parts.netloc}"
        self.path = path.strip("/")
        self.query_string = query.lstrip("?")
        self.cookies: MutableMapping[str, str] = {} if cookies is None else cookies
        self.headers = dict(headers or {})
        self.timeout_s = timeout_s
        self.open_timeout_s = open_timeout_s
        self.first_run_timeout_s = first_run_timeout_s or max(timeout_s, 120.0)
        self.locale, self.timezone = locale, timezone
        self.fetch_page = fetch_page
        self.page_script_hash = ""        # the current page, once the server has named it
        self.widgets: dict[str, tuple[str, str]] = {}   # label -> (widget id, element type)
        self.app_pages: dict[str, str] = {}   # url path ("" = default page) -> script hash
        self.expect = expect
        self.first: RunResult | None = None
        self._ws: ClientConnection | None = None
        self._states: dict[str, WidgetState] = {}       # widget id -> state held, as a browser
        self._bound: dict[str, tuple[str, str | None]] = {}   # widget id -> (URL key, default)
        self._active_ids: set[str] = set()
        self._held_messages: dict[str, _CachedMsg] = {}
        self._run_count = 0
        self._max_cached_age = 2                           # global.maxCachedMessageAge default
        self._closed_reason: str | None = None
        self._unfinished = False   # a run we asked for timed out: its end is still to come
        self.auto_reruns: dict[str, float] = {}   # fragment id -> seconds (st.fragment run_every)
        self.widget_fragments: dict[str, str] = {}   # widget id -> the fragment drawing it

    # -- opening and closing -------------------------------------------------------------

    async def __aenter__(self) -> StreamlitSession:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def page_url(self) -> str:
        url = f"{self.http_base}/{self.path}"
        return f"{url}?{self.query_string}" if self.query_string else url

    async def get(self, path: str) -> HttpResponse:
        """GET ``path`` (relative to the app) with this session's cookies and headers."""
        headers = dict(self.headers)
        if self.cookies:
            headers["Cookie"] = cookie_header(self.cookies)
        try:
            response = await http_get(f"{self.http_base}/{path.lstrip('/')}", headers,
                                      self.open_timeout_s)
        except (OSError, TimeoutError) as exc:
            raise SessionClosed(f"GET /{path.lstrip('/')} failed: {exc!r}") from exc
        update_cookies(self.cookies, response.header_values("set-cookie"))
        return response

    async def open(self) -> RunResult:
        """Load the page as a tab does and run the script once; returns that first run (also
        kept as ``self.first``), timed from the first HTTP request."""
        start = time.perf_counter()
        http_bytes = 0
        for path in ([self.page_url()[len(self.http_base):]] if self.fetch_page else []) + [
                "_stcore/health", "_stcore/host-config"]:
            response = await self.get(path)
            http_bytes += len(response.body)
            if path == "_stcore/health" and response.status != 200:
                raise SessionClosed(f"/_stcore/health answered {response.status}")
        token = self.cookies.get(XSRF_COOKIE) or PLACEHOLDER_TOKEN
        headers = dict(self.headers)
        if self.cookies:
            headers["Cookie"] = cookie_header(self.cookies)
        try:
            self._ws = await connect(
                self.ws_url,
                subprotocols=["streamlit", token],   # type: ignore[list-item]
                origin=self.origin,                   # type: ignore[arg-type]
                additional_headers=headers,
                open_timeout=self.open_timeout_s,
                max_size=MAX_MESSAGE_BYTES,
                ping_interval=None,   # a browser sends no pings; the server pings us
                close_timeout=2,
                proxy=None,           # never a proxy from the environment: loopback only
            )
        except InvalidStatus as exc:
            raise SessionClosed(f"websocket refused: HTTP {exc.response.status_code}") from exc
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise SessionClosed(f"websocket handshake failed: {exc!r}") from exc
        if self._ws.response is not None:
            update_cookies(self.cookies, self._ws.response.headers.get_all("Set-Cookie"))
        if self._ws.subprotocol != "streamlit":
            await self.close()
            raise SessionClosed(f"server chose subprotocol {self._ws.subprotocol!r}")
        try:
            result = await self._run(self._first_request(), self.first_run_timeout_s, start,
                                     self.expect)
        except BaseException:   # `async with` calls no __aexit__ when __aenter__ fails
            await self.close()
            raise
        result.http_bytes = http_bytes
        self.first = result
        return result

    async def close(self) -> None:
        if self._ws is not None:
            ws, self._ws = self._ws, None
            try:
                async with asyncio.timeout(3):
                    await ws.close()
            except (TimeoutError, OSError, ConnectionClosed):
                pass

    @property
    def is_open(self) -> bool:
        return self._ws is not None and self._closed_reason is None

    # -- requests --------------------------------------------------------------------------

    def _context_info(self, msg: BackMsg) -> None:
        info = msg.rerun_script.context_info
        info.timezone = self.timezone
        info.timezone_offset = 0
        info.locale = self.locale
        info.url = self.page_url()
        info.is_embedded = False
        info.color_scheme = "light"

    def _first_request(self) -> BackMsg:
        """The browser's first rerun: the page by name (its hash is unknown), no widget state."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query_string
        msg.rerun_script.page_name = self.path
        msg.rerun_script.page_script_hash = ""
        self._context_info(msg)
        return msg

    def widget_id(self, label: str) -> str:
        """The id of the widget with this label in the last run (KeyError if none)."""
        return self.widgets[label][0]

    async def rerun(self, query_string: str | Mapping[str, str] | None = None,
                    widget_states: Mapping[str, Any] | None = None,
                    timeout_s: float | None = None, expect: str | None = None,
                    fragment_id: str | None = None, auto: bool = False) -> RunResult:
        """Run the script again, as a widget change (or a URL change) in the browser does.

        ``widget_states``: widget label or id -> value (str, bool, int, float, list of str, or a
        ``WidgetState``), as a user sets them; kept for later reruns like the browser's widget
        manager keeps them. A widget bound to the URL (``bind="query-params"``) also changes the
        query string, as the browser rewrites its URL. ``query_string``: a new query (string
        without ``?``, or a mapping) for this and later reruns; None keeps the URL's. ``expect``:
        a word to look for in what the run sends (``RunResult.found``). Raises
        :class:`RerunTimeout` or :class:`SessionClosed`. ``fragment_id``: run only that
        fragment, as the browser does for a widget drawn inside an ``st.fragment``
        (``widget_fragments``) and, with ``auto=True``, for a ``run_every`` timer
        (``auto_reruns``).
        """
        if query_string is not None:
            self.query_string = (query_string if isinstance(query_string, str)
                                 else urlencode(query_string))
        for key, value in (widget_states or {}).items():
            widget_id = self.widgets[key][0] if key in self.widgets else key
            self._states[widget_id] = _widget_state(widget_id, value)
            if widget_id in self._bound:
                param, default = self._bound[widget_id]
                url_value = _url_value(value)
                if url_value is not None:   # the browser drops a param set back to its default
                    self.query_string = _set_param(self.query_string, param,
                                                   None if url_value == default else url_value)
        msg = self._rerun_request(self.page_script_hash)
        if fragment_id:
            msg.rerun_script.fragment_id = fragment_id
            msg.rerun_script.is_auto_rerun = auto
        return await self._run(msg, timeout_s or self.timeout_s, time.perf_counter(), expect)

    async def switch_page(self, url_path: str, timeout_s: float | None = None,
                          expect: str | None = None) -> RunResult:
        """Go to another page of an ``st.navigation`` app, as a click in its menu does: a rerun
        with that page's script hash, keeping only the URL params bound to widgets (Streamlit
        drops the others on a page change)."""
        url_path = url_path.strip("/")
        if url_path not in self.app_pages:
            raise KeyError(f"no page {url_path!r}; the app has {sorted(self.app_pages)}")
        bound = {param for wid, (param, _) in self._bound.items() if wid in self._active_ids}
        pairs = parse_qsl(self.query_string, keep_blank_values=True)
        self.query_string = urlencode([(k, v) for k, v in pairs if k in bound])
        msg = self._rerun_request(self.app_pages[url_path])
        result = await self._run(msg, timeout_s or self.timeout_s, time.perf_counter(), expect)
        self.path = url_path
        return result

    def _rerun_request(self, page_script_hash: str) -> BackMsg:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query_string
        msg.rerun_script.page_script_hash = page_script_hash
        if not page_script_hash:
            msg.rerun_script.page_name = self.path
        # The browser sends the state of every widget it holds, and drops those no longer drawn.
        msg.rerun_script.widget_states.widgets.extend(
            s for wid, s in self._states.items() if wid in self._active_ids)
        msg.rerun_script.cached_message_hashes.extend(self._held_messages)
        self._context_info(msg)
        return msg

    async def _run(self, msg: BackMsg, timeout_s: float, start: float,
                   expect: str | None = None) -> RunResult:
        if self._ws is None:
            raise SessionClosed("session is not open")
        if self._closed_reason:
            raise SessionClosed(self._closed_reason)
        result = RunResult(found=False if expect else None)
        wanted = expect.encode() if expect else None
        started = False          # a new_session of a run started after our request
        seen_ids: set[str] = set()
        timers: dict[str, float] = {}   # the run's run_every fragments (auto_rerun)
        sent = False
        try:
            async with asyncio.timeout(timeout_s):
                if self._unfinished:
                    await self._drain()
                await self._ws.send(msg.SerializeToString())
                sent = True
                while True:
                    data = await self._ws.recv(decode=False)
                    result.bytes_received += len(data)
                    result.messages += 1
                    fwd, payload = self._decode(data)
                    kind = fwd.WhichOneof("type")
                    if kind == "new_session":
                        started = True
                        timers = {}
                        result.runs += 1
                        seen_ids = set()
                        self._max_cached_age = fwd.new_session.config.max_cached_message_age
                        if fwd.new_session.page_script_hash:
                            self.page_script_hash = fwd.new_session.page_script_hash
                    elif kind == "navigation":
                        self._read_navigation(fwd)
                    elif kind == "page_info_changed":
                        self.query_string = fwd.page_info_changed.query_string
                    elif kind == "page_not_found":
                        result.page_not_found = fwd.page_not_found.page_name
                    elif kind == "auto_rerun" and started:
                        timers[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
                    elif kind == "stop_auto_rerun":
                        for stopped in fwd.stop_auto_rerun.fragment_ids:
                            self.auto_reruns.pop(stopped, None)
                    elif kind == "delta" and started:
                        content = self._read_delta(fwd, result, seen_ids)
                        if content and wanted is not None and wanted in payload:
                            result.found = True
                    elif kind == "session_event" and started:
                        event = fwd.session_event
                        if event.HasField("script_compilation_exception"):
                            exc = event.script_compilation_exception
                            result.exceptions.append(f"{exc.type}: {exc.message}")
                    elif kind == "script_finished" and started:
                        status = fwd.script_finished
                        result.status = ForwardMsg.ScriptFinishedStatus.Name(status)
                        if status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                            self._active_ids |= seen_ids   # the rest of the page stays
                            self.auto_reruns.update(timers)
                            self._age_cache()
                            break
                        if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                            self.auto_reruns = timers      # a whole run draws every fragment
                            self._active_ids = seen_ids
                            self._age_cache()
                            break
        except TimeoutError as exc:
            self._unfinished = self._unfinished or sent
            raise RerunTimeout(f"script run not finished within {timeout_s:g} s") from exc
        except ConnectionClosed as exc:
            self._closed_reason = _closed_text(exc)
            raise SessionClosed(self._closed_reason) from exc
        result.elapsed = time.perf_counter() - start
        result.query_string = self.query_string
        if wanted and not result.found:
            result.found = any(expect in t for t in result.texts)
        return result

    async def _drain(self) -> None:
        """Read up to the end of a run that timed out, so its script_finished is not taken for
        the next run's (the server gives no id that ties a run to the request behind it)."""
        assert self._ws is not None
        while True:
            fwd, _ = self._decode(await self._ws.recv(decode=False))
            kind = fwd.WhichOneof("type")
            if kind == "navigation":
                self._read_navigation(fwd)
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif (kind == "script_finished"
                  and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN):
                self._unfinished = False
                self._age_cache()
                return

    # -- reading ForwardMsgs ---------------------------------------------------------------

    def _decode(self, data: bytes) -> tuple[ForwardMsg, bytes]:
        """The message, with a ``ref_hash`` replaced by the cached one, and its full bytes."""
        fwd = ForwardMsg()
        fwd.ParseFromString(data)
        if fwd.WhichOneof("type") == "ref_hash":
            cached = self._held_messages.get(fwd.ref_hash)
            if cached is None:   # the browser throws here too: the server broke the protocol
                raise StreamlitClientError(f"server referred to unknown message {fwd.ref_hash}")
            cached.run_count = self._run_count
            full = ForwardMsg()
            full.ParseFromString(cached.data)
            full.metadata.CopyFrom(fwd.metadata)
            return full, cached.data
        if fwd.metadata.cacheable and fwd.hash and fwd.hash not in self._held_messages:
            self._held_messages[fwd.hash] = _CachedMsg(data, self._run_count)
        return fwd, data

    def _age_cache(self) -> None:
        """After a finished run, drop cached messages unused for more than the max age."""
        self._run_count += 1
        for key in [k for k, m in self._held_messages.items()
                    if self._run_count - m.run_count > self._max_cached_age]:
            del self._held_messages[key]

    def _read_navigation(self, fwd: ForwardMsg) -> None:
        nav = fwd.navigation
        if nav.page_script_hash:
            self.page_script_hash = nav.page_script_hash
        if nav.app_pages:
            self.app_pages = {("" if p.is_default else p.url_pathname): p.page_script_hash
                              for p in nav.app_pages}

    def _read_delta(self, fwd: ForwardMsg, result: RunResult, seen_ids: set[str]) -> bool:
        """Read the delta's elements; True if it carries content (not only widgets)."""
        delta = fwd.delta
        kind = delta.WhichOneof("type")
        if kind == "new_element":
            element_kind = delta.new_element.WhichOneof("type")
            body = getattr(delta.new_element, element_kind) if element_kind else None
            if delta.fragment_id and getattr(body, "id", ""):
                self.widget_fragments[body.id] = delta.fragment_id
            return self._read_element(delta.new_element, result, seen_ids)
        if kind == "new_transient":
            return any([self._read_element(e, result, seen_ids)
                        for e in delta.new_transient.elements])
        return False

    def _read_element(self, element: Any, result: RunResult, seen_ids: set[str]) -> bool:
        kind = element.WhichOneof("type")
        if kind is None:
            return False
        body = getattr(element, kind)
        if kind == "exception":
            line = f"{body.type}: {body.message}".strip(": ")
            (result.warnings if body.is_warning else result.exceptions).append(line)
            result.texts.append(line)
        elif kind in ("markdown", "heading", "alert", "text"):
            result.texts.append(body.body)
        elif kind == "code":
            result.texts.append(body.code_text)
        elif kind == "metric":
            result.texts += [body.label, body.body]
        elif kind in ("table", "dataframe"):
            result.texts += _table_texts(body.arrow_data.data if body.HasField("arrow_data")
                                         else b"")
        elif kind == "html":
            result.texts += _html_texts(body.body)
        elif kind in _WIDGET_ELEMENTS:
            if getattr(body, "id", ""):
                self._read_widget(kind, body, seen_ids)
            return False   # a widget echoes what the client sent: not evidence of a result
        return True

    def _read_widget(self, kind: str, body: Any, seen_ids: set[str]) -> None:
        """Hold the widget's value as the browser's widget manager does: the server's value when
        it sets one (``set_value``), else what the user set, else the widget's default."""
        seen_ids.add(body.id)
        self.widgets[getattr(body, "label", "") or body.id] = (body.id, kind)
        if body.id not in self._states or getattr(body, "set_value", False):
            state = _held_state(kind, body)
            if state is not None:
                self._states[body.id] = state
        if getattr(body, "query_param_key", ""):
            # Options widgets give their default as an index, which is not what the URL holds.
            default = None if kind in _OPTION_WIDGETS else getattr(body, "default", None)
            self._bound[body.id] = (body.query_param_key,
                                    None if default is None else _url_value(default))


def _has(body: Any, name: str) -> bool:
    try:
        return body.HasField(name)
    except ValueError:   # a plain proto3 scalar or a repeated field: always there
        return True


def _held_state(kind: str, body: Any) -> WidgetState | None:
    """The state the frontend registers for a widget it draws (value if the server set one,
    else its default), in the WidgetState field each widget's frontend code uses."""
    use_value = bool(getattr(body, "set_value", False))
    state = WidgetState(id=body.id)
    if kind in ("text_area", "text_input"):
        name = "value" if use_value else "default"
        if not _has(body, name):
            return None
        state.string_value = getattr(body, name)
    elif kind == "checkbox":
        state.bool_value = body.value if use_value else body.default
    elif kind == "number_input":
        name = "value" if use_value else "default"
        if not _has(body, name):
            return None
        number = getattr(body, name)
        if body.data_type == body.INT:
            state.int_value = int(number)
        else:
            state.double_value = number
    elif kind in ("selectbox", "radio"):
        if use_value and _has(body, "raw_value"):
            state.string_value = body.raw_value
        elif _has(body, "default") and 0 <= body.default < len(body.options):
            state.string_value = body.options[body.default]
        else:
            return None
    elif kind == "multiselect":
        picked = (list(body.raw_values) if use_value
                  else [body.options[i] for i in body.default if 0 <= i < len(body.options)])
        state.string_array_value.data.extend(picked)
    elif kind == "slider":
        if body.options:   # select_slider
            picked = (list(body.raw_value) if use_value
                      else [body.options[int(i)] for i in body.default])
            state.string_array_value.data.extend(picked)
        else:
            state.double_array_value.data.extend(body.value if use_value else body.default)
    else:
        return None   # buttons and the like hold no value between runs
    return state


def _closed_text(exc: ConnectionClosed) -> str:
    frame = exc.rcvd or exc.sent
    if frame is None:
        return "connection closed (no close frame: the server or proxy went away)"
    return f"connection closed (code {frame.code}{': ' + frame.reason if frame.reason else ''})"


async def _demo(url: str, path: str, query: str) -> None:
    async with StreamlitSession(url, path=path, query=query) as session:
        first = session.first
        assert first is not None
        print(f"first run: {first.elapsed * 1000:.0f} ms, {first.bytes_received} B, "
              f"exceptions: {first.exceptions}")
        again = await session.rerun()
        print(f"rerun: {again.elapsed * 1000:.0f} ms, {again.bytes_received} B")
        print("\n".join(t[:100] for t in again.texts[:20]))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Open one page and rerun it once.")
    parser.add_argument("--url", default="http://127.0.0.1:8501")
    parser.add_argument("--path", default="tokens")
    parser.add_argument("--query", default="a=Hello+world")
    args = parser.parse_args()
    asyncio.run(_demo(args.url, args.path, args.query))
