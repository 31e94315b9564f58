"""Caching for the Pairs page, on top of components.cache.

One pair: A and B each run alone (the shared analysis cache, under the same key the Similarity
page uses for them), and the token-pair split per layer in a ``results_cache``.

Many pairs: a list runs as a job in a thread of its own (``PairJob``), on a board held in
``st.cache_resource`` (``get_job_board``) and keyed on the model and a hash of the parsed pairs, so
every session that asks for the same list on the same model sees the same job, and a rerun with
a list already compared costs nothing. The page polls a running job from a fragment; a worker
thread never calls Streamlit (it has no script run context).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components import budget
from components.cache import MODEL_CACHE_ENTRIES, get_analysis, get_model, results_cache
from components.input_key import InputKey
from core import Analysis, ModelBundle, compare_pairs
from core.similarity.pair_lists import Agreement, PairList, read_file, read_text, score_agreement
from core.similarity.pairs import PairContributions, contributions_of, own_recipe
from core.similarity.sentences import encoder_max_length
from pages.pairs.figures import (
    UNKNOWN,
    curve_figure,
    disagree_table,
    scatter_figure,
    shares_figure,
)

FIGURES_KEPT = 16     # one pair's three small figures, per layer and language
SHARE = 0.02          # of the results budget: one n x m matrix and a few vectors an entry
FINISHED_JOBS = 8     # results of this many lists stay on the board (2,000 rows ~1 MB each)
LISTS_SHARE = 0.05    # of the results budget, for parsed lists (a list is at most 1 MB)
_LOG = logging.getLogger(__name__)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_encoder_max_length(model_name: str) -> int | None:
    """How many tokens sentence-transformers reads for this model (None: the model's limit)."""
    return encoder_max_length(model_name)


@st.cache_resource(max_entries=MODEL_CACHE_ENTRIES, show_spinner=False)
def get_own_recipe(model_name: str) -> bool:
    """Whether mean pooling + normalising is the model's own sentence vector."""
    return own_recipe(model_name)


def get_alone(model_name: str, text: str) -> Analysis:
    """One sentence on its own, cut where sentence-transformers would cut it: the same key as
    the Similarity page's sentences, so the two pages share one result."""
    return get_analysis(InputKey(model_name, text, None, get_encoder_max_length(model_name)))


@results_cache("pairs: contributions", SHARE)
def get_contributions(key: InputKey, layer: int | None) -> PairContributions:
    """A's and B's cosine at ``layer`` split per token pair (key.text_b must be set)."""
    bundle = get_model(key.model)
    return contributions_of(get_alone(key.model, key.text_a), get_alone(key.model, key.text_b),
                            layer, own=get_own_recipe(key.model),
                            unk_id=bundle.tokenizer.unk_token_id)


@dataclass(frozen=True)
class PairFigures:
    """One pair's interactive figures at one layer, in one language. Never mutated:
    st.plotly_chart reads a copy (Figure.to_dict)."""
    curve: go.Figure
    shares_a: go.Figure
    shares_b: go.Figure


# Built once per pair, layer and language: plotly's figure validation was most of a rerun's
# server time, and a new sentence in the sidebar redraws the same pair on the Many pairs tab.
@functools.lru_cache(maxsize=FIGURES_KEPT)
def get_pair_figures(key: InputKey, layer: int, language: str) -> PairFigures:
    """``language`` is the run's (components.i18n.language()): part of the key only."""
    contrib = get_contributions(key, layer)
    return PairFigures(curve_figure(contrib), shares_figure(contrib, "a"),
                       shares_figure(contrib, "b"))


# --- lists of pairs ------------------------------------------------------------------------------
# Keyed on the text or bytes themselves: a str or bytes object caches its own hash, and the
# session keeps the same object from run to run, so a hit costs no pass over a megabyte. Bounded
# by the bytes the parsed pairs hold, with the other per-input results (components.budget).
_PARSED = budget.ResultStore("pairs: parsed lists", share=LISTS_SHARE, heavy=False)


def parse_text(text: str) -> PairList:
    return _PARSED.get_or_compute(("text", text), lambda: read_text(text))


def parse_file(data: bytes) -> PairList:
    return _PARSED.get_or_compute(("file", data), lambda: read_file(data))


@dataclass
class PairJob:
    """One list of pairs being compared (or compared) on one model."""

    model: str
    pairs: PairList
    done: int = 0                 # sentences encoded so far
    total: int = 0                # distinct sentences in the list
    frame: pd.DataFrame | None = None
    failed: bool = False
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0          # how long the run took, once finished
    finished: threading.Event = field(default_factory=threading.Event)
    views: dict[str, ScoreView | None] = field(default_factory=dict)   # by language

    def report(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    def run(self, bundle: ModelBundle) -> None:
        try:
            frame = compare_pairs(bundle, self.pairs.pairs, progress=self.report)
            self.frame = result_table(frame, self.pairs, unknown_counts(bundle, self.pairs))
        except Exception:   # noqa: BLE001 - the page says it failed; the server log says why
            _LOG.exception("comparing %d pairs on %s failed", len(self.pairs.pairs), self.model)
            self.failed = True
        finally:
            self.seconds = time.monotonic() - self.started
            self.finished.set()


@dataclass(frozen=True)
class ScoreView:
    """The finished list against its scores, in one language: built once, never mutated."""
    agreement: Agreement
    scatter: go.Figure
    disagree: pd.DataFrame


def get_score_view(job: PairJob, language: str) -> ScoreView | None:
    """The agreement, scatter and most-disagreeing pairs of a finished job with scores (None
    with too few scores); ``language`` is the run's, part of the key only."""
    if language not in job.views:
        frame = job.frame
        agreement = score_agreement(frame["cosine"].tolist(),
                                    [None if pd.isna(s) else float(s) for s in frame["score"]])
        job.views[language] = None if agreement is None else ScoreView(
            agreement, scatter_figure(frame, agreement, job.model),
            disagree_table(frame, agreement))
    return job.views[language]


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


class JobBoard:
    """The jobs of every session of this server, the finished ones bounded in number."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[tuple[str, str], PairJob] = OrderedDict()

    def submit(self, model: str, pairs: PairList) -> PairJob:
        """The job comparing ``pairs`` on ``model``: the one already there, or a new one."""
        key = (model, pairs.key())
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not job.failed:
                self._jobs.move_to_end(key)
                return job
            job = self._jobs[key] = PairJob(model, pairs)
            self._trim()
        threading.Thread(target=job.run, args=(get_model(model),), daemon=True,
                         name=f"pairs {len(pairs.pairs)}").start()
        return job

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if not j.running]
        for key in finished[:max(0, len(finished) - FINISHED_JOBS)]:
            del self._jobs[key]


@st.cache_resource(show_spinner=False)
def get_job_board() -> JobBoard:
    return JobBoard()
