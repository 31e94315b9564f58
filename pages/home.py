"""Home: the whole pipeline at a glance, with the live shapes of the current input."""

import streamlit as st

from components.analysis_view import current_encoding, current_model
from components.explain import explain
from components.router import available_pages, ensure_router

ensure_router()

PAGE_BLURBS = {
    "tokens": "Tokens, input_ids, token_type_ids, position_ids and the attention mask.",
    "stages": "The three lookups, their sum, LayerNorm, dropout and every encoder layer.",
    "positions": "The learned position table: PCA, cosines, a probe, and the sinusoidal formula.",
    "similarity": "Cosine matrices by layer, sentence A vs B, and one word in two contexts.",
    "parameters": "Where every parameter lives, counted from the config and from the model.",
}

st.title("BERT Embedding Explorer")
explain(
    "Type a sentence (or two) in the sidebar and follow it through the model: the tokenizer "
    "turns it into IDs, three lookup tables turn each ID into vectors that are added and "
    "normalised, and the encoder layers mix the tokens together. Every number on every page is "
    "computed live from the model named in the sidebar."
)

bundle = current_model()
cfg = bundle.config
enc = current_encoding()  # shapes only: no model run needed here
T, h = len(enc.tokens), cfg.hidden_size
n_params = sum(p.numel() for p in bundle.model.parameters())


def pipeline_dot() -> str:
    """The pipeline as a Graphviz graph; every label is our own text with live numbers."""
    lookups = (
        f"word_embeddings {cfg.vocab_size}×{h}",
        f"token_type_embeddings {cfg.type_vocab_size}×{h}",
        f"position_embeddings {cfg.max_position_embeddings}×{h}",
    )
    nodes = {
        "text": f"text\\n{'sentences A + B' if 1 in enc.token_type_ids else 'sentence A'}",
        "ids": f"tokenizer\\ninput_ids [1, {T}]",
        "w": f"{lookups[0]}\\n→ [1, {T}, {h}]",
        "t": f"{lookups[1]}\\n→ [1, {T}, {h}]",
        "p": f"{lookups[2]}\\n→ [1, {T}, {h}]",
        "sum": f"sum\\n[1, {T}, {h}]",
        "ln": f"LayerNorm\\n[1, {T}, {h}]",
        "enc": f"encoder: {cfg.num_hidden_layers} layers\\n{cfg.num_attention_heads} heads, "
        f"FFN {h}→{cfg.intermediate_size}→{h}\\n[1, {T}, {h}]",
        "pool": f"pooler on [CLS]\\n[1, {h}]",
    }
    lines = [
        "digraph G {",
        'rankdir=LR; bgcolor="transparent";',
        'node [shape=box, style="filled", fillcolor="#eef4fb", color="#1f77b4", '
        'fontname="Helvetica", fontsize=18];',
        'edge [color="#555555"];',
    ]
    lines += [f'{key} [label="{label}"];' for key, label in nodes.items()]
    lines += [
        "text -> ids; ids -> w; ids -> t; ids -> p; w -> sum; t -> sum; p -> sum;",
        "sum -> ln; ln -> enc; enc -> pool;",
        "}",
    ]
    return "\n".join(lines)


st.graphviz_chart(pipeline_dot(), width="stretch")
st.caption(
    f"Model: {bundle.name} · {cfg.num_hidden_layers} layers · hidden size {h} · "
    f"vocabulary {cfg.vocab_size:,} · {n_params:,} parameters · this input: {T} tokens"
)

st.subheader("Pages")
specs = available_pages()
columns = st.columns(min(3, len(specs)) or 1)
for i, spec in enumerate(specs):
    with columns[i % len(columns)].container(border=True):
        st.page_link(spec.path, label=spec.title, icon=spec.icon)
        st.caption(PAGE_BLURBS.get(spec.url_path, ""))
