"""The contexts page's records (Context, and the session's PageState): made once here, not on
every rerun as in page.py (README, "Adding a page")."""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from components.kept_upload import KeptFile
from core import ModelBundle


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle


@dataclass
class PageState:
    """What the page keeps for a session besides its widgets' values, read and written only
    through ``page.page_state()``.

    Streamlit forgets a widget's value on a run that does not draw it (another tab open), so
    the corpus a user brought is kept apart from its widgets: the text pasted here, the file by
    components.kept_upload (``file`` names the one the columns were picked in), and the columns
    picked in it (None: the page proposes one)."""

    text: str = ""
    file: tuple[str, int] | None = None     # the file's name and size
    sentence_column: int | None = None
    label_column: int | None = None

    def source(self, file: KeptFile | None) -> tuple[str, str | bytes] | None:
        """What the corpus is read from: the file (it wins over the text), else the text when
        it holds more than spaces, else None. ``("text", text)`` or ``(name, bytes)``."""
        if file is not None and file.data is not None:
            return file.name, file.data
        return ("text", self.text) if self.text.strip() else None

    def keep_file(self, file: KeptFile | None) -> None:
        """The file kept now (or none): the columns picked in another no longer apply."""
        seen = (file.name, file.size) if file is not None else None
        if seen != self.file:
            self.sentence_column = self.label_column = None
        self.file = seen
