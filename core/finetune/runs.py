"""What a fine-tuning run leaves: the tuned encoder as a bundle every core function takes, the
task model, the losses and held-out figures, and a folder that loads anywhere.

The tuned bundle is named ``"<base> (tuned)"``; it keeps its base's tokenizer and sentence recipe
(``core.similarity.pairs.recipe_of`` reads the base's files for a tuned name), so
``compare_pairs(run.bundle, pairs)`` pools exactly as the base model does.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from transformers import BertModel, PreTrainedModel

from core.finetune.evaluation import Evaluation
from core.finetune.tasks import FineTuneTask
from core.models import ModelBundle, local_folder, tokenizer_lock
from core.settings import tuned_name

# sentence-transformers' files that say how a sentence vector is made (core.similarity.recipe);
# the folders modules.json names (1_Pooling, 2_Normalize) are copied with them.
RECIPE_FILES = ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json")


def tuned_bundle(base: ModelBundle, encoder: BertModel) -> ModelBundle:
    """``encoder`` (a tuned copy of ``base.model``) as a bundle with the base's tokenizer."""
    return ModelBundle(name=tuned_name(base.name), model=encoder, tokenizer=base.tokenizer)


@dataclass(frozen=True)
class FineTuneRun:
    """A finished (or stopped) run; ``evaluations[0]`` is the held-out score before training."""

    task: FineTuneTask
    labels: tuple[str, ...]
    bundle: ModelBundle
    base_name: str
    model: PreTrainedModel   # the task model (a BertModel for pair_score)
    losses: tuple[float, ...]
    evaluations: tuple[Evaluation, ...]
    seconds: float
    steps: int
    stopped: bool
    truncated: int
    freeze_encoder: bool
    settings: dict = field(default_factory=dict)

    @property
    def before(self) -> Evaluation | None:
        return self.evaluations[0] if self.evaluations else None

    @property
    def after(self) -> Evaluation | None:
        return self.evaluations[-1] if len(self.evaluations) > 1 else None

    def save(self, folder: str | Path) -> Path:
        """Save the task model (safetensors), the tokenizer and the base's sentence recipe into
        ``folder``: it loads with transformers' ``from_pretrained``, ``core.load_model(folder)``
        and, under an allowed root, the app's model picker."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(folder)
        with tokenizer_lock(self.bundle.tokenizer):
            self.bundle.tokenizer.save_pretrained(folder)
        base = local_folder(self.base_name)
        if base is not None:
            _copy_recipe(Path(base), folder)
        return folder


def _copy_recipe(base: Path, folder: Path) -> None:
    for name in RECIPE_FILES:
        if (base / name).is_file():
            shutil.copy2(base / name, folder / name)
    try:
        modules = json.loads((base / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for module in modules if isinstance(modules, list) else []:
        path = str(module.get("path", "")) if isinstance(module, dict) else ""
        if path and (base / path).is_dir() and ".." not in path:
            shutil.copytree(base / path, folder / path, dirs_exist_ok=True)
