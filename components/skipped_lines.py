"""The lines of a user's file that were not read, said on screen: per reason, how many lines,
which (their numbers as ranges), why in plain words and what to do.

A sentence from a user's file is never dropped without its line number and its true reason on
screen. The pages that read files (pairs, contexts) word the reasons that mean something of
their own (a pair's missing sentence B, a corpus's empty sentence); the reader's own reasons
(quotes, JSON) are worded here once, and a reason no page words still gets its lines named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import streamlit as st

from components.i18n import N_, _
from core.sentence_files.reader import MAX_LINE_CHARS, Reason, Skipped
from core.similarity.pair_lists import line_ranges

# {n} lines, {lines} their numbers as ranges; {example} a JSON Lines line the page reads.
READER_SKIPPED = {
    Reason.UNREADABLE: N_("Skipped {n} lines with an open quote: {lines}. A quotation mark opens "
                          "a field and does not close, or text follows the closing one. Put the "
                          "whole sentence in quotation marks and double each quotation mark "
                          "inside it: \"She said \"\"hi\"\".\""),
    Reason.JSON: N_("Skipped {n} lines that are not JSON objects (bad JSON): {lines}. In JSON "
                    "Lines each line is one object, such as {example}."),
    Reason.DEEP: N_("Skipped {n} lines of JSON nested too deep to read: {lines}. In JSON Lines "
                    "each line is one flat object, such as {example}."),
}
# A reason no page words (a new one of the reader's): its lines are still named.
OTHER_SKIPPED = N_("Skipped {n} lines that could not be read as written: {lines}. Check these "
                   "lines and correct them.")


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


def report_skipped(skipped: Iterable[Skipped], messages: Mapping[Reason, str], header: str,
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
        st.warning(_(message).format(n=f"{len(numbers):,}", lines=lines,
                                     chars=f"{MAX_LINE_CHARS:,}", example=example, **values),
                   icon=":material/rule:")
