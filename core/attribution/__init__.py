"""What drives the output: attention rollout and flow (Abnar & Zuidema 2020), norm-weighted
attention (Kobayashi et al. 2020), integrated gradients, and a blank-out test of which to believe.
No Streamlit.

    from core import load_model
    from core.attribution import attention_rollout, integrated_gradients
    bundle = load_model()
    attention_rollout(bundle, "The cat sat on the mat.").shape        # (6, 9, 9)
    ig = integrated_gradients(bundle, "The cat sat.", "A dog lay.")   # toward the pair's cosine
    ig.target, ig.attributions_a.sum() + ig.attributions_b.sum()      # sums to target - baseline
"""

from core.attribution.blank_out import (
    ABNAR_ZUIDEMA_2020,
    Best,
    BlankOut,
    agreement,
    best_agreement,
    blank_out,
    blank_out_token_limit,
    spearman,
)
from core.attribution.flow import (
    CAPACITY_SCALE,
    analysis_flow,
    attention_flow,
    check_flow_length,
    flow_of,
    flow_token_limit,
)
from core.attribution.gradients import (
    BASELINE,
    MAX_STEPS,
    IntegratedGradients,
    gradient_copy,
    integrated_gradients,
)
from core.attribution.importance import (
    AttentionMethods,
    Method,
    attention_methods,
    shares,
    token_importance,
)
from core.attribution.norms import NormWeighted, norm_weighted_attention, norm_weighted_of
from core.attribution.rollout import attention_rollout, head_mean, residual_attention, rollout_of
from core.attribution.targets import (
    Target,
    TargetPlan,
    default_target,
    plan_target,
)

__all__ = [
    "ABNAR_ZUIDEMA_2020",
    "BASELINE",
    "CAPACITY_SCALE",
    "MAX_STEPS",
    "AttentionMethods",
    "Best",
    "BlankOut",
    "IntegratedGradients",
    "Method",
    "NormWeighted",
    "Target",
    "TargetPlan",
    "agreement",
    "analysis_flow",
    "attention_flow",
    "attention_methods",
    "attention_rollout",
    "best_agreement",
    "blank_out",
    "blank_out_token_limit",
    "check_flow_length",
    "default_target",
    "flow_of",
    "flow_token_limit",
    "gradient_copy",
    "head_mean",
    "integrated_gradients",
    "norm_weighted_attention",
    "norm_weighted_of",
    "plan_target",
    "residual_attention",
    "rollout_of",
    "shares",
    "spearman",
    "token_importance",
]
