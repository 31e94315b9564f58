"""The whole path from text to vectors for one input, stage by stage.

Stage names are the names of the modules that produce them in ``BertEmbeddings`` / ``BertModel``,
so a user can find the same tensor in the model:

    word_embeddings, token_type_embeddings, position_embeddings   the three lookups  (T, h)
    sum            word + token_type + position                                      (T, h)
    LayerNorm      embeddings.LayerNorm(sum) == model.embeddings(...) in eval mode   (T, h)
    dropout        a seeded dropout of LayerNorm, as in training                     (T, h)
    layer_1..N     outputs of encoder.layer[0..N-1]                                  (T, h)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.models import ModelBundle, model_run
from core.tokens import Encoding, encode

EMBEDDING_STAGES = (
    "word_embeddings",
    "token_type_embeddings",
    "position_embeddings",
    "sum",
    "LayerNorm",
    "dropout",
)
DROPOUT_SEED = 0


@dataclass(frozen=True)
class Analysis:
    """Everything the model computes for one input. Arrays are float32 numpy, batch dim dropped."""

    model_name: str
    encoding: Encoding
    stages: dict[str, np.ndarray]         # stage name -> (T, h), in pipeline order
    pooler_output: np.ndarray | None      # (h,) tanh(W [CLS] + b), None if the model has no pooler
    attentions: np.ndarray | None         # (layers, heads, T, T), None unless asked for
    stage_identity_error: float           # max |LayerNorm(word+type+pos) - model.embeddings(...)|
    dropout_p: float

    # The token-level fields of the encoding, so `analyze(...).tokens` reads as in the tutorials.
    @property
    def tokens(self) -> list[str]:
        return self.encoding.tokens

    @property
    def input_ids(self) -> list[int]:
        return self.encoding.input_ids

    @property
    def token_type_ids(self) -> list[int]:
        return self.encoding.token_type_ids

    @property
    def position_ids(self) -> list[int]:
        return self.encoding.position_ids

    @property
    def attention_mask(self) -> list[int]:
        return self.encoding.attention_mask

    @property
    def truncated(self) -> int:
        return self.encoding.truncated

    def attention_weights(self) -> np.ndarray:
        """``attentions`` of an analysis made with ``attentions=True`` (ValueError otherwise)."""
        if self.attentions is None:
            raise ValueError("this analysis was made without attentions=True")
        return self.attentions

    @property
    def layer_names(self) -> list[str]:
        return [name for name in self.stages if name.startswith("layer_")]

    def read_only(self) -> Analysis:
        """Lock every array against writes, so one result can be shared without copies."""
        for array in (*self.stages.values(), self.pooler_output, self.attentions):
            if array is not None:
                array.setflags(write=False)
        return self


def input_tensors(encoding: Encoding) -> dict[str, torch.Tensor]:
    """The encoding as the (1, T) long tensors BertModel takes."""
    return {
        key: torch.tensor([getattr(encoding, key)], dtype=torch.long)
        for key in ("input_ids", "token_type_ids", "position_ids", "attention_mask")
    }


def seeded_dropout(x: torch.Tensor, p: float, seed: int = DROPOUT_SEED) -> torch.Tensor:
    """Inverted dropout as in training, with a private generator.

    The shared model is never put in training mode and the global RNG is not touched, so
    concurrent sessions cannot disturb each other and the same input always shows the same mask.
    """
    if p <= 0.0:
        return x.clone()
    generator = torch.Generator().manual_seed(seed)
    keep = torch.bernoulli(torch.full_like(x, 1.0 - p), generator=generator)
    return x * keep / (1.0 - p)


def embedding_stages(
    bundle: ModelBundle, inputs: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The three lookups, their sum, LayerNorm and dropout, each (1, T, h)."""
    emb = bundle.model.embeddings
    word = emb.word_embeddings(inputs["input_ids"])
    token_type = emb.token_type_embeddings(inputs["token_type_ids"])
    position = emb.position_embeddings(inputs["position_ids"])
    total = word + token_type + position  # same order of additions as BertEmbeddings.forward
    normed = emb.LayerNorm(total)
    return {
        "word_embeddings": word,
        "token_type_embeddings": token_type,
        "position_embeddings": position,
        "sum": total,
        "LayerNorm": normed,
        "dropout": seeded_dropout(normed, bundle.config.hidden_dropout_prob),
    }


@torch.inference_mode()
def analyze_encoding(bundle: ModelBundle, encoding: Encoding, attentions: bool = True) -> Analysis:
    """Run every stage for an already tokenised input."""
    inputs = input_tensors(encoding)
    stages = embedding_stages(bundle, inputs)
    module_out = bundle.model.embeddings(
        input_ids=inputs["input_ids"],
        token_type_ids=inputs["token_type_ids"],
        position_ids=inputs["position_ids"],
    )
    identity_error = float((stages["LayerNorm"] - module_out).abs().max())
    with model_run():
        out = bundle.model(
            **inputs,
            output_hidden_states=True,
            output_attentions=attentions,
            return_dict=True,
        )
    # hidden_states[0] is the embeddings output; hidden_states[k] is encoder.layer[k-1]'s output.
    for k, hidden in enumerate(out.hidden_states[1:], start=1):
        stages[f"layer_{k}"] = hidden
    pooled = out.pooler_output
    return Analysis(
        model_name=bundle.name,
        encoding=encoding,
        stages={name: _to_numpy(t[0]) for name, t in stages.items()},
        pooler_output=None if pooled is None else _to_numpy(pooled[0]),
        # np.stack copies once into a new array, so the per-layer views need no copy of their own
        # (75 MB at 512 tokens).
        attentions=np.stack([a[0].detach().to(torch.float32).numpy() for a in out.attentions])
        if attentions else None,
        stage_identity_error=identity_error,
        dropout_p=float(bundle.config.hidden_dropout_prob),
    )


def analyze(
    bundle: ModelBundle,
    text_a: str,
    text_b: str | None = None,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
    attentions: bool = True,
) -> Analysis:
    """Tokenise one sentence (or a pair) and compute every stage from lookups to the last layer.

    Raises ``core.errors.InputError`` with a user-facing message for text that cannot be analysed.
    """
    encoding = encode(bundle, text_a, text_b, max_length, truncation, pad_to_max_length)
    return analyze_encoding(bundle, encoding, attentions=attentions)


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float32).numpy().copy()
