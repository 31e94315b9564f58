"""/tokens' token table inside the loading card: the tokens on screen before Streamlit's page is.

A fresh server's first page waits about two seconds for Streamlit's browser code (60 files, then
the websocket, then the script run). The loading card is HTML the server writes itself
(frame/boot_screen.py), so for /tokens it carries the table at once: the link's sentence (or
the default one) tokenised by the default model's tokenizer read from its files
(components.cache.get_tokenizer_files, the same object and ``core.tokens.encode`` the page
uses; no torch), rows tinted as the page tints them. It goes with the card once the page has
drawn its title, and the page then shows the same table with its other columns.

Only where the link asks for nothing that changes the tokens beyond its sentences (another
model, a max length, truncation or padding): there the page's own table is the only one.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from components.html_table import grid_html
from components.i18n import N_
from components.token_table import FIELDS as TABLE_FIELDS
from components.token_table import NUMERIC, row_styles, token_table
from core.errors import InputError, ModelLoadError
from core.settings import DEFAULT_MODEL, DEFAULT_SENTENCE

# What the card's table is called and its headers, written out as the card's other words are
# (no catalog compiled on a fresh server's first request; tests check them against it).
WORDS = {"en": (N_("Tokens"), N_("position"), N_("token")), "zh": ("词元", "位置", "词元")}
# The page's columns the card shows: the tokens and the tokenizer's own fields.
CARD_FIELDS = ("position", "token", "input_id", "token_type_id", "attention_mask")
CARD_NUMERIC = [NUMERIC[TABLE_FIELDS.index(name)] for name in CARD_FIELDS]
# A link with any of these set gets the page's table only (the card's uses the defaults).
TOKENIZER_OPTIONS = ("max_length", "truncation", "padding")
CARD_ROWS = 14   # more rows would push the table past a 768-pixel-high projector's screen
MORE = "⋯"
TABLE_NAME = "boot-tokens"

_LOG = logging.getLogger(__name__)


def is_tokens_page(path: str) -> bool:
    """/tokens, under any base path the server is given."""
    return path.rstrip("/").endswith("/tokens")


def link_texts(query: Mapping[str, Sequence[str]]) -> tuple[str, str | None] | None:
    """Sentences A and B as the page reads them from the link (each parameter's last value,
    the defaults where absent), or None when the link asks for another model or tokenizer
    options."""
    if any(option in query for option in TOKENIZER_OPTIONS):
        return None
    if (query.get("model") or [DEFAULT_MODEL])[-1] != DEFAULT_MODEL:
        return None
    a = (query.get("a") or [DEFAULT_SENTENCE])[-1]   # components.inputs.TEXT_DEFAULTS
    b = (query.get("b") or [""])[-1]
    return a, (b if b.strip() else None)   # as components.inputs.shared_inputs


def card_rows(text_a: str, text_b: str | None) -> tuple[list[list[Any]], list[str]]:
    """The default model's tokens of the texts, as the page's token table has them: one row
    per position (``CARD_FIELDS``) and each row's tint, at most ``CARD_ROWS`` (the last then
    says more follow)."""
    # Here, not with the module: app.py imports this before the server's first answer, and
    # the cache layer (the warm-up imports it meanwhile) is a tenth of a second of imports.
    from components.cache import get_tokenizer_files
    from core.tokens import encode

    files = get_tokenizer_files(DEFAULT_MODEL)
    table = token_table(encode(files, text_a, text_b), files.unk_token)   # the page's rows
    rows = [[table.field(row, name) for name in CARD_FIELDS] for row in table.rows]
    styles = row_styles(table)
    if len(rows) > CARD_ROWS:
        rows = rows[:CARD_ROWS - 1] + [[MORE] * len(CARD_FIELDS)]
        styles = styles[:CARD_ROWS - 1] + [""]
    return rows, styles


def card_texts(path: str, query: Mapping[str, Sequence[str]]) -> tuple[str, str | None] | None:
    """The texts whose tokens this request's card shows: /tokens' link's (``link_texts``);
    None for another page."""
    return link_texts(query) if is_tokens_page(path) else None


def table_block(texts: tuple[str, str | None], language: str) -> str:
    """The card's caption and table of the texts' tokens, or "" (a text the page itself must
    explain: that message is the page's)."""
    try:
        rows, styles = card_rows(*texts)
    except (InputError, ModelLoadError):   # the page says why, in the reader's language
        return ""
    except Exception:  # noqa: BLE001 - the card without its table; the page says what failed
        _LOG.exception("the loading card's tokens failed")
        return ""
    title, position, token = WORDS.get(language, WORDS["en"])
    columns = [position, token, *CARD_FIELDS[2:]]   # the tokenizer's names stay as code
    table = grid_html(columns, rows, CARD_NUMERIC, styles, TABLE_NAME)
    return f'<p class="what">{html.escape(title)} · {html.escape(DEFAULT_MODEL)}</p>{table}'

