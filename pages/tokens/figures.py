"""Tokens' tables and printouts, built without Streamlit calls."""

from __future__ import annotations

import pandas as pd

from components.i18n import N_, _
from components.token_table import token_frame
from core import Encoding

METRICS = (N_("Tokens"), N_("Segments"), N_("Padding"), N_("Cut by truncation"))


def metric_values(enc: Encoding) -> dict[str, int]:
    """The page's four headline counts, by their English labels."""
    segments = {seg for seg, m in zip(enc.token_type_ids, enc.attention_mask, strict=True) if m}
    return dict(zip(METRICS, (enc.n_real, len(segments), enc.n_padding, enc.truncated),
                    strict=True))


def tutorial_printout(enc: Encoding) -> str:
    """The three lists the tokenizer returns, and the position_ids the model makes itself."""
    n = len(enc.input_ids)
    return (
        f"input_ids      = {enc.input_ids}\n"
        f"token_type_ids = {enc.token_type_ids}\n"
        f"attention_mask = {enc.attention_mask}\n"
        + _("# position_ids are not returned: BertEmbeddings makes them inside the model") + "\n"
        f"position_ids   = torch.arange({n})  # 0 … {n - 1}"
    )


def download_frame(enc: Encoding, unk_token: str | None) -> pd.DataFrame:
    """The token table as it is downloaded: the same columns as shown."""
    return token_frame(enc, unk_token)
