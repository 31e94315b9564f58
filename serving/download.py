"""Prepare a classroom machine: download models once, with a progress bar, and check them.

    python3 -m serving.download bert-base-chinese bert-base-uncased [--dir models]

Fetches only what the explorer reads (config.json, the vocabulary and tokenizer files,
model.safetensors: the checkpoint's own weights, so BERT's pretraining heads come with them) into
the Hugging Face cache, or copies them into ``FOLDER/<name>`` with ``--dir``. Then checks that
the weights are safetensors and that their parameter count is the one the config gives, and
prints where the model is and the one setting the app then needs, if any. Honours ``HF_ENDPOINT``
(a mirror of the hub) and ``HF_HOME`` like every Hugging Face tool. Resumes a download that was
cut off. Exit status 0 when every model is ready.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from safetensors import safe_open

from core.errors import ModelLoadError
from core.model_files import WEIGHTS, WEIGHTS_INDEX, unavailable, wanted_files
from core.models import MLM_HEAD, NSP_HEAD, local_folder, read_config, weight_names
from core.parameters import count_from_config
from core.settings import DEFAULT_MODEL, KNOWN_MODELS, allowed_models
from serving import hub, jobs
from serving.models import hub_reachable, start_download

BAR_REFRESH_S = 0.5   # the terminal bar's redraw while the job runs


def checkpoint_parameters(folder: Path) -> tuple[int, bool]:
    """Parameters of the BertModel part of the safetensors weights in ``folder`` (the heads'
    ``cls.*`` and the ``position_ids`` buffer left out), from the headers: no tensor is read.
    Also whether the checkpoint has a pooler."""
    files = sorted(folder.glob("*.safetensors"))
    total, pooler = 0, False
    for file in files:
        with safe_open(str(file), framework="pt") as f:
            for key in f.keys():
                if key.startswith("cls.") or key.endswith("position_ids"):
                    continue
                pooler |= ".pooler." in f".{key}"
                size = 1
                for n in f.get_slice(key).get_shape():
                    size *= n
                total += size
    return total, pooler


def _progress(name: str, download: hub.DownloadJob) -> hub.DownloadState:
    """Draw the download's progress as a terminal bar until it ends: the bar reads the job's
    reported progress each time the job has not ended within the bar's refresh."""
    from tqdm import tqdm

    state = download.wait_until_started()   # woken by the job's first report past the hub's answer
    if state.finished:
        return state   # refused or unreachable: no bar to draw
    bar = tqdm(total=state.total_bytes, unit="B", unit_scale=True, desc=name, file=sys.stdout,
               mininterval=BAR_REFRESH_S, dynamic_ncols=True)
    shown = 0
    while True:
        ended = download.job is None or download.job.wait(BAR_REFRESH_S)
        state = download.state()
        if state.done_bytes > shown:
            bar.update(state.done_bytes - shown)
            shown = state.done_bytes
        if ended or state.finished:
            bar.close()
            return download.wait()


def prepare(name: str, folder: Path | None) -> Path:
    """Download (or find) ``name``, copy it into ``folder/<name>`` if given, check it; the
    model's folder. Raises ModelLoadError."""
    found = local_folder(name)
    if found is None:
        if not hub_reachable():
            raise unavailable(name)
        state = _progress(name, start_download(name))
        if state.error is not None:
            raise state.error
        found = state.folder
    assert found is not None
    if folder is not None:
        target = folder / name.replace("/", "--")
        target.mkdir(parents=True, exist_ok=True)
        present = [p.relative_to(found).as_posix() for p in found.rglob("*") if p.is_file()]
        for name_ in wanted_files(present):   # the recipe's Pooling config sits in a folder
            (target / name_).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found / name_, target / name_)   # the cache's links, as real files
        found = target
    return found


def check(name: str, folder: Path) -> list[str]:
    """What the explorer will see in ``folder``: lines to print. Raises ModelLoadError."""
    config = read_config(name, folder)
    if not any((folder / w).is_file() for w in (WEIGHTS, WEIGHTS_INDEX)):
        raise ModelLoadError("“{name}” has no safetensors weights.", name=name)
    counted, pooler = checkpoint_parameters(folder)
    expected = count_from_config(config, with_pooler=pooler)
    if counted != expected:
        raise ModelLoadError(
            "“{name}”'s weights hold {counted} parameters but its config gives {expected}.",
            name=name, counted=f"{counted:,}", expected=f"{expected:,}")
    keys = weight_names(folder)
    heads = [label for head, label in ((MLM_HEAD, "MLM"), (NSP_HEAD, "NSP"))
             if any(k.startswith(head) for k in keys)]
    vocab = config.vocab_size
    return [f"  safetensors weights, {counted:,} parameters, as its config says",
            f"  vocabulary {vocab:,} tokens; pretraining heads: {', '.join(heads) or 'none'}"]


def setting_needed(name: str, folder: Path, root: Path | None) -> str:
    """The one setting the app needs to offer ``name`` (or that it needs none)."""
    if root is not None:
        return (f"Start the app with BERT_EXPLORER_MODEL_DIRS={root.resolve()} and pick "
                f"{root.resolve().name}/{folder.name} in the sidebar's model list.")
    allowed = allowed_models()
    if name not in (DEFAULT_MODEL, *KNOWN_MODELS) and (allowed is None or name not in allowed):
        return (f"Start the app with BERT_EXPLORER_ALLOWED_MODELS={name} (it is not one of the "
                "names offered by default); it is found in the Hugging Face cache by its name.")
    if os.environ.get("HF_HOME") or os.environ.get("HF_HUB_CACHE"):
        return ("No setting besides the cache folder: start the app with the same HF_HOME / "
                "HF_HUB_CACHE, and it finds the model by its name.")
    return "No setting needed: the app finds it in the Hugging Face cache by its name."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m serving.download",
        description="Download BERT models for the explorer (what it reads, with the heads).")
    parser.add_argument("names", nargs="+", metavar="NAME", help="e.g. bert-base-chinese")
    parser.add_argument("--dir", type=Path, default=None, metavar="FOLDER",
                        help="copy each model into FOLDER/NAME instead of leaving it in the "
                             "Hugging Face cache only")
    args = parser.parse_args(argv)
    from huggingface_hub import constants

    print(f"Model hub: {constants.ENDPOINT}  (set HF_ENDPOINT to use a mirror)")
    failed = 0
    try:
        for name in args.names:
            try:
                folder = prepare(name, args.dir)
                lines = check(name, folder)
            except ModelLoadError as exc:
                print(f"{name}: {exc}", file=sys.stderr)
                failed += 1
                continue
            print(f"{name}: ready in {folder}")
            print("\n".join(lines))
            print("  " + setting_needed(name, folder, args.dir))
    finally:
        # Ctrl-C: the download job stops at its next chunk (the pool's worker would otherwise
        # hold the process until the download ended); after a normal run, nothing is left.
        jobs.board().shutdown(wait=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
