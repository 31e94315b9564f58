"""Labels for tokens in tables and figures. User text is always shown as text, never as markup."""

from __future__ import annotations

from collections.abc import Sequence

# Segment A blue, segment B orange: a pair that stays distinct for colour-blind viewers.
SEGMENT_COLOURS = {0: "#1f77b4", 1: "#ff7f0e"}
SEGMENT_NAMES = {0: "A", 1: "B"}


def plotly_text(text: str) -> str:
    """Escape the characters plotly would read as its own HTML-like markup (<b>, <br>, &amp;)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Unique, readable labels "position token" for the rows of a figure, safe for plotly."""
    return [f"{i} {plotly_text(tok)}" for i, tok in enumerate(tokens)]


def token_kind(token: str, is_special: bool, is_padding: bool, unk_token: str | None) -> str:
    """What a token is, in words a student knows from the tutorials."""
    if is_padding:
        return "padding"
    if token == unk_token:
        return "unknown ([UNK])"
    if is_special:
        return "special"
    if token.startswith("##"):
        return "continuation (##)"
    return "word piece"
