"""Words, not only word pieces (core.words): the segmenter's Chinese words, WordPiece words,
attention, pair contributions and importance by word, and whole-word masking."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from transformers import BertModel, BertTokenizerFast

from core import ModelBundle, analyze, mask_tokens
from core.attribution import attention_methods, token_importance
from core.similarity.pairs import pair_contributions
from core.words import attention_by_word, segment, sum_by_word, words_of, words_of_encoding
from tests.conftest import ROOT, tiny_config

# Sentences written for this test, with the words a reader (and jieba's dictionary) gives them.
SEGMENTED = {
    "我爱北京天安门": ["我", "爱", "北京", "天安门"],
    "我们在银行门口见面。": ["我们", "在", "银行", "门口", "见面", "。"],
    "南京市长江大桥": ["南京市", "长江大桥"],
    "小明硕士毕业于中国科学院计算所": ["小明", "硕士", "毕业", "于", "中国科学院", "计算所"],
}
MIXED = "BERT模型很好用, I love it!"
ENGLISH = "He was strumming the guitar while unbelievably tired."
LONG_TEXT = (
    "The researchers were strumming guitars and unbelievably enthusiastic about "
    "transformers, tokenization and embeddings. Afterwards they discussed "
    "interpretability, misunderstandings and overfitting with their colleagues in a "
    "comfortable, sunlit auditorium near the riverbank, while photographers documented "
    "the unforgettable gathering of linguists, statisticians and programmers."
)


def word_texts(words) -> list[str]:
    return [w.text for w in words]


def assert_partition(words, n_tokens: int) -> None:
    """Every position in exactly one word, in order, each word's positions consecutive."""
    flat = [p for w in words for p in w.positions]
    assert flat == list(range(n_tokens))
    for w in words:
        assert list(w.positions) == list(range(w.positions[0], w.positions[-1] + 1))


@pytest.mark.parametrize("text, expected", list(SEGMENTED.items()))
def test_segmenter_gives_the_expected_words(text, expected):
    assert [w for w, _s, _e in segment(text)] == expected


def test_importing_loads_no_segmenter_and_segmenting_prints_nothing():
    code = ("import sys, core.words as w; print('rjieba' in sys.modules); "
            "w.segment('我爱北京天安门'); print('rjieba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "True"] and done.stderr == ""


@pytest.mark.parametrize("text, expected", list(SEGMENTED.items()))
def test_chinese_words_over_tokens_even_with_unk(bundle, text, expected):
    """The embedded English vocabulary turns most of these characters into [UNK]: the words
    still come out right, by the tokenizer's offsets."""
    result = analyze(bundle, text, attentions=False)
    words = words_of(bundle, text)
    assert_partition(words, len(result.tokens))
    assert word_texts(words) == ["[CLS]", *expected, "[SEP]"]
    for w in words[1:-1]:
        assert len(w.positions) == len(w.text)   # one token a character
    assert "[UNK]" in result.tokens
    assert words[0].special and words[-1].special


def test_wordpiece_words_and_mixed_pairs(bundle):
    words = words_of(bundle, ENGLISH)
    tokens = analyze(bundle, ENGLISH, attentions=False).tokens
    assert_partition(words, len(tokens))
    strumming = next(w for w in words if w.text == "strumming")
    assert [tokens[p] for p in strumming.positions][1].startswith("##")
    assert len(strumming.positions) > 1
    pair = words_of(bundle, MIXED, "我们在银行门口见面。")
    enc = analyze(bundle, MIXED, "我们在银行门口见面。", attentions=False).encoding
    assert_partition(pair, len(enc.tokens))
    assert word_texts(pair) == ["[CLS]", "BERT", "模型", "很", "好", "用", ",", "I", "love",
                                "it", "!", "[SEP]", "我们", "在", "银行", "门口", "见面", "。",
                                "[SEP]"]
    assert [w.segment for w in pair[12:]] == [1] * 7
    padded = words_of(bundle, "hello there", max_length=8, pad_to_max_length=True)
    assert word_texts(padded) == ["[CLS]", "hello", "there", "[SEP]", *["[PAD]"] * 4]
    assert [w.real for w in padded] == [True] * 4 + [False] * 4


def loop_attention_by_word(attention: np.ndarray, words) -> np.ndarray:
    """Clark et al.'s rule written out cell by cell, to check the matrix products against."""
    attention = np.asarray(attention, dtype=np.float64)
    out = np.zeros((attention.shape[0], len(words), len(words)))
    for h in range(attention.shape[0]):
        for i, wi in enumerate(words):
            for j, wj in enumerate(words):
                out[h, i, j] = np.mean([sum(attention[h, p, q] for q in wj.positions)
                                        for p in wi.positions])
    return out


@pytest.mark.parametrize("text, text_b", [(ENGLISH, None), (MIXED, None),
                                          ("我爱北京天安门", "他来到了网易杭研大厦")])
def test_word_attention_rows_sum_to_one(bundle, text, text_b):
    result = analyze(bundle, text, text_b)
    words = words_of_encoding(result.encoding)
    for layer in (0, len(result.attentions) - 1):
        attention = result.attentions[layer]                        # (H, T, T)
        by_word = attention_by_word(attention, words)
        assert by_word.shape == (attention.shape[0], len(words), len(words))
        np.testing.assert_allclose(by_word.sum(-1), 1.0, atol=1e-5)
        np.testing.assert_allclose(by_word, loop_attention_by_word(attention, words),
                                   atol=1e-12)
    every = attention_by_word(result.attentions, words)             # (L, H, W, W) at once
    np.testing.assert_allclose(every[-1], attention_by_word(result.attentions[-1], words))


@pytest.mark.parametrize("a, b", [("He was strumming the guitar.", "A man is playing music."),
                                  ("我爱北京天安门", "我们在银行门口见面。"),
                                  ("BERT模型很好用", "Unbelievably, tokenization works.")])
def test_word_contributions_sum_to_the_cosine(bundle, a, b):
    c = pair_contributions(bundle, a, b)
    words = c.by_word()
    assert words.matrix.shape == (len(c.words_a), len(c.words_b))
    # The cosine itself, from transformers directly: mean of the last layer's token vectors.
    with torch.inference_mode():
        means = [bundle.model(**bundle.tokenize(t, return_tensors="pt")).last_hidden_state[0]
                 .double().mean(0) for t in (a, b)]
    cosine = float(torch.nn.functional.cosine_similarity(means[0], means[1], dim=0))
    assert abs(words.matrix.sum() - cosine) < 1e-6
    assert abs(words.matrix.sum() - c.cosine) < 1e-6
    assert_partition(c.words_a, len(c.tokens_a))
    # Each word cell is the sum of its pieces' cells.
    i = max(range(len(c.words_a)), key=lambda k: len(c.words_a[k].positions))
    j = max(range(len(c.words_b)), key=lambda k: len(c.words_b[k].positions))
    pieces = c.matrix[np.ix_(c.words_a[i].positions, c.words_b[j].positions)]
    assert abs(words.matrix[i, j] - pieces.sum()) < 1e-12


def test_word_importance_sums_equal_token_sums(bundle):
    result = analyze(bundle, "The strumming was unbelievably loud. 我爱北京天安门", attentions=True)
    words = words_of_encoding(result.encoding)
    methods = attention_methods(bundle, result)
    for matrices in (methods.raw, methods.rollout, methods.norm):
        for token in (None, 0, 3):
            values = token_importance(matrices, token)              # (L, T)
            by_word = sum_by_word(values, words)                    # (L, W)
            np.testing.assert_allclose(by_word.sum(-1), values.sum(-1), atol=1e-12)
            for w, word in enumerate(words):
                np.testing.assert_allclose(by_word[:, w], values[:, list(word.positions)]
                                           .sum(-1), atol=1e-12)


@pytest.fixture(scope="module")
def char_bundle() -> ModelBundle:
    """A tiny random BERT with a vocabulary of one token a Chinese character, as bert-base-chinese
    reads Chinese (no [UNK] among these characters)."""
    chars = sorted(set("".join(SEGMENTED) + "他来到了网易杭研大厦我爱你，。"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, "play", "##ing", "the"]
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)})
    torch.manual_seed(0)
    model = BertModel(tiny_config(vocab_size=len(vocab))).eval()
    return ModelBundle(name="tiny-chinese-chars", model=model, tokenizer=tokenizer)


def check_whole_words(m) -> None:
    """No word is split: all candidate pieces of a word share one kind."""
    for word in m.words:
        kinds = {m.kinds[p] for p in word.positions if m.candidates[p]}
        assert len(kinds) <= 1, (word, [m.kinds[p] for p in word.positions])


def test_whole_word_masking_shares_over_words(bundle):
    """Over 400 draws: 15% of the words picked, and of those 80% [MASK], 10% random, 10% kept,
    never a word split."""
    counts = {None: 0, "mask": 0, "random": 0, "kept": 0}
    for seed in range(400):
        m = mask_tokens(bundle, LONG_TEXT, seed=seed, whole_word=True)
        check_whole_words(m)
        for kind, n in m.word_counts().items():
            counts[kind] += n
    words = sum(counts.values())
    picked = words - counts[None]
    assert words == 400 * len(m.candidate_words)
    assert abs(picked / words - 0.15) <= 0.02
    assert abs(counts["mask"] / picked - 0.8) <= 0.02
    assert abs(counts["random"] / picked - 0.1) <= 0.02
    assert abs(counts["kept"] / picked - 0.1) <= 0.02


def test_whole_word_masking_takes_the_segmenters_chinese_words(char_bundle):
    text = "我爱北京天安门，我们在银行门口见面。"
    seen_together = False
    for seed in range(100):
        m = mask_tokens(char_bundle, text, seed=seed, whole_word=True, probability=0.5)
        check_whole_words(m)
        assert "[UNK]" not in m.tokens
        tiananmen = next(w for w in m.words if w.text == "天安门")
        kinds = [m.kinds[p] for p in tiananmen.positions]
        if kinds[0] is not None:
            seen_together = True
            assert len(set(kinds)) == 1 and len(kinds) == 3
            if kinds[0] == "mask":
                assert [m.corrupted_tokens[p] for p in tiananmen.positions] == ["[MASK]"] * 3
    assert seen_together
    per_token = [mask_tokens(char_bundle, text, seed=s, probability=0.5) for s in range(30)]
    assert any(len({m.kinds[p] for p in w.positions}) > 1 for m in per_token for w in m.words)
