"""Each model's own sentence recipe, read from its sentence-transformers files, and the pooling
that makes its sentence vector exactly as ``SentenceTransformer.encode`` does.

The files (all optional): ``modules.json`` (the modules in order: Transformer, Pooling,
Normalize, ...), the Pooling folder's ``config.json`` (``pooling_mode``, or the older
``pooling_mode_cls_token`` / ``_mean_tokens`` / ``_max_tokens`` / ``_mean_sqrt_len_tokens`` /
``_weightedmean_tokens`` / ``_lasttoken`` switches, and ``include_prompt``),
``sentence_bert_config.json`` (``max_seq_length``) and ``config_sentence_transformers.json``
(``prompts`` and ``default_prompt_name``: the prompt ``encode`` puts before every text when no
other is asked for). A folder without a Pooling module has no recipe of its own: it gets mean
pooling, and ``own`` is False. Modules this explorer does not run (a Dense layer, ...) are named
in ``unknown_modules``; the figure is then the one before them.

    recipe = read_recipe(folder)
    vectors = pool(hidden, mask, recipe)     # (B, d) from (B, T, d) and (B, T)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import torch


class Pooling(StrEnum):
    CLS = "cls"
    MEAN = "mean"
    MAX = "max"
    MEAN_SQRT_LEN = "mean_sqrt_len_tokens"
    WEIGHTED_MEAN = "weightedmean"
    LAST_TOKEN = "lasttoken"


# sentence-transformers' older switches, in its concatenation order.
LEGACY_SWITCHES = {
    "pooling_mode_cls_token": Pooling.CLS,
    "pooling_mode_max_tokens": Pooling.MAX,
    "pooling_mode_mean_tokens": Pooling.MEAN,
    "pooling_mode_mean_sqrt_len_tokens": Pooling.MEAN_SQRT_LEN,
    "pooling_mode_weightedmean_tokens": Pooling.WEIGHTED_MEAN,
    "pooling_mode_lasttoken": Pooling.LAST_TOKEN,
}
KNOWN_MODULES = ("Transformer", "Pooling", "Normalize")


@dataclass(frozen=True)
class Recipe:
    """How a model turns token vectors into one sentence vector."""

    pooling: tuple[Pooling, ...] = (Pooling.MEAN,)   # several: their vectors concatenated
    normalize: bool = True
    max_seq_length: int | None = None
    prompt: str = ""                  # put before every text (the default prompt)
    prompt_name: str = ""
    include_prompt: bool = True       # False: the prompt's tokens are left out of the pooling
    own: bool = False                 # read from the model's own files
    unknown_modules: tuple[str, ...] = ()

    @property
    def mean_only(self) -> bool:
        """Mean pooling alone: the cosine then splits exactly into token pairs."""
        return self.pooling == (Pooling.MEAN,) and not self.prompt


MEAN_RECIPE = Recipe()


def _json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _modes(config: dict) -> tuple[Pooling, ...]:
    raw = config.get("pooling_mode")
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, list):
        modes = tuple(Pooling(m) for m in raw if m in {p.value for p in Pooling})
        if modes:
            return modes
    modes = tuple(mode for key, mode in LEGACY_SWITCHES.items() if config.get(key) is True)
    return modes or (Pooling.MEAN,)


def read_recipe(folder: Path | str | None) -> Recipe:
    """The recipe in ``folder``'s sentence-transformers files (MEAN_RECIPE when there is none)."""
    if folder is None:
        return MEAN_RECIPE
    folder = Path(folder)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [(str(m.get("type", "")).rsplit(".", 1)[-1], str(m.get("path", "")))
                 for m in modules]
    except (OSError, ValueError, TypeError, AttributeError):
        kinds = []
    pooling_path = next((path for kind, path in kinds if kind == "Pooling"), None)
    if pooling_path is None:
        return MEAN_RECIPE
    config = _json(folder / pooling_path / "config.json")
    limit = _json(folder / "sentence_bert_config.json").get("max_seq_length")
    st_config = _json(folder / "config_sentence_transformers.json")
    listed = st_config.get("prompts")
    prompts = listed if isinstance(listed, dict) else {}
    name = st_config.get("default_prompt_name")
    prompt = prompts.get(name) if isinstance(name, str) else None
    return Recipe(
        pooling=_modes(config),
        normalize=any(kind == "Normalize" for kind, _ in kinds),
        max_seq_length=limit if isinstance(limit, int) and limit > 3 else None,
        prompt=prompt if isinstance(prompt, str) else "",
        prompt_name=name if isinstance(name, str) and isinstance(prompt, str) and prompt else "",
        include_prompt=config.get("include_prompt", True) is not False,
        own=True,
        unknown_modules=tuple(kind for kind, _ in kinds if kind not in KNOWN_MODULES))


def pool(hidden: torch.Tensor, mask: torch.Tensor, recipe: Recipe,
         prompt_length: int = 0) -> torch.Tensor:
    """(B, d·k) sentence vectors from (B, T, d) token vectors and their (B, T) attention mask
    (right padding), as sentence-transformers' Pooling (and Normalize) compute them."""
    if prompt_length and not recipe.include_prompt:
        mask = mask.clone()
        mask[:, :prompt_length] = 0
    weights = mask.unsqueeze(-1).to(hidden.dtype)                      # (B, T, 1)
    out = []
    for mode in recipe.pooling:
        if mode == Pooling.CLS:
            first = mask.to(torch.int).argmax(dim=1)
            out.append(hidden[torch.arange(len(hidden)), first])
        elif mode == Pooling.MAX:
            out.append(hidden.masked_fill(weights == 0, float("-inf")).max(dim=1).values)
        elif mode in (Pooling.MEAN, Pooling.MEAN_SQRT_LEN):
            total = (hidden * weights).sum(dim=1)
            count = torch.clamp(weights.sum(dim=1), min=1e-9)
            out.append(total / (count if mode == Pooling.MEAN else torch.sqrt(count)))
        elif mode == Pooling.WEIGHTED_MEAN:
            steps = torch.arange(1, hidden.shape[1] + 1, dtype=hidden.dtype).view(1, -1, 1)
            weighted = weights * steps
            out.append((hidden * weighted).sum(dim=1)
                       / torch.clamp(weighted.sum(dim=1), min=1e-9))
        elif mode == Pooling.LAST_TOKEN:
            last = mask.shape[1] - 1 - mask.flip(1).to(torch.int).argmax(dim=1)
            out.append(hidden[torch.arange(len(hidden)), last] * weights[
                torch.arange(len(hidden)), last])
    vectors = torch.cat(out, dim=-1)
    if recipe.normalize:
        vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
    return vectors
