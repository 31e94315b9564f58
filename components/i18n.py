"""The interface's language: one ``_()`` for every string a user reads, English or 简体中文.

Streamlit has no translation of its own, so this is plain gettext: the catalogs are
``locales/<lang>/LC_MESSAGES/<domain>.po`` (one domain per page folder, ``app`` for the frame,
components and core's messages), compiled with Babel into gettext translations the first time a
language is asked for, so a fresh checkout needs no build step. English is the source language:
its ``_()`` returns the message itself.

The language of the run is a context variable set by the router at the start of every script
run (each session's script runs in its own thread), so figure builders with no Streamlit call
translate too. Cached results must hold numbers, never translated text, or a cache hit would
show one session's language to another.
"""

from __future__ import annotations

import functools
import gettext
import io
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple

LOCALES = Path(__file__).resolve().parent.parent / "locales"
LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"

_language: ContextVar[str] = ContextVar("language", default=DEFAULT_LANGUAGE)


def set_language(code: str | None) -> str:
    """Make ``code`` the language of this run (unknown codes mean English); returns it."""
    code = code if code in LANGUAGES else DEFAULT_LANGUAGE
    _language.set(code)
    return code


def language() -> str:
    """The language of this run: "en" or "zh"."""
    return _language.get()


# Not a result: one compiled catalog per language (two), constant for the process's life, and
# read on every _() call, where st.cache_resource would hash the argument each time
# (tests/test_page_shape.py allows this functools cache, and heatmap_image's colour tables).
@functools.cache
def translations(code: str) -> gettext.NullTranslations:
    """Every domain's catalog of ``code`` compiled and chained into one gettext lookup."""
    merged = gettext.NullTranslations()
    if code == DEFAULT_LANGUAGE:   # the source language: nothing to compile
        return merged
    # Babel where a catalog is compiled, not at import: this module is on the way to the
    # server's first answer (the loading card's words), and Babel took 17 ms of it.
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    folder = LOCALES / code / "LC_MESSAGES"
    for po in sorted(folder.glob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f, locale=code)
        buffer = io.BytesIO()
        write_mo(buffer, catalog)
        buffer.seek(0)
        merged.add_fallback(gettext.GNUTranslations(buffer))
    return merged


@functools.cache
def _count_forms(code: str) -> dict[str, str]:
    """Either English form of every plural entry -> its translation for a count of that form
    (core's errors keep the form for their count as a plain template: core.errors.N_plural)."""
    forms: dict[str, str] = {}
    if code == DEFAULT_LANGUAGE:
        return forms
    from babel.messages.pofile import read_po

    folder = LOCALES / code / "LC_MESSAGES"
    for po in sorted(folder.glob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f, locale=code)
        for entry in catalog:
            if entry.pluralizable and isinstance(entry.string, tuple) and all(entry.string):
                singular, plural = entry.id[0], entry.id[1]
                forms[singular] = translations(code).ngettext(singular, plural, 1)
                forms[plural] = translations(code).ngettext(singular, plural, 2)
    return forms


def _(message: str) -> str:
    """``message`` in this run's language (the English text when it has no translation)."""
    if not message:
        return message
    code = _language.get()
    found = translations(code).gettext(message)
    return _count_forms(code).get(message, found) if found == message else found


def N_(message: str) -> str:  # noqa: N802 - gettext's conventional name
    """Mark a module-level string for translation; ``_()`` translates it where it is shown."""
    return message


class Plural(NamedTuple):
    """A message with a count, marked at module level: its English singular and plural forms
    (``N_plural``), put in this run's language for the count where it is shown (``counted``)."""

    singular: str
    plural: str


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a count message for the count ``n`` in this run's language: English has two
    (``singular`` for 1), Simplified Chinese one (the catalogs' ``Plural-Forms: nplurals=1``).
    Every count a user reads goes through here, never "{n} lines" for one line."""
    return translations(_language.get()).ngettext(singular, plural, n)


def N_plural(singular: str, plural: str) -> Plural:  # noqa: N802 - as N_
    """Mark a module-level count message for translation; ``counted`` translates it."""
    return Plural(singular, plural)


def counted(message: str | Plural, n: int) -> str:
    """``message`` for the count ``n``: a ``Plural`` through ``ngettext``, a plain message
    (one with no count in it) through ``_()``."""
    if isinstance(message, Plural):
        return ngettext(message.singular, message.plural, n)
    return _(message)


def every_language(message: str) -> set[str]:
    """``message`` in every language: how a link made in one language opens in another."""
    return {translations(code).gettext(message) for code in LANGUAGES} | {message}
