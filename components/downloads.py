"""Download buttons for a matrix: CSV with row and column labels, and .npy with the raw floats.

A download button keeps what it is given for as long as its session shows the page. Given a
per-input result's arrays (or a closure over a page's context, which holds the analysis), every
open session kept them alive past the results caches' byte budget: 30 sessions on 512-token
texts held ~36 MB each (bench/HISTORY.md). So a matrix that comes from a per-input cache is
passed as a recipe, :func:`from_cache`: the cached function and its key, called again on click
(a hit while the entry is kept, one recomputation after it was dropped).
"""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar, overload

import numpy as np
import pandas as pd
import streamlit as st

R = TypeVar("R")
M = TypeVar("M")
Matrix = np.ndarray | Callable[[], np.ndarray]


def _holds_results(value: Any) -> bool:
    """An array, a tensor or a result dataclass: what a recipe must not keep."""
    return (isinstance(value, np.ndarray) or hasattr(value, "element_size")
            or (dataclasses.is_dataclass(value) and not isinstance(value, type)))


@overload
def from_cache(get: Callable[..., R], *key: Hashable) -> Callable[[], R]: ...
@overload
def from_cache(get: Callable[..., R], *key: Hashable,
               part: Callable[[R], M]) -> Callable[[], M]: ...
def from_cache(get: Callable[..., Any], *key: Hashable,
               part: Callable[[Any], Any] = lambda result: result) -> Callable[[], Any]:
    """A download's matrix made again on click: ``part(get(*key))``.

    ``get`` is a per-input cached function and ``key`` its arguments (the InputKey first, then
    small values such as a layer number); ``part`` picks the matrix out of its result. Neither
    may hold arrays or results (TypeError), or the button would keep them alive after all.
    """
    for value in key:
        hash(value)   # a key is hashable: an array here raises TypeError at once
    cells = [cell.cell_contents for cell in part.__closure__ or ()]
    if any(_holds_results(value) for value in (*key, *cells)):
        raise TypeError("a download recipe holds only keys, not the arrays it rebuilds")
    return lambda: part(get(*key))


def safe_filename(name: str) -> str:
    """A file name made only of letters (any script: a Chinese name stays Chinese), digits,
    dashes and underscores; nothing a file system or a header could read as a path or quote."""
    return re.sub(r"[^\w-]+", "_", name).strip("_") or "matrix"


def matrix_csv(matrix: np.ndarray, row_labels: Sequence[str] | None = None) -> bytes:
    """CSV text of a 2-D matrix; rows labelled (e.g. "3:test") when labels are given."""
    frame = pd.DataFrame(np.asarray(matrix), index=list(row_labels) if row_labels else None)
    return frame.to_csv(index=row_labels is not None).encode()


def matrix_npy(matrix: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(matrix))
    return buffer.getvalue()


def download_matrix(
    name: str,
    matrix: Matrix,
    row_labels: Sequence[str] | None = None,
    key: str | None = None,
) -> None:
    """CSV and .npy download buttons side by side, computed only on click.

    ``matrix`` may be a function, so a large matrix (a one-hot table) is built only when asked
    for; a matrix from a per-input cache is given as :func:`from_cache`'s recipe.
    """
    stem = safe_filename(name)
    key = key or stem
    build = matrix if callable(matrix) else lambda: matrix
    row = st.container(horizontal=True)
    row.download_button(
        "CSV",
        data=lambda: matrix_csv(build(), row_labels),
        file_name=f"{stem}.csv",
        mime="text/csv",
        key=f"csv_{key}",
        icon=":material/download:",
        on_click="ignore",
    )
    row.download_button(
        ".npy",
        data=lambda: matrix_npy(build()),
        file_name=f"{stem}.npy",
        mime="application/octet-stream",
        key=f"npy_{key}",
        icon=":material/download:",
        on_click="ignore",
    )


def download_table(frame: pd.DataFrame, name: str, key: str | None = None) -> None:
    """A CSV button for a table (no index column), computed only on click."""
    stem = safe_filename(name)
    st.download_button(
        "CSV",
        data=lambda: frame.to_csv(index=False).encode(),
        file_name=f"{stem}.csv",
        mime="text/csv",
        key=key or f"csv_{stem}",
        icon=":material/download:",
        on_click="ignore",
    )
