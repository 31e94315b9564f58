"""Labels for tokens in tables and figures. User text is always shown as text, never as markup."""

from __future__ import annotations

import re
from collections.abc import Sequence

from components import palette
from components.i18n import N_

SEGMENT_COLOURS = palette.SEGMENT
SEGMENT_NAMES = {0: "A", 1: "B"}


# Every ASCII punctuation mark CommonMark lets a backslash escape that markdown could act on.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def markdown_text(text: str) -> str:
    """Backslash-escape markdown, so text inside st.error/st.caption shows as typed.

    Bare URLs are still turned into links by the renderer: use markdown_code for untrusted text.
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_code(text: str) -> str:
    """Untrusted text as an inline code span: shown verbatim, never a link, image or HTML."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)  # longer than any run of backticks inside, so it cannot close
    pad = " " if text[:1] == "`" or text[-1:] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_template(template: str, **params: object) -> str:
    """``template.format(**params)`` as markdown: our words escaped, every value a code span.

    Values are user text or numbers (a model name from a link, a count): as code they show
    verbatim, never as a link, image or HTML.
    """
    marks = {key: f"\x00{i}\x00" for i, key in enumerate(params)}
    text = markdown_text(template.format(**marks))
    for key, mark in marks.items():
        text = text.replace(mark, markdown_code(str(params[key])))
    return text


def plotly_text(text: str) -> str:
    """Escape the characters plotly would read as its own HTML-like markup (<b>, <br>, &amp;)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Unique, readable labels "position token" for the rows of a figure, safe for plotly."""
    return [f"{i} {plotly_text(tok)}" for i, tok in enumerate(tokens)]


PADDING, UNKNOWN, SPECIAL, CONTINUATION, WORD_PIECE = (
    N_("padding"), N_("unknown ([UNK])"), N_("special"), N_("continuation (##)"),
    N_("word piece"),
)


def token_kind(token: str, is_special: bool, is_padding: bool, unk_token: str | None) -> str:
    """What a token is, in words a student knows from the tutorials (English; shown with _())."""
    if is_padding:
        return PADDING
    if token == unk_token:
        return UNKNOWN
    if is_special:
        return SPECIAL
    if token.startswith("##"):
        return CONTINUATION
    return WORD_PIECE
