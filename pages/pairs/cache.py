"""Caching for the Pairs page, on top of components.cache.

One pair: A and B each run alone (the shared analysis cache, under the same key the Similarity
page uses for them), the token-pair split per layer and its figures in ``results_cache``s.

Many pairs: the table read from the box or the file (``get_table``, keyed on the text or bytes
themselves: a str or bytes object caches its own hash), the pairs of the columns picked
(``get_pair_list``), and the comparison, which runs as a job on the process's one executor
(serving.jobs) keyed on the model and a hash of the pairs, so every session that asks for the same
list on the same model shares one run and one progress. Its finished table is kept in a
``results_cache`` (``get_compared``), and so are the agreement with the scores and its figures
(``get_score_view``). A worker never calls Streamlit; the page polls the job from a fragment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.cache import MODEL_CACHE_ENTRIES, get_analysis, get_model, results_cache
from components.input_key import InputKey
from core import Analysis, ModelBundle, compare_pairs
from core.sentence_files.reader import Table, read_table
from core.similarity.pair_lists import Agreement, PairList, pairs_from, score_agreement
from core.similarity.pairs import (
    PairContributions,
    WordContributions,
    contributions_of,
    own_cosine,
    recipe_of,
)
from core.similarity.recipe import Recipe
from pages.pairs.figures import (
    UNKNOWN,
    disagree_table,
    scatter_figure,
    shares_html,
)
from pages.pairs.pictures import curve_picture
from pages.pairs.records import ListSource, SortOrder
from serving import jobs

SHARE = 0.02          # of the results budget: one n x m matrix and a few vectors an entry
FIGURES_SHARE = 0.01  # one pair's three small figures (plotly objects, a few kB each)
TABLES_SHARE = 0.05   # tables read from pasted text or files (at most 10 MB of text each)
LISTS_SHARE = 0.03    # the pairs taken out of them
RESULTS_SHARE = 0.10  # compared lists: 20,000 pairs with 7 layers are ~6 MB


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_recipe(model_name: str) -> Recipe:
    """The model's own sentence recipe (mean pooling, not its own, when it has none)."""
    return recipe_of(model_name)


def get_own_recipe(model_name: str) -> bool:
    """Whether mean pooling alone is the model's own sentence vector (then the split is exact)."""
    recipe = get_recipe(model_name)
    return recipe.own and recipe.mean_only


def get_alone(model_name: str, text: str) -> Analysis:
    """One sentence on its own, cut where sentence-transformers would cut it: the same key as
    the Similarity page's sentences, so the two pages share one result."""
    return get_analysis(InputKey(model_name, text, None, get_recipe(model_name).max_seq_length))


@results_cache("pairs: contributions", SHARE)
def get_contributions(key: InputKey, layer: int | None) -> PairContributions:
    """A's and B's cosine at ``layer`` split per token pair (key.text_b must be set), with the
    model's own figure by its own recipe."""
    bundle = get_model(key.model)
    recipe = get_recipe(key.model)
    text_a, text_b = key.pair()
    return contributions_of(get_alone(key.model, text_a), get_alone(key.model, text_b),
                            layer, own=recipe.own and recipe.mean_only,
                            unk_id=bundle.tokenizer.unk_token_id, recipe=recipe,
                            model_cosine=own_cosine(bundle, text_a, text_b, recipe))


@results_cache("pairs: contributions by word", SHARE)
def get_word_contributions(key: InputKey, layer: int | None) -> WordContributions:
    """The same split over A's words x B's words (core.words): each cell the sum of its
    pieces' cells, so it still adds up to the cosine."""
    return get_contributions(key, layer).by_word()


@dataclass(frozen=True)
class PairFigures:
    """One pair's figures at one layer, in one language, as page fragments (st.html): the
    cosine at every layer and each sentence's token shares."""
    curve: str
    shares_a: str
    shares_b: str


# Built once per pair, layer and language: a new sentence in the sidebar redraws the same pair
# on the Many pairs tab.
@results_cache("pairs: figures", FIGURES_SHARE, heavy=False)
def get_pair_figures(key: InputKey, layer: int, language: str) -> PairFigures:
    """``language`` is the run's (components.i18n.language()): part of the key only."""
    contrib = get_contributions(key, layer)
    return PairFigures(curve_picture(contrib), shares_html(contrib, "a"),
                       shares_html(contrib, "b"))


# --- lists of pairs ------------------------------------------------------------------------------

@results_cache("pairs: tables", TABLES_SHARE, heavy=False)
def get_table(model_name: str, source: ListSource) -> Table:
    """The table in the box or the file, every cell as written (core.sentence_files.reader).
    The same for every model; keyed on the model first, as every per-input result here is."""
    return read_table(source.data, source.name)


@results_cache("pairs: pair lists", LISTS_SHARE, heavy=False)
def get_pair_list(model_name: str, source: ListSource, columns: tuple[int, int, int | None],
                  skip_extra: bool = False) -> PairList:
    """The pairs of the columns (sentence A, sentence B, score or None; 0-based), lines with
    more fields than the columns read or, with ``skip_extra``, skipped."""
    return pairs_from(get_table(model_name, source), *columns, skip_extra=skip_extra)


def job_key(model: str, pairs: PairList) -> tuple[str, str, str]:
    return ("pairs", model, pairs.key())


def get_job(model: str, pairs: PairList) -> jobs.Job[pd.DataFrame]:
    """The shared job comparing ``pairs`` on ``model``: the one running or finished, or a new
    one on the process's executor."""
    bundle = get_model(model)    # loaded here, in the page's run, not in the worker

    def work(job: jobs.Job[pd.DataFrame]) -> pd.DataFrame:
        frame = compare_pairs(bundle, pairs.pairs, progress=job.report)
        return result_table(frame, pairs, unknown_counts(bundle, pairs))

    return jobs.submit(job_key(model, pairs), work, name=f"pairs {len(pairs.pairs)} {model}")


def held(model: str, pairs: PairList) -> bool:
    """Whether the compared table is in the results cache already (no job needed)."""
    return (model, pairs) in get_compared.store


@results_cache("pairs: compared lists", RESULTS_SHARE)
def get_compared(model: str, pairs: PairList) -> pd.DataFrame:
    """The finished comparison: one row per pair (line, a, b, score, cosine, layer_k, [UNK]).
    Waits for the shared job; the page asks only once it is done."""
    return get_job(model, pairs).result()


@dataclass(frozen=True)
class ScoreView:
    """The finished list against its scores, in one language: built once, never mutated."""
    agreement: Agreement
    scatter: go.Figure
    disagree: pd.DataFrame


@results_cache("pairs: score views", FIGURES_SHARE)
def get_score_view(model: str, pairs: PairList, language: str) -> ScoreView | None:
    """The agreement, scatter and most-disagreeing pairs of a compared list with scores (None
    with too few scores); ``language`` is the run's, part of the key only."""
    frame = get_compared(model, pairs)
    agreement = score_agreement(frame["cosine"].tolist(),
                                [None if pd.isna(s) else float(s) for s in frame["score"]])
    if agreement is None:
        return None
    return ScoreView(agreement, scatter_figure(frame, agreement, model),
                     disagree_table(frame, agreement))


@results_cache("pairs: table orders", FIGURES_SHARE, heavy=False)
def get_order(model: str, pairs: PairList, order: SortOrder) -> np.ndarray:
    """The row positions of the compared table in ``order`` (the table pages through them on
    the server, never sending every row to the browser)."""
    frame = get_compared(model, pairs)
    if order == SortOrder.COSINE_HIGH:
        keys = -frame["cosine"].to_numpy()
    elif order == SortOrder.COSINE_LOW:
        keys = frame["cosine"].to_numpy()
    elif order == SortOrder.SCORE_HIGH and "score" in frame:
        keys = -frame["score"].fillna(-np.inf).to_numpy()
    elif order == SortOrder.GAP and "score" in frame:
        scored = frame["score"].notna()
        gap = (frame["cosine"].rank(pct=True) - frame["score"].rank(pct=True)).abs()
        keys = -gap.where(scored, -1.0).to_numpy()
    else:
        return np.arange(len(frame))
    return np.argsort(keys, kind="stable")


def unknown_counts(bundle: ModelBundle, pairs: PairList) -> list[int]:
    """Per pair: the [UNK] tokens of A and B together (where the vocabulary lacks a word)."""
    unk = bundle.tokenizer.unk_token_id
    texts = [t for pair in pairs.pairs for t in pair]
    ids = bundle.tokenize(texts, add_special_tokens=False)["input_ids"]
    counts = [list(x).count(unk) for x in ids]
    return [counts[2 * i] + counts[2 * i + 1] for i in range(len(pairs.pairs))]


def result_table(frame: pd.DataFrame, pairs: PairList, unknown: list[int]) -> pd.DataFrame:
    """compare_pairs' table with the list's line numbers first, the scores after B and the
    [UNK] count of each pair last."""
    frame.insert(0, "line", list(pairs.lines))
    if pairs.has_scores:
        frame.insert(3, "score", [float("nan") if s is None else s for s in pairs.scores])
    frame[UNKNOWN] = unknown
    return frame
