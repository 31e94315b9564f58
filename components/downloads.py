"""Download buttons for a matrix: CSV with row and column labels, and .npy with the raw floats."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st


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
    matrix: np.ndarray | Callable[[], np.ndarray],
    row_labels: Sequence[str] | None = None,
    key: str | None = None,
) -> None:
    """CSV and .npy download buttons side by side, computed only on click.

    ``matrix`` may be a function, so a large matrix (a one-hot table) is built only when asked for.
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
