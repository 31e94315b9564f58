"""Tokens: what the tokenizer hands the model, one row per position."""

import streamlit as st

from components.analysis_view import encoding_of, stop_on_input_error
from components.cache import get_tokenizer_files
from components.controls import by_word_toggle
from components.coverage_panel import draw_coverage
from components.explain import explain, page_header
from components.i18n import N_, _
from components.inputs import shared_inputs
from components.token_table import draw_token_table, token_table
from pages.tokens import cache
from pages.tokens.figures import metric_values, tutorial_printout, words_html

TITLE = N_("Tokens")
PRINTOUT_KEY = "tok_printout"
EXPLANATION = N_(
    "BERT never sees letters: the tokenizer splits the text into WordPiece tokens (pieces that "
    "continue a word start with ##) and wraps them in [CLS] … [SEP]. It returns three lists: "
    "input_ids (each token's row in the vocabulary), token_type_ids (0 for sentence A, 1 for "
    "sentence B) and attention_mask (1 for real tokens, 0 for padding); `model(**tokenizer(text))` "
    "receives exactly those. The position_ids column is made inside the model, 0, 1, 2, … for "
    "every input."
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    # The tokenizer and its vocabulary read from the model's files: this page needs no model,
    # so a fresh server shows it while the model loads (components.cache).
    with stop_on_input_error():
        files = get_tokenizer_files(key.model)
    enc = encoding_of(key)   # what the model receives: no model run needed
    for column, (label, value) in zip(st.columns(4), metric_values(enc).items(), strict=True):
        column.metric(_(label), value)
    draw_coverage(enc, files)
    if by_word_toggle("tok_words"):
        explain(_("The words above their tokens: the pieces of a split word (“##”) belong to "
                  "the word before, and a Chinese word's characters, one token each, are found "
                  "by a word segmenter; [CLS] and [SEP] stay words of their own. The small "
                  "numbers are the tokens' positions."))
        st.html(words_html(enc, cache.get_words(key)))
    table = token_table(enc, files.unk_token)   # the download's rows are the table's
    draw_token_table(table)
    st.markdown(_("Rows tinted blue are segment A (token_type_id 0), orange segment B "
                  "(token_type_id 1); special tokens and [UNK] are bold, padding is grey. Max "
                  "length, truncation and padding are set under Tokenizer options in the "
                  "sidebar, for every page."))
    # Its code block is drawn only once opened: a code block's browser code is 1.6 MB, half a
    # second of a fresh browser's time before this page, a first visitor's first, was drawn.
    printout = st.expander(_("As the tutorials print it"), icon=":material/terminal:",
                           key=PRINTOUT_KEY, on_change="rerun")
    if printout.open:
        printout.code(tutorial_printout(enc), language="python", wrap_lines=True)
    st.download_button(_("Download the table (CSV)"), table.csv,
                       _("tokens") + ".csv", "text/csv", icon=":material/download:",
                       on_click="ignore")


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
