"""A loading screen in the page's HTML itself, from the browser's first paint.

Streamlit's page is an empty shell until its JavaScript has loaded and the first script run has
drawn something: on a fresh server that was four seconds of white page, and on every first
visit a second or two. This ASGI middleware (app.py hands it to ``st.App``) puts a small card
into the HTML Streamlit serves for a page: the app's name and "Loading…", in the language the
link asks for, with a spinner drawn by CSS. A few lines of script remove it as soon as the
page's title, a message, an error or a dialog is on the page (or after a minute, whatever
happens), so it never hides the app.

Only HTML page responses are touched, nothing of Streamlit's own routes; the card is fixed text,
never anything from the request but the language choice.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool

from components import palette
from components.i18n import N_
from frame.boot_tokens import card_texts, table_block

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MARKER = b"</body>"
# The card's words in each language: the interface's language is only known once the app runs,
# so both are shown, the link's ?lang= first. Written out here, not looked up in the catalogs:
# compiling them took a second on the first request of a fresh server (tests check that these
# are the catalogs' words).
WORDS = {"en": ("BERT Embedding Explorer", N_("Loading…")), "zh": ("BERT 嵌入探索器", "正在加载…")}
# Paths that are never a page: Streamlit's own routes and files.
NOT_PAGES = ("/_stcore/", "/static/", "/media/", "/component/", "/app/static/")

STYLE = f"""
#boot-screen {{ position:fixed; inset:0; display:flex; align-items:center; justify-content:center;
  background:#ffffff; z-index:2147483000; font-family:"Source Sans", sans-serif;
  color:{palette.INK}; pointer-events:none; }}
#boot-screen .card {{ text-align:center; }}
#boot-screen .name {{ font-size:28px; font-weight:600; margin:16px 0 4px; }}
#boot-screen .word {{ font-size:20px; color:{palette.SOFT_INK}; margin:2px 0; }}
#boot-screen .spin {{ width:40px; height:40px; margin:0 auto; border-radius:50%;
  border:4px solid #dbe7f3; border-top-color:{palette.SEGMENT_A};
  animation:boot-spin 0.9s linear infinite; }}
#boot-screen.with-tokens {{ align-items:flex-start; padding-top:20px; }}
#boot-screen.with-tokens .card {{ width:min(880px, 94vw); }}
#boot-screen.with-tokens .spin {{ width:28px; height:28px; }}
#boot-screen.with-tokens .name {{ font-size:24px; margin-top:8px; }}
#boot-screen .what {{ font-size:18px; font-weight:600; text-align:left; margin:14px 0 6px; }}
#boot-screen .tab-wrap {{ text-align:left; }}
@keyframes boot-spin {{ to {{ transform:rotate(360deg); }} }}
@media (prefers-reduced-motion: reduce) {{ #boot-screen .spin {{ animation:none; }} }}
"""

# Gone once the page has drawn its title, or shows a message, an error or a dialog; at the latest
# after a minute, so a server that never answers still shows Streamlit's own message.
SCRIPT = """
(function () {
  var card = document.getElementById('boot-screen');
  var ready = "[data-testid='stMain'] h1, [data-testid='stAlert'], [data-testid='stException'], " +
              "[role='dialog']";
  function done() {
    if (card && card.isConnected && document.querySelector(ready)) { finish(); }
  }
  function finish() { if (card) { card.remove(); } observer.disconnect(); }
  var observer = new MutationObserver(done);
  observer.observe(document.documentElement, {childList: true, subtree: true});
  setTimeout(finish, 60000);
})();
"""


def boot_parts(language: str, with_tokens: bool = False) -> tuple[str, str]:
    """The card, the language asked for first, in two parts: what /tokens' table
    (frame/boot_tokens.py) goes between, sent after the first part when ``with_tokens``."""
    first = language if language in WORDS else "en"
    order = [first, *(code for code in WORDS if code != first)]
    name = html.escape(WORDS[first][0])
    words = "".join(f'<p class="word" lang="{code}">{html.escape(WORDS[code][1])}</p>'
                    for code in order)
    kind = ' class="with-tokens"' if with_tokens else ""
    return (f'<style>{STYLE}</style><div id="boot-screen"{kind} role="status" '
            f'aria-live="polite"><div class="card"><div class="spin"></div>'
            f'<p class="name">{name}</p>{words}', f"</div></div><script>{SCRIPT}</script>")


def boot_html(language: str, tokens: str = "") -> str:
    """The whole card; ``tokens``: the table to show in it (HTML, every text escaped)."""
    opening, closing = boot_parts(language, bool(tokens))
    return opening + tokens + closing


def is_page_request(scope: Scope) -> bool:
    path = scope.get("path", "")
    return (scope.get("type") == "http" and scope.get("method") == "GET"
            and not any(part in path for part in NOT_PAGES))


def query_of(scope: Scope) -> dict[str, list[str]]:
    """The link's parameters, decoded as Streamlit decodes them for st.query_params."""
    return parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def language_of(query: dict[str, list[str]]) -> str:
    return (query.get("lang") or ["en"])[0]


# Set once a page's HTML, card and all, has been sent: the server's warm-up holds its imports
# for the first page's script run until then (frame/startup.py): sharing the processor with
# them, the card's tokens came a median 0.17 s after the card on a fresh server, 0.07 s without
# (bench/HISTORY.md, 2026-12-07, later).
PAGE_SENT = threading.Event()


class BootScreen:
    """ASGI middleware: the loading card added to every HTML page Streamlit serves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_page_request(scope):
            await self.app(scope, receive, send)
            return
        # Uncompressed, so the card can be added (a page is a few kB).
        scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers", [])
                                      if k.lower() != b"accept-encoding"]}
        query = query_of(scope)
        language = language_of(query)
        texts = card_texts(scope.get("path", ""), query)   # None: no table
        opening, closing = (part.encode() for part in boot_parts(language, texts is not None))
        start: Message | None = None
        body = bytearray()

        async def send_with_card(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                sent = dict(message.get("headers", []))
                if not sent.get(b"content-type", b"").startswith(b"text/html"):
                    start = None
                    await send(message)
                    return
                start = message
                return
            if start is None:   # not HTML: passed through untouched
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            before, marker, after = bytes(body).partition(MARKER)
            headers = [(k, v) for k, v in start.get("headers", [])
                       if k.lower() != b"content-length"]
            if not marker or texts is None:   # the card whole, or the page as it came
                page = before + opening + closing + marker + after if marker else before
                headers.append((b"content-length", str(len(page)).encode()))
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": page, "more_body": False})
                PAGE_SENT.set()
                return
            # /tokens: the page and the card's top at once, so the card is painted at the
            # first moment it can be; its table follows when read (the tokenizer's first read
            # on a fresh server is a tenth of a second), then the rest of the page.
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": before + opening,
                        "more_body": True})
            tokens = await run_in_threadpool(table_block, texts, language)
            await send({"type": "http.response.body",
                        "body": tokens.encode() + closing + marker + after, "more_body": False})
            PAGE_SENT.set()

        await self.app(scope, receive, send_with_card)
