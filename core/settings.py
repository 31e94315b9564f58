"""Limits and deployment settings, read from the environment so a public server can tighten them.

- ``BERT_EXPLORER_ALLOWED_MODELS``: comma-separated model names a user may pick; ``*`` allows any
  hub name. Unset: the default model and the known BERT checkpoints. Set it on a public server so
  visitors cannot make it fetch arbitrary repositories.
- ``BERT_EXPLORER_MODEL_DIRS``: folders (separated by the OS path separator, ``:`` on Linux) under
  which a model folder may be picked. Unset: none, so a visitor cannot make the server read its
  disk; a teacher on a laptop names the folder holding a downloaded bert-base-chinese here.
- ``BERT_EXPLORER_TUNED_DIR``: where the Fine-tuning page saves tuned models (by default
  ``~/.cache/bert-embedding-explorer/tuned``); a tuned model there loads by its name
  (``tuned/<run>``, as "Explore the tuned model" and its link give it), and the picker lists
  them only when the folder is under ``BERT_EXPLORER_MODEL_DIRS``.
- ``BERT_EXPLORER_MAX_PARAMETERS``: refuse models with more parameters than this.
- ``BERT_EXPLORER_MAX_CHARS``: text longer than this is cut before tokenising.
- ``BERT_EXPLORER_HUB_TIMEOUT``: seconds the model hub has to answer at all.
- ``BERT_EXPLORER_HUB_STALL``: seconds without a byte after which a download has stalled.
- ``BERT_EXPLORER_MAX_MODELS``: models kept loaded besides the embedded one.
- ``BERT_EXPLORER_TEACHER_PASSPHRASE``: the passphrase a teacher types to start a class poll.
  Unset or blank: none is asked (a teacher's own laptop). Set it on a public server so visitors
  cannot start classes; give it to the teachers, never on a projector or in a link.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_SENTENCE = "This is a test sentence"   # sentence A of a link that gives none
KNOWN_MODELS: tuple[str, ...] = (
    "bert-base-uncased",
    "bert-base-chinese",
    "bert-large-uncased",
    "bert-base-multilingual-cased",
    # Sentence-embedding BertModels with their own recipe ([CLS], normalised): the Pairs page
    # compares pairs by it; the Chinese one has bert-base-chinese's vocabulary of 21,128.
    "BAAI/bge-small-en-v1.5",
    "BAAI/bge-small-zh-v1.5",
)

# The terminal command that prepares a machine: downloads models (with their heads) once, with a
# progress bar. Every place that offers it builds it with ``prepare_command``.
PREPARE_COMMAND = "python3 -m serving.download"


def prepare_command(*names: str) -> str:
    """The command that fetches ``names``: ``python3 -m serving.download bert-base-chinese``."""
    return " ".join((PREPARE_COMMAND, *names))

# bert-large (335M parameters, 1.3 GB in float32) is the largest model the explorer is meant for.
MAX_PARAMETERS = int(os.environ.get("BERT_EXPLORER_MAX_PARAMETERS", "400000000"))

# 20,000 characters is far above what 512 tokens can hold (about 2,000 English words), so the cap
# never hides text BERT could read; it only stops a pasted book from stalling the tokenizer.
MAX_CHARS = int(os.environ.get("BERT_EXPLORER_MAX_CHARS", "20000"))

# Seconds to wait for the model hub to answer before saying it is unreachable.
HUB_TIMEOUT_S = float(os.environ.get("BERT_EXPLORER_HUB_TIMEOUT", "3"))
# A download that gets no byte for this many seconds has stalled and is stopped. There is no total
# deadline: bert-base-chinese's 412 MB take 40 s at 10 MB/s and minutes on a school connection.
HUB_STALL_S = float(os.environ.get("BERT_EXPLORER_HUB_STALL", "20"))
# Models other than the embedded one kept loaded at once; the least recently used goes first.
# bert-base takes ~0.5 GB of memory, bert-large ~1.4 GB.
MAX_MODELS = max(1, int(os.environ.get("BERT_EXPLORER_MAX_MODELS", "2")))


def teacher_passphrase() -> str | None:
    """The passphrase that starts a class on this server, or None when none is asked. Read on
    each start, never shown, never logged."""
    raw = os.environ.get("BERT_EXPLORER_TEACHER_PASSPHRASE", "").strip()
    return raw or None


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


def tuned_dir() -> Path:
    """Where the app saves the models it fine-tuned (``BERT_EXPLORER_TUNED_DIR``, by default in
    the explorer's own cache folder). Always one of ``model_dirs()``: it holds only folders the
    server wrote itself, so offering them reads nothing else of its disk."""
    raw = os.environ.get("BERT_EXPLORER_TUNED_DIR", "") or "~/.cache/bert-embedding-explorer/tuned"
    return Path(raw).expanduser()


def model_dirs() -> tuple[Path, ...]:
    """The resolved folders model folders may be loaded from: ``offered_dirs()`` and the folder
    of tuned models (``tuned_dir``), whose runs a link names (``tuned/<run>``) but the picker does
    not list, as a visitor's run may have been trained on a file of their own."""
    roots = list(offered_dirs())
    try:
        roots.append(tuned_dir().resolve())
    except (OSError, RuntimeError, ValueError):
        pass
    return tuple(dict.fromkeys(roots))


def offered_dirs() -> tuple[Path, ...]:
    """The resolved folders whose model folders the picker lists (``BERT_EXPLORER_MODEL_DIRS``)."""
    raw = os.environ.get("BERT_EXPLORER_MODEL_DIRS", "")
    roots = []
    for part in raw.split(os.pathsep):
        if part.strip():
            try:
                roots.append(Path(part.strip()).expanduser().resolve())
            except (OSError, RuntimeError, ValueError):
                continue
    return tuple(roots)


def _allowed_folder(name: str) -> str | None:
    """The resolved path of ``name`` if it is a folder under one of ``model_dirs()``, else None.

    ``name`` is a path, or a folder's label as the picker shows it (``folder_label``: the root's
    own name, then the path below it). Checked on the resolved path (symlinks and ``..``
    followed), which is also the cache key: 20 spellings of one folder load it once, and no
    spelling climbs out of a root.
    """
    roots = model_dirs()
    if not roots:
        return None
    try:
        candidates = [Path(name).expanduser()]
        head, _, rest = name.partition("/")
        candidates += [root / rest for root in roots if head == root.name and rest]
        for candidate in candidates:
            path = candidate.resolve()
            if path.is_dir() and any(path == root or root in path.parents for root in roots):
                return str(path)
        return None
    except (OSError, RuntimeError, ValueError):  # name too long, unknown ~user, NUL byte
        return None


def folder_label(path: str) -> str:
    """How a model folder is named on screen: its allowed root's own name, then the path below
    it (``models/bert-base-chinese``), never the server's absolute path. Other names as given."""
    try:
        resolved = Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return path
    if not Path(path).is_absolute():
        return path
    for root in model_dirs():
        if resolved == root:
            return root.name
        if root in resolved.parents:
            return f"{root.name}/{resolved.relative_to(root).as_posix()}"
    return path


def allowed_name(name: str | None) -> str | None:
    """The name to load ``name`` by, if this deployment lets a user load it; None if refused.

    The default and the known names (or the allowlist's names) come back as they are; a folder
    under ``model_dirs()`` comes back as its resolved path. Everything else is refused, the same
    way whether or not it exists, so the answer tells a visitor nothing about the server's disk.
    """
    name = (name or "").strip() or DEFAULT_MODEL
    if len(name) > 4096:
        return None
    folder = _allowed_folder(name)
    if folder is not None:
        return folder
    allowed = allowed_models()
    if allowed is None:
        return name if name in (DEFAULT_MODEL, *KNOWN_MODELS) else None
    if name in allowed or ("*" in allowed and not _looks_like_path(name)):
        return name
    return None


def _looks_like_path(name: str) -> bool:
    """A folder rather than a hub name ("org/name" has one slash): "*" never opens the disk."""
    return name.startswith(("/", ".", "~", "\\")) or name.count("/") > 1 or is_folder(name)


def folder_models() -> list[str]:
    """The model folders directly under ``offered_dirs()`` (each with a config.json), by their
    labels. A link that leads out of its root is left out: picking it would be refused."""
    found = []
    for root in offered_dirs():
        candidates = [root, *(sorted(root.iterdir()) if root.is_dir() else [])]
        for path in candidates:
            try:
                inside = path.resolve() == root or root in path.resolve().parents
            except (OSError, RuntimeError):
                continue
            if inside and (path / "config.json").is_file():
                found.append(folder_label(str(path.resolve())))
    return list(dict.fromkeys(found))


def pickable_models() -> list[str]:
    """The names offered in the model picker, default first."""
    allowed = allowed_models()
    names = [DEFAULT_MODEL, *KNOWN_MODELS] if allowed is None or "*" in allowed else list(allowed)
    names += folder_models()
    return list(dict.fromkeys(n for n in names if n != "*"))


# A fine-tuned copy of a model (core.finetune) is named after its base; it keeps the base's
# tokenizer and sentence recipe, which are read from the base's files.
TUNED_SUFFIX = " (tuned)"


def tuned_name(base: str) -> str:
    """The name of a tuned copy of ``base``."""
    return f"{base}{TUNED_SUFFIX}"


def base_name(name: str) -> str:
    """The model whose files a (possibly tuned) model's recipe and limits come from."""
    return name.removesuffix(TUNED_SUFFIX)
