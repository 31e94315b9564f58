"""The files of a checkpoint the explorer reads, and what the hub and the local cache say of them.

Shared by core's plain loading (``core.models``: a folder, the local Hugging Face cache, or a
notebook's download through huggingface_hub's public API) and the app's managed download
(``serving.hub``: progress and a stall watchdog). Only public huggingface_hub API, called with a
timeout; nothing here changes a setting of huggingface_hub or starts a thread.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core import settings
from core.errors import (
    N_,
    ModelLoadError,
    ModelNotOnHubError,
    ModelUnavailableError,
    NotSafetensorsError,
    VocabularyError,
)

if TYPE_CHECKING:
    from huggingface_hub.errors import HfHubHTTPError

# huggingface_hub (with its HTTP clients) is imported where the hub or its cache is asked, not
# here: a fresh server's first page reads the default model's tokenizer through this module,
# and the import cost 0.27 s of processor time on its way (bench/cold_start_bench.py --phases).

# What the explorer reads from a checkpoint; everything else in a repository (TensorFlow, Flax,
# ONNX, pickled weights) stays on the hub. bert-base-uncased's repository holds several GB.
CONFIG = "config.json"
VOCABULARIES = ("vocab.txt", "tokenizer.json")
TOKENIZER_EXTRAS = ("tokenizer_config.json", "special_tokens_map.json")
WEIGHTS, WEIGHTS_INDEX = "model.safetensors", "model.safetensors.index.json"
SHARD = re.compile(r"^model-\d{5}-of-\d{5}\.safetensors$")
# The model's own sentence recipe (core.similarity.recipe): a few small JSON files.
SENTENCE_FILES = ("modules.json", "sentence_bert_config.json",
                  "config_sentence_transformers.json")
POOLING_CONFIG = re.compile(r"^\d+_Pooling/config\.json$")


def wanted_files(names: list[str]) -> list[str]:
    """The files of a repository the explorer reads, config first, weights last."""
    order = [CONFIG, *VOCABULARIES, *TOKENIZER_EXTRAS, *SENTENCE_FILES]
    picked = [n for n in order if n in names]
    picked += sorted(n for n in names if POOLING_CONFIG.match(n))
    picked += [n for n in (WEIGHTS_INDEX, WEIGHTS) if n in names]
    if WEIGHTS not in names and WEIGHTS_INDEX in names:
        picked += sorted(n for n in names if SHARD.match(n))
    return picked


@dataclass(frozen=True)
class RemoteModel:
    """What the hub says about a repository: its commit, and the sizes of the files we fetch."""

    repo: str
    commit: str
    sizes: dict[str, int | None]   # only the wanted files

    @property
    def total_bytes(self) -> int | None:
        if any(size is None for size in self.sizes.values()):
            return None
        return sum(s for s in self.sizes.values() if s is not None)


def remote_model(repo: str, timeout: float | None = None) -> RemoteModel:
    """The hub's listing of ``repo``; raises a ``ModelLoadError`` saying what went wrong."""
    import httpx2
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    timeout = settings.HUB_TIMEOUT_S if timeout is None else timeout
    try:
        info = HfApi(endpoint=constants.ENDPOINT).model_info(repo, files_metadata=True,
                                                             timeout=timeout)
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        raise not_on_hub(repo) from exc
    except GatedRepoError as exc:
        raise ModelNotOnHubError(
            N_("The model hub holds “{name}” but gives it only to signed-in users who accepted "
               "its terms; this explorer does not sign in."), name=repo) from exc
    except HfHubHTTPError as exc:
        raise hub_refused(repo, exc) from exc
    except (httpx2.HTTPError, OSError) as exc:
        raise unavailable(repo) from exc
    names = [s.rfilename for s in info.siblings or []]
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    check_listing(repo, names)
    wanted = {n: sizes.get(n) for n in wanted_files(names)}
    return RemoteModel(repo, str(info.sha or "main"), wanted)


def check_listing(repo: str, names: list[str]) -> None:
    """A repository must hold a config, a vocabulary and safetensors weights to be fetched."""
    if CONFIG not in names:
        raise ModelNotOnHubError(
            N_("The model hub has “{name}”, but it is not a model (it has no config.json)."),
            name=repo)
    if WEIGHTS not in names and WEIGHTS_INDEX not in names:
        raise NotSafetensorsError(
            N_("“{name}” has no safetensors weights on the model hub, only other formats; the "
               "explorer reads safetensors weights only (pickled weights can run code)."),
            name=repo)
    if not any(v in names for v in VOCABULARIES):
        raise VocabularyError(
            N_("“{name}” comes without a vocabulary (vocab.txt or tokenizer.json), so its text "
               "cannot be turned into tokens."), name=repo)


def unavailable(name: str) -> ModelUnavailableError:
    return ModelUnavailableError(
        N_("“{name}” is not on this machine and the model hub cannot be reached (it did not "
           "answer). To use {name} offline, download it once on a connected machine into the "
           "Hugging Face cache or a model folder this explorer is allowed to read."),
        name=name,
    )


def not_on_hub(name: str) -> ModelNotOnHubError:
    return ModelNotOnHubError(
        N_("The model hub answered, but it has no model named “{name}”. Check the spelling "
           "(for example bert-base-chinese)."), name=name)


def hub_refused(name: str, exc: HfHubHTTPError) -> ModelLoadError:
    status = getattr(exc.response, "status_code", None) if exc.response is not None else None
    return ModelLoadError(
        N_("The model hub refused to give “{name}” (it answered with error {status})."),
        name=name, status=str(status or "?"))


def cached_snapshot(repo: str) -> Path | None:
    """The cache folder holding a complete copy of ``repo`` (config, a vocabulary and every
    safetensors file), or None. Reads only the local cache."""
    from huggingface_hub import try_to_load_from_cache

    def cached(filename: str) -> Path | None:
        found = try_to_load_from_cache(repo, filename)
        return Path(found) if isinstance(found, str) else None

    config = cached(CONFIG)
    if config is None or not any(cached(v) for v in VOCABULARIES):
        return None
    folder = config.parent
    if cached(WEIGHTS) is not None:
        return folder
    index = cached(WEIGHTS_INDEX)
    if index is None:
        return None
    try:
        shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
    except (OSError, ValueError, AttributeError):
        return None
    return folder if shards and all((folder / s).is_file() for s in shards) else None
