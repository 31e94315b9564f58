"""Norm-weighted attention (Kobayashi et al. 2020, arXiv 2004.10102): how much is moved, not
only how much is looked at.

A head's output for token i is sum_j alpha_ij f(x_j), with f(x) = (x W_V + b_V) W_O: the value
projection (``attention.self.value``) followed by the head's slice of the output projection
(``attention.output.dense``; its bias is added once per token, not per j, so it is no part of f).
The size of what token j sends to token i is ||alpha_ij f(x_j)||; since alpha is a non-negative
scalar, per head this is alpha_ij * ||f(x_j)||. For a whole layer the heads' vectors are summed
first: ||sum_h alpha^h_ij f^h(x_j)|| (the paper's layer-level figure).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.analysis import Analysis, analyze
from core.models import ModelBundle, model_run


@dataclass(frozen=True)
class NormWeighted:
    """||alpha f(x)|| for every layer of one input (float32)."""

    per_head: np.ndarray | None   # (L, H, T, T) alpha^h_ij * ||f^h(x_j)||, when asked for
    layer: np.ndarray       # (L, T, T) ||sum_h alpha^h_ij f^h(x_j)||
    f_norms: np.ndarray     # (L, H, T) ||f^h(x_j)||


def layer_inputs(analysis: Analysis) -> list[np.ndarray]:
    """hidden_states[0..L-1]: what each encoder layer reads (the embeddings' output first)."""
    return [analysis.stages["LayerNorm"], *(analysis.stages[n] for n in analysis.layer_names[:-1])]


@torch.inference_mode()
def transformed_values(bundle: ModelBundle, layer: int, x: np.ndarray) -> torch.Tensor:
    """(H, T, h) f^h(x_j) = (x_j W_V + b_V)[head h] W_O[head h] for layer ``layer`` (1-based)."""
    attention = bundle.model.encoder.layer[layer - 1].attention
    heads = bundle.config.num_attention_heads
    with model_run():
        value = attention.self.value(torch.from_numpy(np.array(x)))    # (T, h), a copy
    t, hidden = value.shape
    d = hidden // heads
    value = value.view(t, heads, d).transpose(0, 1)                             # (H, T, d)
    w_o = attention.output.dense.weight.view(hidden, heads, d).permute(1, 2, 0)  # (H, d, h)
    return torch.bmm(value, w_o)                                                # (H, T, h)


def summed_norms(alpha: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """(T, T) ||sum_h alpha[h, i, j] f[h, j]|| without building the (T, T, hidden) sum: its
    square is the quadratic form a^T G_j a with G_j = the heads' Gram matrix of f at token j
    (H x H), T / H times fewer products (measured 50-85 ms -> a few ms at 64 tokens). float64,
    so the form cannot lose its small values to rounding."""
    f64 = f.to(torch.float64).transpose(0, 1)                         # (T_j, H, hidden)
    gram = torch.bmm(f64, f64.transpose(1, 2))                        # (T_j, H, H)
    a = alpha.to(torch.float64).permute(2, 1, 0)                      # (T_j, T_i, H)
    squared = (torch.bmm(a, gram) * a).sum(dim=-1)                    # (T_j, T_i)
    return squared.clamp_min(0.0).sqrt().T.to(torch.float32)          # (T_i, T_j)


@torch.inference_mode()
def norm_weighted_of(bundle: ModelBundle, analysis: Analysis, per_head: bool = True,
                     ) -> NormWeighted:
    """Norm-weighted attention of an analysis made with ``attentions=True``; ``per_head=False``
    leaves out the (L, H, T, T) array (75 MB at 512 tokens with 12 heads)."""
    attentions = analysis.attention_weights()
    heads, layer_norms, f_norms = [], [], []
    for k, x in enumerate(layer_inputs(analysis), start=1):
        f = transformed_values(bundle, k, x)                                 # (H, T, h)
        alpha = torch.from_numpy(np.array(attentions[k - 1]))                # (H, T, T)
        norms = f.norm(dim=-1)                                               # (H, T)
        if per_head:
            heads.append((alpha * norms[:, None, :]).numpy())
        layer_norms.append(summed_norms(alpha, f).numpy())
        f_norms.append(norms.numpy())
    return NormWeighted(per_head=np.stack(heads) if per_head else None,
                        layer=np.stack(layer_norms),
                        f_norms=np.stack(f_norms))


def norm_weighted_attention(bundle: ModelBundle, text_a: str,
                            text_b: str | None = None) -> NormWeighted:
    """Norm-weighted attention of one sentence or a pair."""
    return norm_weighted_of(bundle, analyze(bundle, text_a, text_b, attentions=True))
