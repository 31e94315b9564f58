"""Tokens' tables and printouts, built without Streamlit calls."""

from __future__ import annotations

import html
from collections.abc import Sequence

from components import palette
from components.i18n import N_, _
from core import Encoding
from core.words import Word

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


WORDS_STYLE = f"""<style>
.tok-words {{ display:flex; flex-wrap:wrap; gap:8px; font-size:16px; color:{palette.INK}; }}
.tok-word {{ border:2px solid {palette.SEGMENT_A}; border-radius:6px; padding:4px 6px; }}
.tok-word.sb {{ border-color:{palette.SEGMENT_B}; }}
.tok-word.special {{ border-style:dashed; border-color:{palette.GRID}; }}
.tok-word .w {{ font-weight:600; text-align:center; white-space:pre; }}
.tok-word .t {{ display:flex; gap:4px; justify-content:center; margin-top:4px; }}
.tok-word .t span {{ font-family:monospace; font-size:14px; background:#f0f2f6;
  border-radius:4px; padding:1px 4px; white-space:pre; }}
.tok-word .t small {{ font-size:12px; color:{palette.MUTED}; margin-right:2px; }}
</style>"""


def words_html(enc: Encoding, words: Sequence[Word]) -> str:
    """Each word in a box, its text above its tokens (with their positions): padding left out.
    Text the user typed is escaped, never read as HTML."""
    boxes = []
    for word in words:
        if not word.real:
            continue
        kind = "special" if word.special else ("sb" if word.segment == 1 else "")
        pieces = "".join(f"<span><small>{p}</small>{html.escape(enc.tokens[p])}</span>"
                         for p in word.positions)
        boxes.append(f'<div class="tok-word {kind}"><div class="w">{html.escape(word.text)}'
                     f'</div><div class="t">{pieces}</div></div>')
    return f'{WORDS_STYLE}<div class="tok-words" data-words="{len(boxes)}">{"".join(boxes)}</div>'
