"""core.mask_lens against transformers itself: BertForMaskedLM's own ``cls`` applied to its own
hidden states (output_hidden_states=True) at every layer, on tiny random checkpoints saved to a
folder and loaded as the app loads them (tests/pretraining_folders.py); the decoder-alone reading
against numpy on the checkpoint's own weights; the final layer against fill_mask.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertForMaskedLM, BertForPreTraining

from core import InputError, encode, load_model, mask_lens
from core.analysis import input_tensors
from core.pretraining import MaskLens, NoPretrainingHeadError, fill_mask
from tests.pretraining_folders import make_chinese_checkpoint, make_masked_lm_folder

TOL = 1e-5
TWO_MASKS = "The cat [MASK] on the [MASK] ."
K = 7


@pytest.fixture(scope="module")
def headed(tmp_path_factory, bundle):
    """A tiny random BertForMaskedLM in a folder; the app's load of it, and transformers'."""
    folder = tmp_path_factory.mktemp("masked-lm")
    make_masked_lm_folder(folder, bundle.tokenizer)
    reference = BertForMaskedLM.from_pretrained(folder, use_safetensors=True,
                                                attn_implementation="eager").eval()
    return load_model(str(folder)), reference


def reference_lens(ours, reference, text: str, transform: bool):
    """Per [MASK] and layer, the softmax over the vocabulary computed apart from core: the
    whole head is transformers' own ``cls`` module on its own hidden states; the decoder alone
    is numpy's product of each vector with the word table plus the decoder's bias."""
    encoding = encode(ours, text)
    positions = [i for i, t in enumerate(encoding.tokens) if t == "[MASK]"]
    with torch.inference_mode():
        out = reference(**input_tensors(encoding), output_hidden_states=True, return_dict=True)
        states = [h[0, positions] for h in out.hidden_states]            # N+1 x (masks, h)
        whole = torch.stack([reference.cls(h) for h in states], dim=1)   # (masks, N+1, V)
        assert torch.allclose(whole[:, -1], out.logits[0, positions], atol=TOL)
    if transform:
        logits = whole.double().numpy()
    else:
        table = reference.bert.embeddings.word_embeddings.weight.detach().double().numpy()
        bias = reference.cls.predictions.decoder.bias.detach().double().numpy()
        logits = np.stack([h.double().numpy() @ table.T + bias for h in states], axis=1)
    logits = logits - logits.max(axis=-1, keepdims=True)
    probs = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    answers = whole[:, -1].argmax(dim=-1).numpy()                       # the model's answer
    return positions, probs, answers


@pytest.mark.parametrize("transform", [True, False], ids=["whole head", "decoder alone"])
def test_every_layer_equals_transformers_own_head(headed, transform):
    ours, reference = headed
    lens = mask_lens(ours, TWO_MASKS, k=K, transform=transform)
    positions, probs, answers = reference_lens(ours, reference, TWO_MASKS, transform)
    n_states = ours.config.num_hidden_layers + 1
    assert lens.positions == positions and lens.transform is transform
    assert lens.probs.shape == lens.token_ids.shape == (2, n_states, K)
    assert lens.answer_ranks.shape == lens.answer_probs.shape == (2, n_states)
    assert lens.n_layers == n_states - 1
    assert lens.answer_ids == answers.tolist()
    assert lens.answer_tokens == ours.ids_to_tokens(answers.tolist())
    for m in range(len(positions)):
        for layer in range(n_states):
            row = probs[m, layer]
            best = np.argsort(-row, kind="stable")[:K]
            assert lens.token_ids[m, layer].tolist() == best.tolist(), (m, layer)
            assert np.allclose(lens.probs[m, layer], row[best], atol=TOL)
            assert lens.tokens[m][layer] == ours.ids_to_tokens(best.tolist())
            answer_p = row[answers[m]]
            assert lens.answer_probs[m, layer] == pytest.approx(answer_p, abs=TOL)
            # Near-uniform random weights put tokens within float32's rounding of the answer:
            # the rank may fall anywhere among those.
            near = answer_p * 1e-5
            assert (1 + int((row > answer_p + near).sum()) <= lens.answer_ranks[m, layer]
                    <= 1 + int((row > answer_p - near).sum()))


def test_the_last_layer_is_what_fill_mask_says(headed):
    ours, _ = headed
    lens = mask_lens(ours, TWO_MASKS, k=5)
    for m, predictions in enumerate(fill_mask(ours, TWO_MASKS, top_k=5)):
        assert lens.tokens[m][-1] == [p.token for p in predictions]
        assert np.allclose(lens.probs[m, -1], [p.probability for p in predictions], atol=TOL)
        assert lens.answer_tokens[m] == predictions[0].token
        assert lens.answer_ranks[m, -1] == 1
        assert lens.first_top(m) is not None and lens.stays_top(m) is not None
        assert lens.first_top(m) <= lens.stays_top(m) <= lens.n_layers


def test_a_checkpoint_with_both_heads_and_a_chinese_vocabulary(tmp_path):
    """As bert-base-chinese reads: one character a token, and the answer is one of them."""
    reference = make_chinese_checkpoint(tmp_path / "zh", layers=3)
    ours = load_model(str(tmp_path / "zh"))
    text = "今天天气真[MASK]。"
    lens = mask_lens(ours, text, k=3)
    assert lens.input_tokens == ["[CLS]", "今", "天", "天", "气", "真", "[MASK]", "。", "[SEP]"]
    assert lens.positions == [6] and lens.answer_probs.shape == (1, 4)
    with torch.inference_mode():
        out = reference(**input_tensors(encode(ours, text)), output_hidden_states=True,
                        return_dict=True)
        for layer, h in enumerate(out.hidden_states):
            row = torch.softmax(reference.cls.predictions(h[0, 6]), dim=-1)
            assert lens.token_ids[0, layer].tolist() == row.topk(3).indices.tolist()
    assert isinstance(reference, BertForPreTraining)


def test_no_head_and_bad_input_say_what_fill_mask_says(bundle, headed):
    ours, _ = headed
    with pytest.raises(NoPretrainingHeadError) as lens_error:
        mask_lens(bundle, "The [MASK] sat.")
    with pytest.raises(NoPretrainingHeadError) as fill_error:
        fill_mask(bundle, "The [MASK] sat.")
    assert str(lens_error.value) == str(fill_error.value)
    assert lens_error.value.params == {"name": "all-MiniLM-L6-v2", "head": "cls.predictions"}
    for text in ("The cat sat.", "The cat [mask] on the mat.", " ".join(["[MASK]"] * 21)):
        with pytest.raises(InputError) as lens_error:
            mask_lens(ours, text)
        with pytest.raises(InputError) as fill_error:
            fill_mask(ours, text)
        assert str(lens_error.value) == str(fill_error.value)
    for k in (0, 51, 2.0, True):
        with pytest.raises(InputError):
            mask_lens(ours, "a [MASK]", k=k)


def lens_of(ranks: list[int]) -> MaskLens:
    """A one-[MASK] lens whose answer has these ranks (only the ranks matter here)."""
    n = len(ranks)
    return MaskLens(positions=[1], tokens=[[["x"]] * n], token_ids=np.zeros((1, n, 1), int),
                    probs=np.zeros((1, n, 1)), answer_ids=[0], answer_tokens=["x"],
                    answer_ranks=np.array([ranks]), answer_probs=np.zeros((1, n)),
                    transform=True, input_tokens=["[CLS]", "[MASK]", "[SEP]"])


@pytest.mark.parametrize("ranks, first, stays", [
    ([5, 3, 1, 1, 1], 2, 2),
    ([1, 1, 1], 0, 0),
    ([9, 1, 4, 1, 1], 1, 3),      # on top at layer 1, then lost, on top again from layer 3
    ([9, 8, 1], 2, 2),
    ([9, 1, 4, 2], 1, None),      # the decoder alone: not on top at the last layer
    ([9, 8, 7], None, None),
])
def test_where_the_answer_reaches_the_top(ranks, first, stays):
    lens = lens_of(ranks)
    assert lens.first_top(0) == first and lens.stays_top(0) == stays


def test_the_lessons_mask_step_prints_every_layers_row(bundle):
    """The pretraining lesson's 13th step: where [MASK] stands, the number of hidden states
    (the embeddings' output and one per layer) and the rows' shape, as the shipped model prints
    them; it says that model has no MLM head to apply to them."""
    from pages.lesson.figures import LESSONS
    from tests.conftest import assert_clean, open_app

    steps = LESSONS["pretraining"][1]
    number = 13   # added after the others, so no step's number moved; more were added after it
    assert steps[number - 1].title == "Where the answer to [MASK] forms"
    at = open_app("pages/lesson/page.py", lesson="pretraining", step=str(number))
    assert_clean(at)
    ids = bundle.tokenizer("The capital of France is [MASK].")["input_ids"]
    where, config = ids.index(bundle.tokenizer.mask_token_id), bundle.config
    assert at.code[-1].value == (f"{where} {config.num_hidden_layers + 1}\n"
                                 f"torch.Size([{config.num_hidden_layers + 1}, "
                                 f"{config.hidden_size}])")
    assert any("cls.predictions" in i.value for i in at.info)
