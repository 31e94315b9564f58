"""Positions: the learned position table next to the sinusoidal formula, and how much order each
one holds (PCA, cosine similarity, Wang & Chen's linear probe, norms).

Each of the four views is a tab and only the open tab's section runs: laying out all nine plotly
figures at once made every rerun cost the browser about a second.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import positions_figures as figs
from components.analysis_view import current_model, show_notices
from components.cache import get_encoding
from components.downloads import download_matrix
from components.explain import explain
from components.heatmap import show_figure
from components.inputs import shared_inputs
from components.positions_cache import (
    get_cosine,
    get_norms,
    get_offset_curve,
    get_probe,
    get_projection,
    get_table,
)
from components.sections import open_section
from core import InputError
from core.positions import MIN_RANGE, PROBE_FOLDS, TABLE_KINDS, clamp_range, sampled_positions

PC_CHOICES = list(range(1, 11))   # components offered for the axes
COSINE_WINDOW = 128               # default window of the cosine heatmap
HEATMAP_SIDE = 128                # larger windows are thinned to this many rows and columns
# The open tab lives in the URL under this key. Not "pos_view": that already holds the PCA's
# 2D/3D choice, and shared links using it must keep working.
SECTION_KEY = "pos_section"

st.title("Positions")
explain(
    "BERT adds a learned vector to every token according to its position: the token at position "
    "p gets row p of `embeddings.position_embeddings.weight`, whatever the word. The original "
    "Transformer computed these vectors with sines and cosines instead (Vaswani et al. 2017); "
    "every tab below puts the learned table (left) beside a sinusoidal table of the same size "
    "(right) and asks how much order each one holds."
)

bundle = current_model()
model = shared_inputs().model   # the exact string the model cache is keyed on
n_positions, hidden = bundle.config.max_position_embeddings, bundle.config.hidden_size
table_shape = f"{n_positions} × {hidden}"


def input_marks() -> figs.InputMarks | None:
    """The current input's positions and tokens; None (with a message) when there is no input."""
    inputs = shared_inputs()
    try:
        enc = get_encoding(inputs.model, inputs.text_a, inputs.text_b)
    except InputError as exc:
        st.info(f"{exc} The position tables do not depend on the sentence, so they are shown "
                "anyway, without your tokens.", icon=":material/edit_note:")
        return None
    show_notices(enc)
    return figs.InputMarks.from_encoding(enc)


def draw_pca(marks: figs.InputMarks | None) -> None:
    """PCA of a range of positions of both tables, the scree plot, downloads and the formula."""
    st.header("PCA of the position table")
    explain(
        "Each position vector has hundreds of numbers; PCA finds the directions along which the "
        "chosen positions differ most and draws each position by its coordinates on two or three "
        "of them, coloured by its index. A smooth path means neighbouring positions have similar "
        "vectors; the sinusoid's path is smooth by construction, the learned one only if training "
        "made it so."
    )
    c_range, c_view, c_x, c_y, c_z = st.columns([4, 1.4, 1, 1, 1], vertical_alignment="bottom")
    lo, hi = c_range.slider(
        "Positions to project", 0, n_positions - 1, (0, n_positions - 1), key="pos_range",
        bind="query-params", help=f"PCA is fitted on these positions only (at least {MIN_RANGE}).",
    )
    start, stop = clamp_range(lo, hi, n_positions)
    view = c_view.segmented_control("View", ["2D", "3D"], default="2D", required=True,
                                    key="pos_view", bind="query-params") or "2D"

    def pc_select(column: DeltaGenerator, axis: str, default: int) -> int:
        return column.selectbox(
            f"{axis} axis", PC_CHOICES, index=default - 1, key=f"pos_pc_{axis}",
            bind="query-params", format_func=lambda pc: f"PC{pc}",
            disabled=axis == "z" and view != "3D",
        )

    pcs = [pc_select(c_x, "x", 1), pc_select(c_y, "y", 2)]
    if view == "3D":
        pcs.append(pc_select(c_z, "z", 3))
    else:
        pc_select(c_z, "z", 3)  # drawn (disabled) so the layout does not jump when 3D is picked

    projections = {kind: get_projection(model, kind, start, stop) for kind in TABLE_KINDS}
    available = min(p.n_components for p in projections.values())
    if (start, stop) != tuple(sorted((lo, hi))):
        st.caption(f"PCA needs at least {MIN_RANGE} positions: showing positions {start}–{stop}.")
    if max(pcs) > available:
        st.caption(f"Positions {start}–{stop} have only {available} components: "
                   f"PC{max(pcs)} is shown as PC{available}.")
        pcs = [min(pc, available) for pc in pcs]
    range_marks = marks.within(start, stop) if marks else None
    if marks is not None and range_marks is not None and len(range_marks.positions) < len(
        marks.positions
    ):
        st.caption(f"{len(marks.positions) - len(range_marks.positions)} of your input's "
                   f"positions lie outside {start}–{stop} and are not drawn.")
    if range_marks is not None and len(range_marks.positions) > figs.MAX_TEXT_LABELS:
        st.caption(f"Your input has {len(range_marks.positions)} positions here: they are ringed; "
                   "hover a ring to read its token.")

    for column, kind in zip(st.columns(2), TABLE_KINDS, strict=True):
        with column:
            title = f"{figs.TABLE_NAMES[kind]}: positions {start}–{stop}"
            show_figure(figs.pca_figure(projections[kind], pcs, range_marks, title),
                        f"positions_pca_{kind}", key=f"pos_pca_{kind}")
    show_figure(figs.scree_figure(projections), "positions_scree", key="pos_scree")
    with st.expander("Download the tables and their PCA coordinates", icon=":material/download:"):
        rows = [str(p) for p in range(start, stop + 1)]
        for kind in TABLE_KINDS:
            st.markdown(f"**{figs.TABLE_NAMES[kind]}**: table ({table_shape}), then PCA "
                        f"coordinates of positions {start}–{stop}")
            download_matrix(f"position_table_{kind}", get_table(model, kind),
                            [str(p) for p in range(n_positions)], key=f"pos_dl_table_{kind}")
            download_matrix(f"position_pca_{kind}_{start}_{stop}", projections[kind].coords,
                            rows, key=f"pos_dl_pca_{kind}")
    with st.expander("The sinusoidal formula", icon=":material/function:"):
        st.latex(r"PE_{(p,\,2i)} = \sin\!\left(p / 10000^{2i/d}\right), \qquad "
                 r"PE_{(p,\,2i+1)} = \cos\!\left(p / 10000^{2i/d}\right)")
        st.caption(f"Here d = {hidden} and p = 0 … {n_positions - 1}: each pair of columns turns "
                   "at its own speed, from a full turn every 2π positions down to one every "
                   "10000·2π.")


def draw_cosines(marks: figs.InputMarks | None) -> None:
    """cos(p, q) heatmaps of a window of positions, the mean cosine by offset, downloads."""
    st.header("Cosine similarity between positions")
    explain(
        "Each cell is cos(p, q): 1 where two position vectors point the same way, 0 where they "
        "are unrelated. A dark red band along the diagonal means nearby positions look alike; the "
        "curve below averages the matrix along its diagonals, giving the mean cos(p, p + k) for "
        "positions k apart."
    )
    w_lo, w_hi = st.slider(
        "Window of positions", 0, n_positions - 1, (0, min(COSINE_WINDOW, n_positions) - 1),
        key="pos_cos_window", bind="query-params",
        help=f"Windows wider than {HEATMAP_SIDE} positions are thinned to every s-th position.",
    )
    w_start, w_stop = clamp_range(w_lo, w_hi, n_positions, min_len=2)
    sampled = sampled_positions(w_start, w_stop, HEATMAP_SIDE)
    for column, kind in zip(st.columns(2), TABLE_KINDS, strict=True):
        with column:
            title = f"{figs.TABLE_NAMES[kind]}: cos(p, q)"
            show_figure(figs.cosine_figure(get_cosine(model, kind), sampled, marks, title),
                        f"positions_cosine_{kind}", key=f"pos_cos_{kind}")
    stride = int(sampled[1] - sampled[0]) if len(sampled) > 1 else 1
    if stride > 1:
        st.caption(f"The {w_stop - w_start + 1} positions are drawn one in every {stride} "
                   f"({len(sampled)} × {len(sampled)} cells); each cell is still one exact "
                   "cosine. The downloads hold every position of the window.")
    if marks is not None and marks.span is not None:
        st.caption("The black box marks the positions your input occupies.")
    curves = {kind: get_offset_curve(model, kind, w_start, w_stop) for kind in TABLE_KINDS}
    show_figure(figs.offset_figure(curves, w_start, w_stop), "positions_offset_cosine",
                key="pos_offset")
    with st.expander("Download the cosine matrices and the offset curve",
                     icon=":material/download:"):
        window = [str(p) for p in range(w_start, w_stop + 1)]
        for kind in TABLE_KINDS:
            st.markdown(f"**{figs.TABLE_NAMES[kind]}**: cos(p, q) for positions "
                        f"{w_start}–{w_stop}")
            download_matrix(f"position_cosine_{kind}_{w_start}_{w_stop}",
                            get_cosine(model, kind)[w_start : w_stop + 1, w_start : w_stop + 1],
                            window, key=f"pos_dl_cos_{kind}")
        st.markdown("**Mean cos(p, p + k)**: one row per offset k, one column per table")
        download_matrix(f"position_offset_cosine_{w_start}_{w_stop}",
                        np.stack([curves[k] for k in TABLE_KINDS], axis=1),
                        [str(k) for k in range(w_stop - w_start + 1)], key="pos_dl_offset")


def draw_probe(marks: figs.InputMarks | None) -> None:
    """Wang & Chen's linear probe: error metrics, predictions scatter, per-fold table, download."""
    st.header("Position probe (Wang & Chen 2020)")
    explain(
        f"Can a straight-line formula read the index back from a position vector? A linear "
        f"regression is fitted on 4/5 of the positions and asked for the index of the rest, "
        f"{PROBE_FOLDS} times over (5-fold cross-validation, fixed shuffle); the mean absolute "
        "error says by how many positions it misses on average, and a large error means the "
        "index is not a clean linear function of the vector."
    )
    probes = {kind: get_probe(model, kind) for kind in TABLE_KINDS}
    m_learned, m_sin, m_base = st.columns(3)
    for column, kind in ((m_learned, "learned"), (m_sin, "sinusoidal")):
        probe = probes[kind]
        column.metric(
            f"{figs.TABLE_NAMES[kind]}: mean abs. error",
            f"{figs.format_positions(probe.mae)} positions",
            help=f"Rounded to whole positions, as in the paper's code: "
                 f"{figs.format_positions(probe.mae_rounded)}.",
        )
    m_base.metric("Guessing the mean index",
                  f"{figs.format_positions(probes['learned'].baseline_mae)} positions",
                  help="The error of a 'model' that ignores the vector.")
    show_figure(figs.probe_figure(probes, marks), "positions_probe", key="pos_probe")
    folds = pd.DataFrame(
        {
            "fold": np.arange(1, PROBE_FOLDS + 1),
            "positions held out": np.bincount(probes["learned"].fold, minlength=PROBE_FOLDS),
            **{f"MAE {figs.TABLE_NAMES[k]}": probes[k].fold_mae for k in TABLE_KINDS},
        }
    )
    st.dataframe(folds, hide_index=True, width="content",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in folds.columns if c.startswith("MAE")})
    with st.expander("Download the probe's predictions", icon=":material/download:"):
        download_matrix(
            "position_probe_predictions",
            np.stack([np.arange(n_positions), *(probes[k].predictions for k in TABLE_KINDS),
                      probes["learned"].fold], axis=1),
            [str(p) for p in range(n_positions)], key="pos_dl_probe",
        )
        st.caption("Columns: true position, predicted by the learned table, predicted by the "
                   "sinusoidal table, fold that held the position out.")


def draw_norms(marks: figs.InputMarks | None) -> None:
    """||p|| along the positions of both tables, with a download."""
    st.header("Norm of each position vector")
    explain(
        "The length ||p|| of each position vector says how loudly position p speaks when it is "
        "added to the word vector. Every row of the sinusoidal table has the same length, "
        "√(d/2); a learned table is free to make some positions, often the first, louder than "
        "the rest."
    )
    norms = {kind: get_norms(model, kind) for kind in TABLE_KINDS}
    for column, kind in zip(st.columns(2), TABLE_KINDS, strict=True):
        with column:
            show_figure(figs.norms_figure(norms[kind], kind, marks), f"positions_norms_{kind}",
                        key=f"pos_norms_{kind}")
    with st.expander("Download the norms", icon=":material/download:"):
        download_matrix("position_norms", np.stack([norms[k] for k in TABLE_KINDS], axis=1),
                        [str(p) for p in range(n_positions)], key="pos_dl_norms")
        st.caption("Columns: learned table, sinusoidal table.")


# Tab label -> the function drawing that section; the first is the default tab.
SECTIONS = {"PCA": draw_pca, "Cosines": draw_cosines, "Probe": draw_probe, "Norms": draw_norms}

# The input's marks (and its notices: empty text, truncation) are shared by every section, so
# they stay above the tabs; everything else is computed only for the open section.
marks = input_marks()
if marks is not None:
    where = f"positions 0–{marks.positions[-1]}" if len(marks.positions) > 1 else "position 0"
    st.markdown(
        f"Position table: **{table_shape}**. Your input fills **{where}**; in the charts its "
        f"positions are ringed and labelled with their tokens ({figs.segment_legend(marks)})."
    )
else:
    st.markdown(f"Position table: **{table_shape}**.")

section, area = open_section(list(SECTIONS), key=SECTION_KEY)
with area:
    SECTIONS[section](marks)
