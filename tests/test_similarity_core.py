"""The Similarity page's core (core.similarity: anisotropy, cosines, sentences, choices) on the real
shipped model, checked against scikit-learn, transformers and
sentence-transformers; and the corpus baseline cached once per model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.preprocessing import StandardScaler

from core import InputError, analyze
from core.corpus import CORPUS
from core.models import default_model_path
from core.similarity.anisotropy import (
    MODES,
    CorpusStats,
    anisotropy_table,
    corpus_statistics,
    prepare,
    token_cosines,
    unrelated_level,
)
from core.similarity.choices import default_tokens, depth_stages, real_positions, similarity_stages
from core.similarity.cosines import (
    DOMINANCE_LIMIT,
    TokenRef,
    cls_checks,
    dimension_contributions,
    dominance,
    norm_dominance,
    separate_token,
    standardised_cosine,
    token_curve,
    token_matrix,
    top_dimensions,
)
from core.similarity.sentences import compare_sentences, encoder_max_length, sentence_embedding

RIVER = "I sat on the bank of the river."
MONEY = "I deposited money at the bank."


@pytest.fixture(scope="module")
def stats(bundle) -> CorpusStats:
    return corpus_statistics(bundle)


@pytest.fixture(scope="module")
def corpus_words(bundle) -> dict[str, list[np.ndarray]]:
    """Independently of the batched pass: each corpus sentence through ``analyze`` on its own,
    word tokens only, per stage."""
    out: dict[str, list[np.ndarray]] = {}
    for text in CORPUS:
        result = analyze(bundle, text, attentions=False)
        words = [p for p, s in enumerate(result.encoding.special_tokens_mask) if not s]
        for stage, x in result.stages.items():
            out.setdefault(stage, []).append(x[words])
    return out


@pytest.fixture(scope="module")
def pair(bundle):
    return analyze(bundle, RIVER, MONEY, attentions=False)


@pytest.fixture(scope="module")
def alone(bundle):
    return analyze(bundle, RIVER, attentions=False), analyze(bundle, MONEY, attentions=False)


def test_stages_offered(pair):
    assert similarity_stages(pair.stages) == [
        "word_embeddings", "position_embeddings", "sum", "LayerNorm",
        *(f"layer_{k}" for k in range(1, 7))]
    assert depth_stages(pair.stages) == [
        "word_embeddings", "sum", "LayerNorm", *(f"layer_{k}" for k in range(1, 7))]


def test_corpus_statistics_match_an_independent_computation(stats, corpus_words):
    assert stats.n_sentences == len(CORPUS) and 20 <= len(CORPUS) <= 40
    assert stats.n_tokens == sum(len(x) for x in corpus_words["layer_1"])
    for stage, st_ in stats.stages.items():
        per_sentence = corpus_words[stage]
        scaler = StandardScaler().fit(np.concatenate(per_sentence))
        np.testing.assert_allclose(st_.mean, scaler.mean_, atol=1e-5)
        np.testing.assert_allclose(st_.std, scaler.scale_, rtol=1e-4, atol=1e-6)
        # mean cosine over every pair of word tokens from two different sentences
        total, count = 0.0, 0
        for x, y in itertools.combinations(per_sentence, 2):
            total += cosine_similarity(x, y).sum()
            count += len(x) * len(y)
        assert st_.baseline == pytest.approx(total / count, abs=1e-5), stage
        # the per-dimension parts add up to the baseline
        assert st_.contributions.sum() == pytest.approx(st_.baseline, abs=1e-9)
        assert abs(st_.baseline_standardised) < 0.05  # standardising removes the common direction


def test_anisotropy_is_real_in_the_middle_layers(stats):
    """Random unrelated tokens are clearly positive in raw cosine (Ethayarajh 2019)."""
    assert all(stats.stage(f"layer_{k}").baseline > 0.1 for k in range(1, 6))
    table = anisotropy_table(stats, ["word_embeddings", "layer_3"])
    assert table["random tokens, raw"].tolist() == [
        stats.stage("word_embeddings").baseline, stats.stage("layer_3").baseline]


@pytest.mark.parametrize("mode", MODES)
def test_token_matrix_equals_sklearn(pair, stats, mode):
    for stage in similarity_stages(pair.stages):
        x = pair.stages[stage]
        got = token_matrix(pair, stage, mode, stats)
        if mode == "raw":
            expected = cosine_similarity(x)
        elif mode == "standardised":
            s = stats.stage(stage)
            expected = cosine_similarity((x.astype(np.float64) - s.mean) / s.std)
        else:
            b = stats.stage(stage).baseline
            expected = (cosine_similarity(x) - b) / (1 - b)
        np.testing.assert_allclose(got, expected, atol=1e-5, err_msg=f"{stage} {mode}")
        assert np.allclose(np.diag(got), 1.0, atol=1e-5)  # every mode keeps self-cosine at 1


def test_sentence_similarity_matches_sentence_transformers(bundle, pair, alone):
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(default_model_path()), device="cpu")
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)  # ~360 tokens
    limit = encoder_max_length(bundle.name)
    assert limit == encoder.max_seq_length == 256
    cases = [(RIVER, MONEY), ("A man is eating food.", "A man is eating a piece of bread."),
             (long_text, MONEY)]
    for text_a, text_b in cases:
        embeddings = encoder.encode([text_a, text_b], convert_to_numpy=True)
        expected = float(cosine_similarity(embeddings[:1], embeddings[1:])[0, 0])
        comparison = compare_sentences(
            analyze(bundle, text_a, text_b, attentions=False),
            analyze(bundle, text_a, max_length=limit, attentions=False),
            analyze(bundle, text_b, max_length=limit, attentions=False),
        )
        assert comparison.model_figure == pytest.approx(expected, abs=1e-4), text_a[:30]
        assert comparison.mean_separate[-1] == pytest.approx(expected, abs=1e-4)
        vector = sentence_embedding(analyze(bundle, text_b, max_length=limit))
        np.testing.assert_allclose(vector, embeddings[1], atol=1e-4)


def test_sentence_vectors_per_layer(pair, alone):
    comparison = compare_sentences(pair, *alone)
    assert comparison.stages == depth_stages(pair.stages)
    seg = np.array(pair.token_type_ids)
    for k, stage in enumerate(comparison.stages):
        x = pair.stages[stage]
        a_mean, b_mean = x[seg == 0].mean(axis=0), x[seg == 1].mean(axis=0)
        assert comparison.mean_in_pair[k] == pytest.approx(
            cosine_similarity([a_mean], [b_mean])[0, 0], abs=1e-5)
        cls = cosine_similarity(alone[0].stages[stage][:1], alone[1].stages[stage][:1])[0, 0]
        assert comparison.cls_separate[k] == pytest.approx(cls, abs=1e-5)
    with pytest.raises(InputError, match="sentence B"):
        compare_sentences(alone[0], *alone)


def test_bank_in_two_contexts(bundle, pair, alone, stats):
    """Same static vector, different contextual vectors: 1 at word_embeddings, then it falls."""
    i, j = default_tokens(pair.encoding)
    assert (pair.tokens[i], pair.tokens[j]) == ("bank", "bank")
    stages = depth_stages(pair.stages)
    separately = (separate_token(pair, i, *alone), separate_token(pair, j, *alone))
    in_pair = (TokenRef(pair, i), TokenRef(pair, j))
    for first, second in (separately, in_pair):
        curve = dict(zip(stages, token_curve(first, second, stages, "raw", stats),
                         strict=True))
        assert curve["word_embeddings"] == pytest.approx(1.0, abs=1e-6)
        assert all(curve[f"layer_{k}"] < 0.99 for k in range(1, 7))
        assert curve["layer_6"] < curve["word_embeddings"] - 0.05

    # The last layer, computed with transformers' own forward pass on each sentence alone.
    tok, model = bundle.tokenizer, bundle.model
    with torch.inference_mode():
        river = model(**tok(RIVER, return_tensors="pt")).last_hidden_state[0]
        money = model(**tok(MONEY, return_tensors="pt")).last_hidden_state[0]
    expected = cosine_similarity(river[5:6].numpy(), money[6:7].numpy())[0, 0]
    got = token_curve(*separately, ["layer_6"], "raw", stats)[0]
    assert got == pytest.approx(expected, abs=1e-5)


def test_separate_positions_line_up(pair, alone):
    """Pair positions map to each sentence run alone: A's keep their index, B's shift to follow
    B's own [CLS], and each segment's [SEP] is the last token alone."""
    for pos in real_positions(pair.encoding):
        ref = separate_token(pair, pos, *alone)
        assert ref.token == pair.tokens[pos]
        assert ref.analysis is (alone[0] if pos <= 10 else alone[1])
    assert separate_token(pair, 11, *alone).position == 1
    assert separate_token(pair, 18, *alone).position == len(alone[1].tokens) - 1
    with pytest.raises(InputError):
        separate_token(pair, 40, *alone)


@pytest.mark.parametrize("mode", MODES)
def test_dimension_contributions_add_up(pair, stats, mode):
    for stage in ("word_embeddings", "LayerNorm", "layer_4", "layer_6"):
        u, v = pair.stages[stage][5], pair.stages[stage][16]
        parts = dimension_contributions(u, v, stage, mode, stats)
        cosine = token_cosines(u[None], v[None], stage, mode, stats)[0, 0]
        assert parts.sum() == pytest.approx(cosine, abs=1e-6)
        top = top_dimensions(u, v, stage, mode, stats, k=5)
        assert len(top) == 5
        assert list(top["contribution"]) == sorted(top["contribution"], key=abs, reverse=True)
        assert abs(top["contribution"].iloc[0]) == pytest.approx(np.abs(parts).max())


def test_unrelated_level_and_bad_mode(stats):
    stages = ["LayerNorm", "layer_2"]
    assert unrelated_level(stats, stages, "adjusted").tolist() == [0.0, 0.0]
    assert unrelated_level(stats, stages, "raw").tolist() == [
        stats.stage(s).baseline for s in stages]
    with pytest.raises(ValueError, match="Unknown mode"):
        prepare(np.ones((1, 384)), "layer_2", "cosine", stats)
    with pytest.raises(ValueError, match="No corpus statistics"):
        stats.stage("dropout")


def test_default_tokens(bundle):
    from core import encode

    one = encode(bundle, "the cat saw the dog and the dog saw the cat")
    assert [one.tokens[p] for p in default_tokens(one)] == ["cat", "cat"]
    plain = encode(bundle, "This is a test sentence")
    assert default_tokens(plain) == (1, 2)
    empty = encode(bundle, "\u200b")  # no word at all: [CLS] vs [SEP]
    assert default_tokens(empty) == (0, 1)


def test_baseline_cached_once_per_model(bundle, tiny_bundle, tmp_path, monkeypatch):
    """The corpus runs once per model name, however often the page asks."""
    from core.similarity import anisotropy
    from pages.similarity import cache as similarity_cache

    calls: list[str] = []
    real = corpus_statistics

    def counting(model_bundle, *args, **kwargs):
        calls.append(model_bundle.name)
        return real(model_bundle, *args, **kwargs)

    monkeypatch.setattr(anisotropy, "corpus_statistics", counting)
    similarity_cache.get_corpus_stats.clear()
    tiny_bundle.model.save_pretrained(tmp_path, safe_serialization=True)
    tiny_bundle.tokenizer.save_pretrained(tmp_path)
    tiny_name = str(tmp_path)

    first = similarity_cache.get_corpus_stats(bundle.name)
    again = similarity_cache.get_corpus_stats(bundle.name)
    assert again is first and calls == [bundle.name]
    tiny = similarity_cache.get_corpus_stats(tiny_name)
    assert similarity_cache.get_corpus_stats(tiny_name) is tiny
    assert similarity_cache.get_corpus_stats(bundle.name) is first
    assert calls == [bundle.name, tiny_name]
    assert tiny.stages["layer_2"].mean.shape == (32,) and first.stages["layer_6"].mean.shape == (
        384,)
    assert encoder_max_length(tiny_name) is None  # no sentence_bert_config.json there


def test_dominance_against_numpy(alone, pair):
    """The [CLS] vectors of the two bank sentences, run apart: one dimension holds most of the
    dot product from word_embeddings on (the lookups are identical, so the cosine is 1)."""
    river, money = alone
    rng = np.random.default_rng(0)
    cases = [(river.stages[s][0], money.stages[s][0]) for s in depth_stages(river.stages)]
    cases += [tuple(rng.normal(size=(2, 16))),
              (pair.stages["layer_3"][5], pair.stages["layer_3"][16])]
    for u, v in cases:
        u64, v64 = u.astype(np.float64), v.astype(np.float64)
        parts = u64 * v64
        d = int(np.argmax(np.abs(parts)))
        flag = dominance(u, v)
        assert flag.dimension == d
        assert flag.share == pytest.approx(parts[d] / np.dot(u64, v64), rel=1e-9)
        assert flag.norm_share_first == pytest.approx(u64[d] ** 2 / np.dot(u64, u64), rel=1e-9)
        assert flag.norm_share_second == pytest.approx(v64[d] ** 2 / np.dot(v64, v64), rel=1e-9)
        assert flag.flagged == (flag.share > DOMINANCE_LIMIT)
    layers = [dominance(river.stages[s][0], money.stages[s][0]) for s in river.layer_names[:-1]]
    assert all(f.flagged for f in layers)   # layer_1 .. layer_5 of MiniLM: one dimension
    assert len({f.dimension for f in layers}) == 1
    assert dominance(np.zeros(4), np.ones(4)).share == 0.0


@pytest.mark.parametrize("stage", ["word_embeddings", "LayerNorm", "layer_3", "layer_6"])
def test_standardised_cosine_against_numpy(pair, stats, stage):
    s = stats.stage(stage)
    u, v = pair.stages[stage][5].astype(np.float64), pair.stages[stage][16].astype(np.float64)
    zu, zv = (u - s.mean) / s.std, (v - s.mean) / s.std
    expected = zu @ zv / (np.linalg.norm(zu) * np.linalg.norm(zv))
    assert standardised_cosine(pair.stages[stage][5], pair.stages[stage][16], stage, stats) == (
        pytest.approx(expected, abs=1e-9))


def test_cls_checks_against_numpy(alone, stats):
    """The Sentences tab's [CLS] note: per depth stage, A's and B's [CLS] vectors (each run on
    its own), the dimension with the largest |a*b| and its share of a.b, and their cosine
    after standardising each dimension by the corpus, all in float64 numpy."""
    a, b = alone
    flags, cosines = cls_checks(a, b, stats)
    stages = depth_stages(a.stages)
    assert len(flags) == len(cosines) == len(stages) > 1
    for stage, flag, cosine in zip(stages, flags, cosines, strict=True):
        u, v = a.stages[stage][0].astype(np.float64), b.stages[stage][0].astype(np.float64)
        parts = u * v
        d = int(np.argmax(np.abs(parts)))
        assert flag.dimension == d
        assert flag.share == pytest.approx(parts[d] / (u @ v), rel=1e-9)
        s = stats.stage(stage)
        zu, zv = (u - s.mean) / s.std, (v - s.mean) / s.std
        assert cosine == pytest.approx(zu @ zv / (np.linalg.norm(zu) * np.linalg.norm(zv)),
                                       abs=1e-9)


def test_norm_dominance_against_numpy(pair):
    x = pair.stages["layer_3"].astype(np.float64)
    dims, shares = norm_dominance(pair.stages["layer_3"])
    np.testing.assert_array_equal(dims, np.abs(x).argmax(axis=1))
    np.testing.assert_allclose(shares, x[np.arange(len(x)), dims] ** 2 / (x ** 2).sum(axis=1),
                               rtol=1e-12)
    assert shares[0] > DOMINANCE_LIMIT and dims[0] == 99   # [CLS]: one dimension
    assert norm_dominance(np.zeros((1, 3)))[1][0] == 0.0
