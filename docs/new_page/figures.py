"""New page's figures and tables: built from core's results, no st. calls."""

from __future__ import annotations

import pandas as pd

from components.i18n import _
from components.labels import markdown_code
from core import Encoding
from core.stages.embedding_checks import LayerNormCheck


def tokens_frame(enc: Encoding, special: bool) -> pd.DataFrame:
    """One row per token, at its position in the input ([CLS] and [SEP] left out on request)."""
    frame = pd.DataFrame({_("position"): range(len(enc.tokens)), _("token"): list(enc.tokens),
                          "input_ids": list(enc.input_ids)})
    return frame if special else frame[[not s for s in enc.special_tokens_mask]]


def check_line(check: LayerNormCheck, model_name: str) -> str:
    return _("max |LayerNorm(sum) - model.embeddings(...)| on {model}: {diff}").format(
        model=markdown_code(model_name), diff=f"{check.module_error:.2e}")
