"""BERT's two pretraining heads on a live input: filling in [MASK] and next-sentence prediction.

Both need a checkpoint that ships the heads (``ModelBundle.heads``, kept by ``load_model``), such
as bert-base-uncased; the default all-MiniLM-L6-v2 has neither and every function here raises
``NoPretrainingHeadError`` for it.

Typing [MASK]: the tokenizer turns the exact text "[MASK]" into the mask id (103 in the uncased
vocabulary) wherever it stands, even inside a word ("un[MASK]able"). Any other spelling is plain
text: with the uncased vocabulary "[mask]" or "[Mask]" becomes the three ordinary tokens
"[", "mask", "]" (1031, 7308, 1033), because special tokens are matched before lower-casing. A
text with such a spelling but no real [MASK] gets a message saying to type it in capitals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from transformers.models.bert.modeling_bert import BertPreTrainingHeads

from core.analysis import input_tensors
from core.errors import N_, InputError, NoPretrainingHeadError
from core.models import ModelBundle, model_run, tokenizer_lock
from core.tokens import Encoding, encode

MAX_MASKS = 20   # [MASK]s one fill_mask call predicts
MAX_TOP_K = 50
_MASK_SPELLING = re.compile(r"\[\s*mask\s*\]", re.IGNORECASE)


@dataclass(frozen=True)
class Prediction:
    """One candidate for a [MASK]: softmax of the MLM head's logits over the whole vocabulary."""

    token: str
    token_id: int
    probability: float


@dataclass(frozen=True)
class NextSentence:
    """The NSP head on the pooled [CLS] of a pair. Index 0 is IsNext, index 1 NotNext (BERT)."""

    is_next_probability: float
    logits: tuple[float, float]     # (IsNext, NotNext)

    @property
    def not_next_probability(self) -> float:
        return 1.0 - self.is_next_probability


def has_mlm_head(bundle: ModelBundle) -> bool:
    """True when the bundle has ``cls.predictions``, the masked-language-model head."""
    return bundle.heads is not None and bundle.heads.predictions is not None


def has_nsp_head(bundle: ModelBundle) -> bool:
    """True when the bundle has ``cls.seq_relationship``, the next-sentence head."""
    return bundle.heads is not None and bundle.heads.seq_relationship is not None


def require_mlm_head(bundle: ModelBundle) -> BertPreTrainingHeads:
    """The bundle's pretraining heads, when they hold the masked-language-model head."""
    if bundle.heads is None or not has_mlm_head(bundle):
        raise NoPretrainingHeadError(
            N_("“{name}” has no {head}, the masked-language-model head, so it cannot fill in "
               "[MASK]: it was saved without its pretraining heads. Load a folder or Hugging "
               "Face cache copy of bert-base-uncased, which ships both heads."),
            name=bundle.name, head="cls.predictions",
        )
    return bundle.heads


def require_nsp_head(bundle: ModelBundle) -> BertPreTrainingHeads:
    """The bundle's pretraining heads, when they hold the next-sentence head."""
    if bundle.heads is None or not has_nsp_head(bundle):
        raise NoPretrainingHeadError(
            N_("“{name}” has no {head}, the next-sentence-prediction head, so it cannot say "
               "whether sentence B follows sentence A: it was saved without it. Load a folder "
               "or Hugging Face cache copy of bert-base-uncased, which ships both heads."),
            name=bundle.name, head="cls.seq_relationship",
        )
    return bundle.heads


def check_top_k(top_k: object) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError(
            N_("The number of predictions must be a whole number from 1 to {limit}; “{value}” "
               "is not."),
            limit=MAX_TOP_K, value=str(top_k),
        )
    return top_k


def mask_positions(bundle: ModelBundle, encoding: Encoding, text: str,
                   text_b: str | None = None) -> list[int]:
    """Where the encoding has the mask id; InputError for none (saying how to type one) or too
    many."""
    with tokenizer_lock(bundle.tokenizer):
        mask_id = bundle.tokenizer.mask_token_id
        mask_token = bundle.tokenizer.mask_token
    positions = [i for i, t in enumerate(encoding.input_ids) if t == mask_id]
    if not positions:
        typed = " ".join(t for t in (text, text_b) if t)
        if _MASK_SPELLING.search(typed):
            raise InputError(
                N_("Type {mask} in capital letters: the tokenizer reads any other spelling, such "
                   "as “[mask]”, as ordinary text, so the sentence has nothing to fill in."),
                mask=mask_token,
            )
        raise InputError(
            N_("The sentence has no {mask} to fill in. Put {mask} where a word should be "
               "guessed, e.g. “The capital of France is {mask}.”"),
            mask=mask_token,
        )
    if len(positions) > MAX_MASKS:
        raise InputError(
            N_("The sentence has {count} {mask} tokens; at most {limit} are predicted at once. "
               "Remove some of them."),
            count=len(positions), mask=mask_token, limit=MAX_MASKS,
        )
    return positions


def _predictions(bundle: ModelBundle, logits: torch.Tensor, top_k: int) -> list[list[Prediction]]:
    """Top-k of softmax(logits) for each row of ``logits`` (n, vocab), best first."""
    probabilities = torch.softmax(logits.to(torch.float32), dim=-1)
    values, ids = probabilities.topk(top_k, dim=-1)
    out = []
    for row_values, row_ids in zip(values.tolist(), ids.tolist(), strict=True):
        tokens = bundle.ids_to_tokens(row_ids)
        out.append([Prediction(token=t, token_id=i, probability=p)
                    for t, i, p in zip(tokens, row_ids, row_values, strict=True)])
    return out


@torch.inference_mode()
def hidden_states(bundle: ModelBundle, encoding: Encoding) -> tuple[torch.Tensor, ...]:
    """One forward pass: the embeddings' output and every encoder layer's, each (1, T, h)."""
    with model_run():
        out = bundle.model(**input_tensors(encoding), output_hidden_states=True, return_dict=True)
    return out.hidden_states


@torch.inference_mode()
def fill_mask(bundle: ModelBundle, text: str, text_b: str | None = None,
              top_k: int = 5) -> list[list[Prediction]]:
    """For each [MASK] in the text (in order), the MLM head's ``top_k`` tokens, best first.

    The probabilities are the softmax of ``heads.predictions`` on the last layer's hidden state
    over the whole vocabulary, as ``BertForPreTraining``'s ``prediction_logits``. Raises
    NoPretrainingHeadError without the head, InputError for no [MASK] or more than MAX_MASKS.
    """
    heads = require_mlm_head(bundle)
    top_k = check_top_k(top_k)
    encoding = encode(bundle, text, text_b)
    positions = mask_positions(bundle, encoding, text, text_b)
    last = hidden_states(bundle, encoding)[-1]
    # The head works position by position, so only the [MASK] rows go through its decoder.
    with model_run():
        logits = heads.predictions(last[0, positions])
    return _predictions(bundle, logits, top_k)


@torch.inference_mode()
def next_sentence(bundle: ModelBundle, a: str, b: str | None) -> NextSentence:
    """BERT's next-sentence prediction for the pair (a, b): ``heads.seq_relationship`` on the
    pooler output (tanh of a dense layer on the last layer's [CLS]), softmax over
    (IsNext, NotNext). Raises NoPretrainingHeadError without the head, InputError without b."""
    heads = require_nsp_head(bundle)
    if not (b or "").strip():
        raise InputError(
            N_("Next-sentence prediction needs two sentences: type sentence B, the one that may "
               "or may not follow sentence A.")
        )
    encoding = encode(bundle, a, b)
    with model_run():
        out = bundle.model(**input_tensors(encoding), return_dict=True)
        logits = heads.seq_relationship(out.pooler_output)[0].to(torch.float32)
    probabilities = torch.softmax(logits, dim=-1)
    return NextSentence(is_next_probability=float(probabilities[0]),
                        logits=(float(logits[0]), float(logits[1])))
