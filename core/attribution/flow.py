"""Attention flow (Abnar & Zuidema 2020): the attention graph read as a flow network.

Nodes are (layer, token) for layers 0 (the input) to L; an edge runs from token i at layer k to
token j at layer k-1 with capacity A_k[i, j], the residual-augmented attention of rollout
(``core.attribution.rollout.residual_attention``). flow[k][i, j] is the maximum flow from
(k, i) down to input token (0, j), each row normalised to sum to 1, as in the paper's code.

Cost: one max-flow problem per (output token, layer, input token), each on a graph of
L * T^2 edges, so flow for every token grows like L^2 * T^4 (the paper's O(d^2 n^4)). The token
limit below keeps one request near a second on this machine's CPU.

scipy's max-flow (``scipy.sparse.csgraph.maximum_flow``, Dinic's algorithm) takes integer
capacities only, so the capacities are scaled by ``CAPACITY_SCALE`` and rounded: flows are exact
to about 1e-6 of a token's total.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from core.analysis import Analysis, analyze
from core.attribution.rollout import real_attentions, residual_attention
from core.errors import N_, InputError
from core.models import ModelBundle

CAPACITY_SCALE = 1_000_000
# Work budget, in edge-visits: (output tokens) * L^2 * T^3. Measured on this machine's CPU with
# scipy 1.17: 12 layers x 64 tokens for one output token (3.8e7) took 0.9 s.
FLOW_BUDGET = 12 * 12 * 64**3


def flow_token_limit(layers: int, all_tokens: bool = False) -> int:
    """The longest input flow is computed for: one output token (rows L * T calls on a graph of
    L * T^2 edges), or every token (for the mean over tokens, T times the work)."""
    power = 4 if all_tokens else 3
    return max(3, int((FLOW_BUDGET / layers**2) ** (1 / power) + 1e-9))


def _graph(a: np.ndarray) -> csr_array:
    """The layered graph of (L, T, T) matrices A, node index = layer * T + token."""
    layers, t, _ = a.shape
    k, i, j = np.meshgrid(np.arange(1, layers + 1), np.arange(t), np.arange(t), indexing="ij")
    capacity = np.rint(a * CAPACITY_SCALE).astype(np.int32).ravel()
    return csr_array((capacity, ((k * t + i).ravel(), ((k - 1) * t + j).ravel())),
                     shape=((layers + 1) * t, (layers + 1) * t))


def flow_of(attentions: np.ndarray, rows: Sequence[int] | None = None,
            progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """(L, T, T) attention flow of (L, H, T, T) attention weights, for output tokens ``rows``
    (default every token); rows not asked for are NaN."""
    a = residual_attention(attentions)
    layers, t, _ = a.shape
    rows = list(range(t)) if rows is None else list(rows)
    graph = _graph(a)
    out = np.full((layers, t, t), np.nan)
    done, total = 0, layers * len(rows)
    for k in range(1, layers + 1):
        for i in rows:
            values = np.array([maximum_flow(graph, k * t + i, j, method="dinic").flow_value
                               for j in range(t)], dtype=np.float64)
            out[k - 1, i] = values / values.sum()
            done += 1
            if progress is not None:
                progress(done, total)
    return out


def check_flow_length(n_tokens: int, layers: int, all_tokens: bool = False) -> None:
    """InputError past the token limit, saying the limit and why."""
    limit = flow_token_limit(layers, all_tokens)
    if n_tokens > limit:
        raise InputError(
            N_("Attention flow is computed for inputs of up to {limit} tokens with this model "
               "({layers} layers); this input has {count}. Flow solves one maximum-flow problem "
               "per token and layer on a graph of layers × tokens² edges, so its cost grows "
               "with the fourth power of the length. Shorten the text to see it."),
            limit=limit, layers=layers, count=n_tokens,
        )


def attention_flow(bundle: ModelBundle, text_a: str, text_b: str | None = None,
                   rows: Sequence[int] | None = None) -> np.ndarray:
    """(L, T, T) attention flow of one sentence or a pair, for output tokens ``rows`` (default
    all). Raises InputError past ``flow_token_limit``."""
    return analysis_flow(analyze(bundle, text_a, text_b, attentions=True), rows)


def analysis_flow(analysis: Analysis, rows: Sequence[int] | None = None) -> np.ndarray:
    """``attention_flow`` of an input already run (an analysis made with ``attentions=True``),
    over its real tokens (padding left out): the same checks, the same result."""
    attentions = real_attentions(analysis.attention_weights(), analysis.encoding.n_real)
    layers, t = attentions.shape[0], attentions.shape[-1]
    check_flow_length(t, layers, all_tokens=rows is None or len(list(rows)) > 1)
    return flow_of(attentions, rows)
