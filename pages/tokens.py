"""Tokens: what the tokenizer hands the model, one row per position."""

import streamlit as st

from components.analysis_view import current_encoding, current_model
from components.controls import whole_number
from components.explain import explain
from components.router import ensure_router
from components.token_table import draw_token_table, token_frame

ensure_router()

st.title("Tokens")
explain(
    "BERT never sees letters: the tokenizer splits the text into WordPiece tokens (pieces that "
    "continue a word start with ##), wraps them in [CLS] … [SEP], and gives each one an "
    "input_id (its row in the vocabulary), a token_type_id (0 for sentence A, 1 for sentence B), "
    "a position_id and an attention_mask (1 for real tokens, 0 for padding). These four "
    "columns are exactly what `model(**tokenizer(text))` receives."
)

bundle = current_model()
limit = bundle.config.max_position_embeddings
with st.expander("Tokenizer options", expanded=False, icon=":material/tune:"):
    c1, c2, c3 = st.columns(3)
    max_length = whole_number(c1, "Max length", min_value=4, max_value=limit, value=limit,
                              key="max_length",
                              help=f"At most {limit}: the size of the position table.")
    truncation = c2.toggle("Truncate to max length", value=True, key="truncation",
                           bind="query-params")
    padding = c3.toggle("Pad to max length", value=False, key="padding", bind="query-params",
                        help='As in the tutorials: padding="max_length", max_length=128.')

# The tokenizer alone: this page shows what the model receives, so no model run is needed.
enc = current_encoding(int(max_length), bool(truncation), bool(padding))
segments = sorted({seg for seg, m in zip(enc.token_type_ids, enc.attention_mask, strict=True) if m})
m1, m2, m3, m4 = st.columns(4)
m1.metric("Tokens", enc.n_real)
m2.metric("Segments", len(segments))
m3.metric("Padding", enc.n_padding)
m4.metric("Cut by truncation", enc.truncated)

frame = token_frame(enc, bundle.tokenizer.unk_token)
draw_token_table(frame)
st.caption(
    "Rows tinted blue are segment A (token_type_id 0), orange segment B (token_type_id 1); "
    "special tokens and [UNK] are bold, padding is grey."
)
with st.expander("As the tutorials print it", icon=":material/terminal:"):
    st.code(
        f"input_ids      = {enc.input_ids}\n"
        f"token_type_ids = {enc.token_type_ids}\n"
        f"attention_mask = {enc.attention_mask}\n"
        f"position_ids   = torch.arange({len(enc.input_ids)})  # 0 … {len(enc.input_ids) - 1}",
        language="python",
    )
st.download_button("Download the table (CSV)", frame.to_csv(index=False), "tokens.csv",
                   "text/csv", icon=":material/download:", on_click="ignore")
