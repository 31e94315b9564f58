"""``print(tensor)`` of a stage, formatted by torch's own rules, without building the tensor.

The tutorials show a stage as ``tensor([[[ 0.0123, ...]]], grad_fn=<...>)``; this reproduces
that text from the (T, h) array the page already holds, with torch's default print options.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

PRINT_PRECISION = 4      # torch's default print options
PRINT_EDGEITEMS = 3
PRINT_LINEWIDTH = 80
_PREFIX = "tensor("


@dataclass(frozen=True)
class _NumberFormat:
    """torch._tensor_str._Formatter: one width, fixed or scientific, for all values shown."""

    sci: bool
    integer: bool
    width: int

    @classmethod
    def of(cls, shown: np.ndarray) -> _NumberFormat:
        values = shown.astype(np.float64).ravel()
        nonzero = values[np.isfinite(values) & (values != 0)]
        if nonzero.size == 0:
            return cls(sci=False, integer=True, width=1)
        magnitude = np.abs(nonzero)
        low, high = magnitude.min(), magnitude.max()
        sci = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        integer = bool(np.all(nonzero == np.ceil(nonzero)))
        if sci:
            texts = [f"{v:.{PRINT_PRECISION}e}" for v in nonzero]
        elif integer:
            texts = [f"{v:.0f} " for v in nonzero]  # room for the trailing "."
        else:
            texts = [f"{v:.{PRINT_PRECISION}f}" for v in nonzero]
        return cls(sci=sci, integer=integer and not sci, width=max(1, *map(len, texts)))

    def __call__(self, value: float) -> str:
        if self.sci:
            text = f"{value:{self.width}.{PRINT_PRECISION}e}"
        elif self.integer:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRINT_PRECISION}f}"
        return text.rjust(self.width)


def _edges(n: int, summarize: bool) -> tuple[list[int], bool]:
    """Indices torch shows along one axis of size n, and whether "..." stands for the rest."""
    if summarize and n > 2 * PRINT_EDGEITEMS:
        return [*range(PRINT_EDGEITEMS), *range(n - PRINT_EDGEITEMS, n)], True
    return list(range(n)), False


def _row_text(values: Iterable[float], cut: bool, fmt: _NumberFormat, indent: int) -> str:
    items = [fmt(float(v)) for v in values]
    if cut:
        items.insert(PRINT_EDGEITEMS, " ...")
    per_line = max(1, (PRINT_LINEWIDTH - indent) // (fmt.width + 2))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def torch_printout(values: np.ndarray, grad_fn: str | None = None, every_row: bool = True) -> str:
    """``print(tensor)`` of a (T, h) stage as the batch-of-one tensor [1, T, h] the model made.

    Each row shows its first and last three values. With ``every_row=False`` the rows are cut to
    the first and last three too, which is character for character what ``print`` shows; with
    ``every_row=True`` every token gets its line, in the same format.
    """
    matrix = np.asarray(values, dtype=np.float32)
    n_rows, n_cols = matrix.shape
    summarize = matrix.size > 1000 or every_row  # torch summarizes above 1000 elements
    cols, col_cut = _edges(n_cols, summarize)
    rows, row_cut = _edges(n_rows, summarize and not every_row)
    fmt = _NumberFormat.of(matrix[np.ix_(rows, cols)])
    row_indent = len(_PREFIX) + 2  # "tensor(" then "[[" of the batch and the matrix
    texts = [_row_text(matrix[r, cols], col_cut, fmt, row_indent) for r in rows]
    if row_cut:
        texts.insert(PRINT_EDGEITEMS, "...")
    body = _PREFIX + "[[" + (",\n" + " " * row_indent).join(texts) + "]]"
    if grad_fn is None:
        return body + ")"
    suffix = f"grad_fn=<{grad_fn}>"
    last_line = len(body) - body.rfind("\n") + 1  # as torch counts it
    if last_line + len(suffix) + 2 > PRINT_LINEWIDTH:
        return body + ",\n" + " " * len(_PREFIX) + suffix + ")"
    return body + ", " + suffix + ")"


def torch_size(shape: Sequence[int]) -> str:
    """``torch.Size([1, 7, 384])`` as torch prints a shape."""
    return f"torch.Size([{', '.join(str(int(n)) for n in shape)}])"
