"""Sentence pairs (core.similarity.pairs, pair_lists): the model's cosine against
sentence-transformers on the shipped folder, batches against one pair at a time, the token-pair
split against numpy, and lists of pairs as people paste or upload them."""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from core import compare_pairs, pair_contributions
from core.models import default_model_path
from core.similarity import pair_lists
from core.similarity.pair_examples import ONE_PAIR, SCORED, SCORED_EN, SCORED_ZH, example_text
from core.similarity.pair_lists import (
    BINARY,
    EMPTY,
    EXTRA,
    HEADER,
    MAX_PAIRS,
    MISSING,
    NOTHING,
    SCORE,
    TOO_LARGE,
    read_file,
    read_text,
    results_csv,
    score_agreement,
)
from core.similarity.pairs import (
    WordContributions,
    layer_columns,
    own_recipe,
    share_of_cosine,
)
from core.words import Word

LONG = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)   # ~360 tokens, cut at 256
PAIRS = [
    ("A chef is slicing tomatoes in the kitchen.", "Someone cuts vegetables."),
    ("Mountains rise behind the quiet village.", "The stock market fell sharply."),
    ("你今天吃饭了吗？", "我已经吃过午饭了。"),
    ("She never drinks coffee after noon.", "She always drinks coffee after noon."),
    (LONG, "A fox."),
    ("Hi", "Hello there, how have you been doing over the long winter months?"),
    ("<b>bold</b> and **stars**", "=SUM(A1) @user -1"),
]


@pytest.fixture(scope="module")
def encoder():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(default_model_path()), device="cpu")


def expected_cosines(encoder, pairs) -> np.ndarray:
    a = encoder.encode([p[0] for p in pairs], normalize_embeddings=True, convert_to_numpy=True)
    b = encoder.encode([p[1] for p in pairs], normalize_embeddings=True, convert_to_numpy=True)
    return (a.astype(np.float64) * b).sum(axis=1)


def test_cosine_equals_sentence_transformers(bundle, encoder):
    assert own_recipe(bundle.name)
    # batch_size 3: short and long sentences share batches, so padding is exercised
    frame = compare_pairs(bundle, PAIRS, batch_size=3)
    assert list(frame.columns) == ["a", "b", "cosine", *layer_columns(6)]
    np.testing.assert_allclose(frame["cosine"], expected_cosines(encoder, PAIRS), atol=1e-5)
    np.testing.assert_allclose(frame["cosine"], frame["layer_6"], atol=1e-12)
    assert frame["a"].tolist() == [a for a, _ in PAIRS]


def test_batch_equals_one_at_a_time(bundle):
    together = compare_pairs(bundle, PAIRS, batch_size=8)
    for row, pair in enumerate(PAIRS):
        alone = compare_pairs(bundle, [pair])
        np.testing.assert_allclose(together.iloc[row, 2:].to_numpy(float),
                                   alone.iloc[0, 2:].to_numpy(float), atol=1e-5)


def test_layers_equal_a_plain_forward(bundle):
    """Every layer column, against transformers' hidden_states of each sentence run alone."""
    a, b = PAIRS[0]
    frame = compare_pairs(bundle, [(a, b)])

    def pooled(text):
        enc = bundle.tokenize(text, return_tensors="pt")
        with torch.inference_mode():
            out = bundle.model(**enc, output_hidden_states=True)
        return [h[0].double().mean(dim=0).numpy() for h in out.hidden_states]

    for k, (u, v) in enumerate(zip(pooled(a), pooled(b), strict=True)):
        cos = u @ v / np.linalg.norm(u) / np.linalg.norm(v)
        assert frame[f"layer_{k}"].iloc[0] == pytest.approx(cos, abs=1e-5)


def test_progress_and_repeated_sentences(bundle):
    calls = []
    pairs = [(f"sentence number {i}", "the same other sentence") for i in range(10)]
    frame = compare_pairs(bundle, pairs, progress=lambda d, t: calls.append((d, t)),
                          batch_size=4)
    assert calls == [(4, 11), (8, 11), (11, 11)]   # 11 distinct sentences, each run once
    assert len(frame) == 10
    assert compare_pairs(bundle, []).empty


@pytest.mark.parametrize("layer", [None, 0, 3])
def test_contributions_sum_to_the_cosine(bundle, encoder, layer):
    a, b = ONE_PAIR[0][1:]
    result = pair_contributions(bundle, a, b, layer)
    assert result.own_recipe and result.layers == 6
    assert result.matrix.shape == (len(result.tokens_a), len(result.tokens_b))
    assert result.matrix.sum() == pytest.approx(result.cosine, abs=1e-9)
    assert result.shares_a.sum() == pytest.approx(result.cosine, abs=1e-9)
    assert result.shares_b.sum() == pytest.approx(result.cosine, abs=1e-9)
    frame = compare_pairs(bundle, [(a, b)])
    k = 6 if layer is None else layer
    assert result.layer == k
    assert result.cosine == pytest.approx(frame[f"layer_{k}"].iloc[0], abs=1e-5)
    np.testing.assert_allclose(result.curve, frame[layer_columns(6)].iloc[0], atol=1e-5)
    if layer is None:
        assert result.cosine == pytest.approx(expected_cosines(encoder, [(a, b)])[0], abs=1e-5)


def test_leave_one_out_against_a_shorter_mean(bundle):
    a, b = ONE_PAIR[1][1:]
    result = pair_contributions(bundle, a, b, layer=6)
    enc_a, enc_b = bundle.tokenize(a, return_tensors="pt"), bundle.tokenize(b, return_tensors="pt")
    with torch.inference_mode():
        h = bundle.model(**enc_a).last_hidden_state[0].double().numpy()
        g = bundle.model(**enc_b).last_hidden_state[0].double().numpy()
    for i in range(len(h)):
        rest = np.delete(h, i, axis=0).mean(axis=0)
        cos = rest @ g.mean(0) / np.linalg.norm(rest) / np.linalg.norm(g.mean(0))
        assert result.leave_one_out_a[i] == pytest.approx(cos, abs=1e-5)
    assert result.effect_a == pytest.approx(result.cosine - result.leave_one_out_a)
    top = result.top(10)
    assert len(top) == 10 and abs(top[0][2]) == pytest.approx(np.abs(result.matrix).max())
    assert [abs(v) for _, _, v in top] == sorted((abs(v) for _, _, v in top), reverse=True)
    for side, i in result.disagreements():
        shares = result.shares_a if side == "a" else result.shares_b
        effect = result.effect_a if side == "a" else result.effect_b
        rank_share = (shares > shares[i]).sum() / (len(shares) - 1)    # 0: the largest
        rank_effect = (effect > effect[i]).sum() / (len(effect) - 1)
        assert abs(rank_share - rank_effect) >= 2 / 3 - 1e-9


def ranked(matrix: np.ndarray, k: int) -> list[tuple[int, int, float]]:
    """The k cells of largest size by Python's own stable sort, in reading order on ties."""
    cells = [(i, j, float(matrix[i, j])) for i in range(matrix.shape[0])
             for j in range(matrix.shape[1])]
    return sorted(cells, key=lambda cell: -abs(cell[2]))[:k]


def test_the_largest_terms_and_their_shares(bundle):
    """The top tables' numbers (``top`` of tokens and of words, ``share_of_cosine``) against
    the split done here from transformers' own last hidden states."""
    a, b = ONE_PAIR[2][1:]            # "strumming" is three pieces: words differ from tokens
    result = pair_contributions(bundle, a, b)
    words = result.by_word()
    with torch.inference_mode():
        h, g = (bundle.model(**bundle.tokenize(t, return_tensors="pt")).last_hidden_state[0]
                .double().numpy() for t in (a, b))
    u, v = h.mean(0), g.mean(0)
    cosine = u @ v / np.linalg.norm(u) / np.linalg.norm(v)
    matrix = h @ g.T / (len(h) * len(g) * np.linalg.norm(u) * np.linalg.norm(v))
    by_word = np.array([[matrix[np.ix_(wa.positions, wb.positions)].sum()
                         for wb in result.words_b] for wa in result.words_a])
    assert by_word.shape[1] < matrix.shape[1]
    np.testing.assert_allclose(result.matrix, matrix, atol=1e-6)
    np.testing.assert_allclose(words.matrix, by_word, atol=1e-6)
    for found, cells in ((result, result.matrix), (words, words.matrix)):
        for k in (10, cells.size + 5):                     # more than there are: every cell
            top = found.top(k)
            assert top == ranked(cells, k)
            assert all(type(i) is int and type(j) is int and type(x) is float
                       for i, j, x in top)
        expected = matrix if found is result else by_word
        for i, j, x in found.top(10):
            assert x == pytest.approx(expected[i, j], abs=1e-6)
            assert share_of_cosine(x, found.cosine) == pytest.approx(expected[i, j] / cosine,
                                                                     abs=1e-5)
    shares = [share_of_cosine(x, words.cosine) for _i, _j, x in words.top(words.matrix.size)]
    assert sum(shares) == pytest.approx(1.0, abs=1e-9)     # every term: the whole cosine


def test_ties_keep_reading_order_and_a_zero_cosine_has_no_shares(bundle):
    """Terms that cancel out exactly: a cosine of 0 (orthogonal means), equal sizes in every
    cell. Both tops rank them in reading order; no term has a share of 0."""
    result = pair_contributions(bundle, *ONE_PAIR[0][1:])
    matrix = np.array([[0.25, -0.5, 0.25], [0.5, -0.25, -0.25]])
    assert matrix.sum() == 0.0
    tokens = replace(result, tokens_a=["[CLS]", "[SEP]"], tokens_b=["[CLS]", "x", "[SEP]"],
                     matrix=matrix, cosine=0.0)
    words = WordContributions(words_a=(Word("[CLS]", (0,)), Word("[SEP]", (1,))),
                              words_b=(Word("[CLS]", (0,)), Word("x", (1,)), Word("[SEP]", (2,))),
                              matrix=matrix, cosine=0.0)
    for found in (tokens, words):
        assert found.top(3) == [(0, 1, -0.5), (1, 0, 0.5), (0, 0, 0.25)]
        assert found.top(6) == ranked(matrix, 6)
    assert np.isnan(share_of_cosine(0.5, 0.0)) and np.isnan(share_of_cosine(0.0, 0.0))
    assert np.isnan(share_of_cosine(0.5, -0.0))
    assert share_of_cosine(-0.5, 0.25) == -2.0            # a term larger than the cosine


def test_chinese_reads_as_unknown_tokens(bundle):
    result = pair_contributions(bundle, "我喜欢这部电影。", "我不喜欢这部电影。")
    assert result.unknown_a == result.tokens_a.count("[UNK]") > 0
    assert result.unknown_b == result.tokens_b.count("[UNK]") > 0


def test_a_model_without_mean_pooling_gets_the_recipe(tiny_bundle):
    """A random BertModel has no sentence-transformers pooling: the same mean-pooled recipe,
    said not to be its own."""
    assert not own_recipe(tiny_bundle.name)
    a, b = "a small test", "another sentence here"
    result = pair_contributions(tiny_bundle, a, b)
    assert not result.own_recipe and result.layers == 2

    def mean(text):
        enc = tiny_bundle.tokenize(text, return_tensors="pt")
        with torch.inference_mode():
            return tiny_bundle.model(**enc).last_hidden_state[0].double().mean(0).numpy()

    u, v = mean(a), mean(b)
    assert result.cosine == pytest.approx(u @ v / np.linalg.norm(u) / np.linalg.norm(v),
                                          abs=1e-5)
    assert result.matrix.sum() == pytest.approx(result.cosine, abs=1e-9)
    frame = compare_pairs(tiny_bundle, [(a, b)])
    assert frame["cosine"].iloc[0] == pytest.approx(result.cosine, abs=1e-5)


# --- lists of pairs ----------------------------------------------------------------------------

def test_the_example_set():
    assert len(SCORED_EN) == len(SCORED_ZH) == 30
    assert all(0 <= s <= 5 for _, _, s in SCORED)
    parsed = read_text(example_text())
    assert len(parsed.pairs) == 60 and not parsed.skipped and parsed.has_scores
    assert parsed.scores[0] == SCORED[0][2]


def test_bad_lines_are_named_and_good_ones_kept():
    text = "\n".join([
        "sentence_a,sentence_b,score",              # 1: a header
        "only one column",                          # 2
        "a,b,3,extra",                              # 3: four columns
        ",empty A",                                 # 4
        '"Hello, world","She said ""hi"", then left",4.5',   # 5: quotes and commas inside
        "",                                         # 6: blank, ignored
        "<script>alert(1)</script>,**bold** [x](y),two",  # 7: score not a number
        "<img src=x onerror=alert(1)>,# heading,1",       # 8
        "plain,pair",                               # 9: no score
    ])
    parsed = read_text(text)
    assert parsed.delimiter == ","
    assert parsed.lines == (3, 5, 8, 9)
    assert parsed.pairs[0] == ("a", "b") and parsed.extra == ((3, 1),)   # its columns kept
    assert parsed.pairs[1] == ("Hello, world", 'She said "hi", then left')
    assert parsed.pairs[2] == ("<img src=x onerror=alert(1)>", "# heading")   # kept as text
    assert parsed.scores == (3.0, 4.5, 1.0, None)
    reasons = {s.line: (s.reason, s.detail) for s in parsed.skipped}
    assert reasons == {1: (HEADER, ""), 2: (MISSING, "1"), 4: (EMPTY, ""), 7: (SCORE, "two")}
    # The line with an extra field skipped, when asked.
    table = pair_lists.read_table(text)
    skipped = pair_lists.pairs_from(table, 0, 1, 2, skip_extra=True)
    assert skipped.lines == (5, 8, 9) and not skipped.extra
    assert {s.line: (s.reason, s.detail) for s in skipped.skipped}[3] == (EXTRA, "1")


def test_tabs_and_charsets():
    rows = "café\tcrème brûlée\t3\n我爱你\t我喜欢你\t4\n"
    for data, charset in ((rows.encode("utf-8"), "utf-8"),
                          (codecs.BOM_UTF8 + rows.encode("utf-8"), "utf-8"),
                          (rows.encode("utf-16"), "utf-16"),          # with its BOM
                          ("café\tcrème\t3\n".encode("latin-1"), "latin-1")):
        parsed = read_file(data)
        assert parsed.refused is None and parsed.charset == charset, charset
        assert parsed.delimiter == "\t" and parsed.pairs[0][0] == "café"


def test_refused_inputs():
    assert read_file(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50).refused == BINARY
    assert read_file(b"a,b\n" * 3_000_000).refused == TOO_LARGE             # 12 MB
    assert read_text("x" * (pair_lists.MAX_BYTES + 1)).refused == TOO_LARGE
    assert read_text("\n\n  \n").refused == NOTHING
    assert read_text("one\ntwo").refused == NOTHING


def test_at_most_max_pairs():
    text = "\n".join(f"{i},x" for i in range(100_000))   # 0.7 MB
    parsed = read_text(text)
    assert len(parsed.pairs) == MAX_PAIRS
    assert parsed.beyond == 100_000 - MAX_PAIRS and parsed.beyond_from == MAX_PAIRS + 1
    assert pair_lists.line_ranges([3, 5, 6, 7, 9]) == ("3, 5–7, 9", 0)
    assert pair_lists.line_ranges(range(1, 100, 2), most=3) == ("1, 3, 5", 47)


def test_the_csv_export_runs_no_formula():
    frame = pd.DataFrame({"a": ["=HYPERLINK(\"x\")", "+1", "plain"], "b": ["@SUM(A1)", "-2", "ok"],
                          "cosine": [-0.5, 0.25, 1.0]})
    rows = list(csv.reader(io.StringIO(results_csv(frame).decode("utf-8-sig"))))
    assert rows[1] == ["'=HYPERLINK(\"x\")", "'@SUM(A1)", "-0.5"]    # a number stays a number
    assert rows[2][:2] == ["'+1", "'-2"] and rows[3][:2] == ["plain", "ok"]


def test_agreement_with_scores():
    cosines = [0.9, 0.1, 0.5, 0.7, 0.3, 0.8]
    scores = [5.0, 0.0, None, 1.0, 1.5, 4.0]
    agreement = score_agreement(cosines, scores, k=2)
    x, y = [0.9, 0.1, 0.7, 0.3, 0.8], [5.0, 0.0, 1.0, 1.5, 4.0]
    assert agreement.n == 5
    assert agreement.spearman == pytest.approx(pd.Series(x).corr(pd.Series(y), "spearman"))
    assert agreement.pearson == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert agreement.spearman_p == pytest.approx(stats.spearmanr(x, y).pvalue)
    assert agreement.disagree[0] == 3          # high cosine, low score
    assert score_agreement([0.1, 0.2], [1.0, 2.0]) is None


def test_long_lists_go_in_chunks(bundle, monkeypatch):
    """A list longer than CHUNK_PAIRS runs a chunk at a time (bounded memory), with the same
    cosines as in one go and progress over every chunk's sentences."""
    from core.similarity import pairs as pairs_module

    whole = compare_pairs(bundle, PAIRS)
    monkeypatch.setattr(pairs_module, "CHUNK_PAIRS", 3)
    calls = []
    chunked = compare_pairs(bundle, PAIRS, progress=lambda d, t: calls.append((d, t)))
    pd.testing.assert_frame_equal(chunked, whole, atol=1e-6)
    assert calls[-1] == (14, 14) and [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_the_recipe_given_is_the_one_read(bundle, encoder):
    """``pair_contributions(recipe=...)``: the caller's recipe sets the token limit (as
    sentence-transformers' max_seq_length does: a shorter limit cuts both sentences, and the
    split is the mean cosine of what is left) and is the one the result names; without it, the
    model's own."""
    a, b = ONE_PAIR[0][1:]
    own = pair_contributions(bundle, a, b)
    short = replace(own.recipe, max_seq_length=5)     # [CLS], 3 tokens, [SEP]
    cut = pair_contributions(bundle, a, b, recipe=short)
    assert cut.recipe == short and cut.limit == 5
    assert max(len(cut.tokens_a), len(cut.tokens_b)) == 5 < len(own.tokens_b)
    assert cut.truncated_b == len(own.tokens_b) - len(cut.tokens_b) > 0
    encoder.max_seq_length = 5
    try:
        assert cut.cosine == pytest.approx(expected_cosines(encoder, [(a, b)])[0], abs=1e-5)
    finally:
        encoder.max_seq_length = own.recipe.max_seq_length or 256
    assert cut.matrix.sum() == pytest.approx(cut.cosine, abs=1e-9)
