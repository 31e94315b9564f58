"""core.compare: linear CKA between two models' layers, against an independent implementation
(the n x n HSIC form in numpy on transformers' own hidden states), and the properties a reader
checks the map by; the random-weights control."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertModel, BertTokenizerFast

from core import InputError, ModelBundle, layer_similarity
from core.compare import RowUnit, cka, cka_matrix, linear_cka, random_weights, trained_name
from core.contexts import NEIGHBOUR_CORPUS
from core.words import words_of
from tests.conftest import tiny_config

# Sentences no other test uses.
TEXTS = ["The lighthouse keeper counted ships until dawn.",
         "Grandmother's recipe needs three ripe plums.",
         "A violinist tuned her strings behind the curtain."]


def hsic_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA the textbook way: n x n Gram matrices, centred by H = I - 11^T/n."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    n = len(x)
    h = np.eye(n) - np.ones((n, n)) / n
    k, m = h @ (x @ x.T) @ h, h @ (y @ y.T) @ h
    return float(np.sum(k * m) / np.sqrt(np.sum(k * k) * np.sum(m * m)))


def transformers_rows(bundle: ModelBundle, texts: list[str], by_word: bool = False
                      ) -> list[np.ndarray]:
    """Every hidden state's rows straight from transformers: each text alone, [CLS] and [SEP]
    dropped; with ``by_word``, each word the mean of its pieces."""
    per_layer: list[list[np.ndarray]] = []
    for text in texts:
        enc = bundle.tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = bundle.model(**enc, output_hidden_states=True).hidden_states
        states = torch.stack(hidden)[:, 0].numpy().astype(np.float64)      # (L+1, T, d)
        if by_word:
            groups = [list(w.positions) for w in words_of(bundle, text) if not w.special]
        else:
            groups = [[p] for p in range(1, states.shape[1] - 1)]
        rows = np.stack([states[:, g].mean(axis=1) for g in groups], axis=1)  # (L+1, n, d)
        per_layer.append(rows)
    return list(np.concatenate(per_layer, axis=1))


def hsic_map(rows_a: list[np.ndarray], rows_b: list[np.ndarray]) -> np.ndarray:
    return np.array([[hsic_cka(x, y) for y in rows_b] for x in rows_a])


@pytest.fixture(scope="module")
def random_copy(bundle) -> ModelBundle:
    return random_weights(bundle)


def test_the_map_matches_the_hsic_form_on_transformers_states(bundle, tiny_bundle):
    result = layer_similarity(bundle, tiny_bundle, TEXTS)
    expected = hsic_map(transformers_rows(bundle, TEXTS), transformers_rows(tiny_bundle, TEXTS))
    assert result.cka.dtype == np.float64
    assert result.cka.shape == (7, 3)
    assert result.unit == RowUnit.TOKEN and result.split_differently == 0
    assert result.rows == sum(len(bundle.tokenizer(t)["input_ids"]) - 2 for t in TEXTS)
    np.testing.assert_allclose(result.cka, expected, atol=1e-7)   # batched with padding vs alone


def test_a_model_against_itself_gives_one_on_the_diagonal(bundle):
    result = layer_similarity(bundle, bundle, TEXTS, with_checks=True)
    np.testing.assert_allclose(result.diagonal, 1.0, atol=1e-12)
    np.testing.assert_allclose(result.cka, result.cka.T, atol=1e-12)
    assert (result.cka <= 1 + 1e-12).all() and (result.cka > 0).all()
    np.testing.assert_allclose(result.checks.self_diagonal, 1.0, atol=1e-12)


# More rows than dimensions (384): with fewer, CKA reads high even for unrelated rows, and a
# shuffle hardly lowers it.
MANY = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == "en"][::8]


def test_rotation_and_scale_leave_cka_unchanged_and_shuffling_drops_it(bundle, random_copy,
                                                                     many_rows, one_blas_thread):
    result = layer_similarity(bundle, random_copy, MANY, with_checks=True)
    assert result.rows > 400
    checks = result.checks
    assert checks.cell == pytest.approx(result.cka[-1, -1], abs=1e-6)   # float64 vs the map's
    assert checks.rotated == pytest.approx(checks.cell, abs=1e-10)
    assert checks.scaled == pytest.approx(checks.cell, abs=1e-10)
    assert checks.shuffled < 0.5 * checks.cell
    # and by hand, on other layers: an orthogonal matrix of our own, a scale, a shuffle
    rows_a, rows_b = many_rows
    rng = np.random.default_rng(7)
    q, _ = np.linalg.qr(rng.standard_normal((384, 384)))
    x, y = rows_a[2], rows_b[4]
    assert linear_cka(x @ q, 0.01 * y) == pytest.approx(linear_cka(x, y), abs=1e-10)
    assert linear_cka(x, y[rng.permutation(len(y))]) < 0.5 * linear_cka(x, y)
    assert linear_cka(x, y) == pytest.approx(result.cka[2, 4], abs=1e-7)   # batched vs alone


@pytest.mark.parametrize("row_block", [cka.ROW_BLOCK, 16])
def test_cka_matrix_equals_pair_by_pair(row_block, monkeypatch):
    """The map's float32 products (summed in float64, over blocks of rows when there are more
    than ROW_BLOCK) against float64 linear CKA pair by pair; a side against itself is 1."""
    monkeypatch.setattr(cka, "ROW_BLOCK", row_block)
    rng = np.random.default_rng(0)
    a = [rng.standard_normal((50, w)) for w in (700, 900, 1500, 30)]
    b = [rng.standard_normal((50, w)) + a[0][:, :1] for w in (40, 2100, 800)]
    expected = np.array([[linear_cka(x, y) for y in b] for x in a])
    np.testing.assert_allclose(cka_matrix(a, b), expected, rtol=0, atol=1e-6)
    itself = cka_matrix(a, a)
    np.testing.assert_allclose(np.diagonal(itself), 1.0, atol=1e-12)
    np.testing.assert_allclose(itself, itself.T, atol=1e-12)


def numpy_cka_map(rows_a: list[np.ndarray], rows_b: list[np.ndarray]) -> np.ndarray:
    """Linear CKA in float64 numpy, feature-space form: ||Y^T X||^2 / (||X^T X|| ||Y^T Y||)."""
    def centred(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float64)
        return x - x.mean(axis=0)

    xs, ys = [centred(x) for x in rows_a], [centred(y) for y in rows_b]
    return np.array([[np.linalg.norm(y.T @ x) ** 2
                      / (np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)) for y in ys]
                     for x in xs])


@pytest.fixture(scope="module")
def many_rows(bundle, random_copy) -> tuple[list[np.ndarray], list[np.ndarray]]:
    return transformers_rows(bundle, MANY), transformers_rows(random_copy, MANY)


@pytest.mark.parametrize("row_block", [cka.ROW_BLOCK, 100])
def test_the_map_is_within_1e6_of_float64_on_transformers_states(many_rows, row_block,
                                                                  monkeypatch, one_blas_thread):
    """The map's float32 products within 1e-6 of float64 CKA on hidden states from
    transformers' own BertModel (float32, as the model gives them), in one block of rows and
    in blocks of 100; a model against itself still 1 on the diagonal."""
    monkeypatch.setattr(cka, "ROW_BLOCK", row_block)
    rows_a, rows_b = many_rows
    assert len(rows_a[0]) > 400
    as_given_a = [r.astype(np.float32) for r in rows_a]
    as_given_b = [r.astype(np.float32) for r in rows_b]
    np.testing.assert_allclose(cka_matrix(as_given_a, as_given_b),
                               numpy_cka_map(rows_a, rows_b), rtol=0, atol=1e-6)
    itself = cka_matrix(as_given_a, as_given_a)
    np.testing.assert_allclose(np.diagonal(itself), 1.0, atol=1e-12)
    np.testing.assert_allclose(itself, numpy_cka_map(rows_a, rows_a), rtol=0, atol=1e-6)


def test_the_pages_map_is_within_1e6_of_float64(bundle, random_copy, many_rows,
                                                one_blas_thread):
    """layer_similarity (batched with padding) against float64 CKA of each text run alone."""
    result = layer_similarity(bundle, random_copy, MANY)
    np.testing.assert_allclose(result.cka, numpy_cka_map(*many_rows), rtol=0, atol=1e-6)


@pytest.fixture(scope="module")
def letters_bundle() -> ModelBundle:
    """A tiny random BERT whose vocabulary spells every word letter by letter: its pieces differ
    from the shipped tokenizer's, its words do not."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters,
             *(f"##{c}" for c in letters), ".", ",", "'", "s"]
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)})
    torch.manual_seed(1)
    model = BertModel(tiny_config(vocab_size=len(vocab), max_position_embeddings=128)).eval()
    return ModelBundle(name="tiny-letters", model=model, tokenizer=tokenizer)


def test_tokenizers_that_split_differently_are_compared_by_word(bundle, letters_bundle):
    result = layer_similarity(bundle, letters_bundle, TEXTS)
    assert result.unit == RowUnit.WORD and result.split_differently == len(TEXTS)
    rows_a = transformers_rows(bundle, TEXTS, by_word=True)
    rows_b = transformers_rows(letters_bundle, TEXTS, by_word=True)
    assert result.rows == len(rows_a[0]) == len(rows_b[0])
    np.testing.assert_allclose(result.cka, hsic_map(rows_a, rows_b), atol=1e-7)


def test_rows_that_cannot_be_matched_are_refused(bundle, letters_bundle):
    long_text = "a heron stood very still on the bank of the river " * 4   # 160 letters
    with pytest.raises(InputError) as caught:
        layer_similarity(bundle, letters_bundle, [TEXTS[0], long_text])
    assert "Sentence 2" in str(caught.value) and "cannot be matched" in str(caught.value)


def test_no_sentences_is_a_clear_error(bundle):
    for texts in ([], ["", "   \n"]):
        with pytest.raises(InputError, match="no sentences"):
            layer_similarity(bundle, bundle, texts)


def test_random_weights_are_transformers_own_initialisation(bundle, random_copy):
    state = torch.random.get_rng_state()
    again = random_weights(bundle)
    assert torch.equal(torch.random.get_rng_state(), state)   # nobody's random numbers moved
    torch.manual_seed(0)
    reference = BertModel(bundle.config)
    for (name, ours), (_, theirs) in zip(random_copy.model.state_dict().items(),
                                         reference.state_dict().items(), strict=True):
        assert torch.equal(ours, theirs), name
        assert torch.equal(ours, again.model.state_dict()[name]), name
    assert not random_copy.model.training and random_copy.tokenizer is bundle.tokenizer
    assert trained_name(random_copy.name) == bundle.name and trained_name(bundle.name) is None
    trained = bundle.model.state_dict()["encoder.layer.0.attention.self.query.weight"]
    assert not torch.equal(random_copy.model.state_dict()[
        "encoder.layer.0.attention.self.query.weight"], trained)
