"""Positions: the learned position table next to the sinusoidal formula, and how much order each
one holds (PCA, cosine similarity, Wang & Chen's linear probe, norms).

Each of the four views is a tab and only the open tab's section runs: laying out all the plotly
figures at once made every rerun cost the browser about a second.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import streamlit as st

from components.analysis_view import model_of, show_notices
from components.cache import get_encoding
from components.downloads import download_matrix
from components.explain import explain, page_header
from components.heatmap import show_figure
from components.heatmap_image import exact_toggle
from components.i18n import N_, _, language, ngettext
from components.input_key import InputKey
from components.inputs import shared_inputs
from components.labels import markdown_template, markdown_text
from components.pickers import count_axis
from components.picture_switcher import Axis, Drawn, picture_slider, with_words
from components.sections import Section, draw_sections, run_part
from core import ExplorerError
from core.positions import (
    MIN_RANGE,
    PROBE_FITS,
    PROBE_FOLDS,
    TABLE_KINDS,
    ProbeFit,
    ProbeResult,
    TableKind,
    clamp_range,
    sampled_positions,
)
from pages.positions import cache, pictures
from pages.positions import figures as figs
from pages.positions.records import CosineSettings, PcaSettings, PositionsContext

TITLE = N_("Positions")
EXPLANATION = N_(
    "BERT adds a learned vector to every token according to its position: the token at position "
    "p gets row p of `embeddings.position_embeddings.weight`, whatever the word. The original "
    "Transformer computed these vectors with sines and cosines instead (Vaswani et al. 2017); "
    "every tab below puts the learned table (left) beside a sinusoidal table of the same size "
    "(right) and asks how much order each one holds."
)
NO_INPUT = N_("The position tables do not depend on the sentence, so they are shown anyway, "
              "without your tokens.")

# URL keys (shared links use them: keep names and values). The open tab is not "pos_view":
# that already holds the PCA's 2D/3D choice.
SECTION_KEY = "pos_section"
RANGE_KEY = "pos_range"
COUNT_KEY = "pos_count"   # the PCA's first positions, switched in the browser
FREE_KEY = "pos_free"     # "Choose any range": the two-ended slider instead
VIEW_KEY = "pos_view"
EXACT_KEY = "pos_exact"   # the PCA tab's pictures -> interactive figures
PC_KEYS = {axis: f"pos_pc_{axis}" for axis in "xyz"}
COSINE_WINDOW_KEY = "pos_cos_window"

PC_CHOICES = list(range(1, 11))   # components offered for the axes
VIEWS = ["2D", "3D"]
COSINE_WINDOW = 128               # default window of the cosine heatmap
HEATMAP_SIDE = 128                # larger windows are thinned to this many rows and columns


# --- the PCA tab -------------------------------------------------------------------------------


def pca_settings(n_positions: int) -> PcaSettings:
    """View and the three axis pickers in four columns (five columns collapsed the pickers at
    1024 px), the two switches, then the range: in the 2D pictures, a picture switcher over
    the first 32, 64, ... positions and the whole table (draw_pca_counts, drawn later); with
    "Choose any range", exact values or the 3D view, the two-ended slider of any range.

    The switcher's values are a few fixed counts because each value's pictures are sent to the
    browser: one range's (both tables' PCA and the scree) are 79 kB at 0-511, 19 kB at 0-31,
    and every value of the slider's lower end alone (upper at 511) would be about 25 MB and 22 s
    of PCA and drawing (measured on every 32nd); the five counts' are 125 kB with the style
    sent once, 32 kB packed (bench/positions_bench.py, the default sentence). A
    link that carries a range (``pos_range``, every link made before the switcher) opens with
    "Choose any range" on, on that range."""
    c_view, *c_axes = st.columns(4, vertical_alignment="bottom")
    view = c_view.segmented_control(_("View"), VIEWS, default="2D", required=True,
                                    key=VIEW_KEY, bind="query-params") or "2D"
    pcs = []
    for column, axis, default in zip(c_axes, "xyz", (1, 2, 3), strict=True):
        pc = column.selectbox(
            _("{axis} axis").format(axis=axis), PC_CHOICES, index=default - 1,
            key=PC_KEYS[axis], bind="query-params", format_func=lambda pc: f"PC{pc}",
            disabled=axis == "z" and view != "3D",   # drawn anyway: the layout does not jump
        )
        if axis != "z" or view == "3D":
            pcs.append(pc)
    c_exact, c_free = st.columns(2)
    exact = exact_toggle(EXACT_KEY, c_exact)
    # Interactive figures are drawn one range a run: they always take the slider.
    free = exact or view == "3D" or bool(c_free.toggle(
        _("Choose any range"), value=RANGE_KEY in st.query_params, key=FREE_KEY,
        bind="query-params",
        help=_("A slider with two ends instead of the first positions: any start and end, each "
               "change drawn anew (it takes a moment longer).")))
    if view == "3D" and not exact:
        st.caption(_("The 3D view is always an interactive figure: drag it to turn it."))
    if not free:
        return PcaSettings((0, n_positions - 1), 0, n_positions - 1, view, tuple(pcs), exact,
                           free=False)
    lo, hi = st.slider(
        _("Positions to project"), 0, n_positions - 1, (0, n_positions - 1), key=RANGE_KEY,
        bind="query-params",
        help=_("PCA is fitted on these positions only (at least {n}).").format(n=MIN_RANGE),
    )
    start, stop = clamp_range(lo, hi, n_positions)
    return PcaSettings((lo, hi), start, stop, view, tuple(pcs), exact)


def range_notes(ctx: PositionsContext, start: int, stop: int, pcs: tuple[int, ...],
                available: int) -> tuple[list[str], tuple[int, ...]]:
    """What to say about positions start..stop: components asked for beyond those it has, the
    input's positions outside it, rings without labels; and the components used."""
    notes = []
    if max(pcs) > available:
        notes.append(ngettext(
            "Positions {start}–{stop} have only {n} component: PC{asked} is shown as PC{shown}.",
            "Positions {start}–{stop} have only {n} components: PC{asked} is shown as PC{shown}.",
            available).format(start=start, stop=stop, n=available,
                                               asked=max(pcs), shown=available))
        pcs = tuple(min(pc, available) for pc in pcs)
    marks = ctx.marks.within(start, stop) if ctx.marks else None
    if ctx.marks is not None and marks is not None and len(marks.positions) < len(
        ctx.marks.positions
    ):
        notes.append(_("{n} of your input's positions lie outside {start}–{stop} and are not "
                       "drawn.").format(n=len(ctx.marks.positions) - len(marks.positions),
                                        start=start, stop=stop))
    if marks is not None and len(marks.positions) > figs.MAX_TEXT_LABELS:
        notes.append(ngettext(
            "Your input has {n} position here: it is ringed; hover the ring to read its token.",
            "Your input has {n} positions here: they are ringed; hover a ring to read its token.",
            len(marks.positions)).format(n=len(marks.positions)))
    return notes, pcs


def pca_notes(ctx: PositionsContext, settings: PcaSettings, available: int) -> tuple[int, ...]:
    """Say why the figure shows other positions or components than asked; the components used."""
    start, stop = settings.start, settings.stop
    if (start, stop) != tuple(sorted(settings.asked)):
        explain(_("PCA needs at least {n} positions: showing positions {start}–{stop}.")
                .format(n=MIN_RANGE, start=start, stop=stop))
    notes, pcs = range_notes(ctx, start, stop, settings.pcs, available)
    for note in notes:
        explain(note)
    return pcs


def draw_pca(ctx: PositionsContext) -> None:
    """PCA of a range of positions of both tables, the scree plot, downloads and the formula."""
    st.header(_("PCA of the position table"))
    explain(_(
        "Each position vector has hundreds of numbers; PCA finds the directions along which the "
        "chosen positions differ most and draws each position by its coordinates on two or three "
        "of them, coloured by its index. A smooth path means neighbouring positions have similar "
        "vectors; the sinusoid's path is smooth by construction, the learned one only if training "
        "made it so."
    ))
    # Its own fragment: the range, view and axes redraw the figures, not the text around them.
    run_part(draw_pca_view, ctx)
    draw_formula(ctx)


def draw_pca_view(ctx: PositionsContext) -> None:
    """The PCA settings, both tables' projections, the scree plot and the downloads."""
    settings = pca_settings(ctx.n_positions)
    if not settings.free:
        counts = figs.first_counts(ctx.n_positions)
        # Each count's picture is drawn when sent and kept in the Drawn made here, once for the
        # settings: the switcher's own fragment (a move's report) reruns with it and only
        # redraws the downloads.
        pcs = settings.pcs
        run_part(draw_pca_counts, ctx, counts,
                 Drawn(lambda i: count_picture(ctx, counts[i], pcs)))
        return
    start, stop = settings.start, settings.stop
    projections = {kind: cache.get_projection(ctx.model, kind, start, stop)
                   for kind in TABLE_KINDS}
    pcs = pca_notes(ctx, settings, min(p.n_components for p in projections.values()))
    marks = ctx.marks.within(start, stop) if ctx.marks else None
    names = ctx.names()
    subtitle = _("positions {start}–{stop}").format(start=start, stop=stop)
    if settings.interactive:
        for column, kind in zip(st.columns(2), TABLE_KINDS, strict=True):
            with column:
                base = cache.get_pca_base(ctx.model, kind, start, stop, tuple(pcs),
                                          names[kind], subtitle)
                marks_trace = figs.pca_marks_trace(projections[kind], pcs, marks)
                show_figure(figs.with_trace(base, marks_trace), f"positions_pca_{kind}",
                            key=f"pos_pca_{kind}")
        show_figure(cache.get_scree(ctx.model, start, stop, language()), "positions_scree",
                    key="pos_scree")
    else:   # pictures first: a plotly figure was most of a rerun in the browser
        for column, picture in zip(st.columns(2), table_pictures(ctx, start, stop, pcs),
                                   strict=True):
            column.html(picture)
        st.html(cache.get_scree_picture(ctx.model, start, stop, language()))
    draw_pca_downloads(ctx, projections, start, stop)


def table_pictures(ctx: PositionsContext, start: int, stop: int,
                   pcs: tuple[int, ...]) -> list[str]:
    """Both tables' PCA pictures of positions start..stop with the input's rings (cached
    without them: a new sentence only adds its marks)."""
    marks = ctx.marks.within(start, stop) if ctx.marks else None
    names = ctx.names()
    subtitle = _("positions {start}–{stop}").format(start=start, stop=stop)
    found = []
    for kind in TABLE_KINDS:
        base = cache.get_pca_picture(ctx.model, kind, start, stop, pcs, names[kind], subtitle,
                                     language())
        marks_html = pictures.pca_marks(cache.get_projection(ctx.model, kind, start, stop), pcs,
                                        marks)
        found.append(pictures.pca_picture(base, marks_html, f"positions_pca_{kind}"))
    return found


def count_picture(ctx: PositionsContext, count: int, pcs: tuple[int, ...]) -> str:
    """What the tab draws for positions 0..count-1 as one picture: both tables' PCA side by side
    over the scree, under the notes that depend on the count (they switch with it)."""
    stop = count - 1
    available = min(cache.get_projection(ctx.model, kind, 0, stop).n_components
                    for kind in TABLE_KINDS)
    notes, shown = range_notes(ctx, 0, stop, pcs, available)
    picture = pictures.range_picture(table_pictures(ctx, 0, stop, shown),
                                     cache.get_scree_picture(ctx.model, 0, stop, language()),
                                     "positions_pca")
    return with_words(" ".join(notes), picture) if notes else picture


def count_slider(counts: list[int], n_positions: int) -> Axis[int]:
    """The count slider's values: "first 64" ... "all 512"."""
    return count_axis(COUNT_KEY, counts, n_positions, _("Positions to project"), help=_(
        "PCA is fitted on the first positions of the table only; drag or use the arrow keys."))


def draw_pca_counts(ctx: PositionsContext, counts: list[int], count_pictures: Drawn) -> None:
    """The switcher over the first positions' pictures (counts[i]'s at index i, drawn when
    sent), switched in the browser (components.picture_switcher); a move reports the
    count to this fragment, which redraws the downloads of the positions shown."""
    count = picture_slider(count_slider(counts, ctx.n_positions), count_pictures)
    projections = {kind: cache.get_projection(ctx.model, kind, 0, count - 1)
                   for kind in TABLE_KINDS}
    draw_pca_downloads(ctx, projections, 0, count - 1)


def draw_pca_downloads(ctx: PositionsContext, projections: dict, start: int, stop: int) -> None:
    with st.expander(_("Download the tables and their PCA coordinates"),
                     icon=":material/download:"):
        rows = [str(p) for p in range(start, stop + 1)]
        for kind, name in ctx.names().items():
            st.markdown(_("**{table}**: table ({shape}), then PCA coordinates of positions "
                          "{start}–{stop}").format(table=markdown_text(name), shape=ctx.shape,
                                                   start=start, stop=stop))
            download_matrix(f"position_table_{kind}", cache.get_table(ctx.model, kind),
                            [str(p) for p in range(ctx.n_positions)], key=f"pos_dl_table_{kind}")
            download_matrix(f"position_pca_{kind}_{start}_{stop}", projections[kind].coords,
                            rows, key=f"pos_dl_pca_{kind}")


def draw_formula(ctx: PositionsContext) -> None:
    with st.expander(_("The sinusoidal formula"), icon=":material/function:"):
        # One line each, so neither is cut off on a 1024-pixel screen.
        st.latex(r"PE_{(p,\,2i)} = \sin\!\left(p / 10000^{2i/d}\right)")
        st.latex(r"PE_{(p,\,2i+1)} = \cos\!\left(p / 10000^{2i/d}\right)")
        explain(_("Here d = {d} and p = 0 … {last}: each pair of columns turns at its own speed, "
                  "from a full turn every 2π positions down to one every 10000·2π.")
                .format(d=ctx.hidden, last=ctx.n_positions - 1))


# --- the cosine tab ----------------------------------------------------------------------------
def cosine_settings(n_positions: int) -> CosineSettings:
    lo, hi = st.slider(
        _("Window of positions"), 0, n_positions - 1, (0, min(COSINE_WINDOW, n_positions) - 1),
        key=COSINE_WINDOW_KEY, bind="query-params",
        help=_("Windows wider than {n} positions are thinned to every s-th position.")
        .format(n=HEATMAP_SIDE),
    )
    return CosineSettings(*clamp_range(lo, hi, n_positions, min_len=2))


def draw_cosines(ctx: PositionsContext) -> None:
    """cos(p, q) heatmaps of a window of positions, the mean cosine by offset, downloads."""
    st.header(_("Cosine similarity between positions"))
    explain(_(
        "Each cell is cos(p, q): 1 where two position vectors point the same way, 0 where they "
        "are unrelated. A dark red band along the diagonal means nearby positions look alike; the "
        "curve below averages the matrix along its diagonals, giving the mean cos(p, p + k) for "
        "positions k apart."
    ))
    window = cosine_settings(ctx.n_positions)
    start, stop = window.start, window.stop
    sampled = sampled_positions(start, stop, HEATMAP_SIDE)
    names = ctx.names()
    for column, kind in zip(st.columns(2), TABLE_KINDS, strict=True):
        with column:
            fig = figs.position_cosine_figure(cache.get_cosine(ctx.model, kind), sampled,
                                              ctx.marks, names[kind], "cos(p, q)")
            show_figure(fig, f"positions_cosine_{kind}", key=f"pos_cos_{kind}")
    stride = int(sampled[1] - sampled[0]) if len(sampled) > 1 else 1
    if stride > 1:
        explain(_("The {n} positions are drawn one in every {stride} ({side} × {side} cells); "
                  "each cell is still one exact cosine. The downloads hold every position of the "
                  "window.").format(n=stop - start + 1, stride=stride, side=len(sampled)))
    if ctx.marks is not None and ctx.marks.span is not None:
        explain(_("The black box marks the positions your input occupies."))
    curves = {kind: cache.get_offset_curve(ctx.model, kind, start, stop) for kind in TABLE_KINDS}
    show_figure(figs.offset_figure(curves, names, start, stop), "positions_offset_cosine",
                key="pos_offset")
    draw_cosine_downloads(ctx, curves, start, stop)


def draw_cosine_downloads(ctx: PositionsContext, curves: dict, start: int, stop: int) -> None:
    with st.expander(_("Download the cosine matrices and the offset curve"),
                     icon=":material/download:"):
        window = [str(p) for p in range(start, stop + 1)]
        for kind, name in ctx.names().items():
            st.markdown(_("**{table}**: cos(p, q) for positions {start}–{stop}")
                        .format(table=markdown_text(name), start=start, stop=stop))
            download_matrix(f"position_cosine_{kind}_{start}_{stop}",
                            cache.get_cosine(ctx.model, kind)[start : stop + 1, start : stop + 1],
                            window, key=f"pos_dl_cos_{kind}")
        st.markdown(_("**Mean cos(p, p + k)**: one row per offset k, one column per table"))
        download_matrix(f"position_offset_cosine_{start}_{stop}",
                        np.stack([curves[k] for k in TABLE_KINDS], axis=1),
                        [str(k) for k in range(stop - start + 1)], key="pos_dl_offset")


# --- the probe tab -----------------------------------------------------------------------------
PROBE_WHY = N_(
    "Why the two fits differ: each training fold holds only {train} positions for {inputs} "
    "inputs, so the paper's plain regression has almost one weight per training row; it nearly "
    "interpolates the training positions and misses the held-out ones of the learned table by "
    "{plain} positions on average. Ridge adds a penalty α·‖w‖² (α = {alpha} here, chosen by "
    "cross-validation inside each training fold) that shrinks the weights, and misses by {ridge}."
)


def draw_probe(ctx: PositionsContext) -> None:
    """Wang & Chen's linear probe, plain and ridge: MAE table, why they differ, predictions
    scatter, per-fold table, download."""
    st.header(_("Position probe (Wang & Chen 2020)"))
    explain(_(
        "Can a straight-line formula read the index back from a position vector? A linear "
        "regression is fitted on 4/5 of the positions and asked for the index of the rest, "
        "{folds} times over (5-fold cross-validation, fixed shuffle); the mean absolute error "
        "says by how many positions it misses on average, and a large error means the index is "
        "not a clean linear function of the vector."
    ).format(folds=PROBE_FOLDS))
    probes = {(kind, fit): cache.get_probe(ctx.model, kind, fit)
              for kind in TABLE_KINDS for fit in PROBE_FITS}
    names = ctx.names()
    st.table(figs.probe_summary(probes, names), hide_index=True)
    learned = {fit: probes["learned", fit] for fit in PROBE_FITS}
    explain(_(PROBE_WHY).format(
        train=learned["plain"].n_train, inputs=learned["plain"].n_inputs,
        plain=figs.format_positions(learned["plain"].mae),
        alpha=figs.format_alphas(learned["ridge"].alphas),
        ridge=figs.format_positions(learned["ridge"].mae)))
    show_figure(figs.probe_figure(probes, names, ctx.marks), "positions_probe", key="pos_probe")
    outside = figs.probe_outside_note(probes, names)
    if outside:
        explain(markdown_text(outside))
    explain(_("Mean absolute error of each fold, in positions:"))
    folds = figs.probe_fold_table(probes, PROBE_FOLDS)
    # A static table wraps its headers to the page's width (a data grid scrolled its last column
    # out of sight at 1024 px).
    st.table(folds.style.format("{:.3f}", subset=list(folds.columns[2:])), hide_index=True)
    draw_probe_download(ctx, probes)


def draw_probe_download(ctx: PositionsContext,
                        probes: Mapping[tuple[TableKind, ProbeFit], ProbeResult]) -> None:
    with st.expander(_("Download the probe's predictions"), icon=":material/download:"):
        download_matrix(
            "position_probe_predictions",
            np.stack([np.arange(ctx.n_positions), *(p.predictions for p in probes.values()),
                      probes["learned", "plain"].fold], axis=1),
            [str(p) for p in range(ctx.n_positions)], key="pos_dl_probe",
        )
        explain(_("Columns: true position; predicted by the learned table (plain, then ridge); "
                  "predicted by the sinusoidal table (plain, then ridge); fold that held the "
                  "position out."))


# --- the norms tab -----------------------------------------------------------------------------
def draw_norms(ctx: PositionsContext) -> None:
    """||p|| along the positions of both tables, with a download."""
    st.header(_("Norm of each position vector"))
    explain(_(
        "The length ||p|| of each position vector says how loudly position p speaks when it is "
        "added to the word vector. Every row of the sinusoidal table has the same length, "
        "√(d/2); a learned table is free to make some positions, often the first, louder than "
        "the rest."
    ))
    norms = {kind: cache.get_norms(ctx.model, kind) for kind in TABLE_KINDS}
    names = ctx.names()
    for column, kind in zip(st.columns(2), TABLE_KINDS, strict=True):
        with column:
            fig = figs.position_norms_figure(norms[kind], names[kind], figs.TABLE_COLOURS[kind],
                                             ctx.marks)
            show_figure(fig, f"positions_norms_{kind}", key=f"pos_norms_{kind}")
    with st.expander(_("Download the norms"), icon=":material/download:"):
        download_matrix("position_norms", np.stack([norms[k] for k in TABLE_KINDS], axis=1),
                        [str(p) for p in range(ctx.n_positions)], key="pos_dl_norms")
        explain(_("Columns: learned table, sinusoidal table."))


# Tab label -> the function drawing that section; the first is the default tab.
SECTIONS = (
    Section(label=N_("PCA"), draw=draw_pca),
    Section(label=N_("Cosines"), draw=draw_cosines),
    Section(label=N_("Probe"), draw=draw_probe),
    Section(label=N_("Norms"), draw=draw_norms),
)


def input_marks(key: InputKey) -> figs.InputMarks | None:
    """The current input's positions and tokens; None (with a message) when there is no input."""
    try:
        enc = get_encoding(key)
    except ExplorerError as exc:
        st.info(markdown_template(_(exc.template), **exc.params) + " " + _(NO_INPUT),
                icon=":material/edit_note:")
        return None
    show_notices(enc)
    return figs.InputMarks.from_encoding(enc)


def draw_table_line(ctx: PositionsContext) -> None:
    """The table's size, and where the input sits in it (above the tabs: every tab uses it)."""
    marks = ctx.marks
    if marks is None:
        st.markdown(_("Position table: **{shape}**.").format(shape=ctx.shape))
        return
    where = (_("positions 0–{last}").format(last=marks.positions[-1])
             if len(marks.positions) > 1 else _("position 0"))
    st.markdown(_("Position table: **{shape}**. Your input fills **{where}**; in the charts its "
                  "positions are ringed and labelled with their tokens where there is room "
                  "({legend}); a ring without a label names its token under the pointer.")
                .format(shape=ctx.shape, where=where, legend=figs.segment_legend(marks)))


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    bundle = model_of(key)
    ctx = PositionsContext(key=key, bundle=bundle, marks=input_marks(key))
    draw_table_line(ctx)
    draw_sections(SECTIONS, SECTION_KEY, ctx)


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
