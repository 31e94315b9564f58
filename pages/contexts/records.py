"""The contexts page's records (Context, and the session's PageState): made once here, not on
every rerun as in page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import ModelBundle


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle


@dataclass(frozen=True)
class KeptFile:
    """A file uploaded to "Your own corpus": its name and bytes."""

    name: str
    data: bytes


@dataclass
class PageState:
    """What the page keeps for a session besides its widgets' values, read and written only
    through ``page.page_state()``.

    Streamlit forgets a widget's value on a run that does not draw it (another tab open), so
    the corpus a user brought is kept here, apart from its widgets: the text pasted, the file
    uploaded last, and the columns picked in it (None: the page proposes one)."""

    text: str = ""
    file: KeptFile | None = None
    sentence_column: int | None = None
    label_column: int | None = None

    def source(self) -> tuple[str, str | bytes] | None:
        """What the corpus is read from: the file (it wins over the text), else the text when
        it holds more than spaces, else None. ``("text", text)`` or ``(name, bytes)``."""
        if self.file is not None:
            return self.file.name, self.file.data
        return ("text", self.text) if self.text.strip() else None

    def keep_file(self, file: KeptFile | None) -> None:
        """A new file (or none): the columns picked in the old one no longer apply."""
        if file != self.file:
            self.sentence_column = self.label_column = None
        self.file = file
