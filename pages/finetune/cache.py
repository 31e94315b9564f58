"""Fine-tuning's data: the built-in sets (per task and language, kept like a per-model table),
the layer map of a tuned model against its base (a background job on the board, keyed on the
run), a pair's cosine split before and after (a per-input result), and the tuned folder.

A tuned model lives in serving.training's kept store, never in these caches or in a job's work:
work here looks it up by the run's request, so a dropped run frees its memory.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import zipfile
from pathlib import Path

import streamlit as st

from components.cache import get_model, results_cache
from components.two_models import CORPUS_LANGUAGE, get_default_corpus
from core import ExplorerError
from core.compare import LayerSimilarity, layer_similarity
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.finetune import builtin_set
from core.finetune.tasks import FineTuneTask
from core.similarity.pairs import PairContributions, pair_contributions
from pages.finetune.own_data import item_texts
from serving import jobs, training
from serving.training import Request

SHARE = 0.01    # of the results budget: a pair's two splits


# Two numbers per model and set (a set is named by its data key: a built-in set, or a hash of a
# file's items), so a count of entries bounds its bytes; it saved tokenising every item of the
# set on every rerun of the page.
@st.cache_resource(max_entries=64, show_spinner=False)
def get_unknown_share(model_name: str, task: FineTuneTask, data_key: str,
                  _items: tuple[tuple, ...]) -> tuple[int, int]:
    """How many of the items' tokens the model reads as [UNK], of how many (special tokens
    left out): the share that says whether a set is fit to train on. ``_items`` are the set's,
    named by ``data_key`` (not hashed)."""
    bundle = get_model(model_name)
    texts = [t for item in _items for t in item_texts(task, item)]
    if not texts:
        return 0, 0
    ids = bundle.tokenize(texts, add_special_tokens=False, truncation=False)["input_ids"]
    unk = bundle.tokenizer.unk_token_id
    return sum(row.count(unk) for row in ids), sum(len(row) for row in ids)


def map_job(request: Request) -> jobs.Job[LayerSimilarity | ExplorerError]:
    """The layer map of the tuned model against the model before it, over the built-in corpus:
    a job on the board shared by every session looking at the run (its result is a small
    matrix, or the refusal of the input, kept like a map)."""
    language = CORPUS_LANGUAGE[get_default_corpus(request.model)]
    texts = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == language]

    def work(job: jobs.Job) -> LayerSimilarity | ExplorerError:
        run = training.kept_run(request)
        if run is None:
            raise LookupError("the tuned model was dropped")
        try:
            return layer_similarity(get_model(request.model), run.bundle, texts,
                                    progress=job.report)
        except ExplorerError as refusal:
            return refusal

    return jobs.submit(("finetune: layer map", request.key), work,
                       name=f"layer map of {request.model} tuned")


@results_cache("finetune: pair split", SHARE)
def get_pair_split(model_name: str, request: Request, index: int
                   ) -> tuple[PairContributions, PairContributions] | None:
    """Held-out pair ``index``'s cosine split on the model before and on the tuned model
    (None once the tuned model was dropped)."""
    run = training.kept_run(request)
    data = builtin_set(request.task, request.data.removeprefix("builtin:")) \
        if request.data.startswith("builtin:") else None
    if run is None or data is None or not 0 <= index < len(data.held_out):
        return None
    a, b = str(data.held_out[index][0]), str(data.held_out[index][1])
    return (pair_contributions(get_model(model_name), a, b),
            pair_contributions(run.bundle, a, b))


def tuned_root() -> Path:
    """Where the server saves tuned models for the picker (``BERT_EXPLORER_TUNED_DIR``)."""
    return training.tuned_root()


def saved_folder(request: Request) -> Path | None:
    """The run saved under the tuned root (once; a later ask finds the folder), None once the
    tuned model was dropped."""
    folder = tuned_root() / request.run_id
    if (folder / "config.json").is_file():
        return folder
    run = training.kept_run(request)
    if run is None:
        return None
    partial = Path(tempfile.mkdtemp(prefix=f".{request.run_id}-", dir=tuned_root()))
    run.save(partial)
    try:
        partial.rename(folder)   # whole or not at all: the picker never sees a half folder
    except OSError:              # another session saved it first
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def zipped(request: Request) -> bytes:
    """The tuned model's folder as a zip (made on the download's click)."""
    run = training.kept_run(request)
    if run is None:
        return b""
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        folder = run.save(Path(tmp) / "tuned")
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    archive.write(path, Path("tuned-model") / path.relative_to(folder))
    return buffer.getvalue()
