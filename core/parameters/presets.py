"""Configs of the published BERT checkpoints, built in code, and the sizes of a custom BERT.

No weights are needed to count parameters, so the presets are the published ``config.json``
values typed in here: nothing is downloaded. A custom config is checked before it is built, so a
form can refuse impossible or absurd sizes with a message instead of a traceback or a hang.
"""

from __future__ import annotations

import re
from dataclasses import astuple, dataclass, fields

import pandas as pd
from transformers import BertConfig

from core.parameters.counting import count_from_config
from core.parameters.text import Text, number

# The fields of each checkpoint's published config.json that decide its shapes, plus the ones
# every BERT config carries. (bert-base-chinese and the multilingual model also list pooler_fc_size
# and friends, leftovers of the original TensorFlow code that BertModel ignores.)
_BERT_BASE = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "initializer_range": 0.02,
    "layer_norm_eps": 1e-12,
    "pad_token_id": 0,
}
PRESETS: dict[str, dict] = {
    "bert-base-uncased": {**_BERT_BASE, "vocab_size": 30522},
    "bert-base-chinese": {**_BERT_BASE, "vocab_size": 21128},
    "bert-large-uncased": {
        **_BERT_BASE,
        "vocab_size": 30522,
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "intermediate_size": 4096,
    },
    "bert-base-multilingual-cased": {**_BERT_BASE, "vocab_size": 119547},
}
TUTORIAL_MODEL = "bert-base-chinese"  # the model the parameter tutorial counts by hand


def preset_config(name: str) -> BertConfig:
    """The config of a published checkpoint, from the values above (KeyError if unknown)."""
    return BertConfig(**PRESETS[name])


def presets_frame(meta_counts: dict[str, int]) -> pd.DataFrame:
    """The presets' sizes in the formula's symbols, counted by the formula and on the meta device
    (``meta_counts``: sum(p.numel()) of each BertModel built on the meta device)."""
    rows = []
    for name in PRESETS:
        config = preset_config(name)
        by_formula = count_from_config(config)
        rows.append({
            "model": name,
            "N": config.num_hidden_layers,
            "h": config.hidden_size,
            "heads": config.num_attention_heads,
            "i": config.intermediate_size,
            "V": config.vocab_size,
            "P": config.max_position_embeddings,
            "S": config.type_vocab_size,
            "from config": by_formula,
            "on meta device": meta_counts[name],
            "equal": by_formula == meta_counts[name],
        })
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Limit:
    label: str
    config_key: str
    cap: int
    why: str  # what would go wrong above the cap


@dataclass(frozen=True)
class Sizes:
    """The seven numbers that decide every shape in a BertModel."""

    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    positions: int
    types: int

    def as_tuple(self) -> tuple[int, ...]:
        return astuple(self)


# Caps well above any published BERT (bert-large: 24 layers, hidden 1024; XLM-R: 250,002 words),
# low enough that building the model on the meta device stays well under a second and the
# counts stay readable.
LIMITS: dict[str, Limit] = {
    "layers": Limit("Layers", "num_hidden_layers", 128, "every layer is built to check the count"),
    "hidden": Limit("Hidden size", "hidden_size", 16384, "GPT-3 itself uses 12,288"),
    "heads": Limit("Heads", "num_attention_heads", 256, "no BERT uses more than 16"),
    "intermediate": Limit("Intermediate size", "intermediate_size", 65536, "4 x hidden is usual"),
    "vocab": Limit("Vocabulary", "vocab_size", 1_000_000, "multilingual models use about 250,000"),
    "positions": Limit("Positions", "max_position_embeddings", 65536, "BERT reads 512 tokens"),
    "types": Limit("Token types", "type_vocab_size", 1024, "BERT has 2 segments, A and B"),
}


_EXAMPLES = {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072, "vocab": 30522,
             "positions": 512, "types": 2}


def sizes_from_config(config: BertConfig) -> Sizes:
    return Sizes(**{name: int(getattr(config, LIMITS[name].config_key)) for name in LIMITS})


def config_from_sizes(sizes: Sizes) -> BertConfig:
    """A BERT config with these sizes and bert-base's other settings. Validate first."""
    values = {LIMITS[f.name].config_key: getattr(sizes, f.name) for f in fields(Sizes)}
    return BertConfig(**{**_BERT_BASE, **values})


def whole_number(value: object) -> int | None:
    """An int from a form or URL value ("30522", " 30,522 ", 768); None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = re.sub(r"[\s,_]", "", value)  # thousands separators as people type them
        if re.fullmatch(r"[+-]?\d{1,30}", text):
            return int(text)
    return None


# The messages of size_problems (English; the page translates them with their values).
NOT_WHOLE = "{label} must be a whole number, like {example}."
TOO_SMALL = "{label} must be at least 1 (got {value}): zero or negative sizes build no model."
TOO_LARGE = "{label} is capped at {cap} here (got {value}); {why}."
NOT_DIVISIBLE = (
    "Hidden size {hidden} is not divisible by {heads} heads: each head gets hidden / heads = "
    "{ratio} dimensions, and that must be a whole number. Try one of these hidden sizes: "
    "{options}; or a number of heads that divides {hidden}."
)


def size_problems(values: dict[str, object]) -> tuple[Sizes | None, list[Text]]:
    """The sizes a form or a URL gave, or every reason they cannot make a BertModel, as texts.

    ``values`` maps the names of ``Sizes`` fields to ints or to the text typed in. A text's
    ``label`` and ``why`` are English (``LIMITS``), the page translates them too.
    """
    problems: list[Text] = []
    numbers: dict[str, int] = {}
    for name, limit in LIMITS.items():
        value = whole_number(values.get(name))
        base = {"label": limit.label}
        if value is None:
            # The text itself is not repeated: it is the user's and the message is markdown.
            problems.append(Text(NOT_WHOLE, {**base, "example": number(_EXAMPLES[name])}))
        elif value < 1:
            problems.append(Text(TOO_SMALL, {**base, "value": number(value)}))
        elif value > limit.cap:
            problems.append(Text(TOO_LARGE, {**base, "cap": number(limit.cap),
                                             "value": number(value), "why": limit.why}))
        else:
            numbers[name] = value
    if problems:
        return None, problems
    hidden, heads = numbers["hidden"], numbers["heads"]
    if hidden % heads:
        lower = hidden // heads * heads
        options = [x for x in (lower, lower + heads) if 1 <= x <= LIMITS["hidden"].cap]
        return None, [Text(NOT_DIVISIBLE, {
            "hidden": number(hidden), "heads": number(heads), "ratio": f"{hidden / heads:.2f}",
            "options": ", ".join(number(x) for x in options)})]
    return Sizes(**numbers), []


def check_sizes(values: dict[str, object]) -> tuple[Sizes | None, list[str]]:
    """``size_problems`` with the reasons as English sentences, for a notebook."""
    sizes, problems = size_problems(values)
    return sizes, [str(p) for p in problems]


def validate_sizes(values: dict[str, object]) -> list[str]:
    """Every reason these sizes cannot make a BertModel; empty when they can."""
    return check_sizes(values)[1]
