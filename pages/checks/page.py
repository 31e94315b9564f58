"""Checks: figures published in papers, READMEs and model cards, reproduced live on this machine.

One table (core.checks), then the commands that prepare a model a check needs, then the
benchmark: a file the user gives, compared in a background job with progress. The same table in a
terminal: python3 -m serving.checks (serving/checks.py).
"""

from __future__ import annotations

import streamlit as st

from components.analysis_view import encoding_or_none
from components.explain import explain, page_header
from components.html_table import draw_table
from components.i18n import N_, _, ngettext
from components.inputs import shared_inputs
from components.job_progress import show_job
from components.labels import markdown_code, markdown_text
from core import checks
from core.checks import CheckRow
from core.settings import DEFAULT_MODEL
from core.similarity import pair_lists
from pages.checks import cache
from pages.checks import figures as figs
from pages.checks.records import StsOutcome

TITLE = N_("Checks")
EXPLANATION = N_(
    "Figures published in papers, READMEs and model cards, reproduced live on this machine: "
    "each row sets the published figure, with its source, beside the one this app computes "
    "the way it computes every figure on its pages. A green row held within the tolerance "
    "shown; a red one did not. The checks are of the models each row names, whichever model "
    "the sidebar has picked."
)
FILE_KEY = "ck_file"


def draw_checks(rows: list[CheckRow]) -> None:
    st.markdown(markdown_text(figs.counts_line(rows)))
    draw_table(figs.checks_frame(rows), figs.row_styles(rows), "checks", wrap=True)


def draw_missing(rows: list[CheckRow]) -> None:
    """The command that prepares each model a check needs, once per model."""
    for model, command in figs.missing_models(rows):
        explain(_("{model} is not on this machine, so its checks did not run. Prepare it once "
                  "from a terminal on this machine (a download with a progress bar; on a "
                  "machine with no internet, copy the prepared folder over), then open this "
                  "page again:").format(model=markdown_code(model)))
        st.code(command, language="bash")


def report_file(parsed: pair_lists.PairList) -> None:
    """How many pairs the file gave, and what was left out."""
    if parsed.refused or not parsed.pairs:
        st.error(_("No pair could be read from this file. Give {expected}.").format(
            expected=_(checks.STS_EXPECTED)), icon=":material/block:")
        return
    scored = sum(1 for s in parsed.scores if s is not None)
    text = ngettext(
        "{pairs} pair read; {scored} with a score.",
        "{pairs} pairs read, {scored} of them with a score.",
        len(parsed.pairs)).format(
        pairs=f"{len(parsed.pairs):,}", scored=f"{scored:,}")
    skipped = [s.line for s in parsed.skipped if s.reason != pair_lists.HEADER]
    if skipped:
        lines, more = pair_lists.line_ranges(skipped)
        text += " " + ngettext(
            "{n} line skipped: {lines}",
            "{n} lines skipped: {lines}",
            len(skipped)).format(n=f"{len(skipped):,}", lines=lines)
        if more:
            text += " " + _("and {more} more").format(more=f"{more:,}")
    st.info(text, icon=":material/rule:")


def draw_benchmark() -> CheckRow:
    """The file uploader and what became of the file; the benchmark's row for the table."""
    st.subheader(_("The sentence-similarity benchmark: your file"))
    explain(_("The published figure is all-MiniLM-L6-v2's cosine Spearman on the STS "
              "benchmark's test split. Give {expected}: the app encodes both sentences of "
              "every pair as the model does, takes their cosine, and ranks the cosines against "
              "the scores.").format(expected=_(checks.STS_EXPECTED)))
    upload = st.file_uploader(_("The STS benchmark's test split (CSV or TSV)"),
                              type=["csv", "tsv", "txt"], key=FILE_KEY, max_upload_size=20)
    if upload is None:
        return checks.sts_needed()
    job = cache.sts_job(upload.getvalue())
    # A file that finishes within the run's short wait shows without a progress card.
    outcome: StsOutcome | None = show_job(
        job, _("Comparing the pairs on {model}. Sentences encoded: {amount}."),
        _("The comparison stopped with an error. Give the file again."), model=DEFAULT_MODEL)
    if outcome is None:
        return checks.sts_needed()
    report_file(outcome.parsed)
    if outcome.error is not None:
        st.error(_(outcome.error.template).format(**{
            k: _(v) if isinstance(v, str) else v for k, v in outcome.error.params.items()}),
            icon=":material/error:")
    return outcome.row if outcome.row is not None else checks.sts_needed()


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    # The notices every page gives on the sidebar's text (empty, cut, ...); the checks read none
    # of it, so a refused text does not stop the page.
    encoding_or_none(key)
    rows = list(cache.get_published_checks(DEFAULT_MODEL, cache.models_here()))
    table = st.container()
    draw_missing(rows)
    sts_row = draw_benchmark()
    with table:
        draw_checks([*rows, sts_row])


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
