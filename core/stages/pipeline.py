"""What the Stages page shows beyond the stage arrays of ``core.analysis``, each checked live.

- how each stage is computed, written as the tutorials write it;
- the autograd node that made every stage, from a real forward with gradients on;
- which dimensions to draw and one colour range for several stages.

The printout lives in ``core.stages.printout``, the arithmetic checks in
``core.stages.embedding_checks`` and the per-token comparison of the lookups in
``core.stages.lookup_components``. What each stage holds, in words, is the page's own text
(``pages.stages.figures``), so it can be translated.
Nothing here changes the shared model: no training mode, no hooks, no new parameters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from core.analysis import Analysis, embedding_stages, input_tensors
from core.models import ModelBundle, model_run

MODULE_OUTPUT = "model.embeddings(...)"
DEFAULT_DIMS = 64           # dimensions drawn by default: a 512-token stage is ~175 KB of JSON
CLIP_PERCENTILE = 99.0      # colour limit when clipping: a rogue dimension cannot wash out the rest


# ---------------------------------------------------------------------------------------------
# How each stage is computed, written as the tutorials write it
# ---------------------------------------------------------------------------------------------

def stage_expression(stage: str) -> str:
    """The Python that gives this stage's tensor, as in the tutorials (``model`` a BertModel)."""
    fixed = {
        "word_embeddings": "model.embeddings.word_embeddings(input_ids)",
        "token_type_embeddings": "model.embeddings.token_type_embeddings(token_type_ids)",
        "position_embeddings": "model.embeddings.position_embeddings(position_ids)",
        "sum": "word_embeddings + token_type_embeddings + position_embeddings",
        "LayerNorm": "model.embeddings.LayerNorm(sum)",
        "dropout": "LayerNorm * mask / (1 - p)  # seeded mask, as nn.Dropout in training",
        MODULE_OUTPUT: "model.embeddings(input_ids, token_type_ids, position_ids)  # eval mode",
    }
    if stage in fixed:
        return fixed[stage]
    if stage.startswith("layer_"):
        k = int(stage.removeprefix("layer_"))
        return (
            f"model(**inputs, output_hidden_states=True).hidden_states[{k}]"
            f"  # encoder.layer[{k - 1}]"
        )
    raise KeyError(stage)


# ---------------------------------------------------------------------------------------------
# Autograd nodes from a real forward with gradients on
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AutogradTrace:
    """For every stage (and the embeddings module's output): its autograd node and real shape."""

    grad_fn: dict[str, str | None]         # stage -> "EmbeddingBackward0", ...; None if no graph
    shapes: dict[str, tuple[int, ...]]     # stage -> (1, T, h)
    max_diff: dict[str, float]             # stage -> max |grad forward - analysis array|


def node_name(tensor: torch.Tensor) -> str | None:
    """The autograd node's name exactly as ``repr(tensor)`` prints it in ``grad_fn=<...>``."""
    fn = tensor.grad_fn
    if fn is None:
        return None
    name = type(fn).__name__
    return fn.name().rsplit("::", 1)[-1] if name == "CppFunction" else name


def autograd_trace(bundle: ModelBundle, analysis: Analysis) -> AutogradTrace:
    """Run the stages again with gradients on and read which operation made each tensor.

    ``torch.enable_grad`` is local to this thread, ``backward`` is never called and the graph is
    dropped on return, so the shared model is used exactly as ``analyze`` uses it. The values are
    compared with the analysis' arrays, so the names belong to the numbers the page shows.
    Cost: one more forward pass; for 512 tokens on all-MiniLM-L6-v2 the graph holds ~180 MB
    until this returns.
    """
    inputs = input_tensors(analysis.encoding)
    with torch.enable_grad(), model_run():
        tensors = embedding_stages(bundle, inputs)
        tensors[MODULE_OUTPUT] = bundle.model.embeddings(
            input_ids=inputs["input_ids"],
            token_type_ids=inputs["token_type_ids"],
            position_ids=inputs["position_ids"],
        )
        out = bundle.model(**inputs, output_hidden_states=True, return_dict=True)
        for k, hidden in enumerate(out.hidden_states[1:], start=1):
            tensors[f"layer_{k}"] = hidden
    reference = dict(analysis.stages)
    reference[MODULE_OUTPUT] = analysis.stages["LayerNorm"]  # eval mode: dropout is the identity
    max_diff = {
        name: float(np.abs(t.detach()[0].numpy() - reference[name]).max())
        for name, t in tensors.items()
    }
    return AutogradTrace(
        grad_fn={name: node_name(t) for name, t in tensors.items()},
        shapes={name: tuple(t.shape) for name, t in tensors.items()},
        max_diff=max_diff,
    )


# ---------------------------------------------------------------------------------------------
# View helpers: which dimensions to draw, and one colour range for several stages
# ---------------------------------------------------------------------------------------------

def dimension_window(
    hidden: int, mode: str, first_n: int = DEFAULT_DIMS, span: tuple[int, int] | None = None
) -> range:
    """The hidden dimensions to draw: ``"first"`` N, a ``"range"`` (inclusive) or ``"all"``.

    Out-of-range numbers are clamped, so a hand-edited URL still gives a sensible window.
    """
    if mode == "all":
        return range(hidden)
    if mode == "range" and span is not None:
        lo, hi = sorted(int(v) for v in span)
        lo, hi = min(max(lo, 0), hidden - 1), min(max(hi, 0), hidden - 1)
        return range(lo, hi + 1)
    return range(min(max(int(first_n), 1), hidden))


def colour_bound(matrices: Iterable[np.ndarray], clip: bool) -> float:
    """Half-width of a colour range centred on 0 that covers all the matrices.

    With ``clip`` it is the 99th percentile of |value| instead of the maximum, so one rogue
    dimension does not turn every other cell white (colours saturate beyond it).
    """
    values = np.concatenate([np.abs(np.asarray(m, dtype=np.float32)).ravel() for m in matrices])
    if values.size == 0:
        return 1.0
    bound = float(np.percentile(values, CLIP_PERCENTILE) if clip else values.max())
    return bound if bound > 0 else 1.0
