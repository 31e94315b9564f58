"""Model folders built in code for the loading tests: one that loads, and the kinds that must not.

Tiny configs saved with ``save_pretrained`` next to the shipped tokenizer, never downloaded. Used by
tests/test_model_loading.py (core.load_model) and tests/test_bad_inputs.py (the app's messages).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from transformers import (
    BertConfig,
    BertModel,
    DistilBertConfig,
    DistilBertModel,
    GPT2Config,
    GPT2Model,
    PreTrainedTokenizerBase,
)

from tests.conftest import tiny_config

# A config far beyond the explorer's budget: 100 layers of width 4096 is ~20 billion parameters.
HUGE = {"num_hidden_layers": 100, "hidden_size": 4096, "num_attention_heads": 64,
        "intermediate_size": 16384}


def save_tokenizer(folder: Path, tokenizer: PreTrainedTokenizerBase) -> None:
    """The shipped uncased WordPiece tokenizer: a folder is complete but for what a test breaks."""
    tokenizer.save_pretrained(folder)


def make_tiny_bert_folder(folder: Path, tokenizer: PreTrainedTokenizerBase) -> BertModel:
    """A random 2-layer BERT saved as safetensors with the shipped tokenizer; returns the model."""
    torch.manual_seed(0)
    model = BertModel(tiny_config()).eval()
    model.save_pretrained(folder)  # transformers 5 writes model.safetensors only
    save_tokenizer(folder, tokenizer)
    assert (folder / "model.safetensors").is_file()
    return model


def make_not_bert_folder(folder: Path, kind: str, tokenizer: PreTrainedTokenizerBase) -> Path:
    """A tiny GPT-2 or DistilBERT saved as safetensors: real models, just not BertModel."""
    if kind == "gpt2":
        model = GPT2Model(GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                     vocab_size=128))
    else:
        model = DistilBertModel(DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=37,
                                                 max_position_embeddings=64))
    model.save_pretrained(folder)
    save_tokenizer(folder, tokenizer)
    return folder


def make_huge_config_folder(folder: Path) -> Path:
    """config.json only: if anything tried to read weights, it would fail with another error."""
    BertConfig(**HUGE).save_pretrained(folder)
    return folder


def make_bin_only_folder(folder: Path, tokenizer: PreTrainedTokenizerBase) -> Path:
    """A valid tiny BERT whose weights are only a pickled pytorch_model.bin (never unpickled)."""
    torch.manual_seed(0)
    model = BertModel(tiny_config())
    model.config.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    save_tokenizer(folder, tokenizer)
    return folder


def write_config(folder: Path, **overrides) -> Path:
    """The tiny config with some fields overridden (possibly to nonsense), written as raw JSON."""
    folder.mkdir(parents=True, exist_ok=True)
    config = json.loads(tiny_config().to_json_string())
    config.update(overrides)
    (folder / "config.json").write_text(json.dumps(config))
    return folder
