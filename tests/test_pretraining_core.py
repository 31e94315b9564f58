"""core.pretraining against transformers itself: MLM corruption against
DataCollatorForLanguageModeling draw for draw, the heads against BertForPreTraining's own logits,
the fine-tuning heads against BertFor*'s own layers. Real models only: the shipped
all-MiniLM-L6-v2 (no heads) and tiny random checkpoints built in code
(tests/pretraining_folders.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import huggingface_hub.constants as hub_constants
import numpy as np
import pytest
import torch
from transformers import (
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
    DataCollatorForLanguageModeling,
)

from core import ExplorerError, InputError, ModelUnavailableError, analyze, encode, load_model
from core.analysis import input_tensors
from core.models import default_model_path, tokenizer_lock
from core.pretraining import (
    MAX_MASKS,
    NoPretrainingHeadError,
    fill_mask,
    finetuning_patterns,
    has_mlm_head,
    has_nsp_head,
    mask_lens,
    mask_tokens,
    next_sentence,
)
from tests.conftest import tiny_config
from tests.pretraining_folders import (
    make_hub_cache_copy,
    make_masked_lm_folder,
    make_pretraining_folder,
)

LONG_TEXT = (
    "The teacher explained how a transformer reads a sentence, and the students asked why the "
    "tokenizer splits unaffable words into pieces. Embeddings are looked up, summed and "
    "normalised before the encoder layers mix every token with every other one; the pooler then "
    "reads the classification token. Pretraining hides some tokens and asks the model to guess "
    "them, which is why the vocabulary needs a mask token at all."
)
SPACED_TEXT = ("unaffable tokenization of embeddings happens everywhere in transformers "
               "pretraining ") * 4
TOL = 1e-5


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, bundle):
    """A tiny BertForPreTraining folder, its bundle, and transformers' own load of the folder."""
    folder = tmp_path_factory.mktemp("pretraining")
    make_pretraining_folder(folder, bundle.tokenizer)
    reference = BertForPreTraining.from_pretrained(folder, use_safetensors=True,
                                                   attn_implementation="eager").eval()
    return folder, load_model(str(folder)), reference


@pytest.fixture(scope="module")
def masked_lm_bundle(tmp_path_factory, bundle):
    folder = tmp_path_factory.mktemp("masked-lm")
    make_masked_lm_folder(folder, bundle.tokenizer)
    return load_model(str(folder))


def reference_outputs(pt_bundle, reference, text, text_b=None):
    encoding = encode(pt_bundle, text, text_b)
    with torch.inference_mode():
        out = reference(**input_tensors(encoding), output_hidden_states=True, return_dict=True)
    return encoding, out


# ---------------------------------------------------------------- loading


def test_checkpoint_with_heads_keeps_them(checkpoint):
    _, pt_bundle, reference = checkpoint
    assert type(pt_bundle.model) is BertModel
    assert has_mlm_head(pt_bundle) and has_nsp_head(pt_bundle)
    heads = pt_bundle.heads
    assert not pt_bundle.model.training and not heads.training
    # The MLM decoder is the word embedding table itself (tied), not a copy.
    assert heads.predictions.decoder.weight is pt_bundle.model.embeddings.word_embeddings.weight
    ours = {**{f"bert.{k}": v for k, v in pt_bundle.model.state_dict().items()},
            **{f"cls.{k}": v for k, v in heads.state_dict().items()}}
    theirs = reference.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs)


def test_masked_lm_checkpoint_has_no_nsp_head(masked_lm_bundle):
    assert has_mlm_head(masked_lm_bundle) and not has_nsp_head(masked_lm_bundle)
    assert len(fill_mask(masked_lm_bundle, "a [MASK] b")) == 1
    with pytest.raises(NoPretrainingHeadError) as info:
        next_sentence(masked_lm_bundle, "One.", "Two.")
    assert info.value.params["head"] == "cls.seq_relationship"


def test_named_model_from_the_cache_keeps_heads(closed_hub, checkpoint):
    """A name such as bert-base-uncased found in the Hugging Face cache (the hub closed) loads
    with its heads; a cache copy without its weights gives the usual unreachable-hub message."""
    folder, pt_bundle, _ = checkpoint
    cache = Path(hub_constants.HF_HUB_CACHE)
    make_hub_cache_copy(cache, "bert-base-uncased", folder)
    named = load_model("bert-base-uncased")
    assert has_mlm_head(named) and has_nsp_head(named)
    assert torch.equal(named.heads.seq_relationship.weight,
                       pt_bundle.heads.seq_relationship.weight)
    make_hub_cache_copy(cache, "bert-large-uncased", folder, only=(
        "config.json", "tokenizer.json", "tokenizer_config.json"))
    with pytest.raises(ModelUnavailableError):
        load_model("bert-large-uncased")


def test_default_model_has_no_heads(bundle):
    assert bundle.heads is None and not has_mlm_head(bundle) and not has_nsp_head(bundle)
    for call, head, words in [
        (lambda: fill_mask(bundle, "The [MASK] sat."), "cls.predictions",
         "masked-language-model head"),
        (lambda: mask_lens(bundle, "The [MASK] sat."), "cls.predictions",
         "masked-language-model head"),
        (lambda: next_sentence(bundle, "One.", "Two."), "cls.seq_relationship",
         "next-sentence-prediction head"),
    ]:
        with pytest.raises(NoPretrainingHeadError) as info:
            call()
        error = info.value
        assert isinstance(error, ExplorerError) and "{head}" in error.template
        assert error.params == {"name": "all-MiniLM-L6-v2", "head": head}
        assert f"no {head}, the {words}" in str(error) and "bert-base-uncased" in str(error)


def test_default_model_analysis_unchanged(bundle):
    """load_model still loads the default as a plain BertModel: the same numbers as transformers'
    own BertModel.from_pretrained, bit for bit."""
    assert type(bundle.model) is BertModel
    reference = BertModel.from_pretrained(default_model_path(), attn_implementation="eager").eval()
    result = analyze(bundle, "What is your name?", "My name is BERT.")
    with torch.inference_mode():
        out = reference(**input_tensors(result.encoding), output_hidden_states=True,
                        output_attentions=True, return_dict=True)
    for k, hidden in enumerate(out.hidden_states[1:], start=1):
        assert np.array_equal(result.stages[f"layer_{k}"], hidden[0].numpy())
    assert np.array_equal(result.stages["LayerNorm"], out.hidden_states[0][0].numpy())
    assert np.array_equal(result.pooler_output, out.pooler_output[0].numpy())
    assert np.array_equal(result.attentions, torch.stack(out.attentions)[:, 0].numpy())


# ---------------------------------------------------------------- fill_mask


def test_fill_mask_equals_bert_for_pretraining(checkpoint):
    _, pt_bundle, reference = checkpoint
    for text, text_b in [("The cat [MASK] on the [MASK] .", None),
                         ("[MASK] is a test sentence", "And a [MASK] one.")]:
        encoding, out = reference_outputs(pt_bundle, reference, text, text_b)
        positions = [i for i, t in enumerate(encoding.tokens) if t == "[MASK]"]
        expected = torch.softmax(out.prediction_logits[0, positions], dim=-1)
        got = fill_mask(pt_bundle, text, text_b, top_k=5)
        assert len(got) == len(positions)
        for predictions, row in zip(got, expected, strict=True):
            values, ids = row.topk(5)
            assert [p.token_id for p in predictions] == ids.tolist()
            assert np.allclose([p.probability for p in predictions], values.numpy(), atol=TOL)
            assert [p.token for p in predictions] == pt_bundle.ids_to_tokens(ids.tolist())


def test_typed_mask_spellings(checkpoint):
    _, pt_bundle, _ = checkpoint
    assert encode(pt_bundle, "a [MASK] b").input_ids == [101, 1037, 103, 1038, 102]
    # Special tokens are matched before lower-casing: "[mask]" is three ordinary tokens.
    assert encode(pt_bundle, "a [mask] b").tokens == ["[CLS]", "a", "[", "mask", "]", "b", "[SEP]"]
    with pytest.raises(InputError) as info:
        fill_mask(pt_bundle, "The cat [mask] on the mat.")
    assert "capital letters" in str(info.value) and "[MASK]" in str(info.value)
    with pytest.raises(InputError) as info:
        fill_mask(pt_bundle, "The cat sat on the mat.")
    assert "Put [MASK] where a word should be guessed" in str(info.value)
    with pytest.raises(InputError) as info:
        fill_mask(pt_bundle, " ".join(["[MASK]"] * (MAX_MASKS + 1)))
    assert info.value.params["count"] == MAX_MASKS + 1
    assert len(fill_mask(pt_bundle, " ".join(["[MASK]"] * MAX_MASKS), top_k=1)) == MAX_MASKS
    for top_k in (0, 51, 2.0, True):
        with pytest.raises(InputError):
            fill_mask(pt_bundle, "a [MASK]", top_k=top_k)


# ---------------------------------------------------------------- next sentence


def test_next_sentence_equals_bert_for_pretraining(checkpoint):
    _, pt_bundle, reference = checkpoint
    for a, b in [("What is your name?", "My name is BERT."), ("醒醒吧", "你没有妹妹")]:
        _, out = reference_outputs(pt_bundle, reference, a, b)
        logits = out.seq_relationship_logits[0]
        got = next_sentence(pt_bundle, a, b)
        assert np.allclose(got.logits, logits.numpy(), atol=TOL)
        assert math.isclose(got.is_next_probability, float(torch.softmax(logits, -1)[0]),
                            abs_tol=TOL)
        assert math.isclose(got.is_next_probability + got.not_next_probability, 1.0)
    for b in (None, "", "   "):
        with pytest.raises(InputError):
            next_sentence(pt_bundle, "Only one sentence.", b)


# ---------------------------------------------------------------- masking


def collator_masking(bundle, ids, seed, probability):
    """transformers' own corruption of ``ids`` with a collator seeded ``seed`` (a fresh generator:
    the same state as mask_tokens' private one)."""
    collator = DataCollatorForLanguageModeling(bundle.tokenizer, mlm_probability=probability,
                                               seed=seed)
    with tokenizer_lock(bundle.tokenizer):
        batch = collator([list(ids)])
    return batch["input_ids"][0].tolist(), batch["labels"][0].tolist()


@pytest.mark.parametrize("text_b, probability", [(None, 0.15), ("And a second one.", 0.5)])
def test_masking_equals_the_collator(bundle, text_b, probability):
    for seed in range(40):
        m = mask_tokens(bundle, LONG_TEXT, text_b, seed=seed, probability=probability)
        assert (m.input_ids, m.labels) == collator_masking(bundle, m.original_ids, seed,
                                                           probability)


def test_whole_word_picks_the_collators_words(bundle):
    """On text whose words are separated by spaces, "##" words and transformers 5's offset words
    agree, so the picked pieces are the collator's (whole_word_mask=True) for the same seed."""
    enc = bundle.tokenize(SPACED_TEXT, return_offsets_mapping=True)
    assert any(t.startswith("##") for t in bundle.ids_to_tokens(enc["input_ids"]))
    for seed in range(40):
        m = mask_tokens(bundle, SPACED_TEXT, seed=seed, whole_word=True)
        # transformers 5 turns every picked piece of a whole word into [MASK]; saying so spares
        # its warning. Only its first draw (which words are picked) is compared.
        collator = DataCollatorForLanguageModeling(bundle.tokenizer, whole_word_mask=True,
                                                   mask_replace_prob=1, random_replace_prob=0,
                                                   seed=seed)
        collator.create_rng("pt")
        _, labels = collator.torch_mask_tokens(
            torch.tensor([m.original_ids]),
            special_tokens_mask=torch.tensor([[int(not c) for c in m.candidates]]),
            offset_mapping=torch.tensor([enc["offset_mapping"]]))
        assert m.picked == [i for i, label in enumerate(labels[0].tolist()) if label != -100]


def test_masking_statistics_and_invariants(bundle):
    """Over 2,000 seeds: 15% of the candidates picked, split 80/10/10; specials never picked."""
    with tokenizer_lock(bundle.tokenizer):
        special_ids = set(bundle.tokenizer.all_special_ids)
    candidates = picked = masked = randomised = kept = 0
    rng_state = torch.get_rng_state()
    for seed in range(2000):
        m = mask_tokens(bundle, LONG_TEXT, seed=seed)
        for i, kind in enumerate(m.kinds):
            original = m.original_ids[i]
            if original in special_ids:
                assert kind is None and not m.candidates[i]
            if kind is None:
                assert m.labels[i] == -100 and m.input_ids[i] == original
            else:
                assert m.labels[i] == original
            if kind == "kept":
                assert m.input_ids[i] == original
            elif kind == "mask":
                assert m.input_ids[i] == 103 and m.corrupted_tokens[i] == "[MASK]"
            elif kind == "random":
                assert 0 <= m.input_ids[i] < 30522
        candidates += m.n_candidates
        picked += m.n_picked
        masked += m.n_mask
        randomised += m.n_random
        kept += m.n_kept
    assert torch.equal(rng_state, torch.get_rng_state())  # the global RNG is never used
    assert candidates == 2000 * (len(m.tokens) - 2) and picked == masked + randomised + kept
    assert abs(picked / candidates - 0.15) <= 0.01
    assert abs(masked / picked - 0.8) <= 0.02
    assert abs(randomised / picked - 0.1) <= 0.02
    assert abs(kept / picked - 0.1) <= 0.02


def test_whole_word_masks_words_together(bundle):
    words_seen = words_picked = 0
    for seed in range(300):
        m = mask_tokens(bundle, SPACED_TEXT, seed=seed, whole_word=True)
        words = []
        for i, token in enumerate(m.tokens):
            if not m.candidates[i]:
                continue
            if token.startswith("##"):
                words[-1].append(i)
            else:
                words.append([i])
        for word in words:
            states = {m.kinds[i] is not None for i in word}
            assert len(states) == 1, [m.tokens[i] for i in word]
            words_picked += states.pop()
        words_seen += len(words)
    assert abs(words_picked / words_seen - 0.15) <= 0.02


def test_masking_is_reproducible_and_checked(bundle):
    a = mask_tokens(bundle, LONG_TEXT, seed=7)
    assert a == mask_tokens(bundle, LONG_TEXT, seed=7)
    assert any(mask_tokens(bundle, LONG_TEXT, seed=s).kinds != a.kinds for s in range(8, 11))
    every = mask_tokens(bundle, "a [MASK] [UNK] b", "c", probability=1)
    assert every.kinds[0] is None and every.kinds[-1] is None
    assert [k is not None for k in every.kinds] == [False, True, False, False, True, False,
                                                    True, False]
    assert every.tokens == ["[CLS]", "a", "[MASK]", "[UNK]", "b", "[SEP]", "c", "[SEP]"]
    for seed in (-1, 1.5, True, "3", None, 2**63):
        with pytest.raises(InputError) as info:
            mask_tokens(bundle, "text", seed=seed)
        assert "seed" in str(info.value)
    for probability in (0, 0.0, -0.1, 1.5, float("nan"), True, "0.15"):
        with pytest.raises(InputError) as info:
            mask_tokens(bundle, "text", probability=probability)
        assert "probability" in str(info.value)
    with pytest.raises(InputError):
        mask_tokens(bundle, "   ")


# ---------------------------------------------------------------- fine-tuning patterns


@pytest.mark.parametrize("n_classes", [2, 3])
def test_finetuning_heads_equal_transformers(n_classes):
    config = tiny_config(num_labels=n_classes)
    patterns = {p.key: p for p in finetuning_patterns(config, n_classes)}
    assert list(patterns) == ["sentence_class", "token_class", "pair_class", "span"]
    classes = {c.__name__: c for c in (BertForSequenceClassification, BertForTokenClassification,
                                       BertForQuestionAnswering)}
    for pattern in patterns.values():
        # BertForQuestionAnswering sizes qa_outputs by num_labels, whose default 2 is start/end.
        built = tiny_config() if pattern.key == "span" else config
        with torch.device("meta"):
            model = classes[pattern.transformers_class](built)
        head = getattr(model, pattern.head_module)
        assert tuple(head.weight.shape) == pattern.weight_shape
        assert sum(p.numel() for p in head.parameters()) == pattern.parameters
        assert (model.bert.pooler is not None) == pattern.uses_pooler
    assert patterns["sentence_class"].parameters == 32 * n_classes + n_classes
    assert patterns["span"].parameters == 32 * 2 + 2 and patterns["span"].weight_shape == (2, 32)
    assert patterns["pair_class"].inputs == 2 and patterns["token_class"].inputs == 1


def test_finetuning_patterns_for_the_default_model(bundle):
    sizes = {p.key: p.parameters for p in finetuning_patterns(bundle.config)}
    assert sizes == {"sentence_class": 770, "token_class": 770, "pair_class": 770, "span": 770}
    for n_classes in (0, -1, 1.5, True, 10**6):
        with pytest.raises(InputError):
            finetuning_patterns(bundle.config, n_classes)
