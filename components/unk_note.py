"""The [UNK] note beside a figure that involves [UNK] tokens: how many there are, that the figure
says little about them, and the model that fixes it."""

from __future__ import annotations

import streamlit as st

from components.i18n import N_, N_plural, _, counted
from components.labels import markdown_code
from core import Encoding, ModelBundle
from core.vocabulary import is_cjk

# The command that fetches the model (config, vocabulary, model.safetensors) into the Hugging
# Face cache, as the README and serving/download.py give it.
FETCH_CHINESE = "python3 -m serving.download bert-base-chinese"

CHINESE_MODEL = "bert-base-chinese"
UNK_NOTE = N_plural(
    "{k} of the {n} tokens is [UNK]: {model}'s vocabulary has no entry for it, and every [UNK] "
    "is the same row of the word table, so every [UNK] starts from that one vector. {what}",
    "{k} of the {n} tokens are [UNK]: {model}'s vocabulary has no entry for them, and every "
    "[UNK] is the same row of the word table, so they start from one identical vector. {what}")
FIX_CHINESE = N_("A model that reads Chinese fixes it: {chinese} (21,128 entries, one Chinese "
                 "character a token), fetched once with {command} and then picked in the "
                 "sidebar.")
FIX_OTHER = N_("A model whose vocabulary holds these pieces fixes it (for Chinese, {chinese}, "
               "fetched once with {command}).")


def unknown_count(enc: Encoding, bundle: ModelBundle) -> tuple[int, int]:
    """(how many real tokens are [UNK], how many real tokens there are)."""
    unk = bundle.tokenizer.unk_token_id
    real = [i for i, m in zip(enc.input_ids, enc.attention_mask, strict=True) if m]
    return sum(i == unk for i in real), len(real)


def unk_note_text(enc: Encoding, bundle: ModelBundle, what: str) -> str | None:
    """The note (markdown), or None when no token is [UNK]. ``what`` says, translated, what the
    [UNK] tokens do to this figure."""
    k, n = unknown_count(enc, bundle)
    if not k:
        return None
    typed = "".join(t or "" for t in enc.texts)
    fix = FIX_CHINESE if any(map(is_cjk, typed)) else FIX_OTHER
    return (counted(UNK_NOTE, k).format(k=k, n=n, model=markdown_code(bundle.label),
                                        what=what) + " "
            + _(fix).format(chinese=markdown_code(CHINESE_MODEL),
                            command=markdown_code(FETCH_CHINESE)))


def draw_unk_note(enc: Encoding, bundle: ModelBundle, what: str) -> None:
    """The note as a warning beside the figure; nothing when every token is known."""
    text = unk_note_text(enc, bundle, what)
    if text:
        st.warning(text, icon=":material/help:")
