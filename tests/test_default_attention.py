"""The attention views on the pinned transformers when a model comes with transformers' DEFAULT
attention (SDPA), which gives no attention weights: core switches it to eager through
transformers' public ``set_attn_implementation`` when it becomes a bundle, and every attention
view then equals an eager model's.

Two such models: the shipped all-MiniLM-L6-v2 read by ``BertModel.from_pretrained`` with no
``attn_implementation``, and a tiny random BertModel built in code from a default BertConfig.
The eager reference is transformers' own model run with ``output_attentions=True``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertModel

from core import ModelBundle, analyze
from core.attribution import attention_flow, attention_rollout, norm_weighted_attention
from core.encoder.steps import encoder_steps
from core.models import default_model_path

TEXT = "The cat sat on the mat."
PAIR = ("A man is playing a guitar.", "Someone plays music.")


def _ids(bundle: ModelBundle, a: str, b: str | None = None) -> dict[str, torch.Tensor]:
    return dict(bundle.tokenize(a, b, return_tensors="pt"))


def _default_tiny() -> BertModel:
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=37, max_position_embeddings=64)
    torch.manual_seed(0)
    return BertModel(config).eval()


def _eager_twin(model: BertModel) -> BertModel:
    """The same weights under eager attention, built by transformers from its config."""
    config = BertConfig.from_dict(model.config.to_dict(), attn_implementation="eager")
    twin = BertModel(config).eval()
    twin.load_state_dict(model.state_dict())
    return twin


@pytest.fixture(scope="module", params=["shipped", "tiny"])
def default_and_eager(request, bundle):
    """(a model with transformers' default attention, its eager twin), before any bundle."""
    if request.param == "shipped":
        model = BertModel.from_pretrained(str(default_model_path()), use_safetensors=True).eval()
    else:
        model = _default_tiny()
    return model, _eager_twin(model)


@torch.inference_mode()
def test_the_default_attention_gives_no_weights_until_core_takes_it(default_and_eager, bundle):
    """Why core switches: on the pinned version the default model returns no attentions (so the
    views would have nothing to draw); once it is a bundle, it returns the eager model's, and its
    hidden states are what the default attention computed (to float32 rounding)."""
    model, eager = default_and_eager
    inputs = _ids(bundle, *PAIR)
    before = model(**inputs, output_attentions=True, output_hidden_states=True)
    assert not before.attentions, "transformers now returns attentions with SDPA"
    reference = eager(**inputs, output_attentions=True, output_hidden_states=True)

    ModelBundle(name="default-attention", model=model, tokenizer=bundle.tokenizer)
    after = model(**inputs, output_attentions=True, output_hidden_states=True)
    assert len(after.attentions) == model.config.num_hidden_layers
    for ours, theirs in zip(after.attentions, reference.attentions, strict=True):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-7)
    for ours, theirs in zip(after.hidden_states, before.hidden_states, strict=True):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-5)


@torch.inference_mode()
def test_the_attention_views_equal_an_eager_models(default_and_eager, bundle):
    """analyze(attentions=True), the encoder's layer steps and core.attribution's rollout, flow
    and norm-weighted attention on the default-attention model, against the eager twin's."""
    model, eager = default_and_eager
    ours = ModelBundle(name="default-attention", model=model, tokenizer=bundle.tokenizer)
    twin = ModelBundle(name="eager", model=eager, tokenizer=bundle.tokenizer)
    inputs = _ids(bundle, TEXT)
    expected = np.stack([a[0].numpy() for a in
                         eager(**inputs, output_attentions=True).attentions])

    analysis = analyze(ours, TEXT, attentions=True)
    np.testing.assert_allclose(analysis.attention_weights(), expected, rtol=0, atol=1e-7)

    layers = model.config.num_hidden_layers
    for layer in (1, layers):
        steps = encoder_steps(ours, TEXT, layer=layer)
        np.testing.assert_allclose(steps.steps["attention_probs"], expected[layer - 1],
                                   rtol=0, atol=1e-6)
        assert steps.checks["attention_probs"] < 1e-6
        assert steps.checks["output"] < 1e-5

    np.testing.assert_allclose(attention_rollout(ours, *PAIR), attention_rollout(twin, *PAIR),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(attention_flow(ours, TEXT), attention_flow(twin, TEXT),
                               rtol=0, atol=1e-6)
    mine, theirs = norm_weighted_attention(ours, TEXT), norm_weighted_attention(twin, TEXT)
    np.testing.assert_allclose(mine.layer, theirs.layer, rtol=0, atol=1e-6)
