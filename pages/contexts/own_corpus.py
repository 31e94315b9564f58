"""Contexts, the Your own corpus tab's corpus: the text or file it comes from (kept across tabs),
its columns, what was read, skipped and why (said with components.skipped_lines), and its pass
through the model (a job on the board, shown with components.job_progress.show_job).
"""

from __future__ import annotations

import streamlit as st

from components.explain import explain
from components.i18n import N_, N_plural, _, ngettext
from components.job_progress import show_job
from components.kept_upload import KeptUpload
from components.labels import markdown_code
from components.skipped_lines import report_skipped
from core.contexts.user_corpus import MAX_SENTENCES, MAX_TOKENS, UserCorpus
from core.contexts.vectors import ContextVectors
from core.sentence_files.reader import Reason, Refusal, Table
from pages.contexts import cache
from pages.contexts.records import Context, PageState

# The widgets' keys (not in the URL).
TEXT_KEY, FILE_KEY = "ctx_text", "ctx_file"
SENTENCE_COL_KEY, LABEL_COL_KEY = "ctx_col", "ctx_label_col"
NO_LABEL = N_("no label column")
REFUSALS = {
    Refusal.TOO_LARGE: N_("This file is too large: at most 10 MB is read. Keep the sentences "
                          "you need, or split the file."),
    Refusal.BINARY: N_("This file is not text (it holds binary data): save the sentences as "
                       "text, CSV or TSV and try again."),
    Refusal.EXCEL: N_("This is a spreadsheet workbook: save the sheet as CSV and upload that."),
    Refusal.NOT_PARQUET: N_("This file is named as Parquet but is not a Parquet file."),
    Refusal.NOTHING: N_("No sentence found: every line (or every cell of the chosen column) is "
                        "empty."),
    Refusal.HEADER_ONLY: N_("The file holds only a line of column names, no sentence."),
}
# Every line with text was skipped, for the reasons said above the refusal.
NOTHING_READ = N_("No sentence could be read: every line was skipped, for the reasons above.")
# Why lines of the corpus were not read, and what to do: {n} lines, {lines} their numbers as
# ranges (the reader's quotes and JSON: components.skipped_lines' words).
SKIPPED = {
    Reason.EMPTY: N_plural(
        "Skipped {n} line whose sentence is empty: {lines}. Write the sentence on the line or "
        "remove the line; if the sentences are in another column, pick that column.",
        "Skipped {n} lines whose sentence is empty: {lines}. Write the sentence on the line or "
        "remove the line; if the sentences are in another column, pick that column."),
    Reason.LONG: N_plural(
        "Skipped {n} line longer than {chars} characters: {lines}. A line holds one sentence: "
        "check that the line ends where the sentence does.",
        "Skipped {n} lines longer than {chars} characters: {lines}. A line holds one sentence: "
        "check that the lines end where the sentences do."),
    Reason.EXTRA: N_plural(
        "Skipped {n} line with more fields than the other lines: {lines}. A tab (or, in CSV, a "
        "comma outside quotation marks) inside a sentence cuts it in two, so it could not be read "
        "as written: remove it, or in CSV put the sentence in quotation marks.",
        "Skipped {n} lines with more fields than the other lines: {lines}. A tab (or, in CSV, a "
        "comma outside quotation marks) inside a sentence cuts it in two, so it could not be read "
        "as written: remove it, or in CSV put the sentence in quotation marks."),
}
HEADER_WORDS = N_("Line {lines} holds the column names, not a sentence.")
JSON_EXAMPLE = '{"text": "…", "label": "…"}'


UPLOAD = KeptUpload(FILE_KEY)


def read_source(state: PageState) -> tuple[str, str | bytes] | None:
    """The pasted text or the uploaded file (which wins), kept in ``state`` apart from their
    widgets so the other tabs do not lose them; None when there is neither."""
    state.text = st.text_area(
        _("Sentences, one a line (a tab and a label after a sentence colour the map by label)"),
        value=state.text, key=TEXT_KEY, height=150,
        placeholder="The bank raised its rates.\tmoney\nWe sat on the river bank.\triver") or ""
    kept = UPLOAD.draw(
        _("…or a file: one sentence a line (.txt), or a column of a CSV, TSV, JSON Lines or "
          "Parquet file"), types=["txt", "csv", "tsv", "jsonl", "json", "parquet"], max_mb=20,
        before=_("Using {name}, the file uploaded before."), forget=_("Forget the file"))
    explain(_("At most {sentences} sentences or {tokens} tokens, whichever comes first; a file "
              "of at most 10 MB.").format(sentences=f"{MAX_SENTENCES:,}",
                                           tokens=f"{MAX_TOKENS:,}"))
    state.keep_file(kept)
    return state.source(kept)


def column_pickers(table: Table, sentence: int, label: int | None) -> tuple[int, int | None]:
    names = [c or _("column {k}").format(k=k + 1) for k, c in enumerate(table.columns)]
    left, right = st.columns(2)
    chosen = left.selectbox(_("Sentence column"), range(len(names)), index=sentence,
                            format_func=lambda k: names[k], key=SENTENCE_COL_KEY)
    options = [None, *[k for k in range(len(names)) if k != chosen]]
    label = right.selectbox(_("Label column"), options,
                            index=options.index(label) if label in options else 0,
                            format_func=lambda k: _(NO_LABEL) if k is None else names[k],
                            key=LABEL_COL_KEY)
    return chosen, label


def report_corpus(corpus: UserCorpus, read: int) -> bool:
    """Say what was used and left out (every line not read, by its number, with why and what to
    do); False when there is nothing to run."""
    left_out = corpus.left_out()
    if corpus.refused:   # the lines skipped first: they are why nothing could be read
        report_skipped(left_out, SKIPPED, HEADER_WORDS, example=markdown_code(JSON_EXAMPLE))
        skipped = any(s.reason != Reason.HEADER for s in left_out)
        message = NOTHING_READ if corpus.refused == Refusal.NOTHING and skipped else \
            REFUSALS.get(corpus.refused, REFUSALS[Refusal.NOTHING])
        st.error(_(message), icon=":material/block:")
        return False
    parts = [ngettext(
        "{n} sentence ({t} tokens) of {read} rows.",
        "{n} sentences ({t} tokens) of {read} rows.",
        len(corpus.records)).format(
        n=f"{len(corpus.records):,}", t=f"{corpus.tokens:,}", read=f"{read:,}")]
    if corpus.truncated:
        parts.append(ngettext(
            "{n} sentence is longer than the model reads and was cut.",
            "{n} sentences are longer than the model reads and were cut.",
            corpus.truncated).format(
            n=f"{corpus.truncated:,}"))
    explain(" ".join(parts))
    report_skipped(left_out, SKIPPED, HEADER_WORDS, example=markdown_code(JSON_EXAMPLE))
    if corpus.beyond:
        limit = (_("{tokens} tokens").format(tokens=f"{MAX_TOKENS:,}") if corpus.by_tokens
                 else _("{sentences} sentences").format(sentences=f"{MAX_SENTENCES:,}"))
        st.warning(_("Only the first {limit} are used: {n} more from line {line} on were not "
                     "read.").format(limit=limit, n=f"{corpus.beyond:,}",
                                     line=f"{corpus.beyond_from:,}"),
                   icon=":material/content_cut:")
    if len(corpus.labels) == 1:
        st.info(_("Every sentence has the same label ({label}): the map has nothing to colour "
                  "apart, so it is drawn in one colour.").format(
            label=markdown_code(corpus.labels[0])), icon=":material/info:")
    return True


def user_vectors(ctx: Context, corpus: UserCorpus, layers: tuple[int, ...]
                 ) -> ContextVectors | None:
    """The corpus's pass: from the cache, or its job (progress drawn while it runs)."""
    name = ctx.key.model
    if not cache.has_user_vectors(name, corpus, layers):
        done = show_job(cache.user_job(name, corpus, layers),
                        _("Your sentences through the model: {amount} ({seconds} s)"),
                        _("The run over your sentences stopped with an error. Try again, or "
                          "fewer sentences."))
        if done is None:
            return None
    try:
        return cache.get_user_vectors(name, corpus.key(), layers)
    except LookupError:   # handed to the cache and dropped since: run it again
        st.rerun()
        return None
