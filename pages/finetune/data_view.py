"""Fine-tuning, the data a run trains on: a built-in set in either language, or the reader's
own file through the same reader as /pairs (core.sentence_files) with a column picked for each
part of an item and every line left out named with its reason; core's checks of the items said
at once, and a set the model reads mostly as [UNK] refused with the measured share."""

from __future__ import annotations

import hashlib

import streamlit as st

from components.analysis_view import show_error
from components.explain import explain
from components.i18n import N_, N_plural, _, counted, ngettext
from components.kept_upload import KeptUpload
from components.labels import markdown_template
from components.model_picker import offer_model
from components.skipped_lines import lines_words, report_skipped
from core import ExplorerError, ModelBundle
from core.finetune import builtin_set
from core.finetune.checks import check_items, label_set
from core.finetune.tasks import FineTuneTask
from core.sentence_files import reader
from pages.finetune import cache, own_data
from pages.finetune.records import Data, DataSource
from serving import training

# URL keys and the session's own (the page's keys start with ft_).
DATA_KEY, FILE_KEY, COLUMN_KEY = "ft_data", "ft_file", "ft_col_{n}"
TABLE_KEY = "ft_table"        # the session's file read once: (digest, Table)
MAX_LENGTH = 128              # tokens an input keeps (cut beyond, counted and said)
UNK_LIMIT = 0.05              # a set with more [UNK] tokens than this is not trained on
UPLOAD_MB = 12

DATA_NAMES = {DataSource.ENGLISH: N_("Built-in set, English"),
              DataSource.CHINESE: N_("Built-in set, Chinese"),
              DataSource.FILE: N_("Your own file")}
ROLE_WORDS = {"text": N_("Sentence"), "label": N_("Class"), "words": N_("Words (spaces between)"),
              "tags": N_("Tags (one per word)"), "a": N_("Sentence A"), "b": N_("Sentence B"),
              "score": N_("Score"), "question": N_("Question"), "passage": N_("Passage"),
              "answer": N_("Answer (as written in the passage)")}

ROW_REASONS = {
    own_data.MISSING: N_plural(
        "Skipped {n} line with fewer fields than the columns picked: {lines}.",
        "Skipped {n} lines with fewer fields than the columns picked: {lines}."),
    own_data.EMPTY: N_plural(
        "Skipped {n} line with an empty cell in a picked column: {lines}.",
        "Skipped {n} lines with an empty cell in a picked column: {lines}."),
    own_data.SCORE: N_plural(
        "Skipped {n} line whose score is not a number: {lines}. A score is a number such as "
        "3 or 4.5.",
        "Skipped {n} lines whose score is not a number: {lines}. A score is a number such as "
        "3 or 4.5."),
    own_data.TAGS: N_plural(
        "Skipped {n} line whose words and tags differ in number: {lines}. Give one tag per "
        "word, both separated by spaces.",
        "Skipped {n} lines whose words and tags differ in number: {lines}. Give one tag per "
        "word, both separated by spaces."),
    own_data.ANSWER: N_plural(
        "Skipped {n} line whose answer is not in its passage: {lines}. Copy the answer from "
        "the passage exactly as it is written there.",
        "Skipped {n} lines whose answer is not in its passage: {lines}. Copy the answer from "
        "the passage exactly as it is written there."),
}

REFUSALS = {
    reader.Refusal.TOO_LARGE: N_("The file is larger than 10 MB; give a smaller one."),
    reader.Refusal.BINARY: N_("The file is not text: save it as CSV, TSV or JSON Lines."),
    reader.Refusal.EXCEL: N_("This is an Excel workbook: save it as CSV and give that."),
    reader.Refusal.NOT_PARQUET: N_("The file's name says Parquet, but it is not Parquet."),
    reader.Refusal.NOTHING: N_("The file holds no row to read."),
    reader.Refusal.HEADER_ONLY: N_("The file holds only its column names, no rows."),
}

HEADER_WORDS = N_("Line {lines} holds the column names, not an item.")


# --- reading ------------------------------------------------------------------------------------

def builtin_data(task: FineTuneTask, source: DataSource) -> Data | None:
    try:
        found = builtin_set(task.value, source.value)
    except (ExplorerError, OSError, LookupError):
        st.warning(_("There is no built-in set of this pattern in this language yet: pick the "
                     "other language or your own file."), icon=":material/info:")
        return None
    explain(_("The built-in set: {train} items to train on, {held} held out to score the run, "
              "written for this explorer.").format(train=len(found.train),
                                                   held=len(found.held_out)))
    return Data(source, f"builtin:{source.value}", tuple(found.train), tuple(found.held_out),
                tuple(found.labels) if found.labels else None)


def read_file(task: FineTuneTask) -> Data | None:
    upload = KeptUpload(FILE_KEY, limit_bytes=reader.MAX_BYTES)
    kept = upload.draw(_("Your file: CSV, TSV, JSON Lines or Parquet"),
                       types=["csv", "tsv", "txt", "jsonl", "json", "parquet"], max_mb=UPLOAD_MB,
                       before=_("Training on {name}, the file uploaded before."),
                       forget=_("Forget the file"),
                       help=_("One item a line, with a header naming the columns or not; you "
                              "pick the columns below. Every fifth item is held out to score "
                              "the run."))
    if kept is None:
        explain(_("Upload a file to train on your own items."))
        return None
    table = reader.size_refusal(kept.size) if kept.data is None else _table(kept.name, kept.data)
    if table is None or table.refused is not None:
        refusal = table.refused if table is not None and table.refused is not None \
            else reader.Refusal.TOO_LARGE
        st.error(_(REFUSALS.get(refusal, REFUSALS[reader.Refusal.NOTHING])),
                 icon=":material/block:")
        return None
    if own_data.first_line_names(table):
        table = own_data.with_header(table)
        st.info(_(HEADER_WORDS).format(lines=table.header_line), icon=":material/rule:")
    roles = own_data.ROLES[task]
    proposed = own_data.propose(table, task)
    width = max(table.width, len(roles))
    names = {k: f"{k + 1}" + (f" · {table.columns[k]}" if k < table.width and table.columns[k]
                               else "") for k in range(width)}
    cells = st.columns(len(roles))
    columns = []
    for n, (role, cell) in enumerate(zip(roles, cells, strict=True)):
        key = COLUMN_KEY.format(n=n)
        columns.append(int(cell.selectbox(_(ROLE_WORDS[role]), list(range(width)),
                                          index=min(proposed[n], width - 1),
                                          format_func=names.__getitem__, key=key,
                                          bind="query-params")))
    report_skipped(table.skipped, {}, HEADER_WORDS)
    rows = own_data.items_from(table, task, columns)
    for reason, numbers in rows.skipped.items():
        st.warning(counted(ROW_REASONS[reason], len(numbers)).format(n=f"{len(numbers):,}",
                                                 lines=lines_words(numbers)),
                   icon=":material/rule:")
    explain(ngettext("Read {rows} row: {train} items to train on, {held} held out to score "
                     "the run.",
                     "Read {rows} rows: {train} items to train on, {held} held out to score "
                     "the run.", rows.lines).format(rows=rows.lines, train=len(rows.train),
                                                    held=len(rows.held_out)))
    return Data(DataSource.FILE, training.data_key([*rows.train, *rows.held_out]), rows.train,
                rows.held_out)


def _table(name: str, data: bytes) -> reader.Table:
    """The file read once per session (a rerun reuses it)."""
    digest = hashlib.sha256(data).hexdigest()
    kept = st.session_state.get(TABLE_KEY)
    if isinstance(kept, tuple) and kept[0] == digest:
        return kept[1]
    table = reader.read_table(data, name)
    st.session_state[TABLE_KEY] = (digest, table)
    return table


def checked(task: FineTuneTask, data: Data) -> bool:
    """Core's checks of the items, said at once (not after the run waits its turn)."""
    try:
        check_items(task, data.train, part="train")
        if data.held_out:
            check_items(task, data.held_out, part="held_out", minimum=1)
        label_set(task, data.train, data.held_out, data.labels)
    except ExplorerError as exc:
        show_error(exc)
        return False
    return True


def readable(bundle: ModelBundle, task: FineTuneTask, data: Data) -> bool:
    """Whether the model reads the set: more than ``UNK_LIMIT`` of its tokens [UNK] is not
    trained on; the reader is offered the other set or a model that reads it."""
    unknown, total = cache.get_unknown_share(bundle.name, task, data.key,
                                         data.train + data.held_out)
    if not total or unknown / total <= UNK_LIMIT:
        return True
    st.warning(markdown_template(
        _("{model} reads {share} of this set's tokens as [UNK] ({unknown} of {total}): its "
          "vocabulary has no entry for them, and training on [UNK] teaches it nothing about "
          "the text. Use the set in the other language, or a model that reads this one."),
        model=bundle.label, share=f"{unknown / total:.0%}", unknown=f"{unknown:,}",
        total=f"{total:,}"), icon=":material/translate:")
    other = DataSource.ENGLISH if data.source is not DataSource.ENGLISH else DataSource.CHINESE
    row = st.container(horizontal=True)
    row.button(_(DATA_NAMES[other]), key="ft_other_set", on_click=_use_data, args=(other,),
               icon=":material/swap_horiz:")
    if data.source is DataSource.CHINESE:
        with row:
            offer_model("bert-base-chinese", key="ft_offer_model")
    return False


def _use_data(source: DataSource) -> None:
    st.session_state[DATA_KEY] = source


def longest(bundle: ModelBundle, task: FineTuneTask, data: Data) -> int:
    """The longest input in tokens, at most the run's limit: what a padded batch holds."""
    texts = [t for item in data.train for t in own_data.item_texts(task, item)]
    if not texts:
        return 8
    ids = bundle.tokenize(texts, truncation=False)["input_ids"]
    sides = 1 if task in (FineTuneTask.SENTENCE_CLASS, FineTuneTask.TOKEN_TAGS,
                          FineTuneTask.PAIR_SCORE) else 2
    return max(8, min(max_length(bundle), sides * max(len(row) for row in ids)))


def max_length(bundle: ModelBundle) -> int:
    return min(MAX_LENGTH, int(bundle.config.max_position_embeddings))


