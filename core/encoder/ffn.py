"""The feed-forward block's checks against the model's own modules.

``encoder_steps_from`` replays the block step by step (intermediate.dense, the activation,
output.dense, the residual + LayerNorm). Here the layer's own ``BertIntermediate`` and
``BertOutput`` modules, called whole as ``BertLayer.feed_forward_chunk`` calls them, are run on
our ``attention.output`` step, and their results are compared with our steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.encoder.steps import EncoderSteps
from core.models import ModelBundle, model_run


@dataclass(frozen=True)
class FeedForwardChecks:
    """max |ours − the model's module| for the two ends of the feed-forward block."""

    intermediate: float   # layer.intermediate(attention.output) vs our GELU step
    output: float         # layer.output(intermediate, attention.output) vs our output step


@torch.inference_mode()
def feed_forward_checks(bundle: ModelBundle, steps: EncoderSteps) -> FeedForwardChecks:
    """Run encoder layer ``steps.layer``'s intermediate and output modules on our steps."""
    layer = bundle.model.encoder.layer[steps.layer - 1]
    attn_out = torch.from_numpy(np.array(steps.steps["attention.output"]))[None]  # (1, T, h)
    ours_inter = steps.steps["intermediate"]
    with model_run():
        inter = layer.intermediate(attn_out)                       # (1, T, intermediate)
        out = layer.output(torch.from_numpy(np.array(ours_inter))[None], attn_out)  # (1, T, h)
    return FeedForwardChecks(
        intermediate=_max_abs(ours_inter, inter[0].numpy()),
        output=_max_abs(steps.steps["output"], out[0].numpy()),
    )


def _max_abs(ours: np.ndarray, model: np.ndarray) -> float:
    if not ours.size:
        return 0.0
    return float(np.max(np.abs(ours.astype(np.float64) - model.astype(np.float64))))
