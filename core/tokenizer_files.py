"""A model's tokenizer and sizes read from its own files by the `tokenizers` library alone.

transformers' BERT tokenizer is a `tokenizers.Tokenizer` underneath: the model's tokenizer.json
as it is, or, for a folder with only vocab.txt, one built from the vocabulary's WordPiece pieces
(transformers' BertTokenizer.__init__). Read here the same way, it gives the same tokens, ids,
token_type_ids, offsets and masks (tests/test_tokenizer_files.py compares both on every shipped
model, Chinese text, special tokens typed as text, truncation, pairs and padding), without
importing torch, transformers and BERT's model code, which take seconds: a fresh server shows
its first page's tokens from this while the model loads. config.json is read as JSON for the
sizes the first page shows (the position table's length, the vocabulary's).

    from core.tokenizer_files import read_files
    from core.tokens import encode
    encode(read_files("all-MiniLM-L6-v2"), "This is a test sentence").input_ids
    # [101, 2023, 2003, 1037, 3231, 6251, 102]

Nothing here imports torch or transformers (a test checks in a fresh interpreter), and reading
changes nothing outside the object returned.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece

from core.errors import N_, VocabularyError
from core.model_files import CONFIG, VOCABULARIES, unavailable
from core.models import local_folder
from core.settings import DEFAULT_MODEL, folder_label

TOKENIZER_JSON = "tokenizer.json"
VOCAB_TXT = "vocab.txt"
TOKENIZER_CONFIG = "tokenizer_config.json"


@dataclass(frozen=True)
class ModelShape:
    """The sizes config.json gives (transformers' BertConfig defaults where it says nothing)."""

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2

    @classmethod
    def read(cls, folder: Path) -> ModelShape:
        """The sizes in ``folder``'s config.json (VocabularyError if it is not a JSON object)."""
        try:
            raw = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise VocabularyError(N_("“{name}” could not be read as a model."),
                                  name=folder.name) from exc
        if not isinstance(raw, dict):
            raise VocabularyError(N_("“{name}” could not be read as a model."), name=folder.name)
        defaults = cls()
        sizes = {}
        for name in cls.__dataclass_fields__:
            value = raw.get(name, getattr(defaults, name))
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise VocabularyError(N_("“{name}” could not be read as a model."),
                                      name=folder.name)
            sizes[name] = value
        return cls(**sizes)


@dataclass(frozen=True, eq=False)
class TokenizerFiles:
    """A model's tokenizer as read from its folder, with what config.json says of its sizes.

    Used as ``core.tokens.encode`` uses a ``ModelBundle``: ``config``, ``tokenize`` and
    ``ids_to_tokens``. The Rust tokenizer keeps truncation and padding as state, so every call
    sets both under this object's lock (as ``core.models.tokenizer_lock`` guards a bundle's).
    """

    name: str
    tokenizer: Tokenizer
    config: ModelShape
    unk_token: str | None
    pad_token: str | None
    truncation_side: str = "right"
    padding_side: str = "right"
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def label(self) -> str:
        """The model's name as a person reads it (as ``ModelBundle.label``)."""
        return folder_label(self.name)

    @property
    def unk_token_id(self) -> int | None:
        return None if self.unk_token is None else self.tokenizer.token_to_id(self.unk_token)

    @property
    def pad_token_id(self) -> int | None:
        return None if self.pad_token is None else self.tokenizer.token_to_id(self.pad_token)

    def tokenize(self, text: str, text_pair: str | None = None, *,
                 add_special_tokens: bool = True, truncation: bool | str = False,
                 max_length: int | None = None, padding: bool | str = False,
                 **_returns: bool) -> dict[str, Any]:
        """The lists transformers' tokenizer call returns for these arguments (input_ids,
        token_type_ids, attention_mask, special_tokens_mask, offset_mapping), computed as it
        computes them: truncation ("longest_first") and padding ("max_length") set on the Rust
        tokenizer, then one encoding. The ``return_*`` flags are accepted and every list is
        returned."""
        if truncation not in (False, "longest_first") or padding not in (False, "max_length"):
            raise ValueError(f"unsupported truncation={truncation!r} / padding={padding!r}")
        with self._lock:
            if truncation and max_length is not None:
                self.tokenizer.enable_truncation(max_length, stride=0, strategy="longest_first",
                                                 direction=self.truncation_side)
            else:
                self.tokenizer.no_truncation()
            if padding and max_length is not None:
                self.tokenizer.enable_padding(direction=self.padding_side,
                                              pad_id=self.pad_token_id or 0, pad_type_id=0,
                                              pad_token=self.pad_token or "[PAD]",
                                              length=max_length)
            else:
                self.tokenizer.no_padding()
            enc = self.tokenizer.encode(text, text_pair, add_special_tokens=add_special_tokens)
        return {"input_ids": enc.ids, "token_type_ids": enc.type_ids,
                "attention_mask": enc.attention_mask,
                "special_tokens_mask": enc.special_tokens_mask, "offset_mapping": enc.offsets}

    def ids_to_tokens(self, ids: list[int]) -> list[str]:
        """Each id's token, as transformers' ``convert_ids_to_tokens`` gives it."""
        return [self.tokenizer.id_to_token(i) or "" for i in ids]


def _special(settings: dict[str, Any], name: str, default: str) -> str:
    """A special token's text in tokenizer_config.json: a string, or an AddedToken's dict."""
    value = settings.get(name, default)
    if isinstance(value, dict):
        value = value.get("content", default)
    return str(value) if value is not None else default


def _vocab(path: Path) -> dict[str, int]:
    """vocab.txt as transformers reads it: one token a line, its line number its id (a token
    given twice keeps its last line)."""
    with open(path, encoding="utf-8") as f:
        return {line.rstrip("\n"): index for index, line in enumerate(f)}


def wordpiece_tokenizer(vocab: dict[str, int], settings: dict[str, Any]) -> Tokenizer:
    """The tokenizer transformers' BertTokenizer builds from a vocabulary and its
    tokenizer_config.json: WordPiece pieces, BERT's normaliser and pre-tokeniser, the
    [CLS] A [SEP] (B [SEP]) template, and the five special tokens matched whole in text."""
    unk, sep, pad, cls, mask = (_special(settings, f"{n}_token", d) for n, d in (
        ("unk", "[UNK]"), ("sep", "[SEP]"), ("pad", "[PAD]"), ("cls", "[CLS]"),
        ("mask", "[MASK]")))
    tokenizer = Tokenizer(WordPiece(vocab, unk_token=unk))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=bool(settings.get("tokenize_chinese_chars", True)),
        strip_accents=settings.get("strip_accents"),
        lowercase=bool(settings.get("do_lower_case", True)))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                  for t in (pad, unk, cls, sep, mask)])
    cls_id, sep_id = vocab.get(cls, 2), vocab.get(sep, 3)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls}:0 $A:0 {sep}:0", pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
        special_tokens=[(cls, cls_id), (sep, sep_id)])
    return tokenizer


def read_folder(name: str, folder: Path) -> TokenizerFiles:
    """The tokenizer and sizes in ``folder``: its tokenizer.json, else its vocab.txt with
    tokenizer_config.json's settings. VocabularyError when it has neither or they are
    unreadable (the model's own loading says the same, core.models)."""
    if not any((folder / v).is_file() for v in VOCABULARIES):
        raise VocabularyError(N_("“{name}” has a vocabulary the explorer cannot read."),
                              name=name)
    settings: dict[str, Any] = {}
    try:
        if (folder / TOKENIZER_CONFIG).is_file():
            loaded = json.loads((folder / TOKENIZER_CONFIG).read_text(encoding="utf-8"))
            settings = loaded if isinstance(loaded, dict) else {}
        if (folder / TOKENIZER_JSON).is_file():
            tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_JSON))
        else:
            tokenizer = wordpiece_tokenizer(_vocab(folder / VOCAB_TXT), settings)
    except Exception as exc:  # the Rust reader's own exception types, OSError, bad JSON
        raise VocabularyError(N_("“{name}” has a vocabulary the explorer cannot read."),
                              name=name) from exc
    return TokenizerFiles(
        name=name, tokenizer=tokenizer, config=ModelShape.read(folder),
        unk_token=_special(settings, "unk_token", "[UNK]"),
        pad_token=_special(settings, "pad_token", "[PAD]"),
        truncation_side=str(settings.get("truncation_side", "right")),
        padding_side=str(settings.get("padding_side", "right")))


def read_files(name: str | None = None) -> TokenizerFiles:
    """The tokenizer of model ``name`` (None: the shipped default) from its folder on this
    machine. ModelLoadError when it is not on this machine (it must be downloaded first) or its
    files are unreadable."""
    name = (name or "").strip() or DEFAULT_MODEL
    folder = local_folder(name)
    if folder is None:
        raise unavailable(name)
    return read_folder(name, folder)
