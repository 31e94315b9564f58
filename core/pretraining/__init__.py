"""How BERT was pretrained and fine-tuned, computed live: MLM corruption (``mask_tokens``),
[MASK] prediction (``fill_mask``, and at every layer ``mask_lens``), next-sentence prediction
(``next_sentence``) and the four fine-tuning heads (``finetuning_patterns``). No Streamlit.

    from core import load_model
    from core.pretraining import fill_mask, mask_tokens
    bundle = load_model("/models/bert-base-uncased")   # a checkpoint with its pretraining heads
    fill_mask(bundle, "The capital of France is [MASK].")[0][0].token
    mask_tokens(bundle, "This is a test sentence", seed=3).kinds
"""

from core.errors import NoPretrainingHeadError
from core.pretraining.finetuning import FinetuningPattern, finetuning_patterns
from core.pretraining.heads import (
    MAX_MASKS,
    NextSentence,
    Prediction,
    fill_mask,
    has_mlm_head,
    has_nsp_head,
    next_sentence,
)
from core.pretraining.mask_lens import MaskLens, mask_lens
from core.pretraining.masking import Masking, mask_tokens

__all__ = [
    "MAX_MASKS",
    "FinetuningPattern",
    "MaskLens",
    "Masking",
    "NextSentence",
    "NoPretrainingHeadError",
    "Prediction",
    "fill_mask",
    "finetuning_patterns",
    "has_mlm_head",
    "has_nsp_head",
    "mask_lens",
    "mask_tokens",
    "next_sentence",
]
