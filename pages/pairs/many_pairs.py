"""Pairs, the Many pairs tab: every pair of a list through the model, the table of cosines, the
agreement with the list's scores, and one line of it token by token.

The list itself (where it comes from, its columns, what was skipped) is pages/pairs/list_reading.py.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from components.controls import whole_number
from components.downloads import safe_filename
from components.explain import explain
from components.heatmap import show_figure
from components.html_table import draw_table
from components.i18n import N_, _, language, ngettext
from components.job_progress import show_job
from components.labels import markdown_code, markdown_text
from components.sections import run_part
from core.sentence_files.reader import Table
from core.similarity import pair_lists as lists
from pages.pairs import cache
from pages.pairs.list_reading import (
    figures_cover,
    pick_columns,
    preview,
    read_source,
    read_summary,
    report_extra,
    report_list,
    report_refusal,
    set_widget,
    skip_extra_switch,
    state,
    widget,
)
from pages.pairs.one_pair import draw_pair, recipe_words
from pages.pairs.records import Context, ListSource, Picked, SortOrder

# URL keys (values of a shared link).
ROW_KEY, TABLE_KEY = "pr_row", "pr_table"
SORT_KEY, PAGE_KEY = "pr_sort", "pr_page"
PAGE_ROWS = 100                     # rows of the results table sent to the browser at once

SORT_LABELS = {
    SortOrder.LINE: N_("as in the list"), SortOrder.COSINE_HIGH: N_("cosine, highest first"),
    SortOrder.COSINE_LOW: N_("cosine, lowest first"),
    SortOrder.SCORE_HIGH: N_("score, highest first"),
    SortOrder.GAP: N_("model and scores disagree most first"),
}


def draw_many_pairs(ctx: Context) -> None:
    st.subheader(_("Many pairs: the model's cosine for each, against your scores"))
    source = read_source()
    if source is None:
        st.info(_("Paste pairs above, upload a file, or load the example set."),
                icon=":material/playlist_add:")
        return
    table = source if isinstance(source, Table) else cache.get_table(ctx.key.model, source)
    if table.refused is not None and not table.skipped:
        report_refusal(table)
        return
    kept = state()
    if table.refused is None and isinstance(source, ListSource):
        picked = pick_columns(table)
        skip, slot = skip_extra_switch(table) if table.extra_rows else (False, None)
        kept.picked = replace(picked, skip_extra=skip)
        parsed = cache.get_pair_list(ctx.key.model, source, kept.picked.columns, skip)
        read_summary(table, parsed, kept.picked)
        if slot is not None:
            report_extra(slot, table, parsed)
    else:
        kept.picked = Picked()
        parsed = lists.pairs_from(table, 0, 1, None)
    if not report_list(parsed, table):
        return
    model = ctx.key.model
    if not cache.held(model, parsed):
        # A short list finishes within the run's short wait: no progress card.
        compared = show_job(cache.get_job(model, parsed),
                            ngettext(
                                "Comparing {pairs} pair on {model}. Sentences encoded: {amount}.",
                                "Comparing {pairs} pairs on {model}. Sentences encoded: {amount}.",
                                len(parsed.pairs)),
                            _("The comparison stopped with an error. Try again, or a shorter "
                              "list."), pairs=f"{len(parsed.pairs):,}", model=model)
        if compared is None:
            return
    draw_results(ctx, parsed)


def draw_results(ctx: Context, parsed: lists.PairList) -> None:
    name = ctx.bundle.name
    frame = cache.get_compared(name, parsed)
    recipe = cache.get_recipe(name)
    explain(ngettext(
        "{n} pair compared by {model}: cosine is the model's own figure ({recipe}, A and B each "
        "run alone), layer_0 … layer_{last} the same recipe at every layer. Sort and page through "
        "the table below; click a row to open it.",
        "{n} pairs compared by {model}: cosine is the model's own figure ({recipe}, A and B each "
        "run alone), layer_0 … layer_{last} the same recipe at every layer. Sort and page through "
        "the table below; click a row to open it.",
        len(frame)).format(
        n=f"{len(frame):,}", model=markdown_text(name), recipe=recipe_words(recipe),
        last=ctx.bundle.config.num_hidden_layers))
    if not recipe.own:
        st.info(_("{model} has no sentence vector of its own: these cosines use the mean of "
                  "its token vectors, L2-normalised (all-MiniLM-L6-v2's recipe).").format(
            model=markdown_text(name)), icon=":material/info:")
    rows = draw_table_page(frame, parsed, name)
    st.download_button(_("Download the results (CSV)"), lambda: lists.results_csv(frame),
                       safe_filename(_("pair_cosines")) + ".csv", "text/csv",
                       icon=":material/download:", on_click="ignore", key="pr_csv")
    if parsed.has_scores:
        draw_agreement(frame, cache.get_score_view(name, parsed, language()), name, parsed)
    draw_row(ctx, frame, rows)


def draw_table_page(frame: pd.DataFrame, parsed: lists.PairList, model: str) -> pd.DataFrame:
    """One page of the table in the order picked: only that page's rows go to the browser."""
    orders = [o for o in SortOrder if parsed.has_scores or o not in (SortOrder.SCORE_HIGH,
                                                                     SortOrder.GAP)]
    pages = max(1, -(-len(frame) // PAGE_ROWS))
    if widget(SORT_KEY) is not None and widget(SORT_KEY) not in orders:
        set_widget(SORT_KEY, SortOrder.LINE)      # a list without scores now
    if widget(PAGE_KEY) is not None and widget(PAGE_KEY) not in range(1, pages + 1):
        set_widget(PAGE_KEY, 1)                   # a shorter list than before
    left, right = st.columns(2)
    order = left.selectbox(_("Order"), orders, key=SORT_KEY, bind="query-params",
                           format_func=lambda o: _(SORT_LABELS[o]))
    order = SortOrder(order or SortOrder.LINE)
    page = 1
    if pages > 1:
        page = right.selectbox(
            _("Rows"), list(range(1, pages + 1)), key=PAGE_KEY, bind="query-params",
            format_func=lambda p: f"{(p - 1) * PAGE_ROWS + 1:,}–{min(p * PAGE_ROWS, len(frame)):,}")
        page = int(page or 1)
    positions = cache.get_order(model, parsed, order)[(page - 1) * PAGE_ROWS:page * PAGE_ROWS]
    shown = frame.iloc[positions]
    number = {c: st.column_config.NumberColumn(format="%.3f") for c in frame.columns
              if c not in ("line", "a", "b", cache.UNKNOWN)}
    # The numbers first: at 1024 px the two sentences would push them out of sight.
    columns = ["line", *[c for c in ("score", "cosine") if c in frame], "a", "b", cache.UNKNOWN,
               *[c for c in frame.columns if c.startswith("layer_")]]
    st.dataframe(shown, hide_index=True, width="stretch", height=320, key=TABLE_KEY,
                 on_select=_pick_row, selection_mode="single-row", column_order=columns,
                 column_config={"line": st.column_config.NumberColumn(_("line"), format="%d"),
                                "a": st.column_config.TextColumn("A", width="medium"),
                                "b": st.column_config.TextColumn("B", width="medium"),
                                cache.UNKNOWN: st.column_config.NumberColumn(
                                    help=_("[UNK] tokens in A and B: words the model's "
                                           "vocabulary has no entry for.")),
                                **number})
    state().shown_lines = tuple(int(line) for line in shown["line"])
    return shown


def _pick_row() -> None:
    """A click on a row of the table opens its line (the table's on_select)."""
    selection = widget(TABLE_KEY)
    rows = selection.selection.rows if selection is not None else []   # type: ignore[attr-defined]
    lines = state().shown_lines
    if rows and rows[0] < len(lines):
        set_widget(ROW_KEY, float(lines[rows[0]]))


def draw_agreement(frame: pd.DataFrame, view: cache.ScoreView | None, model: str,
                   parsed: lists.PairList) -> None:
    if view is None:
        st.info(_("Scores need at least three pairs and more than one value to compare with."),
                icon=":material/info:")
        return
    st.markdown("**" + _("The model against your scores") + "**")
    agreement = view.agreement
    explain(_("Your scores run from {low} to {high}. Spearman's ρ compares the order of the "
              "pairs (1: the model ranks them exactly as the scores do), Pearson's r the "
              "straight-line fit. A cosine is not a score on your scale, and the two scales "
              "need not match, so read the order first.").format(
        low=f"{agreement.low:g}", high=f"{agreement.high:g}"))
    unknown = frame.loc[frame["score"].notna(), cache.UNKNOWN]
    if (unknown > 0).any():
        st.warning(_("{k} of the {n} scored pairs hold [UNK] tokens (in orange): {model}'s "
                     "vocabulary has no entry for those words (for Chinese, most characters), "
                     "and every [UNK] is the same vector, so such pairs look alike whatever "
                     "they say.").format(
            k=f"{int((unknown > 0).sum()):,}", n=f"{len(unknown):,}", model=markdown_text(model)),
            icon=":material/help:")
    first, second, third = st.columns(3)
    first.metric(_("scored pairs"), f"{agreement.n:,}")
    second.metric("Spearman ρ", f"{agreement.spearman:.3f}")
    third.metric("Pearson r", f"{agreement.pearson:.3f}")
    figures_cover(parsed, agreement.n)
    labels = agreement.labels
    if labels is not None:
        first, second, third = st.columns(3)
        first.metric("ROC AUC", f"{labels.auc:.3f}")
        second.metric(_("best accuracy"), f"{labels.accuracy:.1%}")
        third.metric(_("best threshold"), f"{labels.threshold:.3f}")
        explain(ngettext(
            "Your scores are labels, 0 or 1 ({pos} pair labelled 1, {neg} labelled 0). ROC AUC "
            "{auc}: take one pair labelled 1 and one labelled 0 at random; this is how often the "
            "model gives the 1 the higher cosine (0.5 is a coin toss, 1 never wrong). Calling "
            "every pair with a cosine of at least {t} a 1 gets {acc} of the labels right, the "
            "best any single cut does; always answering the commoner label gets {maj}.",
            "Your scores are labels, 0 or 1 ({pos} pairs labelled 1, {neg} labelled 0). ROC AUC "
            "{auc}: take one pair labelled 1 and one labelled 0 at random; this is how often the "
            "model gives the 1 the higher cosine (0.5 is a coin toss, 1 never wrong). Calling "
            "every pair with a cosine of at least {t} a 1 gets {acc} of the labels right, the "
            "best any single cut does; always answering the commoner label gets {maj}.",
            labels.positives).format(
            pos=f"{labels.positives:,}", neg=f"{labels.negatives:,}", auc=f"{labels.auc:.3f}",
            t=f"{labels.threshold:.3f}", acc=f"{labels.accuracy:.1%}",
            maj=f"{labels.majority:.1%}"))
    show_figure(view.scatter, _("cosine_vs_score"), key="pr_scatter")
    st.markdown("**" + _("The pairs that disagree most") + "**")
    explain(_("Largest gap between a pair's rank by cosine and its rank by score."))
    # Escaped HTML rather than a data grid: ten rows, and one grid fewer to lay out per rerun.
    draw_table(view.disagree, [""] * len(view.disagree), "pairs_disagree")


def draw_row(ctx: Context, frame: pd.DataFrame, shown: pd.DataFrame) -> None:
    """The token-pair view of the line picked (in the table or by number); none until one is:
    the view's figures would otherwise cost every rerun of a list nobody has opened yet."""
    st.markdown("**" + _("One pair of the list, token by token") + "**")
    last = int(frame["line"].max()) if len(frame) else 0
    asked = widget(ROW_KEY)
    if isinstance(asked, int | float) and asked > last:   # a shorter list than before
        set_widget(ROW_KEY, 0.0)
    line = whole_number(st, _("Line of the list to open (0: none)"), min_value=0,
                        max_value=last, value=0, key=ROW_KEY,
                        help=_("Or click a row of the table."))
    state().row = int(line)
    if line < 1:
        explain(_("Click a row of the table (or give its line) to see which token pairs make "
                  "its cosine."))
        return
    match = frame.index[frame["line"] == line]
    if not len(match):
        st.info(_("Line {line} holds no pair that was compared (it was skipped, or blank).")
                .format(line=line), icon=":material/info:")
        return
    picked = frame.loc[match[0]]
    explain(_("Line {line}: A {a} · B {b}").format(
        line=int(picked["line"]), a=markdown_code(preview(picked["a"])),
        b=markdown_code(preview(picked["b"]))))
    # Its own fragment: the layer slider and the view's toggles redraw the pair, not the list.
    run_part(draw_pair, ctx, str(picked["a"]), str(picked["b"]))


