"""core.tokenizer_files: a model's tokenizer read by the `tokenizers` library alone gives what
transformers' tokenizer gives (core.tokens.encode through a loaded ModelBundle), on the shipped
model, its vocabulary without tokenizer.json, and a cased Chinese vocabulary built here; and
nothing of it imports torch or transformers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BertModel

from core import InputError, ModelBundle, encode
from core.errors import ModelLoadError
from core.models import default_model_path
from core.tokenizer_files import ModelShape, TokenizerFiles, read_files, read_folder
from tests.conftest import tiny_config

ROOT = Path(__file__).resolve().parent.parent

TEXTS: list[tuple[str, str | None]] = [
    ("This is a test sentence", None),
    ("What is your name?", "My name is BERT."),
    ("我爱你", None),
    ("今天天气真好。", "我们去公园散步吧。"),
    ("BERT 读中文：我爱北京天安门！", "mixed 中英 text, 2024年"),
    ("The capital of France is [MASK].", None),
    ("[CLS] typed [SEP] as text [PAD] and [UNK] [MASK]", "[SEP][SEP]"),
    ("[mask] and [Mask] are not the special token", None),
    ("Héllo naïve café, Ångström ÉCOLE", "Crème brûlée"),
    ("☃ snowman 🤖 robot ⁂ asterism", None),
    ("tab\there\nnew line   spaces", "zero\u200bwidth\u00adsoft"),
    ("unaffable antidisestablishmentarianism hyperparameterisation", None),
    ("   ", "B alone is refused"),
    ("\u200b", None),    # only a zero-width space: no token
    ("a", ""),
]
LONG_A = " ".join(f"word{i} 中" for i in range(60))
LONG_B = "a shorter second sentence that still needs cutting " * 4
# (max_length, truncation, padding): the model's own limit, cuts, padding, both.
OPTIONS = [(None, True, False), (8, True, False), (16, True, True), (40, True, True),
           (64, True, False), (12, False, False)]


def tiny_bundle_for(folder: Path, name: str) -> ModelBundle:
    """A random tiny BERT with transformers' own tokenizer of ``folder``: encode reads only the
    tokenizer and config.max_position_embeddings from a bundle."""
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    shape = ModelShape.read(folder)
    config = tiny_config(vocab_size=shape.vocab_size,
                         max_position_embeddings=shape.max_position_embeddings)
    return ModelBundle(name=name, model=BertModel(config).eval(), tokenizer=tokenizer)


def vocab_only_folder(folder: Path) -> Path:
    """The shipped model's vocabulary without its tokenizer.json: transformers builds the
    WordPiece tokenizer from vocab.txt."""
    source = default_model_path()
    folder.mkdir()
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
                 "config.json"):
        shutil.copy(source / name, folder / name)
    return folder


CHINESE_PIECES = list("我爱你今天气真好。们去公园散步吧北京安门中读文英年") + [
    "BERT", "mixed", "text", "The", "the", "capital", "of", "France", "is", "Hello", "na",
    "##ï", "##ve", "café", "##s", "a", "##b", ",", ".", "!", "：", "！", "2024", "word", "##1",
    "##2", "[", "]", "mask", "Mask", "Crème"]


def chinese_cased_folder(folder: Path) -> Path:
    """A small cased vocabulary with Chinese characters (as bert-base-chinese's: no lower
    casing, accents kept), its tokenizer_config.json and a config.json: vocab.txt only."""
    folder.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CHINESE_PIECES]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"do_lower_case": False, "tokenize_chinese_chars": True, "strip_accents": None,
         "tokenizer_class": "BertTokenizer", "model_max_length": 128}), encoding="utf-8")
    tiny_config(vocab_size=len(vocab), max_position_embeddings=128).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def pairs(tmp_path_factory, bundle: ModelBundle) -> dict[str, tuple[TokenizerFiles, object]]:
    """Each kind of folder: (read from its files, transformers' own)."""
    tmp = tmp_path_factory.mktemp("tokenizers")
    vocab = vocab_only_folder(tmp / "vocab-only")
    chinese = chinese_cased_folder(tmp / "chinese-cased")
    return {
        "shipped": (read_files(), bundle),
        "vocab.txt only": (read_folder("vocab-only", vocab), tiny_bundle_for(vocab, "v")),
        "cased Chinese": (read_folder("chinese", chinese), tiny_bundle_for(chinese, "c")),
    }


def outcome(source: object, a: str, b: str | None, options: tuple) -> object:
    """encode's Encoding, or the refusal's template and values."""
    max_length, truncation, padding = options
    try:
        return encode(source, a, b, max_length, truncation, padding)   # type: ignore[arg-type]
    except InputError as exc:
        return (exc.template, exc.params)


@pytest.mark.parametrize("kind", ["shipped", "vocab.txt only", "cased Chinese"])
def test_the_same_encoding_as_transformers(pairs, kind: str) -> None:
    files, transformers_own = pairs[kind]
    cases = [*TEXTS, (LONG_A, None), (LONG_A, LONG_B), (LONG_B, LONG_A)]
    compared = 0
    for a, b in cases:
        for options in OPTIONS:
            mine, theirs = outcome(files, a, b, options), outcome(transformers_own, a, b, options)
            assert mine == theirs, (kind, a, b, options)
            compared += 1
    assert compared == len(cases) * len(OPTIONS)


def test_what_the_comparison_covers(pairs) -> None:
    """The cases above do reach [UNK], typed special tokens, truncation of both sentences,
    padding and segment 1, so the equality means something."""
    files, _ = pairs["shipped"]
    chinese = encode(files, "我爱你")
    assert chinese.input_ids.count(files.unk_token_id) == 2      # 爱 and 你 are not in it
    typed = encode(files, "The capital of France is [MASK].")
    assert files.tokenizer.token_to_id("[MASK]") in typed.input_ids
    cut = encode(files, LONG_A, LONG_B, max_length=40, pad_to_max_length=True)
    assert cut.truncated > 0 and 1 in cut.token_type_ids and len(cut.input_ids) == 40
    padded = encode(files, "a", None, 16, True, True)
    assert padded.n_padding == 13 and padded.tokens[-1] == "[PAD]"
    cased, _ = pairs["cased Chinese"]
    assert encode(cased, "我爱北京").tokens == ["[CLS]", "我", "爱", "北", "京", "[SEP]"]
    assert encode(cased, "Hello BERT").tokens == ["[CLS]", "Hello", "BERT", "[SEP]"]


def test_the_default_sentence(pairs) -> None:
    files, _ = pairs["shipped"]
    enc = encode(files, "This is a test sentence")
    assert enc.input_ids == [101, 2023, 2003, 1037, 3231, 6251, 102]
    assert enc.token_type_ids == [0] * 7 and enc.position_ids == list(range(7))
    assert files.config.max_position_embeddings == 512 and files.config.vocab_size == 30522
    assert files.label == "all-MiniLM-L6-v2" and files.unk_token == "[UNK]"


def test_the_shapes_are_the_configs(pairs, bundle: ModelBundle) -> None:
    files, _ = pairs["shipped"]
    for name in ModelShape.__dataclass_fields__:
        assert getattr(files.config, name) == getattr(bundle.config, name), name


def test_unreadable_folders_are_model_errors(tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelLoadError):
        read_folder("empty", empty)
    broken = vocab_only_folder(tmp_path / "broken")
    (broken / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError):
        read_folder("broken", broken)
    (broken / "tokenizer.json").unlink()
    (broken / "config.json").write_text('{"max_position_embeddings": "many"}', encoding="utf-8")
    with pytest.raises(ModelLoadError):
        read_folder("broken", broken)


NO_TORCH = """
import sys
from core.tokenizer_files import read_files
from core.tokens import encode
enc = encode(read_files(), "This is a test sentence", "我爱你", max_length=12)
assert enc.input_ids[:6] == [101, 2023, 2003, 1037, 3231, 6251], enc.input_ids
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print(",".join(heavy) or "none")
"""


def test_reading_and_encoding_import_neither_torch_nor_transformers() -> None:
    done = subprocess.run([sys.executable, "-c", NO_TORCH], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-1] == "none", done.stdout
