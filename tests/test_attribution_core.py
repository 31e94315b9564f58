"""core.attribution against transformers' own outputs and independent numpy / networkx
computations: rollout, flow, norm-weighted attention, integrated gradients, blank-out. Real
models only: the shipped all-MiniLM-L6-v2 and tiny random BERTs built in code."""

from __future__ import annotations

import threading

import networkx as nx
import numpy as np
import pytest
import torch
from transformers import BertForPreTraining, BertModel

from core import InputError, ModelBundle, analyze, encode
from core.analysis import input_tensors
from core.attribution import (
    Method,
    Target,
    agreement,
    analysis_flow,
    attention_flow,
    attention_methods,
    attention_rollout,
    best_agreement,
    blank_out,
    check_flow_length,
    flow_of,
    flow_token_limit,
    integrated_gradients,
    norm_weighted_attention,
    plan_target,
    spearman,
    token_importance,
)
from core.pretraining import NoPretrainingHeadError
from core.similarity.sentences import sentence_embedding
from tests.conftest import tiny_config

A = "Grandma baked a warm apple pie for the neighbours."
B = "The bakery down the street sells fresh bread."


def own_attentions(bundle: ModelBundle, a: str, b: str | None = None) -> np.ndarray:
    """(L, H, T, T) from a separate forward pass of the model with output_attentions=True."""
    with torch.inference_mode():
        out = bundle.model(**input_tensors(encode(bundle, a, b)), output_attentions=True)
    return np.stack([x[0].double().numpy() for x in out.attentions])


def paper_rollout(attentions: np.ndarray) -> np.ndarray:
    """The paper's formula written out independently: A_k = 0.5 W_k + 0.5 I (renormalised),
    rollout[k] = A_k ... A_1."""
    layers, _, t, _ = attentions.shape
    a = []
    for k in range(layers):
        m = 0.5 * attentions[k].sum(axis=0) / attentions.shape[1] + 0.5 * np.identity(t)
        a.append(m / m.sum(axis=1)[:, None])
    return np.stack([np.linalg.multi_dot([*reversed(a[:k + 1]), np.identity(t)])
                     for k in range(layers)])


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """One torch thread, as the server runs each model run (BERT_EXPLORER_TORCH_THREADS): on
    this busy 2-core machine two threads made integrated gradients 8x slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_heads(bundle) -> ModelBundle:
    """A tiny random BertForPreTraining: both pretraining heads, the shipped tokenizer. Weights
    drawn a little wider than BERT's 0.02, so the [MASK] probability moves measurably (with
    0.02 every one of the 30,522 tokens gets about 1/30,522)."""
    torch.manual_seed(1)
    full = BertForPreTraining(tiny_config(initializer_range=0.2)).eval()
    return ModelBundle(name="tiny-pretraining", model=full.bert, tokenizer=bundle.tokenizer,
                       heads=full.cls)


@pytest.mark.parametrize("pair", [False, True])
def test_rollout_is_the_papers_formula(bundle, tiny_bundle, pair):
    b = "Is it on the shelf?" if pair else None
    for model in (bundle, tiny_bundle):
        ours = attention_rollout(model, "The keys are under the old blue mat.", b)
        expected = paper_rollout(own_attentions(model, "The keys are under the old blue mat.", b))
        assert ours.shape == expected.shape
        np.testing.assert_allclose(ours, expected, atol=1e-5)
        np.testing.assert_allclose(ours.sum(axis=-1), 1.0, atol=1e-9)


def test_flow_equals_rollout_at_layer_1(bundle):
    """At layer 1 the graph is one bipartite step: the only path from (1, i) to (0, j) is its
    edge, so the maximum flow is A_1[i, j], rows already sum to 1, and flow == rollout exactly
    (up to the 1e-6 integer scaling of the capacities). Above layer 1 they differ."""
    attentions = own_attentions(bundle, "The old man the boats.")
    flow = flow_of(attentions)
    rollout = paper_rollout(attentions)
    np.testing.assert_allclose(flow[0], rollout[0], atol=1e-5)
    np.testing.assert_allclose(flow.sum(axis=-1), 1.0, atol=1e-9)
    assert np.abs(flow[-1] - rollout[-1]).max() > 1e-3


def test_flow_matches_networkx(tiny_bundle):
    """Another library's max-flow on the paper's graph (their own code uses networkx)."""
    attentions = own_attentions(tiny_bundle, "Flow through two layers.")
    flow = attention_flow(tiny_bundle, "Flow through two layers.", rows=[0])
    layers, _, t, _ = attentions.shape
    mean = attentions.mean(axis=1)
    a = 0.5 * mean + 0.5 * np.eye(t)
    a /= a.sum(axis=-1, keepdims=True)
    graph = nx.DiGraph()
    for k in range(1, layers + 1):
        for i in range(t):
            for j in range(t):
                graph.add_edge((k, i), (k - 1, j), capacity=a[k - 1, i, j])
    for k in range(1, layers + 1):
        values = np.array([nx.maximum_flow_value(graph, (k, 0), (0, j)) for j in range(t)])
        np.testing.assert_allclose(flow[k - 1, 0], values / values.sum(), atol=1e-5)
    assert np.isnan(flow[:, 1:]).all()   # rows not asked for


def test_flow_limit(bundle):
    layers = bundle.config.num_hidden_layers
    limit = flow_token_limit(layers)
    assert flow_token_limit(layers, all_tokens=True) < limit
    check_flow_length(limit, layers)
    with pytest.raises(InputError, match="up to"):
        check_flow_length(limit + 1, layers)
    with pytest.raises(InputError):
        attention_flow(bundle, " ".join(["word"] * 200), rows=[0])


def test_norm_weighted_against_numpy(bundle):
    """||alpha_ij f(x_j)|| with f(x) = (x W_V + b_V) W_O[head], from the weights in float64."""
    text = "Attention to [SEP] shrinks once its size is counted."
    ours = norm_weighted_attention(bundle, text)
    with torch.inference_mode():
        out = bundle.model(**input_tensors(encode(bundle, text)), output_attentions=True,
                           output_hidden_states=True)
    heads = bundle.config.num_attention_heads
    for k, layer in enumerate(bundle.model.encoder.layer):
        x = out.hidden_states[k][0].double().numpy()
        alpha = out.attentions[k][0].double().numpy()
        w_v = layer.attention.self.value.weight.detach().double().numpy()
        b_v = layer.attention.self.value.bias.detach().double().numpy()
        w_o = layer.attention.output.dense.weight.detach().double().numpy()
        d = w_v.shape[0] // heads
        value = x @ w_v.T + b_v
        f = np.stack([value[:, h * d:(h + 1) * d] @ w_o[:, h * d:(h + 1) * d].T
                      for h in range(heads)])                              # (H, T, hidden)
        moved = alpha[..., None] * f[:, None, :, :]                        # (H, T, T, hidden)
        np.testing.assert_allclose(ours.per_head[k], np.linalg.norm(moved, axis=-1),
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ours.layer[k], np.linalg.norm(moved.sum(axis=0), axis=-1),
                                   rtol=1e-4, atol=1e-5)


def test_ig_pair_cosine_is_the_models_figure_and_complete(bundle):
    ig = integrated_gradients(bundle, A, B, steps=50)
    assert ig.kind == Target.PAIR_COSINE
    figure = sentence_embedding(analyze(bundle, A)) @ sentence_embedding(analyze(bundle, B))
    assert ig.target == pytest.approx(figure, abs=1e-5)
    total = ig.attributions_a.sum() + ig.attributions_b.sum()
    assert total == pytest.approx(ig.target - ig.baseline_target, rel=0.05)
    assert ig.relative_gap < 0.05
    assert len(ig.attributions_a) == len(encode(bundle, A).input_ids)
    assert ig.attributions_a[0] == 0 and ig.attributions_a[-1] == 0   # [CLS], [SEP] kept


@pytest.mark.parametrize("kind", list(Target))
def test_ig_complete_on_a_tiny_random_model(tiny_heads, kind):
    text = "The capital of France is [MASK]." if kind == Target.MASK_PROBABILITY else A
    b = B if kind in (Target.PAIR_COSINE, Target.IS_NEXT) else None
    calls = []
    ig = integrated_gradients(tiny_heads, text, b, steps=50, target=kind,
                              progress=lambda done, total: calls.append((done, total)))
    span = ig.target - ig.baseline_target
    assert abs(span) > 1e-4
    assert ig.total == pytest.approx(span, rel=0.05)
    assert calls[-1] == (51, 51) and len(calls) >= 5
    assert (ig.attributions_b is None) == (b is None)


def test_ig_mask_probability_reads_the_heads(tiny_heads):
    text = "The capital of France is [MASK]."
    ig = integrated_gradients(tiny_heads, text, steps=4, target=Target.MASK_PROBABILITY)
    enc = encode(tiny_heads, text)
    with torch.inference_mode():
        last = tiny_heads.model(**input_tensors(enc)).last_hidden_state
        p = torch.softmax(tiny_heads.heads.predictions(last)[0, ig.plan.mask_position], -1)
    assert ig.plan.answer_id == int(p.argmax())
    assert ig.target == pytest.approx(float(p.max()), abs=1e-5)


def test_ig_needs(bundle, tiny_bundle):
    with pytest.raises(NoPretrainingHeadError, match="bert-base-uncased"):
        integrated_gradients(bundle, "Fill [MASK] in.", target=Target.MASK_PROBABILITY)
    with pytest.raises(NoPretrainingHeadError, match="bert-base-uncased"):
        integrated_gradients(bundle, A, B, target=Target.IS_NEXT)
    with pytest.raises(InputError, match="sentence B"):
        integrated_gradients(tiny_bundle, A, "  ", target=Target.PAIR_COSINE)
    with pytest.raises(InputError):
        integrated_gradients(tiny_bundle, A, steps=0)
    with pytest.raises(InputError):
        integrated_gradients(tiny_bundle, A, target="nonsense")


def test_shared_model_untouched_by_ig_in_another_thread(bundle):
    enc = encode(bundle, A, B)
    flags = [p.requires_grad for p in bundle.model.parameters()]
    with torch.inference_mode():
        before = bundle.model(**input_tensors(enc)).last_hidden_state.clone()
    errors = []

    def run() -> None:
        try:
            integrated_gradients(bundle, A, B, steps=10)
        except Exception as exc:   # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    during = []
    while thread.is_alive():
        with torch.inference_mode():
            during.append(bundle.model(**input_tensors(enc)).last_hidden_state.clone())
    thread.join()
    with torch.inference_mode():
        after = bundle.model(**input_tensors(enc)).last_hidden_state
    assert not errors
    assert torch.equal(before, after) and all(torch.equal(before, d) for d in during)
    assert [p.requires_grad for p in bundle.model.parameters()] == flags
    assert all(p.grad is None for p in bundle.model.parameters())
    assert not bundle.model.training


def test_blank_out_is_the_model_without_the_token(bundle):
    plan = plan_target(bundle, Target.PAIR_COSINE, A, B)
    result = blank_out(bundle, plan)
    enc_a = plan.parts[0]
    j = 3
    ids = [t for i, t in enumerate(enc_a.input_ids) if i != j]
    with torch.inference_mode():
        without = bundle.model(input_ids=torch.tensor([ids])).last_hidden_state[0].mean(0)
        b_vec = bundle.model(**input_tensors(plan.parts[1])).last_hidden_state[0].mean(0)
    cosine = float(torch.nn.functional.cosine_similarity(without, b_vec, dim=0))
    figure = sentence_embedding(analyze(bundle, A)) @ sentence_embedding(analyze(bundle, B))
    assert result.full == pytest.approx(figure, abs=1e-5)
    assert result.changes[0][j] == pytest.approx(figure - cosine, abs=1e-5)
    assert np.isnan(result.changes[0][0]) and np.isnan(result.changes[1][-1])   # [CLS], [SEP]
    assert len(result.change) == len(plan.tokens)


def test_agreement_table(bundle):
    plan = plan_target(bundle, Target.SENTENCE_COSINE, A)
    change = blank_out(bundle, plan).change
    methods = attention_methods(bundle, analyze(bundle, A, attentions=True))
    importances = {name: token_importance(m, None) for name, m in methods.matrices().items()}
    table = agreement(importances, change)
    layers = bundle.config.num_hidden_layers
    assert all(rho.shape == (layers,) for rho in table.values())
    from scipy.stats import spearmanr
    ok = np.isfinite(change)
    rho = spearmanr(importances["rollout"][2][ok], change[ok]).statistic
    assert table["rollout"][2] == pytest.approx(rho)
    best = best_agreement(table)
    assert best is not None and best.rho == max(np.nanmax(r) for r in table.values())
    assert np.isnan(spearman(np.ones(5), np.arange(5.0)))
    assert best_agreement({"x": np.array([np.nan])}) is None


def test_blank_out_limit(bundle):
    from core.attribution import blank_out_token_limit
    limit = blank_out_token_limit(bundle.config)
    plan = plan_target(bundle, Target.SENTENCE_COSINE, " ".join(["word"] * (limit - 1)))
    assert len(plan.tokens) == limit + 1
    with pytest.raises(InputError, match=f"up to {limit} tokens"):
        blank_out(bundle, plan)


def test_ig_inside_inference_mode(bundle):
    """A caller inside torch.inference_mode (a notebook cell, a cached view) still gets gradients:
    the private copy is made and run with grad mode on."""
    from core.attribution.gradients import _COPIES
    torch.manual_seed(2)
    model = BertModel(tiny_config()).eval()
    fresh = ModelBundle(name="tiny-fresh", model=model, tokenizer=bundle.tokenizer)
    with torch.inference_mode():
        ig = integrated_gradients(fresh, A, steps=20)
    assert fresh.model in _COPIES
    assert ig.total == pytest.approx(ig.target - ig.baseline_target, rel=0.05)


def test_importance_reads_each_methods_rows(bundle):
    """AttentionMethods.importance (what the page shows): each method's row of the output token,
    or the mean of the rows, with norm-weighted attention scaled to shares, from numpy."""
    methods = attention_methods(bundle, analyze(bundle, A, attentions=True))
    for token in (None, 3):
        rows = methods.importance(token)
        assert list(rows) == [Method.RAW, Method.ROLLOUT, Method.NORM]
        for method, matrices in methods.matrices().items():
            expected = matrices.mean(axis=1) if token is None else matrices[:, token]
            if method == Method.NORM:
                expected = expected / expected.sum(axis=-1, keepdims=True)
            np.testing.assert_allclose(rows[method], expected, rtol=1e-12)
        np.testing.assert_allclose(rows[Method.NORM].sum(axis=-1), 1.0, atol=1e-12)


def test_analysis_flow_is_attention_flow(bundle):
    """The flow of an analysis already made (padded to 16: padding is left out) equals
    attention_flow of the text, and is refused past the limit the same way."""
    text = "The old man the boats."
    padded = analyze(bundle, text, max_length=16, pad_to_max_length=True, attentions=True)
    assert padded.encoding.n_real < 16
    np.testing.assert_allclose(analysis_flow(padded, [2]), attention_flow(bundle, text, rows=[2]),
                               atol=1e-5)
    with pytest.raises(InputError, match="up to"):
        analysis_flow(analyze(bundle, " ".join(["word"] * 200), attentions=True), [0])
