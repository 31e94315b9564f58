"""A file uploader whose file outlives the tab it is drawn on.

Streamlit forgets a widget's value on a run that does not draw it, so a file uploaded on one tab
(components.sections runs only the open one) would be gone when the user comes back from another.
``KeptUpload`` keeps the file's name and bytes in the session apart from the widget, drawn or not,
until the user removes it or picks "Forget the file". A file over ``limit_bytes`` is kept as its
name and size alone, never read, so the page can refuse it from its size.

    upload = KeptUpload("pr_file", limit_bytes=MAX_BYTES)
    kept = upload.draw(_("…or a file"), types=["csv", "tsv"], max_mb=12,
                       before=_("Comparing {name}, the file uploaded before."),
                       forget=_("Forget the file"))
    if kept is not None and kept.data is not None: ...   # read kept.data
    upload.forget()                                       # e.g. when the example set is loaded

Session keys (all start with ``key``): ``<key>_kept`` the KeptFile, ``<key>_round`` the uploader's
generation (a new generation draws an empty uploader), ``<key>_<round>`` the widget itself,
``<key>_forget`` the button. The words shown are the page's (its catalog translates them).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.labels import markdown_code


@dataclass(frozen=True)
class KeptFile:
    """An uploaded file as kept: ``data`` is None when it was over the limit (never read)."""

    name: str
    data: bytes | None
    size: int


class KeptUpload:
    """One uploader and the file it keeps across tabs (the module's docstring)."""

    def __init__(self, key: str, limit_bytes: int | None = None) -> None:
        self.key = key
        self.limit_bytes = limit_bytes
        self._kept = f"{key}_kept"
        self._round = f"{key}_round"

    @property
    def widget_key(self) -> str:
        """The uploader's key this generation."""
        return f"{self.key}_{st.session_state.get(self._round, 0)}"

    @property
    def file(self) -> KeptFile | None:
        """The file kept (None: none was uploaded, or it was removed or forgotten)."""
        kept = st.session_state.get(self._kept)
        return kept if isinstance(kept, KeptFile) else None

    def forget(self) -> None:
        """Drop the kept file and draw an empty uploader next time (safe in a callback)."""
        st.session_state[self._kept] = None
        st.session_state[self._round] = st.session_state.get(self._round, 0) + 1

    def _keep(self, widget_key: str) -> None:
        """Keep the widget's file, its size checked first (the uploader's on_change)."""
        upload = st.session_state.get(widget_key)
        if upload is None:
            st.session_state[self._kept] = None
            return
        size = int(upload.size)
        too_large = self.limit_bytes is not None and size > self.limit_bytes
        st.session_state[self._kept] = KeptFile(str(upload.name),
                                                None if too_large else upload.getvalue(), size)

    def draw(self, label: str, *, types: list[str], max_mb: int, before: str, forget: str,
             help: str | None = None) -> KeptFile | None:   # noqa: A002 - Streamlit's name
        """The uploader, and the file kept: the one in it, or the one uploaded before the tab
        was left (then ``before``, with ``{name}``, says so, beside a button labelled
        ``forget`` that drops it)."""
        widget_key = self.widget_key
        upload = st.file_uploader(label, type=types, key=widget_key, max_upload_size=max_mb,
                                  on_change=self._keep, args=(widget_key,), help=help)
        if upload is not None and self.file is None:
            self._keep(widget_key)        # a file given before this run's callbacks
        kept = self.file
        if upload is None and kept is not None:
            st.info(before.format(name=markdown_code(kept.name)),
                    icon=":material/upload_file:")
            st.button(forget, key=f"{self.key}_forget", on_click=self.forget)
        return kept
