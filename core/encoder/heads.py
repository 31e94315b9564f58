"""A head atlas: what each attention head looks at, as in Clark et al. 2019.

Clark, Khandelwal, Levy and Manning, "What Does BERT Look At? An Analysis of BERT's Attention"
(BlackboxNLP 2019) summarise each head by where its attention goes on average: to [CLS], to
[SEP], to the previous or next token, to the token itself, and how spread out it is (entropy).
The same numbers for the loaded model let the page set it beside their bert-base figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from core.analysis import analyze
from core.corpus import CORPUS
from core.models import ModelBundle
from core.words import attention_by_word, word_masks, words_of_encoding


@dataclass(frozen=True)
class HeadAtlas:
    """Per-head averages, each (layers, heads) float64; layer index 0 is encoder layer 1.

    With A the head's attention (rows = queries, columns = keys, rows sum to 1) and only the real
    (non-padding) query rows counted:

    to_cls       mean over rows of Σ A[i, j] for j a [CLS] position
    to_sep       mean over rows of Σ A[i, j] for j a [SEP] position
    to_prev      mean of A[i, i-1] over the rows that have a previous token (all but the first)
    to_next      mean of A[i, i+1] over the rows that have a next real token (all but the last)
    to_self      mean of A[i, i]
    entropy      mean over rows of -Σ_j A[i, j] ln A[i, j], in nats (0 ln 0 = 0)
    sep_to_sep   mean over the [SEP] rows of their attention to [SEP]s (NaN without a [SEP])
    cls_entropy  entropy of the [CLS] row alone
    max_share    mean over rows of max_j A[i, j]: a "broad" head keeps it at or below 0.1

    Clark et al. divide the previous/next sums by every token, so a perfect previous-token head
    scores (n-1)/n there and 1 here; over their 128-token segments the two differ by under 1%.
    """

    to_cls: np.ndarray
    to_sep: np.ndarray
    to_prev: np.ndarray
    to_next: np.ndarray
    to_self: np.ndarray
    entropy: np.ndarray
    sep_to_sep: np.ndarray
    cls_entropy: np.ndarray
    max_share: np.ndarray
    n_inputs: int = 1  # inputs averaged


@dataclass(frozen=True)
class ClarkReference:
    """Clark et al. 2019's figures for bert-base, to set beside a head atlas. Layers 1-based."""

    model: str = "bert-base"
    data: str = "1,000 Wikipedia segments of at most 128 tokens"
    sep_layers: tuple[int, int] = (6, 10)      # in these layers (inclusive) ...
    sep_share_min: float = 0.5                 # ... over half of all attention goes to [SEP]
    sep_to_sep_min: float = 0.9                # [SEP] sends over 90% of its attention to [SEP]
    prev_heads: int = 4                        # heads with to_prev > head_threshold
    next_heads: int = 5                        # heads with to_next > head_threshold
    head_threshold: float = 0.5
    last_layer_cls_entropy: float = 3.89       # nats, [CLS]'s attention in the last layer
    broad_max_share: float = 0.10              # broad low-layer heads: <= 10% on any one word
    early_heads_attend_cls: bool = True        # heads of the first layers attend to [CLS]
    source: str = ("Clark, Khandelwal, Levy, Manning 2019, What Does BERT Look At? "
                   "An Analysis of BERT's Attention")


CLARK_2019 = ClarkReference()


def special_positions(
    special_tokens_mask: Sequence[int], attention_mask: Sequence[int]
) -> tuple[list[int], list[int]]:
    """([CLS] positions, [SEP] positions) of a BERT encoding.

    The tokenizer's special_tokens_mask marks [CLS], [SEP] and [PAD]; of the real ones the first is
    [CLS] and the rest are [SEP]. A "[SEP]" typed as text is not marked, so it counts as a word.
    """
    real_specials = [i for i, (s, m) in enumerate(zip(special_tokens_mask, attention_mask,
                                                      strict=True)) if s and m]
    return real_specials[:1], real_specials[1:]


def head_atlas(
    attentions: np.ndarray,
    special_tokens_mask: Sequence[int],
    attention_mask: Sequence[int],
    cls_positions: Sequence[int] | None = None,
    sep_positions: Sequence[int] | None = None,
) -> HeadAtlas:
    """The atlas of one input's attentions (layers, heads, T, T); see HeadAtlas for definitions.

    [CLS]/[SEP] positions come from the masks (``special_positions``) unless given.
    """
    a = np.asarray(attentions, dtype=np.float64)  # (L, H, T, T)
    if cls_positions is None or sep_positions is None:
        found_cls, found_sep = special_positions(special_tokens_mask, attention_mask)
        cls_positions = found_cls if cls_positions is None else cls_positions
        sep_positions = found_sep if sep_positions is None else sep_positions
    cls, sep = list(cls_positions), list(sep_positions)
    real = np.flatnonzero(np.asarray(attention_mask, dtype=bool))  # query rows that count
    is_real = np.asarray(attention_mask, dtype=bool)
    rows = a[:, :, real, :]                                        # (L, H, n, T)
    prev = np.array([i for i in real if i > 0 and is_real[i - 1]], dtype=int)
    nxt = np.array([i for i in real if i + 1 < len(is_real) and is_real[i + 1]], dtype=int)
    logs = np.log(np.where(a > 0, a, 1.0))                         # 0 ln 0 = 0
    row_entropy = -(a * logs).sum(-1)                              # (L, H, T)
    nan = np.full(a.shape[:2], np.nan)
    return HeadAtlas(
        to_cls=rows[..., cls].sum(-1).mean(-1),
        to_sep=rows[..., sep].sum(-1).mean(-1),
        to_prev=a[:, :, prev, prev - 1].mean(-1) if len(prev) else nan,
        to_next=a[:, :, nxt, nxt + 1].mean(-1) if len(nxt) else nan,
        to_self=a[:, :, real, real].mean(-1),
        entropy=row_entropy[:, :, real].mean(-1),
        sep_to_sep=a[:, :, sep][..., sep].sum(-1).mean(-1) if sep else nan,
        cls_entropy=row_entropy[:, :, cls[0]] if cls else nan,
        max_share=rows.max(-1).mean(-1),
    )


def mean_atlas(atlases: Sequence[HeadAtlas]) -> HeadAtlas:
    """Each field averaged over inputs with equal weight (NaNs, e.g. no [SEP], skipped)."""
    values = {
        f.name: np.nanmean(np.stack([getattr(x, f.name) for x in atlases]), axis=0)
        for f in fields(HeadAtlas) if f.name != "n_inputs"
    }
    return HeadAtlas(**values, n_inputs=sum(x.n_inputs for x in atlases))


def corpus_head_atlas(bundle: ModelBundle, texts: Sequence[str] = CORPUS,
                      by_word: bool = False) -> HeadAtlas:
    """The atlas averaged over the project's corpus, each sentence run alone (one [SEP]);
    ``by_word``: of the attention by word (core.words), previous and next meaning words."""
    atlases = []
    for text in texts:
        result = analyze(bundle, text, attentions=True)
        if by_word:
            words = words_of_encoding(result.encoding)
            atlases.append(head_atlas(attention_by_word(result.attention_weights(), words),
                                      *word_masks(words)))
        else:
            atlases.append(head_atlas(result.attention_weights(),
                                      result.encoding.special_tokens_mask,
                                      result.attention_mask))
    return mean_atlas(atlases)


def without_specials(
    probs: np.ndarray,
    special_tokens_mask: Sequence[int],
    attention_mask: Sequence[int] | None = None,
) -> np.ndarray:
    """Attention among words only, as exBERT's "hide special tokens" option shows it.

    ``probs`` is (..., T, T). Rows and columns of [CLS], [SEP] and [PAD] (all marked in the
    tokenizer's special_tokens_mask; any position with attention_mask 0 too) are dropped, and each
    remaining row is divided by its sum so it adds up to 1 again: the share of a token's attention
    to words that each word gets. The kept positions are those with special_tokens_mask 0, in
    order. A row whose attention to words underflowed to 0 stays 0.
    """
    keep = np.asarray(special_tokens_mask) == 0
    if attention_mask is not None:
        keep &= np.asarray(attention_mask, dtype=bool)
    idx = np.flatnonzero(keep)
    kept = np.asarray(probs)[..., idx, :][..., idx]         # (..., n, n)
    sums = kept.sum(-1, keepdims=True)
    return np.divide(kept, sums, out=np.zeros_like(kept), where=sums > 0)


def stack_layers(atlases: Sequence[HeadAtlas]) -> HeadAtlas:
    """One atlas of one input from its layers' atlases (each of one layer), in layer order."""
    values = {
        f.name: np.concatenate([getattr(x, f.name) for x in atlases])
        for f in fields(HeadAtlas) if f.name != "n_inputs"
    }
    return HeadAtlas(**values, n_inputs=atlases[0].n_inputs if atlases else 1)
