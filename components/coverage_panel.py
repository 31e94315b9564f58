"""The vocabulary-coverage panel shown wherever [UNK] appears: which characters became [UNK]
and why, so a teacher never wonders whether the tool is broken."""

from __future__ import annotations

import streamlit as st

from components.i18n import _
from components.labels import markdown_code
from components.unk_note import CHINESE_MODEL, FETCH_CHINESE, FIX_CHINESE
from core import Encoding, ModelBundle
from core.tokenizer_files import TokenizerFiles
from core.vocabulary import coverage, is_cjk, visible


def draw_coverage(enc: Encoding, bundle: ModelBundle | TokenizerFiles) -> None:
    """Nothing when every token is known; otherwise the count, the pieces, and the reason.
    ``bundle``: the model, or its tokenizer's files alone (Tokens, before the model loads)."""
    unk_id = (bundle.unk_token_id if isinstance(bundle, TokenizerFiles)
              else bundle.tokenizer.unk_token_id)
    cov = coverage(enc, unk_id)
    if not cov.has_unknown:
        return
    with st.container(border=True):
        st.markdown("**" + _("Why some tokens are [UNK]") + "**")
        if cov.cjk_total:
            st.markdown(_("Of the {total} Chinese characters kept, {model}'s vocabulary has "
                          "{known}; these became [UNK]: {chars}.").format(
                total=cov.cjk_total, model=markdown_code(bundle.label), known=cov.cjk_known,
                chars=" ".join(markdown_code(c) for c in cov.unknown_cjk)))
        others = [p for p in cov.unknown_pieces if not all(map(is_cjk, p))]
        if others:
            st.markdown(_("Other pieces with no token of their own: {pieces}.").format(
                pieces=" ".join(markdown_code(visible(p)) for p in dict.fromkeys(others))))
        st.markdown(_(
            "BERT's tokenizer first splits Chinese text one character a token, then looks each "
            "piece up in the vocabulary ({size} entries here). A piece the vocabulary lacks "
            "becomes [UNK], and every [UNK] is the same row of the word table: on the later "
            "pages, two [UNK] tokens start from identical vectors, so their high cosine says "
            "nothing about meaning. An English vocabulary lacks most Chinese characters; "
            "bert-base-chinese has 21,128 entries and splits 我爱你 into 我 爱 你.").format(
            size=f"{bundle.config.vocab_size:,}"))
        if cov.cjk_total:   # where to get that model (the same words as the [UNK] note's)
            st.markdown(_(FIX_CHINESE).format(chinese=markdown_code(CHINESE_MODEL),
                                              command=markdown_code(FETCH_CHINESE)))
