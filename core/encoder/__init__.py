"""The inside of one encoder layer, step by step, and summaries across heads and layers.

    from core import load_model
    from core.encoder import encoder_steps, head_slice, residual_shares
    bundle = load_model()
    s = encoder_steps(bundle, "This is a test sentence", layer=1)
    list(s.steps)                          # attention.self.query ... output
    s.steps["attention_probs"].shape       # (12, 7, 7)
    s.checks["output"]                     # max |ours - hidden_states[1]|
"""

from core.encoder.heads import (
    CLARK_2019,
    ClarkReference,
    HeadAtlas,
    corpus_head_atlas,
    head_atlas,
    mean_atlas,
    special_positions,
    stack_layers,
    without_specials,
)
from core.encoder.pooler import PoolerSteps, pooler_steps
from core.encoder.residual import ResidualShares, residual_shares
from core.encoder.steps import (
    CHECK_AGAINST,
    STEP_NAMES,
    EncoderSteps,
    HeadView,
    check_layer,
    encoder_steps,
    encoder_steps_from,
    encoder_steps_of,
    head_slice,
)
from core.encoder.trajectory import TokenTrajectory, token_trajectory

__all__ = [
    "CHECK_AGAINST",
    "CLARK_2019",
    "STEP_NAMES",
    "ClarkReference",
    "EncoderSteps",
    "HeadAtlas",
    "HeadView",
    "PoolerSteps",
    "ResidualShares",
    "TokenTrajectory",
    "check_layer",
    "corpus_head_atlas",
    "encoder_steps",
    "encoder_steps_from",
    "encoder_steps_of",
    "head_atlas",
    "head_slice",
    "mean_atlas",
    "stack_layers",
    "pooler_steps",
    "residual_shares",
    "special_positions",
    "token_trajectory",
    "without_specials",
]
