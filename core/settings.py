"""Limits and deployment settings, read from the environment so a public server can tighten them.

- ``BERT_EXPLORER_ALLOWED_MODELS``: comma-separated model names a user may pick; ``*`` allows any
  hub name or folder. Unset: the default model, the known BERT checkpoints and folders on this
  machine. Set it on a public server so visitors cannot make it fetch arbitrary repositories.
- ``BERT_EXPLORER_MAX_PARAMETERS``: refuse models with more parameters than this.
- ``BERT_EXPLORER_MAX_CHARS``: text longer than this is cut before tokenising.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
KNOWN_MODELS: tuple[str, ...] = (
    "bert-base-uncased",
    "bert-base-chinese",
    "bert-large-uncased",
    "bert-base-multilingual-cased",
)

# bert-large (335M parameters, 1.3 GB in float32) is the largest model the explorer is meant for.
MAX_PARAMETERS = int(os.environ.get("BERT_EXPLORER_MAX_PARAMETERS", "400000000"))

# 20,000 characters is far above what 512 tokens can hold (about 2,000 English words), so the cap
# never hides text BERT could read; it only stops a pasted book from stalling the tokenizer.
MAX_CHARS = int(os.environ.get("BERT_EXPLORER_MAX_CHARS", "20000"))

# Seconds to wait for the model hub to answer before saying it is unreachable.
HUB_TIMEOUT_S = float(os.environ.get("BERT_EXPLORER_HUB_TIMEOUT", "3"))


def allowed_models() -> tuple[str, ...] | None:
    """Names a user may load when set by the environment, or None when it is not set."""
    raw = os.environ.get("BERT_EXPLORER_ALLOWED_MODELS")
    if raw is None:
        return None
    return (DEFAULT_MODEL, *(n.strip() for n in raw.split(",") if n.strip()))


def is_folder(name: str) -> bool:
    """Whether ``name`` is an existing folder; False for names no file system accepts."""
    try:
        return Path(name).expanduser().is_dir()
    except (OSError, RuntimeError, ValueError):  # name too long, unknown ~user, NUL byte
        return False


def is_allowed(name: str) -> bool:
    """Whether this deployment lets a user load ``name``."""
    allowed = allowed_models()
    if allowed is None:
        return name in (DEFAULT_MODEL, *KNOWN_MODELS) or is_folder(name)
    return "*" in allowed or name in allowed


def pickable_models() -> list[str]:
    """The names offered in the model picker, default first."""
    allowed = allowed_models()
    names = [DEFAULT_MODEL, *KNOWN_MODELS] if allowed is None or "*" in allowed else list(allowed)
    return list(dict.fromkeys(n for n in names if n != "*"))
