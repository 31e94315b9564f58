"""English text with its values kept apart, so the app can show it in the reader's language.

Core never imports the UI: ``Text.template`` is the English message (the key of its translation
in the page's catalog), ``Text.params`` the values, already written as strings. ``str(text)`` is
the English message, for a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Text:
    template: str
    params: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.template.format(**self.params) if self.params else self.template


def number(value: int) -> str:
    """A count as the page writes it: 30,522."""
    return f"{value:,}"
