"""The Stages page's core (core.stages: pipeline, printout, embedding_checks,
lookup_components) on the real shipped model and a tiny random BERT.

Expected values come from torch and transformers' own modules run here in the test (repr of real
tensors, F.layer_norm, F.one_hot, F.cosine_similarity), never from the core modules themselves.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core import ModelBundle, analyze
from core.analysis import input_tensors
from core.stages.embedding_checks import (
    broadcast_demo,
    layernorm_check,
    one_hot_check,
    one_hot_matrix,
)
from core.stages.lookup_components import compare_lookups, segment_rows
from core.stages.pipeline import (
    MODULE_OUTPUT,
    autograd_trace,
    colour_bound,
    dimension_window,
    stage_expression,
)
from core.stages.printout import torch_printout, torch_size
from pages.stages.figures import stage_description

CHECKS = (autograd_trace, layernorm_check, one_hot_check, broadcast_demo, segment_rows)

SEED = "This is a test sentence"
PAIR = ("What is your name?", "My name is BERT.")


@pytest.fixture(scope="module")
def seed(bundle: ModelBundle):
    return analyze(bundle, SEED, attentions=False)


@pytest.fixture(scope="module")
def pair(bundle: ModelBundle):
    return analyze(bundle, *PAIR, attentions=False)


def module_grad_fn(tensor: torch.Tensor) -> str:
    """The node name as torch's own repr prints it."""
    return re.search(r"grad_fn=<(\w+)>", repr(tensor)).group(1)


def hook_counts(model: torch.nn.Module) -> list[tuple[int, int, int]]:
    return [
        (len(m._forward_hooks), len(m._forward_pre_hooks), len(m._backward_hooks))
        for m in model.modules()
    ]


# --- autograd nodes ---------------------------------------------------------------------------

def test_autograd_names_are_the_modules_own(bundle: ModelBundle, seed) -> None:
    trace = autograd_trace(bundle, seed)
    emb = bundle.model.embeddings
    ids = torch.tensor([seed.input_ids])
    types = torch.tensor([seed.token_type_ids])
    with torch.enable_grad():
        word = emb.word_embeddings(ids)
        total = word + emb.token_type_embeddings(types) + emb.position_embeddings(
            torch.arange(ids.shape[1])
        )
        expected = {
            "word_embeddings": module_grad_fn(word),
            "token_type_embeddings": module_grad_fn(emb.token_type_embeddings(types)),
            "sum": module_grad_fn(total),
            "LayerNorm": module_grad_fn(emb.LayerNorm(total)),
            MODULE_OUTPUT: module_grad_fn(emb(input_ids=ids, token_type_ids=types)),
            "layer_6": module_grad_fn(bundle.model(input_ids=ids).last_hidden_state),
        }
    for stage, name in expected.items():
        assert trace.grad_fn[stage] == name, stage
    # The names the tutorials print.
    assert trace.grad_fn["word_embeddings"] == "EmbeddingBackward0"
    assert trace.grad_fn["position_embeddings"] == "EmbeddingBackward0"
    assert trace.grad_fn["sum"] == "AddBackward0"
    assert trace.grad_fn["LayerNorm"] == "NativeLayerNormBackward0"
    assert trace.grad_fn[MODULE_OUTPUT] == "NativeLayerNormBackward0"
    assert set(trace.grad_fn) == {*seed.stages, MODULE_OUTPUT}


def test_autograd_trace_is_a_real_forward(bundle: ModelBundle, seed, tiny_bundle) -> None:
    # Gradients on even when the caller has them off, and the numbers are the analysis' own.
    with torch.no_grad():
        trace = autograd_trace(bundle, seed)
    assert all(trace.grad_fn.values())
    assert max(trace.max_diff.values()) <= 1e-6
    T, h = len(seed.tokens), bundle.config.hidden_size
    assert set(trace.shapes.values()) == {(1, T, h)}
    # A model whose weights need no gradient builds no graph: the names come from the graph.
    frozen = copy.deepcopy(tiny_bundle.model).requires_grad_(False)
    frozen_bundle = ModelBundle("frozen", frozen, tiny_bundle.tokenizer)
    frozen_trace = autograd_trace(frozen_bundle, analyze(frozen_bundle, SEED, attentions=False))
    assert set(frozen_trace.grad_fn.values()) == {None}


def test_the_checks_leave_the_shared_model_alone(bundle: ModelBundle, pair) -> None:
    emb = bundle.model.embeddings
    before = {name: p.detach().clone() for name, p in emb.named_parameters()}
    requires = [p.requires_grad for p in bundle.model.parameters()]
    hooks = hook_counts(bundle.model)  # transformers installs its own; we must add none
    for check in CHECKS:
        check(bundle, pair)
    compare_lookups(pair)
    assert not bundle.model.training
    assert [p.requires_grad for p in bundle.model.parameters()] == requires
    assert all(p.grad is None for p in bundle.model.parameters())
    assert hook_counts(bundle.model) == hooks
    for name, p in emb.named_parameters():
        assert torch.equal(p, before[name]), name


def test_the_checks_on_a_tiny_model(tiny_bundle: ModelBundle) -> None:
    result = analyze(tiny_bundle, *PAIR, attentions=False)
    trace = autograd_trace(tiny_bundle, result)
    assert [s for s in trace.grad_fn if s.startswith("layer_")] == ["layer_1", "layer_2"]
    assert trace.shapes["layer_2"] == (1, len(result.tokens), 32)
    assert layernorm_check(tiny_bundle, result).gamma.shape == (32,)
    assert segment_rows(tiny_bundle, result).n_distinct == 2


# --- the printout -----------------------------------------------------------------------------

def test_printout_is_torch_repr_for_the_tutorials_tensor(bundle: ModelBundle, seed) -> None:
    ids = torch.tensor([seed.input_ids])
    with torch.enable_grad():
        module_out = bundle.model.embeddings(input_ids=ids)
        word = bundle.model.embeddings.word_embeddings(ids)
        tiny = word * 1e-5  # scientific notation, wrapped rows, MulBackward0
    assert torch_printout(seed.stages["LayerNorm"], "NativeLayerNormBackward0", False) == repr(
        module_out
    )
    assert torch_printout(seed.stages["word_embeddings"], "EmbeddingBackward0", False) == repr(
        word
    )
    assert torch_printout(seed.stages["word_embeddings"] * np.float32(1e-5), "MulBackward0",
                          False) == repr(tiny)


@pytest.mark.parametrize("stage", ["token_type_embeddings", "sum", "dropout", "layer_3"])
def test_printout_is_torch_repr_for_every_stage(pair, stage: str) -> None:
    values = pair.stages[stage]
    assert torch_printout(values, None, every_row=False) == repr(torch.from_numpy(values)[None])


def test_printout_of_short_and_small_tensors(bundle: ModelBundle, tiny_bundle) -> None:
    # Six tokens or fewer: print() shows every row, so both modes equal torch's repr.
    short = analyze(bundle, "Hi there", attentions=False)
    tensor = torch.from_numpy(short.stages["sum"])[None]
    assert len(short.tokens) <= 6
    assert torch_printout(short.stages["sum"], None, every_row=False) == repr(tensor)
    assert torch_printout(short.stages["sum"], None, every_row=True) == repr(tensor)
    # Hidden size 32: under 1,000 numbers, torch prints every value and wraps at 80 characters.
    small = analyze(tiny_bundle, SEED, attentions=False).stages["LayerNorm"]
    assert small.size <= 1000
    assert torch_printout(small, None, every_row=False) == repr(torch.from_numpy(small)[None])


def test_printout_every_row_shows_each_token(pair) -> None:
    values = pair.stages["layer_1"]
    text = torch_printout(values, "NativeLayerNormBackward0", every_row=True)
    rows = re.findall(r"\[([^\[\]]+)\]", text)
    assert len(rows) == len(pair.tokens)
    for row, expected in zip(rows, values, strict=True):
        numbers = [float(v) for v in row.replace("...", "").split(",") if v.strip()]
        np.testing.assert_allclose(numbers, np.r_[expected[:3], expected[-3:]], atol=5e-5)
    assert text.endswith("grad_fn=<NativeLayerNormBackward0>)")


def test_torch_size_and_expressions(tiny_bundle: ModelBundle) -> None:
    assert torch_size((1, 7, 384)) == str(torch.Size([1, 7, 384]))
    config = tiny_bundle.config
    assert f"{config.vocab_size:,} × 32" in stage_description("word_embeddings", config)
    assert f"{config.max_position_embeddings} × 32" in stage_description(
        "position_embeddings", config
    )
    assert "10%" in stage_description("dropout", config)
    assert "encoder.layer[1]" in stage_description("layer_2", config)
    assert stage_expression("word_embeddings") == "model.embeddings.word_embeddings(input_ids)"
    assert "hidden_states[3]" in stage_expression("layer_3")


# --- LayerNorm --------------------------------------------------------------------------------

def test_layernorm_check_against_torch(bundle: ModelBundle, pair) -> None:
    check = layernorm_check(bundle, pair)
    ln = bundle.model.embeddings.LayerNorm
    total = torch.from_numpy(pair.stages["sum"]).double()
    np.testing.assert_allclose(check.mean_before, total.mean(dim=1).numpy(), atol=1e-7)
    np.testing.assert_allclose(check.std_before, total.std(dim=1, correction=0).numpy(),
                               atol=1e-7)
    after = torch.from_numpy(pair.stages["LayerNorm"]).double()
    np.testing.assert_allclose(check.mean_after, after.mean(dim=1).numpy(), atol=1e-7)
    np.testing.assert_allclose(check.std_after, after.std(dim=1, correction=0).numpy(), atol=1e-7)
    np.testing.assert_allclose(check.mean_normalised, 0.0, atol=1e-6)
    np.testing.assert_allclose(check.std_normalised, 1.0, atol=1e-5)
    np.testing.assert_array_equal(check.gamma, ln.weight.detach().numpy())
    np.testing.assert_array_equal(check.beta, ln.bias.detach().numpy())
    by_torch = F.layer_norm(total.float(), (total.shape[1],), ln.weight, ln.bias, ln.eps)
    np.testing.assert_allclose(by_torch.detach().numpy(), pair.stages["LayerNorm"], atol=1e-5)
    assert check.formula_error <= 1e-5
    assert check.module_error <= 1e-5
    assert check.eps == ln.eps
    assert check.table().shape == (len(pair.tokens), 6)


# --- lookup as a matrix product ---------------------------------------------------------------

def test_one_hot_product_equals_the_lookup(bundle: ModelBundle, seed) -> None:
    check = one_hot_check(bundle, seed)
    V, h = bundle.config.vocab_size, bundle.config.hidden_size
    T = len(seed.input_ids)
    assert check.error <= 1e-6
    assert check.one_hot_shape == (1, T, V)
    assert check.product_shape == (1, T, h)
    full = F.one_hot(torch.tensor(seed.input_ids), num_classes=V).numpy()
    np.testing.assert_array_equal(one_hot_matrix(seed.input_ids, V), full)
    assert check.columns.tolist() == sorted(set(seed.input_ids))
    np.testing.assert_array_equal(check.compact, full[:, check.columns])
    assert full[:, np.setdiff1d(np.arange(V), check.columns)].sum() == 0


# --- broadcasting -----------------------------------------------------------------------------

def test_broadcast_shapes_are_the_real_ones(bundle: ModelBundle, seed) -> None:
    demo = broadcast_demo(bundle, seed)
    shapes = {line.code: line.shape for line in demo.lines}
    T, h = len(seed.tokens), bundle.config.hidden_size
    assert shapes["pos_ids = torch.arange(input_ids.shape[1])"] == (T,)
    assert shapes["position = position_embeddings(pos_ids)"] == (T, h)
    assert shapes["word + token_type + position"] == tuple(
        torch.broadcast_shapes((1, T, h), (T, h))
    )
    assert shapes["word_embeddings(input_ids.expand(2, -1)) + position"] == (2, T, h)
    assert demo.error <= 1e-6


# --- components and segments ------------------------------------------------------------------

def test_components_against_torch(pair) -> None:
    comp = compare_lookups(pair)
    word, types, pos = (torch.from_numpy(pair.stages[s]).double() for s in
                        ("word_embeddings", "token_type_embeddings", "position_embeddings"))
    total = word + types + pos
    np.testing.assert_allclose(comp.norms[:, 0], torch.linalg.vector_norm(word, dim=1), rtol=1e-6)
    np.testing.assert_allclose(comp.norms[:, 2], torch.linalg.vector_norm(pos, dim=1), rtol=1e-6)
    np.testing.assert_allclose(comp.sum_norms, torch.linalg.vector_norm(total, dim=1), rtol=1e-6)
    np.testing.assert_allclose(comp.cosines[:, 0], F.cosine_similarity(word, types), atol=1e-6)
    np.testing.assert_allclose(comp.cosines[:, 1], F.cosine_similarity(word, pos), atol=1e-6)
    np.testing.assert_allclose(comp.cosines[:, 2], F.cosine_similarity(types, pos), atol=1e-6)
    np.testing.assert_allclose(comp.shares.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(
        comp.shares[:, 1], ((types * total).sum(1) / (total * total).sum(1)).numpy(), atol=1e-6
    )


def test_token_type_rows_of_a_pair(bundle: ModelBundle, pair, seed) -> None:
    rows = segment_rows(bundle, pair)
    # DESIGN.md reference figure: 7 tokens of segment 0 and 6 of segment 1.
    assert (rows.n_distinct, rows.segments, rows.counts) == (2, [0, 1], [7, 6])
    assert rows.table_error == 0.0
    table = bundle.model.embeddings.token_type_embeddings.weight.detach().numpy()
    expected = table[pair.token_type_ids]
    np.testing.assert_array_equal(pair.stages["token_type_embeddings"], expected)
    single = segment_rows(bundle, seed)
    assert (single.n_distinct, single.segments, single.counts) == (1, [0], [len(seed.tokens)])


# --- view helpers -----------------------------------------------------------------------------

def test_dimension_window() -> None:
    assert dimension_window(384, "first", 64) == range(64)
    assert dimension_window(32, "first", 64) == range(32)
    assert dimension_window(384, "first", 0) == range(1)
    assert dimension_window(384, "all") == range(384)
    assert dimension_window(384, "range", span=(20, 10)) == range(10, 21)
    assert dimension_window(384, "range", span=(300, 9999)) == range(300, 384)
    assert dimension_window(384, "range", span=None) == range(64)


def test_colour_bound() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(7, 64)).astype(np.float32)
    b = a.copy()
    b[0, 0] = 100.0  # a rogue value
    assert colour_bound([a], clip=False) == pytest.approx(float(np.abs(a).max()))
    assert colour_bound([a, b], clip=False) == pytest.approx(100.0)
    clipped = colour_bound([a, b], clip=True)
    assert clipped == pytest.approx(np.percentile(np.abs(np.r_[a, b]), 99))
    assert clipped < 10
    assert colour_bound([np.zeros((3, 3))], clip=True) == 1.0


def test_input_tensors_used_by_the_trace_match_the_encoding(seed) -> None:
    inputs = input_tensors(seed.encoding)
    assert inputs["input_ids"].tolist() == [[101, 2023, 2003, 1037, 3231, 6251, 102]]


def test_checks_on_a_padded_input_cover_the_pad_rows(bundle: ModelBundle) -> None:
    """With padding="max_length", the [PAD] rows are embeddings like any other: every check
    runs on all of them, and LayerNorm(sum) is still the embeddings module's own output."""
    padded = analyze(bundle, SEED, max_length=12, pad_to_max_length=True, attentions=False)
    assert padded.tokens[-1] == "[PAD]" and len(padded.tokens) == 12
    ln = layernorm_check(bundle, padded)
    assert ln.mean_before.shape == (12,) and ln.module_error <= 1e-5
    assert ln.module_error == pytest.approx(padded.stage_identity_error, abs=1e-6)
    assert one_hot_check(bundle, padded).compact.shape[0] == 12
    assert broadcast_demo(bundle, padded).error <= 1e-6
    assert compare_lookups(padded).norms.shape == (12, 3)
    assert autograd_trace(bundle, padded).shapes["LayerNorm"] == (1, 12, bundle.config.hidden_size)
