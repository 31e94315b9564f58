"""The lesson's data: every cell of a lesson run once per model and sentence, shared by all
sessions (the outputs are PyTorch's own printouts, the same in every language)."""

from __future__ import annotations

import streamlit as st

from components.cache import get_model, results_cache
from components.input_key import InputKey
from components.two_models import get_default_corpus, map_job
from core import ExplorerError
from core.compare import LayerSimilarity, random_name
from core.lessons import EMBEDDING_CELLS, PARAMETER_CELLS, PRETRAINING_CELLS, CellOutput, run_cells
from core.pretraining import has_mlm_head, has_nsp_head
from serving import jobs
from serving.classpoll import PollStore, poll_from_environment

LESSON_CELLS = {"embedding": EMBEDDING_CELLS, "parameters": PARAMETER_CELLS,
                "pretraining": PRETRAINING_CELLS}


def lesson_cells(lesson: str, sentence: str) -> list[str]:
    """The lesson's cells with the sentence filled in, as the student types them."""
    return [cell.format(sentence=sentence) if "{sentence" in cell else cell
            for cell in LESSON_CELLS[lesson]]


@results_cache("lesson: cell outputs", share=0.02)
def get_lesson_outputs(key: InputKey, lesson: str) -> list[CellOutput]:
    """Every cell's output for the sentence ``key.text_a``, run in order in one namespace on
    the loaded model (the tutorial's code tokenises it its own way)."""
    return run_cells(get_model(key.model), lesson_cells(lesson, key.text_a))


def random_similarity_job(model_name: str) -> jobs.Job[LayerSimilarity | ExplorerError]:
    """The model against its random-weights copy over the built-in corpus in its language, in
    the background: the Compare page's own job for its first view (components.two_models, the
    same key), so a map either page made serves the other, and one random copy is held at a
    time."""
    return map_job(model_name, random_name(model_name), get_default_corpus(model_name), ())


def missing_heads(model_name: str) -> frozenset[str]:
    """The pretraining heads ("mlm", "nsp") the loaded model lacks (cheap: two attribute reads)."""
    bundle = get_model(model_name)
    return frozenset(name for name, has in (("mlm", has_mlm_head(bundle)),
                                            ("nsp", has_nsp_head(bundle))) if not has)


@st.cache_resource(show_spinner=False)
def get_class_poll() -> PollStore:
    """Every live class of this server, one object shared by all sessions (or the Redis store
    the replicas share, when BERT_EXPLORER_POLL_REDIS names one)."""
    return poll_from_environment()
