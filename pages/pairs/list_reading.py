"""Pairs, the Many pairs tab's list: the box or the file it comes from, the columns picked, and
what was read, skipped and why (said on screen with components.skipped_lines).

The tab's state (records.PairsState) is read and written here only, and by the tab's table
(pages/pairs/many_pairs.py) through ``state``, ``widget`` and ``set_widget``.
"""

from __future__ import annotations

from functools import partial

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.explain import explain
from components.i18n import N_, N_plural, _, counted, language, ngettext
from components.kept_upload import KeptUpload
from components.labels import markdown_code, markdown_text
from components.skipped_lines import (
    READER_SKIPPED,
    charset_warning,
    extra_why,
    how_read,
    lines_words,
    report_skipped,
    separator_words,
)
from core.sentence_files import reader
from core.sentence_files.reader import Table
from core.similarity import pair_lists as lists
from core.similarity.pair_examples import SCORED, example_text
from pages.pairs.records import ListSource, PairsState, Picked, SortOrder

# URL keys (values of a shared link).
EXAMPLES_PARAM = "pr_list"          # ?pr_list=examples: the built-in scored set
LIST_KEY, FILE_KEY = "pr_text", "pr_file"
COLUMN_KEYS = ("pr_col_a", "pr_col_b", "pr_col_score")
SKIP_KEY = "pr_skip_extra"          # skip the lines with more fields than the columns
STATE_KEY = "pr_state"              # the tab's PairsState (records.py)
UPLOAD_MB = 12                      # the uploader's own limit; the reader's is MAX_BYTES
PREVIEW_CHARS = 60

# Why lines were skipped, and what to do about it: {n} lines, {lines} their numbers as ranges
# (the reader's own reasons, quotes and JSON, are components.skipped_lines' words).
SKIPPED = READER_SKIPPED | {
    lists.MISSING: N_plural(
        "Skipped {n} line with missing fields: {lines}. It holds fewer fields than the columns "
        "picked need: give each line sentence A and sentence B, separated by {separator}, or pick "
        "other columns.",
        "Skipped {n} lines with missing fields: {lines}. They hold fewer fields than the columns "
        "picked need: give each line sentence A and sentence B, separated by {separator}, or pick "
        "other columns."),
    lists.EMPTY: N_plural(
        "Skipped {n} line with an empty sentence A or B: {lines}. Write both sentences on the "
        "line, or remove it.",
        "Skipped {n} lines with an empty sentence A or B: {lines}. Write both sentences on the "
        "line, or remove it."),
    lists.SCORE: N_plural(
        "Skipped {n} line whose score is not a number: {lines}. A score is a number, such as 3 "
        "or 4.5: correct it, or pick no score column.",
        "Skipped {n} lines whose score is not a number: {lines}. A score is a number, such as 3 "
        "or 4.5: correct it, or pick no score column."),
    lists.LONG: N_plural(
        "Skipped {n} line longer than {chars} characters: {lines}. A line holds one pair: check "
        "that the line ends where the pair does.",
        "Skipped {n} lines longer than {chars} characters: {lines}. A line holds one pair: check "
        "that the lines end where the pairs do."),
    lists.EXTRA: N_plural(
        "Skipped {n} line with more fields than the columns, as asked: {lines}. Untick the box "
        "to read its picked columns.",
        "Skipped {n} lines with more fields than the columns, as asked: {lines}. Untick the box "
        "to read their picked columns."),
}
# Extra fields whose picked cells do not fit: a separator inside a sentence moved the columns.
SHIFTED = {
    "\t": N_plural(
        "Skipped {n} line whose fields are shifted: {lines}. It holds more fields than the "
        "columns, and the picked cells do not fit (an empty sentence, or a score that is not a "
        "number): a tab inside a sentence split it. Replace the tab in the sentence with a space.",
        "Skipped {n} lines whose fields are shifted: {lines}. They hold more fields than the "
        "columns, and the picked cells do not fit (an empty sentence, or a score that is not a "
        "number): a tab inside a sentence split it. Replace the tab in the sentence with a space."),
    ",": N_plural(
        "Skipped {n} line whose fields are shifted: {lines}. It holds more fields than the "
        "columns, and the picked cells do not fit (an empty sentence, or a score that is not a "
        "number): a comma outside quotation marks split a sentence. Put a sentence that holds a "
        "comma in quotation marks.",
        "Skipped {n} lines whose fields are shifted: {lines}. They hold more fields than the "
        "columns, and the picked cells do not fit (an empty sentence, or a score that is not a "
        "number): a comma outside quotation marks split a sentence. Put a sentence that holds a "
        "comma in quotation marks."),
    ";": N_plural(
        "Skipped {n} line whose fields are shifted: {lines}. It holds more fields than the "
        "columns, and the picked cells do not fit (an empty sentence, or a score that is not a "
        "number): a semicolon outside quotation marks split a sentence. Put a sentence that holds "
        "a semicolon in quotation marks.",
        "Skipped {n} lines whose fields are shifted: {lines}. They hold more fields than the "
        "columns, and the picked cells do not fit (an empty sentence, or a score that is not a "
        "number): a semicolon outside quotation marks split a sentence. Put a sentence that holds "
        "a semicolon in quotation marks."),
}
HEADER_WORDS = N_("Line {lines} holds the column names, not a pair.")
# The lines kept with more fields than the columns: one line, beside the switch that skips them.
EXTRA_KEPT = {
    True: N_plural(
        "{n} line holds more fields than the header names ({width}; {extra} more): {lines}. Its "
        "picked columns come before the extra fields and are read.",
        "{n} lines hold more fields than the header names ({width}; {extra} more): {lines}. "
        "Their picked columns come before the extra fields and are read."),
    False: N_plural(
        "{n} line holds more fields than most lines ({width}; {extra} more): {lines}. Its picked "
        "columns come before the extra fields and are read.",
        "{n} lines hold more fields than most lines ({width}; {extra} more): {lines}. Their "
        "picked columns come before the extra fields and are read."),
}
JSON_EXAMPLE = '{"sentence1": "…", "sentence2": "…", "score": 4.5}'
HOW_WORDS = {"names": N_("picked by the column names"),
             "content": N_("picked by what the columns hold"),
             "order": N_("the columns in order"), "yours": N_("your choice")}
SORT_LABELS = {
    SortOrder.LINE: N_("as in the list"), SortOrder.COSINE_HIGH: N_("cosine, highest first"),
    SortOrder.COSINE_LOW: N_("cosine, lowest first"),
    SortOrder.SCORE_HIGH: N_("score, highest first"),
    SortOrder.GAP: N_("model and scores disagree most first"),
}


# --- state: the page's only reads and writes of st.session_state ---------------------------------

def state() -> PairsState:
    """The Many pairs tab's state (records.PairsState), made on the session's first run."""
    kept = st.session_state.get(STATE_KEY)
    if not isinstance(kept, PairsState):
        kept = st.session_state[STATE_KEY] = PairsState()
    return kept


def widget(key: str) -> object:
    """A widget's value this session (None: never drawn, or forgotten on a run that did not
    draw it)."""
    return st.session_state.get(key)


def set_widget(key: str, value: object) -> None:
    """Set a widget's value before it is drawn (or from a callback): a reset, an example."""
    st.session_state[key] = value


UPLOAD = KeptUpload(FILE_KEY, limit_bytes=reader.MAX_BYTES)


def _load_examples() -> None:
    set_widget(LIST_KEY, example_text())
    state().text = example_text()
    UPLOAD.forget()                    # a fresh uploader: the example set is what is compared


def _keep_text() -> None:
    state().text = str(widget(LIST_KEY) or "")


def read_source() -> ListSource | Table | None:
    """The list in the box, or the uploaded file (which wins): its source, a refused table (a
    file too large, refused from its size before it is read), or None when there is neither.

    Both are kept apart from their widgets (the box's text in PairsState, the file by
    KeptUpload): Streamlit forgets a widget's value on a run that does not draw it, so opening
    the One pair tab would otherwise lose the list.
    """
    kept = state()
    if widget(LIST_KEY) is None:
        if kept.text is not None:
            set_widget(LIST_KEY, kept.text)
        elif st.query_params.get(EXAMPLES_PARAM) == "examples":   # a link to the example set
            kept.text = example_text()
            set_widget(LIST_KEY, kept.text)
    row = st.container(horizontal=True)
    row.button(_("Load the example set ({n} pairs)").format(n=len(SCORED)), key="pr_examples",
               on_click=_load_examples, icon=":material/playlist_add:")
    explain(_("The example set was written for this explorer, not taken from a benchmark: 30 "
              "English and 30 Chinese pairs, each scored by hand from 0 (unrelated) to 5 (same "
              "meaning)."))
    text = st.text_area(
        _("Pairs, one a line: sentence A, sentence B and an optional score, separated by a tab "
          "or a comma"), key=LIST_KEY, height=160, on_change=_keep_text,
        placeholder="A man is playing the guitar.\tSomeone is strumming a guitar.\t4.6")
    upload = UPLOAD.draw(
        _("…or a file: CSV, TSV, JSON Lines or Parquet, with as many columns as it has"),
        types=["csv", "tsv", "txt", "jsonl", "json", "parquet"], max_mb=UPLOAD_MB,
        before=_("Comparing {name}, the file uploaded before."), forget=_("Forget the file"))
    explain(_("At most {pairs} pairs and {mb} MB. A file keeps its own columns (a benchmark's "
              "genre, year, score, sentence 1, sentence 2, ...): the sentence and score columns "
              "are picked from their names or what they hold, and you can change them. Each "
              "sentence reaches the model exactly as it is in the file, only the spaces around "
              "it removed; in tab-separated text a quotation mark is part of the sentence. "
              "Text may be UTF-8, UTF-16, GB18030 or Latin-1.").format(
        pairs=f"{lists.MAX_PAIRS:,}", mb=reader.MAX_BYTES // 1_000_000))
    examples = (text or "") == example_text() and upload is None
    if examples:
        st.query_params[EXAMPLES_PARAM] = "examples"
    else:
        st.query_params.pop(EXAMPLES_PARAM, None)
    if upload is not None:
        if (text or "").strip():
            st.info(_("The uploaded file is compared, not the pairs in the box: remove the file "
                      "to compare those."), icon=":material/upload_file:")
        return (reader.size_refusal(upload.size) if upload.data is None
                else ListSource(upload.data, upload.name))
    return ListSource(text) if (text or "").strip() else None


def column_label(table: Table, k: int) -> str:
    """A column as the pickers name it (and the link carries it): its number first, then its
    name or its first cell; 0 for no column."""
    if k < 0:
        return "0 · " + _("none")
    name = table.columns[k] if k < len(table.columns) else ""
    if not name and table.rows:
        first = table.rows[0].cells[k] if k < len(table.rows[0].cells) else ""
        name = "“" + preview(first, 24) + "”" if first else ""
    return f"{k + 1} · {name}" if name else str(k + 1)


def pick_columns(table: Table) -> Picked:
    """Sentence A, B and score columns (0-based; score None): proposed for each new list, shown
    as pickers bound to the link where the table has a choice to make."""
    proposal = lists.propose_columns(table)
    proposed = (proposal.a, proposal.b, -1 if proposal.score is None else proposal.score)
    width = table.width
    if width <= 3 and table.header_line is None:
        return Picked(proposal.a, proposal.b, proposal.score, how=proposal.how)
    options = list(range(width))
    identity = (width, table.columns, len(table.rows), table.rows[0].line if table.rows else 0)
    kept = state()
    if kept.proposed_for != identity:
        first_list = kept.proposed_for is None
        kept.proposed_for = identity
        for key, value, allowed in zip(COLUMN_KEYS, proposed, (options, options, [-1, *options]),
                                       strict=True):
            linked = st.query_params.get(key) if first_list else None
            asked = _column_number(linked)
            set_widget(key, asked if asked in allowed else value)
    left, middle, right = st.columns(3)
    picked = []
    for where, key, label, allowed in zip(
            (left, middle, right), COLUMN_KEYS,
            (_("Sentence A column"), _("Sentence B column"), _("Score column")),
            (options, options, [-1, *options]), strict=True):
        value = where.selectbox(label, allowed, key=key, bind="query-params",
                                format_func=partial(column_label, table))
        picked.append(int(value) if value is not None else allowed[0])
    a, b, score = picked
    return Picked(a, b, None if score < 0 else score,
                  how="yours" if tuple(picked) != proposed else proposal.how)


def _column_number(value: str | None) -> int | None:
    """A column from the link: its number (1-based; 0 or "none": no score column)."""
    text = (value or "").strip().split(" ")[0]
    if text.lower() in ("0", "none"):
        return -1
    return int(text) - 1 if text.isdigit() and 0 < int(text) < 10_000 else None


def report_refusal(table: Table) -> None:
    refused = {
        reader.Refusal.BINARY: _("This file is not text (it holds binary data): save the pairs "
                                 "as CSV, TSV, JSON Lines or Parquet and try again."),
        reader.Refusal.TOO_LARGE: _("This list is {size} MB; at most {mb} MB is read. Split it "
                                    "into smaller lists.").format(
            size=f"{table.size / 1e6:.1f}", mb=reader.MAX_BYTES // 1_000_000),
        reader.Refusal.EXCEL: _("This is an Excel workbook, whatever its name says. In Excel, "
                                "choose File › Save As › CSV UTF-8, and upload that file."),
        reader.Refusal.NOT_PARQUET: _("This file is named as Parquet but is not a Parquet file, "
                                      "or it is damaged: save the data again as Parquet, or as "
                                      "CSV."),
        reader.Refusal.NOTHING: _("No line holds a pair: write sentence A and sentence B on one "
                                  "line, separated by a tab or a comma."),
        reader.Refusal.HEADER_ONLY: _("This list holds only its header line (the column names "
                                      "{names}) and no pairs.").format(
            names=markdown_code(", ".join(table.columns)[:120])),
    }
    st.error(refused[table.refused or reader.Refusal.NOTHING], icon=":material/block:")


def read_summary(table: Table, parsed: lists.PairList, picked: Picked) -> None:
    """What was read and how: lines read, used, skipped; delimiter, quoting, charset; columns."""
    explain(_("Lines read: {read}; pairs used: {used}; lines skipped: {skipped}. The file is "
              "{how}. Sentence A: {a}; sentence B: {b}; score: {score} ({why}).").format(
        read=f"{table.lines:,}", used=f"{len(parsed.pairs):,}", skipped=f"{len(parsed.skipped):,}",
        how=how_read(table), a=markdown_text(column_label(table, picked.a)),
        b=markdown_text(column_label(table, picked.b)),
        score=markdown_text(column_label(table, -1 if picked.score is None else picked.score)),
        why=_(HOW_WORDS[picked.how])))
    score = picked.score
    charset_warning(table)
    if parsed.score_text and score is not None:
        example = next((r.cells[score] for r in table.rows
                        if score < len(r.cells) and r.cells[score]), "")
        st.warning(_("The score column holds text (such as {example}), not numbers: the pairs are "
                     "compared without scores. Pick another score column, or none.").format(
            example=markdown_code(example[:40])), icon=":material/pin:")


def report_list(parsed: lists.PairList, table: Table | None = None) -> bool:
    """Say what was left out, why and what to do; False when nothing can be compared."""
    shifted = SHIFTED.get(parsed.delimiter, SHIFTED["\t"])
    report_skipped(parsed.skipped, SKIPPED | {lists.SHIFTED: shifted}, HEADER_WORDS,
                   example=markdown_code(JSON_EXAMPLE),
                   separator=separator_words(parsed.delimiter))
    if parsed.beyond:
        st.warning(ngettext(
            "Only the first {max} pairs are compared: {n} more line, line {line}, was not read.",
            "Only the first {max} pairs are compared: {n} more lines from line {line} on were "
            "not read.",
            parsed.beyond).format(max=f"{lists.MAX_PAIRS:,}",
                                                 n=f"{parsed.beyond:,}",
                                                 line=f"{parsed.beyond_from:,}"),
                   icon=":material/content_cut:")
    if parsed.refused:
        report_refusal(table if table is not None and table.refused == parsed.refused
                       else Table(refused=parsed.refused, size=parsed.size))
        return False
    return True


def skip_extra_switch(table: Table) -> tuple[bool, DeltaGenerator]:
    """The switch that skips the lines with more fields than the columns (bound to the link),
    under a slot where ``report_extra`` says which lines those are."""
    slot = st.container()
    skip = st.checkbox(_("Skip the lines with extra fields"), key=SKIP_KEY, bind="query-params",
                       help=_("Off: those lines are read in the columns picked, which come "
                              "before their extra fields. On: they are left out."))
    return bool(skip), slot


def report_extra(slot: DeltaGenerator, table: Table, parsed: lists.PairList) -> None:
    """One line: how many lines were read despite extra fields, which, how many extra."""
    if not parsed.extra:
        return    # skipped as asked, or for another reason: said with the other skips
    counts = sorted({k for _line, k in parsed.extra})
    extra = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    text = counted(EXTRA_KEPT[table.header_line is not None], len(parsed.extra)).format(
        n=f"{len(parsed.extra):,}", width=table.width, extra=extra,
        lines=lines_words([line for line, _k in parsed.extra]))
    why = extra_why(parsed.delimiter)
    slot.info(joined(text, why), icon=":material/view_column:")


def figures_cover(parsed: lists.PairList, n: int) -> None:
    """Over how many pairs the headline figures are, and whether that is the whole list."""
    left_out = sum(s.reason != lists.HEADER for s in parsed.skipped) + parsed.beyond
    unscored = len(parsed.pairs) - parsed.scored
    text = joined(_("These figures are over {n} scored pairs.").format(n=f"{n:,}"),
                  ngettext(
                      "{k} pair without a score is not counted.",
                      "{k} pairs without a score are not counted.",
                      unscored).format(k=f"{unscored:,}")
                  if unscored else "")
    if left_out:
        st.warning(joined(text, ngettext(
            "{k} line of the list was not read as a pair (said above), so these are not the "
            "whole list's figures.",
            "{k} lines of the list were not read as pairs (said above), so they are not the "
            "whole list's figures.",
            left_out).format(
            k=f"{left_out:,}")), icon=":material/functions:")
    else:
        explain(joined(text, "" if unscored else _("Every line of the list is counted.")))


def joined(*sentences: str) -> str:
    """Sentences one after another: a space between them in English, none after Chinese
    punctuation."""
    return ("" if language() == "zh" else " ").join(s for s in sentences if s)



def preview(text: str, most: int = PREVIEW_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[:most - 1] + "…"


