"""The lines of a user's file that were not read, said on screen: per reason, how many lines,
which (their numbers as ranges), why in plain words and what to do; and how the reader read
the file (its separator, quoting, format and characters), in the same words on every page.

A sentence from a user's file is never dropped without its line number and its true reason on
screen. The pages that read files (pairs, contexts) word the reasons that mean something of
their own (a pair's missing sentence B, a corpus's empty sentence); the reader's own reasons
(quotes, JSON) are worded here once, and a reason no page words still gets its lines named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import streamlit as st

from components.i18n import N_, N_plural, Plural, _, counted
from core.sentence_files.reader import MAX_LINE_CHARS, Format, Quoting, Reason, Skipped, Table
from core.similarity.pair_lists import line_ranges

# {n} lines (a count: N_plural), {lines} their numbers as ranges; {example} a JSON Lines line the
# page reads.
READER_SKIPPED = {
    Reason.UNREADABLE: N_plural(
        "Skipped {n} line with an open quote: {lines}. A quotation mark opens a field and does "
        "not close, or text follows the closing one. Put the whole sentence in quotation marks "
        "and double each quotation mark inside it: \"She said \"\"hi\"\".\"",
        "Skipped {n} lines with an open quote: {lines}. A quotation mark opens a field and does "
        "not close, or text follows the closing one. Put the whole sentence in quotation marks "
        "and double each quotation mark inside it: \"She said \"\"hi\"\".\""),
    Reason.JSON: N_plural(
        "Skipped {n} line that is not a JSON object (bad JSON): {lines}. In JSON Lines each line "
        "is one object, such as {example}.",
        "Skipped {n} lines that are not JSON objects (bad JSON): {lines}. In JSON Lines each "
        "line is one object, such as {example}."),
    Reason.DEEP: N_plural(
        "Skipped {n} line of JSON nested too deep to read: {lines}. In JSON Lines each line is "
        "one flat object, such as {example}.",
        "Skipped {n} lines of JSON nested too deep to read: {lines}. In JSON Lines each line is "
        "one flat object, such as {example}."),
}
# A reason no page words (a new one of the reader's): its lines are still named.
OTHER_SKIPPED = N_plural(
    "Skipped {n} line that could not be read as written: {lines}. Check this line and correct it.",
    "Skipped {n} lines that could not be read as written: {lines}. Check these lines and correct "
    "them.")
# How a text file was split: the separator named in a sentence ("separated by a tab"), in a
# list ("separated by tabs"), and why a line with extra fields may be a sentence cut in two.
SEPARATOR_WORDS = {"\t": N_("a tab"), ",": N_("a comma"), ";": N_("a semicolon")}
DELIMITER_WORDS = {"\t": N_("tabs"), ",": N_("commas"), ";": N_("semicolons")}
NO_DELIMITER = N_("nothing (one column)")
EXTRA_WHY = {
    "\t": N_("A tab inside a sentence also makes an extra field, and moves the columns after "
             "it: if these lines are like that, skip them."),
    ",": N_("A comma outside quotation marks also makes an extra field, and moves the columns "
            "after it: if these lines are like that, quote those sentences or skip the lines."),
    ";": N_("A semicolon outside quotation marks also makes an extra field, and moves the "
            "columns after it: if these lines are like that, quote those sentences or skip the "
            "lines."),
}
QUOTING_WORDS = {
    Quoting.NONE: N_("a quotation mark is part of the sentence"),
    Quoting.CSV: N_("with CSV quoting (a field in quotation marks may hold the separator, "
                    "and two quotation marks are one)"),
}
FORMAT_WORDS = {Format.JSONL: N_("JSON Lines, one record a line"),
                Format.PARQUET: N_("Parquet, one record a row")}


def separator_words(delimiter: str) -> str:
    """The separator in a sentence ("a tab"); a tab when the file has none of the three."""
    return _(SEPARATOR_WORDS.get(delimiter, SEPARATOR_WORDS["\t"]))


def extra_why(delimiter: str) -> str:
    """Why a line with extra fields may be a sentence cut in two by ``delimiter`` ("" when
    nothing splits the lines)."""
    why = EXTRA_WHY.get(delimiter)
    return _(why) if why else ""


def how_read(table: Table) -> str:
    """How the reader read ``table``: its separator and quoting, or its format."""
    if table.format == Format.TEXT:
        return _("separated by {delimiter}; {quoting}").format(
            delimiter=_(DELIMITER_WORDS.get(table.delimiter, NO_DELIMITER)),
            quoting=_(QUOTING_WORDS[table.quoting]))
    return _(FORMAT_WORDS[table.format])


def charset_warning(table: Table) -> None:
    """A warning when the file was not UTF-8: which characters it was read as, and what to do
    if its sentences look wrong."""
    if table.charset not in ("utf-8", "utf-16", "binary"):
        st.warning(_("This file is not UTF-8: it was read as {charset}. If the sentences below "
                     "look wrong, save it as UTF-8 and upload it again.").format(
            charset=table.charset.upper()), icon=":material/translate:")


def lines_words(numbers: Iterable[int]) -> str:
    """Line numbers as ranges ("626–879, 1350–1379"), and how many more when there are many."""
    lines, more = line_ranges(numbers)
    return lines + (" " + _("and {more} more").format(more=f"{more:,}") if more else "")


def by_reason(skipped: Iterable[Skipped]) -> dict[Reason, list[int]]:
    """The skipped lines' numbers under their reason, the reasons in order of their first line."""
    out: dict[Reason, list[int]] = {}
    for item in skipped:
        out.setdefault(item.reason, []).append(item.line)
    return out


def report_skipped(skipped: Iterable[Skipped], messages: Mapping[Reason, str | Plural],
                   header: str,
                   example: str = "", **values: str) -> None:
    """One line per reason: the header line as an info (``header``, with ``{lines}``), every
    other reason as a warning, worded by ``messages`` (untranslated templates), else by the
    reader's words here, else by a generic one. Templates get ``{n}``, ``{lines}``, ``{chars}``
    (``MAX_LINE_CHARS``), ``{example}`` and ``values``."""
    for reason, numbers in by_reason(skipped).items():
        lines = lines_words(numbers)
        if reason == Reason.HEADER:
            st.info(_(header).format(lines=lines), icon=":material/rule:")
            continue
        message = messages.get(reason) or READER_SKIPPED.get(reason, OTHER_SKIPPED)
        st.warning(counted(message, len(numbers)).format(n=f"{len(numbers):,}", lines=lines,
                                     chars=f"{MAX_LINE_CHARS:,}", example=example, **values),
                   icon=":material/rule:")
