"""The [MASK] lens: what the masked-language-model head would fill in at every layer.

The MLM head (``cls.predictions``) was trained on the last layer's vector only. Applied to the
[MASK] vector after the embeddings (layer 0) and after each encoder layer, it shows at which depth
the answer forms: with bert-base-uncased the final answer is often on top well before the last
layer, while the decoder alone, without the head's transform, reads noise (Din et al. 2023,
"Jump to conclusions", arXiv 2303.09435).

    lens = mask_lens(bundle, "The capital of France is [MASK].", k=5)
    lens.tokens[0][-1][0]            # the answer, as fill_mask gives it first
    lens.answer_ranks[0]             # its rank at layers 0..N (1 = the top guess)
    lens.first_top(0)                # the first layer where it is the top guess
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.models import ModelBundle, model_run
from core.pretraining.heads import (
    check_top_k,
    hidden_states,
    mask_positions,
    require_mlm_head,
)
from core.tokens import encode


@dataclass(frozen=True)
class MaskLens:
    """The MLM head read at every layer, for every [MASK] of one text.

    Layer 0 is the embeddings' output, layer i the output of ``encoder.layer[i-1]``. The answer
    is the model's own: the whole head's first guess at the last layer (what fill-mask shows
    first), in both readings, so the decoder-alone reading shows where that same token stands.
    """

    positions: list[int]              # where each [MASK] is in the encoding ([CLS] = 0)
    tokens: list[list[list[str]]]     # [mask][layer][i]: the k best tokens, best first
    token_ids: np.ndarray             # (masks, layers, k) their ids
    probs: np.ndarray                 # (masks, layers, k) their probabilities (float32)
    answer_ids: list[int]             # per mask: the answer's id
    answer_tokens: list[str]          # per mask: the answer
    answer_ranks: np.ndarray          # (masks, layers) the answer's rank, 1 = the top guess
    answer_probs: np.ndarray          # (masks, layers) the answer's probability
    transform: bool                   # False: the decoder alone, without dense/GELU/LayerNorm
    input_tokens: list[str]           # the encoding's tokens, to say which [MASK] is which

    @property
    def n_layers(self) -> int:
        """Encoder layers (the lens has one more row: layer 0)."""
        return int(self.probs.shape[1]) - 1

    def first_top(self, mask: int) -> int | None:
        """The first layer at which the answer is the top guess, or None if it never is."""
        top = np.flatnonzero(self.answer_ranks[mask] == 1)
        return int(top[0]) if top.size else None

    def stays_top(self, mask: int) -> int | None:
        """The layer from which the answer is the top guess at every later layer, or None if
        it is not the top guess at the last one (the decoder alone)."""
        ranks = self.answer_ranks[mask]
        if ranks[-1] != 1:
            return None
        below = np.flatnonzero(ranks != 1)
        return int(below[-1]) + 1 if below.size else 0


@torch.inference_mode()
def mask_lens(bundle: ModelBundle, text: str, k: int = 10, *, transform: bool = True,
              text_b: str | None = None) -> MaskLens:
    """For each [MASK] of ``text`` (encoded as fill_mask encodes it) and each hidden state
    (layer 0 = the embeddings' output, then every encoder layer): softmax over the vocabulary
    of the model's own MLM head on that layer's [MASK] vector, and its top ``k``.

    ``transform=True``: the whole head, ``cls.predictions`` (dense, activation, LayerNorm, then
    the decoder tied to the word table, with its bias). ``transform=False``: the decoder and its
    bias alone on the raw vector. One forward pass; the head runs on the [MASK] rows only.
    Raises NoPretrainingHeadError without the head, InputError as fill_mask does.
    """
    heads = require_mlm_head(bundle)
    k = check_top_k(k)
    encoding = encode(bundle, text, text_b)
    positions = mask_positions(bundle, encoding, text, text_b)
    states = hidden_states(bundle, encoding)                         # N+1 x (1, T, h)
    rows = torch.stack([h[0, positions] for h in states], dim=1)      # (masks, N+1, h)
    head = heads.predictions
    with model_run():
        if transform:
            logits = head(rows)                                       # (masks, N+1, vocab)
            final = logits[:, -1]
        else:
            logits = head.decoder(rows)
            final = head(rows[:, -1])                                 # the model's answer
    log_probs = torch.log_softmax(logits.to(torch.float32), dim=-1)
    top_log_probs, top_ids = log_probs.topk(k, dim=-1)               # (masks, N+1, k)
    answer_ids = final.to(torch.float32).topk(1, dim=-1).indices      # (masks, 1)
    n_masks, n_states = log_probs.shape[:2]
    answer = log_probs.gather(-1, answer_ids[:, None, :].expand(n_masks, n_states, 1))
    ranks = (log_probs > answer).sum(dim=-1) + 1                     # (masks, N+1)
    ids = top_ids.tolist()
    names = iter(bundle.ids_to_tokens([i for mask in ids for layer in mask for i in layer]))
    tokens = [[[next(names) for _ in layer] for layer in mask] for mask in ids]
    flat_answers = [int(i) for i in answer_ids[:, 0]]
    return MaskLens(
        positions=positions,
        tokens=tokens,
        token_ids=top_ids.numpy().astype(np.int64),
        probs=top_log_probs.exp().numpy(),
        answer_ids=flat_answers,
        answer_tokens=bundle.ids_to_tokens(flat_answers),
        answer_ranks=ranks.numpy().astype(np.int64),
        answer_probs=answer[..., 0].exp().numpy(),
        transform=transform,
        input_tokens=list(encoding.tokens),
    )
