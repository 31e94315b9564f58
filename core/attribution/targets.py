"""What an attribution explains: one number the model computes from the input.

    pair_cosine       cosine of sentence A's and sentence B's vectors, each sentence run on its
                      own and mean-pooled over its tokens: the embedding model's own similarity
                      figure (sentence-transformers' recipe). The default when B is given.
    sentence_cosine   one input: cosine of its mean-pooled vector with the vector of the whole,
                      unchanged input (1 for the input itself). It asks which tokens make the
                      sentence vector what it is. The default for one sentence.
    mask_probability  with an MLM head: the probability of the model's best token at the first
                      [MASK] (the token it predicts for the whole input).
    is_next           with an NSP head and a pair: the probability of IsNext.

A target is evaluated from word embeddings (so gradients can flow into them) through
``evaluate``; the input's "parts" are the token sequences the model runs: A and B separately for
pair_cosine, the one input ([CLS] A [SEP] B [SEP] for a pair) otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
import torch
from transformers import BertModel
from transformers.models.bert.modeling_bert import BertPreTrainingHeads

from core.analysis import input_tensors
from core.errors import N_, InputError
from core.models import ModelBundle, model_run, tokenizer_lock
from core.pretraining.heads import mask_positions, require_mlm_head, require_nsp_head
from core.similarity.sentences import encoder_max_length
from core.tokens import Encoding, encode


class Target(StrEnum):
    """What an attribution explains. A value is the name a link may carry (?att_target=)."""

    PAIR_COSINE = "pair_cosine"
    SENTENCE_COSINE = "sentence_cosine"
    MASK_PROBABILITY = "mask_probability"
    IS_NEXT = "is_next"



@dataclass(frozen=True)
class TargetPlan:
    """A target made concrete for one input."""

    kind: Target
    model_name: str
    parts: tuple[Encoding, ...]          # the sequences the model runs
    fixed: tuple[np.ndarray, ...]        # per part (T,) bool: kept in the IG baseline, never
                                         # blanked out ([CLS], [SEP], and the [MASK] predicted)
    mask_position: int | None = None     # mask_probability: where the [MASK] is in the part
    answer_id: int | None = None         # mask_probability: the token whose probability is read
    answer_token: str | None = None
    reference: np.ndarray | None = None  # sentence_cosine: (h,) the whole input's vector

    @property
    def tokens(self) -> list[str]:
        """Every part's tokens, one after another (the order of every per-token array here)."""
        return [t for part in self.parts for t in part.tokens]


def default_target(text_b: str | None) -> Target:
    """pair_cosine when sentence B is given, else sentence_cosine."""
    return Target.PAIR_COSINE if (text_b or "").strip() else Target.SENTENCE_COSINE


def _check_kind(kind: object) -> Target:
    if not isinstance(kind, str) or kind not in {t.value for t in Target}:
        raise InputError(N_("“{value}” is not a quantity the explorer can explain."),
                         value=str(kind))
    return Target(kind)


def _needs_b(text_b: str | None) -> None:
    if not (text_b or "").strip():
        raise InputError(N_("This quantity compares two sentences: type sentence B as well."))


def plan_target(bundle: ModelBundle, kind: Target | str, text_a: str,
                text_b: str | None = None, max_length: int | None = None,
                truncation: bool = True, reference: bool = True) -> TargetPlan:
    """Check that the model and the input have what ``kind`` needs, and fix its details.

    ``reference=False`` leaves sentence_cosine's reference vector (a forward pass) for
    ``with_reference`` to add when the target is first evaluated: a view that only needs the
    tokens then runs no model. Raises InputError (no sentence B, no [MASK]) or
    NoPretrainingHeadError (saying which model to load) with a message for the user.
    """
    kind = _check_kind(kind)
    if kind == Target.PAIR_COSINE:
        _needs_b(text_b)
        # As the model's own figure: each sentence alone, cut where sentence-transformers cuts.
        limit = encoder_max_length(bundle.name)
        parts = (encode(bundle, text_a, None, limit), encode(bundle, text_b or "", None, limit))
        return TargetPlan(kind, bundle.name, parts, tuple(_specials(p) for p in parts))
    if kind == Target.IS_NEXT:
        require_nsp_head(bundle)
        _needs_b(text_b)
    if kind == Target.MASK_PROBABILITY:
        require_mlm_head(bundle)
    part = encode(bundle, text_a, text_b, max_length, truncation)   # never padded
    fixed = _specials(part)
    if kind == Target.IS_NEXT:
        return TargetPlan(kind, bundle.name, (part,), (fixed,))
    if kind == Target.MASK_PROBABILITY:
        position = mask_positions(bundle, part, text_a, text_b)[0]
        fixed = fixed.copy()
        fixed[position] = True
        plan = TargetPlan(kind, bundle.name, (part,), (fixed,), mask_position=position)
        answer = int(_mask_logits(bundle, plan).argmax())
        return TargetPlan(kind, bundle.name, (part,), (fixed,), mask_position=position,
                          answer_id=answer, answer_token=bundle.ids_to_tokens([answer])[0])
    plan = TargetPlan(kind, bundle.name, (part,), (fixed,))
    return with_reference(bundle, plan) if reference else plan


def with_reference(bundle: ModelBundle, plan: TargetPlan) -> TargetPlan:
    """The plan with sentence_cosine's reference: the whole input's mean-pooled last layer."""
    if plan.kind != Target.SENTENCE_COSINE or plan.reference is not None:
        return plan
    with torch.inference_mode(), model_run():
        last = bundle.model(**input_tensors(plan.parts[0])).last_hidden_state
    reference = last[0].mean(dim=0).to(torch.float32).numpy().copy()
    return replace(plan, reference=reference)


def _specials(encoding: Encoding) -> np.ndarray:
    return np.asarray(encoding.special_tokens_mask, dtype=bool)


@torch.inference_mode()
def _mask_logits(bundle: ModelBundle, plan: TargetPlan) -> torch.Tensor:
    with model_run():
        last = bundle.model(**input_tensors(plan.parts[0])).last_hidden_state
        return require_mlm_head(bundle).predictions(last[0, plan.mask_position])


def pad_id(bundle: ModelBundle) -> int:
    """The [PAD] id, whose embedding is the integrated-gradients baseline."""
    with tokenizer_lock(bundle.tokenizer):
        value = bundle.tokenizer.pad_token_id
    return int(value if value is not None else 0)


@dataclass(frozen=True)
class PartBatch:
    """A batch of one part's sequences as the model takes them (all of one length)."""

    word_embeddings: torch.Tensor         # (B, T, h)
    token_type_ids: torch.Tensor          # (B, T)
    mask_positions: torch.Tensor | None = None   # (B,) where the [MASK] is, mask_probability


def evaluate(model: BertModel, heads: BertPreTrainingHeads | None, plan: TargetPlan,
             batches: Sequence[PartBatch]) -> torch.Tensor:
    """(B,) the target for each sequence of the batches (one batch per part; a batch of one
    broadcasts). Runs under whatever grad mode the caller set."""
    outputs = []
    for batch in batches:
        t = batch.word_embeddings.shape[1]
        with model_run():
            outputs.append(model(inputs_embeds=batch.word_embeddings,
                                 token_type_ids=batch.token_type_ids,
                                 position_ids=torch.arange(t)[None],
                                 return_dict=True))
    if plan.kind == Target.PAIR_COSINE:
        a, b = (out.last_hidden_state.mean(dim=1) for out in outputs)
        return torch.nn.functional.cosine_similarity(a, b, dim=-1)
    out = outputs[0]
    if plan.kind == Target.SENTENCE_COSINE:
        assert plan.reference is not None, "with_reference adds it before a target is evaluated"
        reference = torch.from_numpy(plan.reference)[None]
        return torch.nn.functional.cosine_similarity(out.last_hidden_state.mean(dim=1),
                                                     reference, dim=-1)
    assert heads is not None, "plan_target checked the model has the head"
    if plan.kind == Target.IS_NEXT:
        with model_run():
            logits = heads.seq_relationship(out.pooler_output)
        return torch.softmax(logits.to(torch.float32), dim=-1)[:, 0]
    rows = torch.arange(out.last_hidden_state.shape[0])
    with model_run():
        logits = heads.predictions(out.last_hidden_state[rows, batch_positions(batches[0])])
    return torch.softmax(logits.to(torch.float32), dim=-1)[:, plan.answer_id]


def batch_positions(batch: PartBatch) -> torch.Tensor:
    assert batch.mask_positions is not None, "mask_probability needs the [MASK] positions"
    return batch.mask_positions


def full_batch(model: BertModel, plan: TargetPlan, part: int) -> PartBatch:
    """Part ``part`` of the input as it is, a batch of one."""
    encoding = plan.parts[part]
    ids = torch.tensor([encoding.input_ids])
    return PartBatch(
        word_embeddings=model.embeddings.word_embeddings(ids),
        token_type_ids=torch.tensor([encoding.token_type_ids]),
        mask_positions=None if plan.mask_position is None
        else torch.tensor([plan.mask_position]),
    )
