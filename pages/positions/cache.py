"""Positions' data: cached position-table results, shared by every session.

Everything here depends on the model alone (and on a position range), never on the sentence: it
lives in ``st.cache_resource``, keyed on the model name string, so typing a new sentence reuses
the PCA, cosine matrix and probe computed for the first visitor. The arrays come back read-only;
nothing here may be mutated by a page.

``CALLS`` counts how often each computation really ran (cache misses), so a test or a benchmark
can prove that a rerun which only changes the sentence computes none of them again.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from components.cache import get_model
from core.positions import (
    TABLE_KINDS,
    ProbeFit,
    ProbeResult,
    Projection,
    TableKind,
    offset_cosine,
    pca_projection,
    position_cosines,
    position_probe,
    position_table,
    vector_norms,
)
from pages.positions import figures as figs
from pages.positions import pictures

# Two tables (learned, sinusoidal) for each of the two models the model cache holds.
TABLE_ENTRIES = 4
# Two fits (plain, ridge) of each table.
PROBE_ENTRIES = 8
# Each projection is at most 512 x 20 float32 (40 KB); a class trying ranges stays far below this.
RANGE_ENTRIES = 32
# A 512 x 512 float32 cosine matrix is 1 MB.
COSINE_ENTRIES = 4

CALLS: Counter[str] = Counter()


@st.cache_resource(max_entries=TABLE_ENTRIES, show_spinner=False)
def get_table(model_name: str, kind: TableKind) -> np.ndarray:
    """The learned position table of ``model_name``, or the sinusoidal table of its size."""
    CALLS["table"] += 1
    return position_table(get_model(model_name), kind)


@st.cache_resource(max_entries=RANGE_ENTRIES, show_spinner=False)
def get_projection(model_name: str, kind: TableKind, start: int, stop: int) -> Projection:
    """PCA of positions start..stop (inclusive) of one table."""
    CALLS["pca"] += 1
    return pca_projection(get_table(model_name, kind), start, stop)


# The PCA tab's figures without the input's marks, in the run's language: a new sentence only
# adds its marks. Never mutated (figures.with_trace and st.plotly_chart read copies).
@st.cache_resource(max_entries=RANGE_ENTRIES * 2, show_spinner=False)
def get_pca_base(model_name: str, kind: TableKind, start: int, stop: int, pcs: tuple[int, ...],
                 title: str, subtitle: str) -> dict:
    """pca_figure of one table's range without marks, as a dict."""
    projection = get_projection(model_name, kind, start, stop)
    return figs.pca_figure(projection, pcs, None, title, subtitle).to_dict()


# The PCA tab's pictures without the input's marks (pages/positions/pictures.py), per model,
# range, components and language: a new sentence only adds its rings and labels.
@st.cache_resource(max_entries=RANGE_ENTRIES * 2, show_spinner=False)
def get_pca_picture(model_name: str, kind: TableKind, start: int, stop: int,
                    pcs: tuple[int, ...], title: str, subtitle: str,
                    language: str) -> tuple[str, str]:
    """pictures.pca_base of one table's range in ``language`` (the run's, passed as the key)."""
    projection = get_projection(model_name, kind, start, stop)
    x_title, y_title = (figs.axis_title(projection, pc) for pc in pcs[:2])
    return pictures.pca_base(projection, pcs, title, subtitle, x_title, y_title)


@st.cache_resource(max_entries=RANGE_ENTRIES, show_spinner=False)
def get_scree_picture(model_name: str, start: int, stop: int, language: str) -> str:
    """The scree as a picture, in ``language`` (the run's, passed as the key)."""
    projections = {kind: get_projection(model_name, kind, start, stop) for kind in TABLE_KINDS}
    return pictures.scree_picture(projections, figs.table_names(model_name), "positions_scree")


@st.cache_resource(max_entries=RANGE_ENTRIES, show_spinner=False)
def get_scree(model_name: str, start: int, stop: int, language: str) -> go.Figure:
    """The scree figure of both tables' range in ``language`` (the run's, passed as the key)."""
    projections = {kind: get_projection(model_name, kind, start, stop) for kind in TABLE_KINDS}
    return figs.scree_figure(projections, figs.table_names(model_name))


@st.cache_resource(max_entries=COSINE_ENTRIES, show_spinner=False)
def get_cosine(model_name: str, kind: TableKind) -> np.ndarray:
    """cos(p, q) for every pair of positions of one table, (P, P) float32."""
    CALLS["cosine"] += 1
    return position_cosines(get_table(model_name, kind))


@st.cache_resource(max_entries=RANGE_ENTRIES, show_spinner=False)
def get_offset_curve(model_name: str, kind: TableKind, start: int, stop: int) -> np.ndarray:
    """Mean cos(p, p + k) against the offset k, over the pairs inside start..stop."""
    CALLS["offset"] += 1
    return offset_cosine(get_cosine(model_name, kind), start, stop)


@st.cache_resource(max_entries=PROBE_ENTRIES, show_spinner=False)
def get_probe(model_name: str, kind: TableKind, fit: ProbeFit = "plain") -> ProbeResult:
    """Wang & Chen's 5-fold linear probe from position vector to index, on the whole table:
    the paper's plain least squares, or ridge."""
    CALLS["probe"] += 1
    return position_probe(get_table(model_name, kind), fit=fit)


@st.cache_resource(max_entries=TABLE_ENTRIES, show_spinner=False)
def get_norms(model_name: str, kind: TableKind) -> np.ndarray:
    """||p|| for every position of one table, (P,) float32."""
    CALLS["norms"] += 1
    return vector_norms(get_table(model_name, kind))


def warm(model_name: str) -> None:
    """At server start: both tables, the PCA of the first positions the PCA tab switches
    between (the whole table among them) and their cosines (what the page opens with), so the
    first visitor does not wait for them."""
    counts = figs.first_counts(get_model(model_name).config.max_position_embeddings)
    for kind in TABLE_KINDS:
        for count in counts:
            get_projection(model_name, kind, 0, count - 1)
        get_cosine(model_name, kind)


def clear_position_caches() -> None:
    """Forget every cached position result (not the models): for benchmarks of a first visit."""
    for cached in (get_table, get_projection, get_cosine, get_offset_curve, get_probe, get_norms):
        cached.clear()
