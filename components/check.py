"""One widget for every live check: the verdict (passed / failed), the max |difference|, the
tolerance it is held to, and what was compared, so nobody has to judge a bare 1.85e-06."""

from __future__ import annotations

import math

import streamlit as st

from components.i18n import N_, _
from components.labels import markdown_text

PASSED, FAILED, NOT_RUN = N_("passed"), N_("failed"), N_("not checked")
LINE = N_("**Live check {verdict}** · {what}: max |difference| = {error}, tolerance {tolerance}.")
NOT_RUN_LINE = N_("**Live check not run** · {what}: the model was unloaded meanwhile; open the "
                  "page again to run it.")


def verdict(error: float, tolerance: float) -> str:
    """PASSED, FAILED, or NOT_RUN for a check that has no number (NaN)."""
    if math.isnan(error):
        return NOT_RUN
    return PASSED if error <= tolerance else FAILED


def check_text(error: float, tolerance: float, what: str) -> str:
    """The check's one line (markdown, translated); ``what`` is plain text, already translated
    (shown as written: its underscores and bars are not markup)."""
    result = verdict(error, tolerance)
    what = markdown_text(what)
    if result == NOT_RUN:
        return _(NOT_RUN_LINE).format(what=what)
    return _(LINE).format(verdict=_(result), error=f"{error:.2e}", tolerance=f"{tolerance:g}",
                          what=what)


def draw_check(error: float, tolerance: float, what: str, where=None) -> str:
    """The check in a green (passed) or red (failed) box; returns the verdict (English)."""
    where = where if where is not None else st
    result = verdict(error, tolerance)
    text = check_text(error, tolerance, what)
    if result == PASSED:
        where.success(text, icon=":material/check_circle:")
    elif result == FAILED:
        where.error(text, icon=":material/cancel:")
    else:
        where.info(text, icon=":material/help:")
    return result
