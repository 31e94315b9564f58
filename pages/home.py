"""Home: the whole pipeline at a glance, with the live shapes of the current input."""

import streamlit as st

from components.analysis_view import current_analysis, current_model
from components.explain import explain
from components.router import available_pages, ensure_router

ensure_router()

st.title("BERT Embedding Explorer")
explain(
    "Type a sentence (or two) in the sidebar and follow it through the model: the tokenizer "
    "turns it into IDs, three lookup tables turn each ID into vectors that are added and "
    "normalised, and the encoder layers mix the tokens together. Every number on every page is "
    "computed live from the model named in the sidebar."
)

bundle = current_model()
cfg = bundle.config
result = current_analysis()
T, h = len(result.tokens), cfg.hidden_size

steps = [
    ("Text", "sentence A" + (" + B" if result.encoding.token_type_ids[-1] else ""), "tokens"),
    ("Tokens", f"{T} ids, [1, {T}]", "tokens"),
    ("3 lookups", f"word {cfg.vocab_size}×{h}\nposition {cfg.max_position_embeddings}×{h}\n"
                  f"type {cfg.type_vocab_size}×{h}", "stages"),
    ("Sum", f"[1, {T}, {h}]", "stages"),
    ("LayerNorm", f"[1, {T}, {h}]", "stages"),
    ("Encoder", f"{cfg.num_hidden_layers} layers, {cfg.num_attention_heads} heads\n"
                f"[1, {T}, {h}]", "similarity"),
    ("Pooler", f"[CLS] → [1, {h}]", "parameters"),
]
pages = {spec.url_path: spec for spec in available_pages()}
cols = st.columns(len(steps))
for col, (title, shape, target) in zip(cols, steps, strict=True):
    with col.container(border=True, height="stretch"):
        st.markdown(f"**{title}**")
        st.code(shape, language=None)
        if target in pages:
            st.page_link(pages[target].path, label=pages[target].title, icon=pages[target].icon)

st.subheader("Pages")
for spec in available_pages():
    st.page_link(spec.path, label=spec.title, icon=spec.icon)
st.caption(
    f"Model: {bundle.name} · {cfg.num_hidden_layers} layers · hidden size {h} · "
    f"vocabulary {cfg.vocab_size:,} · {sum(p.numel() for p in bundle.model.parameters()):,} "
    "parameters"
)
