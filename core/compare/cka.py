"""Linear CKA (Kornblith et al. 2019) between layers, in feature space and float64.

With X (n x p) and Y (n x q) the same n inputs' vectors, their columns centred,

    CKA(X, Y) = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F)

It is 1 for X against itself, unchanged when either side is rotated (an orthogonal matrix) or
scaled, and it falls when one side's rows are shuffled. The feature-space form never builds the
n x n Gram matrices of the kernel form (HSIC): its products are p x q, so thousands of rows cost
no more memory than their vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def centred(x: np.ndarray) -> np.ndarray:
    """(n, p) float64 with every column's mean subtracted."""
    x = np.asarray(x, dtype=np.float64)
    return x - x.mean(axis=0, keepdims=True)


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA of two (n, p) and (n, q) arrays whose rows are the same inputs in order."""
    if len(x) != len(y):
        raise ValueError(f"CKA needs the same rows on both sides: {len(x)} and {len(y)}")
    xc, yc = torch.from_numpy(centred(x)), torch.from_numpy(centred(y))
    cross = torch.linalg.matrix_norm(yc.T @ xc) ** 2
    norms = torch.linalg.matrix_norm(xc.T @ xc) * torch.linalg.matrix_norm(yc.T @ yc)
    return float(cross / norms) if float(norms) > 0 else float("nan")


def cka_matrix(layers_a: Sequence[np.ndarray], layers_b: Sequence[np.ndarray]) -> np.ndarray:
    """(len(layers_a), len(layers_b)) float64: linear CKA of every layer of A (each (n, p))
    against every layer of B (each (n, q)), the rows of all of them the same inputs.

    Each layer is centred once, in float64; A's stay while B's come one at a time, so at most
    A's layers and one of B's are held in float64. One p x q product per pair of layers: on one
    thread that is as fast as one product of the layers stacked side by side (measured), and
    holds no stacked copy."""
    n = {len(x) for x in (*layers_a, *layers_b)}
    if len(n) != 1:
        raise ValueError(f"every layer needs the same rows: {sorted(n)}")
    xs = [torch.from_numpy(centred(x)) for x in layers_a]
    norms_a = np.array([float(torch.linalg.matrix_norm(x.T @ x)) for x in xs])
    cross = np.empty((len(layers_a), len(layers_b)))
    norms_b = np.empty(len(layers_b))
    for j, layer in enumerate(layers_b):
        y = torch.from_numpy(centred(layer))
        norms_b[j] = float(torch.linalg.matrix_norm(y.T @ y))
        yt = y.T.contiguous()
        for i, x in enumerate(xs):
            cross[i, j] = float(torch.linalg.matrix_norm(yt @ x) ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return cross / np.outer(norms_a, norms_b)
