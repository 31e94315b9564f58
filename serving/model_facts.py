"""What a model can do, told before it is picked: on this machine (its size on disk) or to be
downloaded (its size from the hub), whether it has BERT's pretraining heads (MLM, NSP), its
vocabulary size and how many Chinese characters it reads.

Everything is read cheaply: the config, the vocabulary file and the safetensors header (names and
shapes, never a tensor); for a model still on the hub, its listing, its config.json and
vocabulary (tens to hundreds of kB) and its weights' header through a Range request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import ModelLoadError
from core.model_files import VOCABULARIES, remote_model, wanted_files
from core.models import MLM_HEAD, NSP_HEAD, local_folder, model_source, weight_names
from core.vocabulary import is_cjk


@dataclass(frozen=True)
class ModelFacts:
    name: str
    on_machine: bool
    size_bytes: int | None          # on disk, or to download; None: unknown (hub not answering)
    mlm_head: bool | None           # None: unknown
    nsp_head: bool | None
    vocab_size: int | None
    cjk_characters: int | None      # single CJK characters the vocabulary holds as tokens
    # Its own sentence vector (core.similarity.recipe): the pooling modes, () for none of its
    # own (mean pooling is lent), None: unknown.
    pooling: tuple[str, ...] | None = None


def vocabulary(folder: Path) -> list[str]:
    """The tokens of the vocabulary in ``folder`` (vocab.txt, else tokenizer.json's)."""
    if (folder / "vocab.txt").is_file():
        return (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    return list(data.get("model", {}).get("vocab", {}))


def _from_vocabulary(tokens: list[str]) -> tuple[int, int]:
    # A single CJK character a token: what BERT's tokenizer splits Chinese text into.
    return len(tokens), sum(1 for t in tokens if len(t) == 1 and is_cjk(t))


def _pooling(folder: Path) -> tuple[str, ...]:
    # Here, not at import: its module pools with torch, and the sidebar that imports this
    # module is drawn on a fresh server's first page before torch is imported.
    from core.similarity.recipe import read_recipe

    recipe = read_recipe(folder)
    return tuple(str(p) for p in recipe.pooling) if recipe.own else ()


def local_facts(name: str, folder: Path) -> ModelFacts:
    files = [folder / n for n in wanted_files([p.name for p in folder.iterdir()])]
    size = sum(p.stat().st_size for p in files if p.is_file())   # follows the cache's links
    keys = weight_names(folder)
    vocab, cjk = _from_vocabulary(vocabulary(folder))
    return ModelFacts(name, True, size, any(k.startswith(MLM_HEAD) for k in keys),
                      any(k.startswith(NSP_HEAD) for k in keys), vocab, cjk, _pooling(folder))


def remote_facts(name: str, timeout: float) -> ModelFacts:
    """What the hub says about ``name``; raises ModelLoadError when it cannot say."""
    from huggingface_hub import HfApi, constants, hf_hub_download

    repo = model_source(name)
    remote = remote_model(repo, timeout)
    vocab_file = next(v for v in VOCABULARIES if v in remote.sizes)
    try:
        path = Path(hf_hub_download(repo, vocab_file, revision=remote.commit,
                                    etag_timeout=timeout))
        vocab, cjk = _from_vocabulary(vocabulary(path.parent))
        keys = HfApi(endpoint=constants.ENDPOINT).get_safetensors_metadata(
            repo, revision=remote.commit).weight_map
        recipe_files = [n for n in remote.sizes if n == "modules.json" or n.endswith(
            "_Pooling/config.json")]            # a few hundred bytes: the sentence recipe
        for file in recipe_files:
            hf_hub_download(repo, file, revision=remote.commit, etag_timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any failure here only means "unknown"
        raise ModelLoadError("the hub could not say", name=name) from exc
    return ModelFacts(name, False, remote.total_bytes, any(k.startswith(MLM_HEAD) for k in keys),
                      any(k.startswith(NSP_HEAD) for k in keys), vocab, cjk,
                      _pooling(path.parent) if recipe_files else ())


def model_facts(name: str, timeout: float) -> ModelFacts:
    """The facts of ``name``, from this machine if it is here, else from the hub; unknown ones
    are None (the hub did not answer within ``timeout`` seconds)."""
    try:
        folder = local_folder(name)
        if folder is not None:
            return local_facts(name, folder)
        return remote_facts(name, timeout)
    except (ModelLoadError, OSError, ValueError):
        return ModelFacts(name, False, None, None, None, None, None)
