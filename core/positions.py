"""The position table: what BERT learned for each of its positions, next to the sinusoidal formula.

BERT looks up one learned vector per position (``embeddings.position_embeddings.weight``,
(max_positions, hidden)); the original Transformer computed them with sines and cosines instead
(Vaswani et al. 2017). Everything here works on either table, as a float numpy array (P, h):

    learned_table / sinusoidal_table     the two tables                              (P, h)
    pca_projection                       scikit-learn PCA of a range of positions    (n, k)
    position_cosines / offset_cosine     cos(p, q), and mean cos(p, p + k) against k (P, P), (n,)
    position_probe                       Wang & Chen 2020: linear regression from a position
                                         vector to its index, 5-fold CV, mean absolute error;
                                         fit="plain" (the paper's) or "ridge" (alpha by CV)
    vector_norms                         ||p|| along the index                       (P,)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.decomposition import PCA
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, RidgeCV
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.model_selection import KFold

from core.models import ModelBundle

TableKind = Literal["learned", "sinusoidal"]
TABLE_KINDS: tuple[TableKind, ...] = ("learned", "sinusoidal")
ProbeFit = Literal["plain", "ridge"]
PROBE_FITS: tuple[ProbeFit, ...] = ("plain", "ridge")

SINUSOID_BASE = 10000.0   # Vaswani et al.: wavelengths from 2π to 10000·2π
PCA_COMPONENTS = 20       # kept for the scree chart; the scatter picks among the first ones
MIN_RANGE = 4             # fewer positions leave nothing for PCA to show
PROBE_FOLDS = 5           # Wang & Chen 2020
PROBE_SEED = 0            # fixed shuffle, so every session and every test sees the same folds
# The ridge penalties RidgeCV chooses among (by efficient leave-one-out on each training fold).
# MiniLM's learned table picks 0.01; the sinusoid, nearly noise-free, the smallest one.
RIDGE_ALPHAS = tuple(float(a) for a in np.logspace(-6, 3, 19))


def learned_table(bundle: ModelBundle) -> np.ndarray:
    """A float32 copy of the model's learned position table (max_positions, hidden)."""
    weight = bundle.model.embeddings.position_embeddings.weight
    return weight.detach().float().cpu().numpy().copy()


def sinusoidal_table(n_positions: int, dim: int, base: float = SINUSOID_BASE) -> np.ndarray:
    """Vaswani et al.'s table: PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(same angle).

    Computed in float64 (large p times tiny frequencies) and returned as float32. An odd ``dim``
    ends on a sine column, as the formula's even columns outnumber its odd ones.
    """
    if n_positions < 1 or dim < 1:
        raise ValueError(f"A position table needs rows and columns, not {n_positions}x{dim}.")
    pos = np.arange(n_positions, dtype=np.float64)[:, None]               # (P, 1)
    frequencies = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)  # (ceil(d/2),)
    angles = pos * frequencies                                            # (P, ceil(d/2))
    table = np.empty((n_positions, dim), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : dim // 2])
    return table.astype(np.float32)


def position_table(bundle: ModelBundle, kind: TableKind) -> np.ndarray:
    """The learned table, or a sinusoidal one of the same size."""
    if kind == "learned":
        return _frozen(learned_table(bundle))
    if kind == "sinusoidal":
        cfg = bundle.config
        return _frozen(sinusoidal_table(cfg.max_position_embeddings, cfg.hidden_size))
    raise ValueError(f"Unknown position table kind {kind!r}; expected one of {TABLE_KINDS}.")


def clamp_range(
    start: int, stop: int, n_positions: int, min_len: int = MIN_RANGE
) -> tuple[int, int]:
    """An inclusive range [start, stop] inside the table, at least ``min_len`` positions long.

    Ranges come from a slider or the URL, so they may be reversed, out of bounds or too short:
    this widens a short range to the right (then left) rather than failing.
    """
    last = n_positions - 1
    start, stop = sorted((min(max(int(start), 0), last), min(max(int(stop), 0), last)))
    need = min(min_len, n_positions) - (stop - start + 1)
    if need > 0:
        stop = min(last, stop + need)
        start = max(0, stop - min(min_len, n_positions) + 1)
    return start, stop


def sampled_positions(start: int, stop: int, max_points: int) -> np.ndarray:
    """Every s-th position of [start, stop], with s as small as keeps at most ``max_points``.

    A heatmap of a 512-position window is thinned this way (no averaging), so each cell still
    shows one exact cos(p, q) and its hover names the true positions.
    """
    n = stop - start + 1
    stride = max(1, math.ceil(n / max_points))
    return np.arange(start, stop + 1, stride)


@dataclass(frozen=True)
class Projection:
    """PCA of positions [start, stop] of one table."""

    start: int
    stop: int
    coords: np.ndarray                      # (n, k) float32: row r is position start + r
    explained_variance_ratio: np.ndarray    # (k,) share of the total variance per component

    @property
    def positions(self) -> np.ndarray:
        return np.arange(self.start, self.stop + 1)

    @property
    def n_components(self) -> int:
        return self.coords.shape[1]


def pca_projection(
    table: np.ndarray, start: int = 0, stop: int | None = None, n_components: int = PCA_COMPONENTS
) -> Projection:
    """scikit-learn PCA (exact SVD) of the rows start..stop (inclusive) of a position table."""
    stop = table.shape[0] - 1 if stop is None else stop
    rows = np.asarray(table[start : stop + 1], dtype=np.float64)
    k = min(n_components, rows.shape[0], rows.shape[1])
    pca = PCA(n_components=k, svd_solver="full")
    coords = pca.fit_transform(rows)
    return Projection(
        start=start,
        stop=stop,
        coords=_frozen(coords.astype(np.float32)),
        explained_variance_ratio=_frozen(pca.explained_variance_ratio_.astype(np.float32)),
    )


def position_cosines(table: np.ndarray) -> np.ndarray:
    """cos(p, q) for every pair of positions: (P, P) float32, computed in float64."""
    return _frozen(cosine_similarity(np.asarray(table, dtype=np.float64)).astype(np.float32))


def offset_cosine(cosine: np.ndarray, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Mean cos(p, p + k) over the pairs inside [start, stop], for k = 0 .. n - 1.

    These are the means of the k-th diagonals of the cosine block; the last ones average few
    pairs (k = n - 1 is a single pair).
    """
    stop = cosine.shape[0] - 1 if stop is None else stop
    block = np.asarray(cosine[start : stop + 1, start : stop + 1], dtype=np.float64)
    means = [np.diagonal(block, offset=k).mean() for k in range(block.shape[0])]
    return _frozen(np.asarray(means, dtype=np.float32))


@dataclass(frozen=True)
class ProbeResult:
    """Cross-validated linear map from position vector to position index (one fit, one table)."""

    fit: ProbeFit
    predictions: np.ndarray    # (P,) index predicted for each position by the fold that held it out
    fold: np.ndarray           # (P,) which of the folds held each position out
    mae: float                 # mean |prediction - index| over all positions
    mae_rounded: float         # the same with predictions rounded to whole positions (paper's code)
    fold_mae: np.ndarray       # (folds,) the same per fold
    baseline_mae: float        # a model that always guesses the training folds' mean index
    alphas: np.ndarray         # (folds,) the ridge penalty each fold chose; NaN for the plain fit
    n_train: int               # training rows of the smallest training fold
    n_inputs: int              # columns of the table (the regression's inputs)

    @property
    def errors(self) -> np.ndarray:
        return np.abs(self.predictions - np.arange(self.predictions.shape[0]))


def probe_folds(n_positions: int, n_splits: int = PROBE_FOLDS, seed: int = PROBE_SEED) -> KFold:
    """The shuffled K folds of the probe, fixed by ``seed`` so every run sees the same split."""
    if n_positions < n_splits:
        raise ValueError(f"{n_splits}-fold cross-validation needs at least {n_splits} positions.")
    return KFold(n_splits=n_splits, shuffle=True, random_state=seed)


def probe_estimator(fit: ProbeFit) -> RegressorMixin:
    """The regression of one probe fit: the paper's least squares, or ridge with alpha by CV."""
    if fit == "plain":
        return LinearRegression()
    if fit == "ridge":
        return RidgeCV(alphas=RIDGE_ALPHAS)
    raise ValueError(f"Unknown probe fit {fit!r}; expected one of {PROBE_FITS}.")


def position_probe(
    table: np.ndarray, n_splits: int = PROBE_FOLDS, seed: int = PROBE_SEED,
    fit: ProbeFit = "plain",
) -> ProbeResult:
    """Wang & Chen 2020's probe: how well does a linear map recover p from the vector of p?

    ``fit="plain"``: ordinary least squares with an intercept, fitted on 4/5 of the positions and
    asked for the index of each held-out one, as in the authors' code (MiuLab/PE-Study,
    absolute.py). With 512 positions that is ~410 training rows for 384 inputs: the fit nearly
    interpolates its training rows and misses the held-out ones badly. ``fit="ridge"``: the same
    folds with RidgeCV, whose penalty (chosen on each training fold) shrinks the weights. Run in
    float64 because the sinusoid's slow columns are nearly collinear with the intercept.
    """
    x = np.asarray(table, dtype=np.float64)
    y = np.arange(x.shape[0], dtype=np.float64)
    folds = probe_folds(x.shape[0], n_splits, seed)
    predictions, baseline = np.empty_like(y), np.empty_like(y)
    fold = np.empty(x.shape[0], dtype=np.int64)
    alphas = np.full(n_splits, np.nan)
    n_train = x.shape[0]
    for f, (train, test) in enumerate(folds.split(x)):
        model = probe_estimator(fit).fit(x[train], y[train])
        predictions[test] = model.predict(x[test])
        baseline[test] = DummyRegressor(strategy="mean").fit(x[train], y[train]).predict(x[test])
        fold[test] = f
        alphas[f] = getattr(model, "alpha_", np.nan)
        n_train = min(n_train, len(train))
    errors = np.abs(predictions - y)
    return ProbeResult(
        fit=fit,
        predictions=_frozen(predictions),
        fold=_frozen(fold),
        mae=float(errors.mean()),
        mae_rounded=float(np.abs(np.round(predictions) - y).mean()),
        fold_mae=_frozen(np.array([errors[fold == f].mean() for f in range(n_splits)])),
        baseline_mae=float(np.abs(baseline - y).mean()),
        alphas=_frozen(alphas),
        n_train=n_train,
        n_inputs=x.shape[1],
    )


def vector_norms(table: np.ndarray) -> np.ndarray:
    """The Euclidean norm of each position vector, (P,) float32."""
    return _frozen(np.linalg.norm(np.asarray(table, dtype=np.float64), axis=1).astype(np.float32))


def _frozen(array: np.ndarray) -> np.ndarray:
    """Read-only: these arrays are cached once and shared by every session."""
    array.setflags(write=False)
    return array
