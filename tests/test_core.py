"""core on the real shipped model and a tiny random BERT, checked against transformers and numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core import InputError, analyze, load_model
from core.analysis import seeded_dropout
from core.parameters import count_from_config

# Sentences the reference figures do not use, so the checks are not tuned to one input.
UNSEEN = [
    "Quantum kettles whistle softly while giraffes debate syntax.",
    "Die Katze schläft auf dem Sofa, und der Hund bellt.",
    "unbelievably, the tokenizer splits 'xylophonist' into word pieces!!",
]


def reference_outputs(bundle, text_a, text_b=None, **tok_kwargs):
    """What transformers computes on its own for the same text: the tokenizer and a full forward."""
    enc = bundle.tokenizer(text_a, text_b, return_tensors="pt", **tok_kwargs)
    with torch.no_grad():
        out = bundle.model(**enc, output_hidden_states=True, output_attentions=True)
    return enc, out


def numpy_layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_seed_sentence_ids(bundle):
    result = analyze(bundle, "This is a test sentence")
    assert result.input_ids == [101, 2023, 2003, 1037, 3231, 6251, 102]
    assert result.token_type_ids == [0] * 7
    assert result.position_ids == list(range(7))
    assert result.attention_mask == [1] * 7
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert result.truncated == 0


def test_pair_segments(bundle):
    result = analyze(bundle, "What is your name?", "My name is BERT.")
    assert len(result.tokens) == 13
    assert result.token_type_ids == [0] * 7 + [1] * 6
    assert result.tokens[6] == "[SEP]" and result.tokens[12] == "[SEP]"


def test_shipped_model_shape_and_count(bundle):
    cfg = bundle.config
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads) == (6, 384, 12)
    assert bundle.model.embeddings.word_embeddings.weight.shape == (30522, 384)
    total = sum(p.numel() for p in bundle.model.parameters())
    assert total == 22_713_216 == count_from_config(cfg)


@pytest.mark.parametrize("text", UNSEEN)
def test_stages_equal_transformers_and_numpy(bundle, text):
    result = analyze(bundle, text)
    enc, out = reference_outputs(bundle, text)
    assert result.input_ids == enc["input_ids"][0].tolist()
    emb = bundle.model.embeddings
    ids = np.array(result.input_ids)
    word_w = emb.word_embeddings.weight.detach().numpy()
    pos_w = emb.position_embeddings.weight.detach().numpy()
    type_w = emb.token_type_embeddings.weight.detach().numpy()
    s = result.stages
    np.testing.assert_array_equal(s["word_embeddings"], word_w[ids])
    np.testing.assert_array_equal(s["position_embeddings"], pos_w[np.arange(len(ids))])
    np.testing.assert_array_equal(s["token_type_embeddings"], type_w[np.zeros(len(ids), int)])
    np.testing.assert_allclose(
        s["sum"], word_w[ids] + type_w[0] + pos_w[: len(ids)], atol=1e-6
    )
    ln = numpy_layer_norm(
        s["sum"],
        emb.LayerNorm.weight.detach().numpy(),
        emb.LayerNorm.bias.detach().numpy(),
        bundle.config.layer_norm_eps,
    )
    np.testing.assert_allclose(s["LayerNorm"], ln, atol=1e-4)
    # The stage identity: LayerNorm(word + token_type + position) == model.embeddings(...) (eval).
    np.testing.assert_allclose(s["LayerNorm"], out.hidden_states[0][0].numpy(), atol=1e-5)
    assert result.stage_identity_error < 1e-5
    for k in range(1, bundle.config.num_hidden_layers + 1):
        np.testing.assert_allclose(s[f"layer_{k}"], out.hidden_states[k][0].numpy(), atol=1e-5)
    np.testing.assert_allclose(result.pooler_output, out.pooler_output[0].numpy(), atol=1e-5)
    assert result.attentions.shape == (6, 12, len(ids), len(ids))
    for k, att in enumerate(out.attentions):
        np.testing.assert_allclose(result.attentions[k], att[0].numpy(), atol=1e-6)
    np.testing.assert_allclose(result.attentions.sum(-1), 1.0, atol=1e-5)


def test_stage_order_and_dtype(bundle):
    result = analyze(bundle, UNSEEN[0])
    names = list(result.stages)
    assert names[:6] == [
        "word_embeddings", "token_type_embeddings", "position_embeddings",
        "sum", "LayerNorm", "dropout",
    ]
    assert names[6:] == [f"layer_{k}" for k in range(1, 7)]
    assert all(a.dtype == np.float32 and a.shape == (len(result.tokens), 384)
               for a in result.stages.values())


def test_pair_stages_equal_transformers(bundle):
    a, b = "The river bank was muddy.", "She opened an account at the bank."
    result = analyze(bundle, a, b)
    enc, out = reference_outputs(bundle, a, b)
    assert result.token_type_ids == enc["token_type_ids"][0].tolist()
    type_w = bundle.model.embeddings.token_type_embeddings.weight.detach().numpy()
    np.testing.assert_array_equal(
        result.stages["token_type_embeddings"], type_w[np.array(result.token_type_ids)]
    )
    np.testing.assert_allclose(result.stages["layer_6"], out.last_hidden_state[0], atol=1e-5)


def test_dropout_is_seeded_inverted_dropout(bundle):
    result = analyze(bundle, UNSEEN[1])
    p = bundle.config.hidden_dropout_prob
    ln, dropped = result.stages["LayerNorm"], result.stages["dropout"]
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], ln[kept] / (1 - p), rtol=1e-5)
    assert abs((~kept).mean() - p) < 0.05  # about p of the values are zeroed
    again = analyze(bundle, UNSEEN[1]).stages["dropout"]
    np.testing.assert_array_equal(dropped, again)  # same input, same mask
    assert not bundle.model.training  # the shared model stayed in eval mode
    x = torch.ones(1000)
    assert torch.equal(seeded_dropout(x, 0.0), x)


def test_truncation_past_512(bundle):
    text = "word " * 600
    full = len(bundle.tokenizer(text)["input_ids"])
    result = analyze(bundle, text)
    assert len(result.tokens) == 512
    assert result.truncated == full - 512 > 0
    assert result.tokens[-1] == "[SEP]"
    enc, out = reference_outputs(bundle, text, truncation=True, max_length=512)
    np.testing.assert_allclose(result.stages["layer_6"], out.last_hidden_state[0], atol=1e-4)


def test_pair_truncation_and_max_length(bundle):
    result = analyze(bundle, "one two three four five six", "seven eight nine ten", max_length=8)
    assert len(result.tokens) == 8
    full = len(bundle.tokenizer("one two three four five six", "seven eight nine ten")["input_ids"])
    assert result.truncated == full - 8
    assert set(result.token_type_ids) == {0, 1}


def test_truncation_off_is_a_clear_error(bundle):
    with pytest.raises(InputError, match="tokens but the limit is 512"):
        analyze(bundle, "word " * 600, truncation=False)


def test_padding_to_max_length(bundle):
    text = "Padding shows as rows the model ignores."
    padded = analyze(bundle, text, max_length=32, pad_to_max_length=True)
    plain = analyze(bundle, text)
    n = len(plain.tokens)
    assert len(padded.tokens) == 32
    assert padded.attention_mask == [1] * n + [0] * (32 - n)
    assert padded.tokens[n:] == ["[PAD]"] * (32 - n)
    enc = bundle.tokenizer(text, padding="max_length", max_length=32)
    assert padded.input_ids == enc["input_ids"]
    # Real tokens do not attend to padding, so their vectors match the unpadded run.
    np.testing.assert_allclose(padded.stages["layer_6"][:n], plain.stages["layer_6"], atol=1e-4)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [("", None, "Type a sentence"), ("   \n\t", None, "Type a sentence"),
     ("", "only B", "Sentence B needs a sentence A")],
)
def test_bad_text_raises_input_error(bundle, a, b, message):
    with pytest.raises(InputError, match=message):
        analyze(bundle, a, b)


def test_tiny_random_bert(tiny_bundle):
    """The same identities hold for a small config built in code (no pretrained weights)."""
    text = "tiny models keep tests fast"
    result = analyze(tiny_bundle, text, "and offline")
    enc, out = reference_outputs(tiny_bundle, text, "and offline")
    assert result.stages["sum"].shape == (len(result.tokens), 32)
    assert result.stage_identity_error < 1e-5
    assert result.layer_names == ["layer_1", "layer_2"]
    np.testing.assert_allclose(result.stages["LayerNorm"], out.hidden_states[0][0], atol=1e-5)
    np.testing.assert_allclose(result.stages["layer_2"], out.last_hidden_state[0], atol=1e-5)
    assert result.attentions.shape == (2, 4, len(result.tokens), len(result.tokens))


def test_tiny_config_max_positions_caps_length(tiny_bundle):
    result = analyze(tiny_bundle, "word " * 100)
    assert len(result.tokens) == 64  # the tiny config's max_position_embeddings
    assert result.truncated == 102 - 64


def test_default_model_by_name_loads_the_shipped_weights(bundle):
    again = load_model("all-MiniLM-L6-v2")
    w1 = bundle.model.embeddings.word_embeddings.weight
    w2 = again.model.embeddings.word_embeddings.weight
    assert torch.equal(w1, w2)
    # eager attention (transformers' default gives no attention weights)
    assert len(again.model(torch.tensor([[101, 102]]), output_attentions=True).attentions) == (
        again.config.num_hidden_layers)
