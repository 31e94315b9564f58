"""Tiny checkpoints with BERT's pretraining heads, built in code and saved next to the shipped
tokenizer (never downloaded). Used by tests/test_pretraining_core.py; page tests can reuse them.

- ``make_pretraining_folder``: a random BertForPreTraining (both heads, like bert-base-uncased);
- ``make_masked_lm_folder``: a random BertForMaskedLM (the MLM head only, no NSP head, no pooler);
- ``make_hub_cache_copy``: a folder's files laid out as a Hugging Face cache copy of a repo, so a
  name such as bert-base-uncased loads offline from it.

Hidden 32, 2 layers, 4 heads, the shipped tokenizer's 30,522-token vocabulary (tests/conftest.py
``tiny_config``), saved with ``save_pretrained`` as model.safetensors.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
from transformers import BertForMaskedLM, BertForPreTraining, PreTrainedTokenizerBase

from tests.conftest import tiny_config
from tests.model_folders import save_tokenizer

SEED = 0


def _save(model: torch.nn.Module, folder: Path, tokenizer: PreTrainedTokenizerBase) -> None:
    model.eval()
    model.save_pretrained(folder)  # transformers 5 writes model.safetensors only
    save_tokenizer(folder, tokenizer)
    assert (folder / "model.safetensors").is_file()


def make_pretraining_folder(folder: Path, tokenizer: PreTrainedTokenizerBase,
                            seed: int = SEED) -> BertForPreTraining:
    """A random BertForPreTraining saved into ``folder``; returns the model (in eval mode)."""
    torch.manual_seed(seed)
    model = BertForPreTraining(tiny_config())
    _save(model, folder, tokenizer)
    return model


def make_masked_lm_folder(folder: Path, tokenizer: PreTrainedTokenizerBase,
                          seed: int = SEED) -> BertForMaskedLM:
    """A random BertForMaskedLM saved into ``folder``: an MLM head but no NSP head."""
    torch.manual_seed(seed)
    model = BertForMaskedLM(tiny_config())
    _save(model, folder, tokenizer)
    return model


def make_hub_cache_copy(cache: Path, repo_id: str, folder: Path,
                        only: tuple[str, ...] | None = None) -> Path:
    """``folder``'s files (or just the names in ``only``) as huggingface_hub's cache holds a
    download of ``repo_id``: ``models--<repo>/refs/main`` names a snapshot holding the files.
    Returns the snapshot folder."""
    commit = "0" * 40
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for file in folder.iterdir():
        if file.is_file() and (only is None or file.name in only):
            shutil.copy(file, snapshot / file.name)
    return snapshot


# A small vocabulary with Chinese characters, written by the tests: BERT's special tokens, some
# English, and CJK characters one to a token as in bert-base-chinese (我爱你 -> 我 爱 你).
CHINESE_CHARS = "我爱你们他她是的了不在有人这中大为上个国今天气真好去公园散步吧"
CHINESE_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz",
                 "the", "is", "test", "sentence", "。", "，", "!", "?", ".",
                 *CHINESE_CHARS]


def make_chinese_checkpoint(folder: Path, *, intermediate_size: int = 37, layers: int = 2,
                            vocab: bool = True, seed: int = SEED) -> BertForPreTraining:
    """A random BertForPreTraining (both heads) with a small Chinese-reading vocabulary, as
    bert-base-chinese is laid out: config.json, model.safetensors, vocab.txt and the tokenizer
    files. ``intermediate_size`` and ``layers`` make the weights bigger (a download that takes a
    while); ``vocab=False`` leaves the vocabulary out."""
    from transformers import BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = BertForPreTraining(tiny_config(vocab_size=len(CHINESE_VOCAB),
                                           intermediate_size=intermediate_size,
                                           num_hidden_layers=layers)).eval()
    model.save_pretrained(folder)
    if vocab:
        (folder / "vocab.txt").write_text("\n".join(CHINESE_VOCAB) + "\n", encoding="utf-8")
        BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return model
