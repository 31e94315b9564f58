"""bench/ws_client.py against a real server of this app: Streamlit's own websocket protocol,
without a browser."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.server import healthy
from bench.ws_client import (
    RerunTimeout,
    SessionClosed,
    StreamlitSession,
    _set_param,
    _url_value,
    http_get,
    update_cookies,
)
from tests.conftest import run_async, start_server, stop_server

HEALTH_WAIT_S = 60.0


def wait_healthy(url: str, timeout_s: float = HEALTH_WAIT_S) -> None:
    """Until /_stcore/health answers 200, at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if healthy(url):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{url} not healthy within {timeout_s:.0f} s")


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    """A fresh server of this app for this module (deep links on a fresh server matter)."""
    proc, url = start_server()
    try:
        wait_healthy(url)
        yield url
    finally:
        stop_server(proc)


def run(coro):
    return run_async(asyncio.wait_for(coro, 180))


def test_sessions_opening_deep_links_at_once_each_see_their_sentence(app_url):
    """The first sessions of a fresh server, all deep links at once (legacy pages/ mode)."""
    sentences = ["Hello world", "green apple", "small river", "open door"]

    async def one(text: str):
        query = "a=" + text.replace(" ", "+")
        async with StreamlitSession(app_url, path="tokens", query=query) as s:
            return s.first

    async def main():
        return await asyncio.gather(*(one(t) for t in sentences))

    for text, first in zip(sentences, run(main()), strict=True):
        assert not first.exception, first.exceptions
        assert first.status == "FINISHED_SUCCESSFULLY"
        for word in text.lower().split():
            assert word in first.texts, (text, first.texts[:40])


def test_tokens_rerun_returns_the_tokens(app_url):
    async def main():
        jar: dict[str, str] = {}
        async with StreamlitSession(app_url, path="tokens", query="a=Hello+world",
                                    cookies=jar, expect="hello") as s:
            first = s.first
            again = await s.rerun()
            typed = await s.rerun(widget_states={"Sentence A": "green apple"}, expect="apple")
            return s, jar, first, again, typed

    s, jar, first, again, typed = run(main())
    assert first is not None and not first.exception
    assert {"[CLS]", "hello", "world", "[SEP]"} <= set(first.texts)
    assert first.found is True
    assert first.bytes_received > 1000 and first.http_bytes > 0
    assert "_streamlit_xsrf" in jar            # set by /_stcore/health, sent as the token
    assert s.page_script_hash == s.app_pages["tokens"]
    assert not again.exception and "hello" in again.texts
    assert 0 < again.elapsed < 30
    # Typing in a URL-bound box changes the tokens and the URL, as in the browser.
    assert not typed.exception and typed.found
    assert {"green", "apple"} <= set(typed.texts) and "hello" not in typed.texts
    assert typed.query_string == "a=green+apple"


def test_switching_pages_keeps_the_sentence(app_url):
    async def main():
        async with StreamlitSession(app_url, path="", query="a=green+apple") as s:
            home = s.first
            tokens = await s.switch_page("tokens", expect="apple")
            return home, tokens, s.query_string

    home, tokens, query = run(main())
    assert not home.exception and "BERT Embedding Explorer" in home.texts
    assert not tokens.exception and tokens.found and "apple" in tokens.texts
    assert query == "a=green+apple"


def test_a_rerun_past_its_timeout_fails_fast_and_the_session_recovers(app_url):
    async def main():
        async with StreamlitSession(app_url, path="tokens", query="a=Hello+world") as s:
            start = time.perf_counter()
            with pytest.raises(RerunTimeout, match="not finished within"):
                await s.rerun(widget_states={"Sentence A": "blue whale"}, timeout_s=0.001)
            waited = time.perf_counter() - start
            # The late end of the timed-out run is not taken for the next run's end.
            after = await s.rerun(widget_states={"Sentence A": "open door"}, expect="door")
            return waited, after

    waited, after = run(main())
    assert waited < 1.0
    assert after.found and "door" in after.texts and "whale" not in after.texts


def test_a_closed_websocket_fails_the_next_rerun_clearly(app_url):
    async def main():
        async with StreamlitSession(app_url, path="tokens", query="a=Hello+world") as s:
            assert s._ws is not None
            await s._ws.close()       # as if the server or a proxy had gone away
            with pytest.raises(SessionClosed, match="connection closed"):
                await s.rerun()
            with pytest.raises(SessionClosed):   # and again, without waiting
                await s.rerun()
            assert not s.is_open

    run(main())


def test_health_answer_and_refused_page_name(app_url):
    response = run(http_get(f"{app_url}/_stcore/health"))
    assert response.status == 200 and response.body == b"ok"

    async def main():
        async with StreamlitSession(app_url, path="no-such-page") as s:
            return s.first

    first = run(main())
    assert first.page_not_found is not None and not first.exception


# -- pieces without a server ---------------------------------------------------------------


def test_cached_messages_are_resolved_from_a_ref_hash():
    s = StreamlitSession("http://127.0.0.1:9")
    big = ForwardMsg(hash="abc")
    big.metadata.cacheable = True
    big.delta.new_element.markdown.body = "x" * 20_000
    s._decode(big.SerializeToString())
    assert list(s._held_messages) == ["abc"]
    ref = ForwardMsg(ref_hash="abc")
    ref.metadata.delta_path.extend([0, 3])
    full, payload = s._decode(ref.SerializeToString())
    assert full.delta.new_element.markdown.body == "x" * 20_000
    assert list(full.metadata.delta_path) == [0, 3]
    assert b"xxxx" in payload
    for _ in range(3):   # unused for more than max_cached_message_age (2) finished runs
        s._age_cache()
    assert not s._held_messages


def test_url_and_cookie_helpers():
    assert _set_param("a=x&b=y", "a", "new words") == "a=new+words&b=y"
    assert _set_param("a=x&b=y", "a", None) == "b=y"
    assert _set_param("b=y", "a", "z") == "b=y&a=z"
    assert (_url_value(True), _url_value(512.0), _url_value(0.5)) == ("true", "512", "0.5")
    jar: dict[str, str] = {}
    update_cookies(jar, ["SERVERID=app1; path=/", "_streamlit_xsrf=2|ab|cd|1; Path=/"])
    assert jar == {"SERVERID": "app1", "_streamlit_xsrf": "2|ab|cd|1"}


def test_ws_load_runs_a_small_class(app_url):
    """bench/ws_load.py end to end: a short, small class against the same server."""
    from bench.ws_load import find_server_pid, simulate_class

    pid = find_server_pid(app_url)
    figures = run_async(simulate_class(app_url, 3, 3, think_s=0.3, burst_window_s=1.0,
                                       pages=("tokens", ""), pid=pid))
    summary = figures.summary()
    assert summary["errors"] == 0, summary["error_details"]
    assert len(figures.opens) == 3 and summary["reruns"] >= 3
    assert summary["first_render_p95_s"] >= summary["first_render_p50_s"] > 0
    assert summary["rerun_p95_s"] >= summary["rerun_p50_s"] > 0
    seen, runs = summary["marker_seen"]["tokens"]
    assert seen == runs > 0              # every new sentence's marker came back on Tokens
    assert pid is None or summary["rss_peak_bytes"] > 100e6
