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

# Columns of one block of stacked layers: layers are multiplied a block at a time (one large
# product is several times faster than many small ones), and a block of float64 columns stays
# within about 64 MB at the built-in corpus's few thousand rows.
BLOCK_COLUMNS = 2048


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


def _blocks(widths: Sequence[int]) -> list[list[int]]:
    """Layer indices grouped so that a group's columns stay within BLOCK_COLUMNS (at least one
    layer a group)."""
    groups: list[list[int]] = []
    total = 0
    for k, width in enumerate(widths):
        if groups and total + width <= BLOCK_COLUMNS:
            groups[-1].append(k)
            total += width
        else:
            groups.append([k])
            total = width
    return groups


def _stack(layers: Sequence[np.ndarray], group: list[int]) -> torch.Tensor:
    """The group's layers, centred in float64, side by side: (n, sum of widths)."""
    return torch.from_numpy(np.concatenate([centred(layers[k]) for k in group], axis=1))


def self_norms(layers: Sequence[np.ndarray]) -> np.ndarray:
    """(L,) ||X^T X||_F of each centred layer."""
    out = np.empty(len(layers))
    for k, layer in enumerate(layers):
        xc = torch.from_numpy(centred(layer))
        out[k] = float(torch.linalg.matrix_norm(xc.T @ xc))
    return out


def cka_matrix(layers_a: Sequence[np.ndarray], layers_b: Sequence[np.ndarray]) -> np.ndarray:
    """(len(layers_a), len(layers_b)) float64: linear CKA of every layer of A (each (n, p))
    against every layer of B (each (n, q)), the rows of all of them the same inputs."""
    n = {len(x) for x in (*layers_a, *layers_b)}
    if len(n) != 1:
        raise ValueError(f"every layer needs the same rows: {sorted(n)}")
    norms_a, norms_b = self_norms(layers_a), self_norms(layers_b)
    widths_a = [x.shape[1] for x in layers_a]
    widths_b = [y.shape[1] for y in layers_b]
    cross = np.empty((len(layers_a), len(layers_b)))
    for group_a in _blocks(widths_a):
        xa = _stack(layers_a, group_a)
        starts_a = np.cumsum([0] + [widths_a[k] for k in group_a])
        for group_b in _blocks(widths_b):
            yb = _stack(layers_b, group_b)
            starts_b = np.cumsum([0] + [widths_b[k] for k in group_b])
            product = yb.T @ xa                                    # (q·|group_b|, p·|group_a|)
            for ia, k in enumerate(group_a):
                for jb, j in enumerate(group_b):
                    block = product[starts_b[jb]:starts_b[jb + 1], starts_a[ia]:starts_a[ia + 1]]
                    cross[k, j] = float(torch.linalg.matrix_norm(block) ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return cross / np.outer(norms_a, norms_b)
