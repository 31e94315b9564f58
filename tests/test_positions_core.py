"""core.positions on the real model and a tiny random BERT, against independent computations:
numpy SVD for PCA, the Vaswani formula written out with math.sin/cos, scipy and torch for cosines,
numpy least squares and scikit-learn for the probe (plain and ridge)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist
from sklearn.linear_model import LinearRegression, RidgeCV
from sklearn.model_selection import KFold, cross_val_predict

from core.positions import (
    MIN_RANGE,
    PCA_COMPONENTS,
    PROBE_FOLDS,
    PROBE_SEED,
    RIDGE_ALPHAS,
    TABLE_KINDS,
    clamp_range,
    learned_table,
    offset_cosine,
    pca_projection,
    position_cosines,
    position_probe,
    position_table,
    sampled_positions,
    sinusoidal_table,
    vector_norms,
)

pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(scope="module")
def tables(bundle) -> dict[str, np.ndarray]:
    return {kind: position_table(bundle, kind) for kind in TABLE_KINDS}


@pytest.fixture(scope="module")
def probes(tables) -> dict:
    return {kind: position_probe(table) for kind, table in tables.items()}


@pytest.fixture(scope="module")
def ridge_probes(tables) -> dict:
    return {kind: position_probe(table, fit="ridge") for kind, table in tables.items()}


def sklearn_folds() -> KFold:
    return KFold(n_splits=PROBE_FOLDS, shuffle=True, random_state=PROBE_SEED)


def ridge_by_hand(table: np.ndarray, fold: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """Held-out predictions of ridge with an unpenalised intercept, solved in numpy fold by fold
    with each fold's penalty: w = (Xcᵀ Xc + α I)⁻¹ Xcᵀ yc on the centred training rows."""
    x = np.asarray(table, dtype=np.float64)
    y = np.arange(len(x), dtype=np.float64)
    predictions = np.empty(len(x))
    for f in np.unique(fold):
        test, train = fold == f, fold != f
        x_mean, y_mean = x[train].mean(axis=0), y[train].mean()
        xc, yc = x[train] - x_mean, y[train] - y_mean
        w = np.linalg.solve(xc.T @ xc + alphas[f] * np.eye(x.shape[1]), xc.T @ yc)
        predictions[test] = (x[test] - x_mean) @ w + y_mean
    return predictions


def numpy_pca(rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates U·S and explained-variance ratios of the centred rows, by numpy's SVD."""
    centred = rows.astype(np.float64) - rows.astype(np.float64).mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    return (u * s)[:, :k], (s**2 / (s**2).sum())[:k]


def lstsq_probe(table: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Held-out predictions of ordinary least squares with an intercept column, fold by fold."""
    x = np.asarray(table, dtype=np.float64)
    y = np.arange(len(x), dtype=np.float64)
    design = np.column_stack([x, np.ones(len(x))])
    predictions = np.empty(len(x))
    for f in np.unique(fold):
        test, train = fold == f, fold != f
        weights, *_ = np.linalg.lstsq(design[train], y[train], rcond=None)
        predictions[test] = design[test] @ weights
    return predictions


# --- the tables --------------------------------------------------------------------------------
def test_learned_table_is_the_models_position_weight(bundle, tables):
    weight = bundle.model.embeddings.position_embeddings.weight.detach().numpy()
    table = tables["learned"]
    assert table.shape == (512, 384) and table.dtype == np.float32
    np.testing.assert_array_equal(table, weight)
    assert not np.shares_memory(table, weight)  # a copy: nothing can write into the shared model
    assert not table.flags.writeable


def test_learned_table_is_what_the_model_adds(bundle):
    """Row p is what BertEmbeddings adds for position_ids = p (checked through the module)."""
    ids = torch.arange(0, 512, 37)
    with torch.inference_mode():
        looked_up = bundle.model.embeddings.position_embeddings(ids).numpy()
    np.testing.assert_array_equal(learned_table(bundle)[ids.numpy()], looked_up)


@pytest.mark.parametrize(("n_positions", "dim"), [(50, 16), (9, 7), (512, 384)])
def test_sinusoid_follows_the_formula(n_positions, dim):
    table = sinusoidal_table(n_positions, dim)
    assert table.shape == (n_positions, dim) and table.dtype == np.float32
    expected = np.empty((n_positions, dim))
    for p in range(n_positions):
        for j in range(dim):
            angle = p / 10000 ** ((j - j % 2) / dim)           # columns 2i and 2i+1 share 2i/d
            expected[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    np.testing.assert_allclose(table, expected, atol=2e-7)


def test_sinusoid_matches_the_annotated_transformer():
    """The usual torch implementation (exp of -log(10000)/d), computed in float64."""
    n, d = 512, 384
    position = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    np.testing.assert_allclose(sinusoidal_table(n, d), pe.numpy(), atol=2e-7)


def test_sinusoidal_kind_has_the_models_size(bundle, tables):
    cfg = bundle.config
    assert tables["sinusoidal"].shape == (cfg.max_position_embeddings, cfg.hidden_size)
    np.testing.assert_array_equal(tables["sinusoidal"][:, 0], np.sin(np.arange(512)).astype("f4"))
    np.testing.assert_array_equal(tables["sinusoidal"][:, 1], np.cos(np.arange(512)).astype("f4"))


def test_unknown_kind_and_empty_table_are_refused(bundle):
    with pytest.raises(ValueError, match="Unknown position table kind"):
        position_table(bundle, "rotary")
    with pytest.raises(ValueError):
        sinusoidal_table(0, 8)


# --- PCA ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", TABLE_KINDS)
@pytest.mark.parametrize(("start", "stop"), [(0, 511), (10, 200), (500, 511)])
def test_pca_equals_numpy_svd_up_to_sign(tables, kind, start, stop):
    proj = pca_projection(tables[kind], start, stop)
    rows = tables[kind][start : stop + 1]
    k = min(PCA_COMPONENTS, len(rows))
    ref_coords, ref_ratio = numpy_pca(rows, k)
    assert proj.coords.shape == (len(rows), k) and proj.coords.dtype == np.float32
    np.testing.assert_array_equal(proj.positions, np.arange(start, stop + 1))
    for j in range(k):
        if ref_ratio[j] < 1e-9:
            continue  # zero-variance directions (n rows span n - 1 dimensions) have no sign to fix
        ref = ref_coords[:, j]
        sign = np.sign(proj.coords[:, j] @ ref)
        np.testing.assert_allclose(proj.coords[:, j], sign * ref, atol=1e-5 * np.abs(ref).max())
    np.testing.assert_allclose(proj.explained_variance_ratio, ref_ratio, atol=1e-6)


def test_pca_on_a_tiny_random_bert(tiny_bundle):
    table = position_table(tiny_bundle, "learned")                   # (64, 32)
    proj = pca_projection(table)
    ref_coords, ref_ratio = numpy_pca(table, 20)
    np.testing.assert_allclose(np.abs(proj.coords), np.abs(ref_coords), atol=1e-5)
    np.testing.assert_allclose(proj.explained_variance_ratio, ref_ratio, atol=1e-6)


# --- cosine ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", TABLE_KINDS)
def test_position_cosines_equal_scipy(tables, kind):
    cos = position_cosines(tables[kind])
    assert cos.shape == (512, 512) and cos.dtype == np.float32
    ref = 1.0 - cdist(tables[kind].astype(np.float64), tables[kind].astype(np.float64), "cosine")
    np.testing.assert_allclose(cos, ref, atol=1e-6)
    np.testing.assert_allclose(np.diag(cos), 1.0, atol=1e-6)


@pytest.mark.parametrize("kind", TABLE_KINDS)
@pytest.mark.parametrize(("start", "stop"), [(0, 511), (0, 127), (300, 340)])
def test_offset_curve_is_mean_cos_of_shifted_rows(tables, kind, start, stop):
    curve = offset_cosine(position_cosines(tables[kind]), start, stop)
    rows = torch.from_numpy(tables[kind][start : stop + 1].astype(np.float64))
    assert curve.shape == (len(rows),)
    for k in (0, 1, 2, 7, 40, len(rows) - 1):
        if k >= len(rows):
            continue
        expected = torch.nn.functional.cosine_similarity(rows[: len(rows) - k], rows[k:]).mean()
        assert curve[k] == pytest.approx(float(expected), abs=1e-6)


# --- probe -------------------------------------------------------------------------------------
def test_probe_folds_are_five_fixed_shuffled_folds(probes):
    for probe in probes.values():
        sizes = np.bincount(probe.fold)
        assert len(sizes) == PROBE_FOLDS and sizes.sum() == 512 and sizes.max() - sizes.min() <= 1
        kfold = KFold(n_splits=PROBE_FOLDS, shuffle=True, random_state=PROBE_SEED)
        for f, (_, test) in enumerate(kfold.split(np.zeros((512, 1)))):
            np.testing.assert_array_equal(np.flatnonzero(probe.fold == f), np.sort(test))
    np.testing.assert_array_equal(probes["learned"].fold, probes["sinusoidal"].fold)


def test_probe_on_learned_table_equals_numpy_least_squares(tables, probes):
    """384 weights + intercept from ~410 positions: a unique least-squares solution per fold."""
    probe = probes["learned"]
    predictions = lstsq_probe(tables["learned"], probe.fold)
    np.testing.assert_allclose(probe.predictions, predictions, rtol=1e-6, atol=1e-6)
    errors = np.abs(predictions - np.arange(512))
    assert probe.mae == pytest.approx(errors.mean(), rel=1e-9)
    for f in range(PROBE_FOLDS):
        assert probe.fold_mae[f] == pytest.approx(errors[probe.fold == f].mean(), rel=1e-9)
    assert probe.mae_rounded == pytest.approx(
        np.abs(np.round(predictions) - np.arange(512)).mean(), abs=0.01
    )


def test_probe_on_sinusoid_recovers_the_index(tables, probes):
    """The slow sine columns are almost linear in p, so least squares reads p back to within
    rounding; the two solvers differ only by that rounding (the design is ill-conditioned)."""
    probe = probes["sinusoidal"]
    predictions = lstsq_probe(tables["sinusoidal"], probe.fold)
    np.testing.assert_allclose(probe.predictions, predictions, atol=5e-3)
    assert probe.mae < 1e-3 and np.abs(predictions - np.arange(512)).mean() < 1e-3
    assert probe.mae_rounded == 0.0


def test_probe_baseline_is_the_training_mean(tables, probes):
    probe = probes["learned"]
    y = np.arange(512)
    guess = np.array([y[probe.fold != probe.fold[p]].mean() for p in y])
    assert probe.baseline_mae == pytest.approx(np.abs(guess - y).mean(), rel=1e-12)
    assert probes["sinusoidal"].mae < probes["learned"].mae < probe.baseline_mae


@pytest.mark.parametrize("kind", TABLE_KINDS)
def test_plain_probe_equals_sklearn_linear_regression(tables, probes, kind):
    x = np.asarray(tables[kind], dtype=np.float64)
    y = np.arange(512, dtype=np.float64)
    expected = cross_val_predict(LinearRegression(), x, y, cv=sklearn_folds())
    np.testing.assert_allclose(probes[kind].predictions, expected, atol=1e-9)
    assert probes[kind].fit == "plain" and np.isnan(probes[kind].alphas).all()
    assert (probes[kind].n_train, probes[kind].n_inputs) == (409, 384)   # ~410 rows, 384 inputs


@pytest.mark.parametrize("kind", TABLE_KINDS)
def test_ridge_probe_equals_sklearn_ridgecv(tables, ridge_probes, kind):
    """RidgeCV on each training fold, alpha chosen among RIDGE_ALPHAS by its leave-one-out."""
    probe = ridge_probes[kind]
    x = np.asarray(tables[kind], dtype=np.float64)
    y = np.arange(512, dtype=np.float64)
    expected = cross_val_predict(RidgeCV(alphas=RIDGE_ALPHAS), x, y, cv=sklearn_folds())
    np.testing.assert_allclose(probe.predictions, expected, atol=1e-9)
    alphas = [RidgeCV(alphas=RIDGE_ALPHAS).fit(x[train], y[train]).alpha_
              for train, _ in sklearn_folds().split(x)]
    np.testing.assert_array_equal(probe.alphas, alphas)
    errors = np.abs(expected - y)
    assert probe.mae == pytest.approx(errors.mean(), rel=1e-9)
    for f in range(PROBE_FOLDS):
        assert probe.fold_mae[f] == pytest.approx(errors[probe.fold == f].mean(), rel=1e-9)


def test_ridge_probe_equals_the_closed_form(tables, ridge_probes):
    probe = ridge_probes["learned"]
    np.testing.assert_allclose(
        probe.predictions, ridge_by_hand(tables["learned"], probe.fold, probe.alphas), atol=1e-6
    )


def test_ridge_overfits_less_than_the_plain_fit_on_the_learned_table(probes, ridge_probes):
    """The plain fit nearly interpolates its ~410 training rows with 385 weights; the ridge
    penalty shrinks them and misses the held-out positions by far less (MiniLM: 61 vs 15)."""
    plain, ridge = probes["learned"].mae, ridge_probes["learned"].mae
    assert ridge < plain / 2 and ridge < probes["learned"].baseline_mae
    np.testing.assert_array_equal(ridge_probes["learned"].fold, probes["learned"].fold)
    assert ridge_probes["sinusoidal"].mae < 0.01   # both fits read the sinusoid's index back


def test_unknown_probe_fit_is_refused(tables):
    with pytest.raises(ValueError, match="Unknown probe fit"):
        position_probe(tables["learned"], fit="lasso")


def test_probe_on_a_tiny_random_bert(tiny_bundle):
    table = position_table(tiny_bundle, "learned")                   # (64, 32)
    probe = position_probe(table)
    np.testing.assert_allclose(probe.predictions, lstsq_probe(table, probe.fold), atol=1e-6)


def test_probe_needs_as_many_positions_as_folds():
    with pytest.raises(ValueError, match="at least 5 positions"):
        position_probe(np.eye(4, dtype=np.float32))


# --- norms, ranges, sampling -------------------------------------------------------------------
def test_norms_equal_torch_norms(bundle, tables):
    weight = bundle.model.embeddings.position_embeddings.weight.detach()
    np.testing.assert_allclose(vector_norms(tables["learned"]),
                               torch.linalg.vector_norm(weight, dim=1).numpy(), rtol=1e-6)
    # sin² + cos² = 1 for each of the d/2 column pairs
    np.testing.assert_allclose(vector_norms(tables["sinusoidal"]), math.sqrt(384 / 2), rtol=1e-6)


def test_cached_results_are_read_only(tables, probes):
    proj = pca_projection(tables["learned"])
    for array in (proj.coords, position_cosines(tables["learned"]), probes["learned"].predictions,
                  vector_norms(tables["learned"]), tables["sinusoidal"]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0


@pytest.mark.parametrize(
    ("start", "stop", "n", "expected"),
    [
        (0, 511, 512, (0, 511)),
        (200, 10, 512, (10, 200)),         # reversed
        (-5, 9999, 512, (0, 511)),         # out of bounds
        (7, 7, 512, (7, 7 + MIN_RANGE - 1)),  # too short: widened to the right
        (511, 511, 512, (512 - MIN_RANGE, 511)),  # ... or to the left at the end
        (0, 1, 3, (0, 2)),                 # a table shorter than MIN_RANGE: all of it
    ],
)
def test_clamp_range(start, stop, n, expected):
    assert clamp_range(start, stop, n) == expected


def test_sampled_positions_thin_large_windows():
    np.testing.assert_array_equal(sampled_positions(0, 127, 128), np.arange(128))
    np.testing.assert_array_equal(sampled_positions(0, 511, 128), np.arange(0, 512, 4))
    np.testing.assert_array_equal(sampled_positions(100, 356, 128), np.arange(100, 357, 3))
    assert len(sampled_positions(0, 0, 128)) == 1
