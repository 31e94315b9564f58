"""The built-in probing sets, in English and in Chinese.

- Parts of speech: 400 sentences of each of two Universal Dependencies treebanks (UD English EWT,
  UD Chinese GSDSimp; CC BY-SA 4.0, ``data/README.md`` and ``data/LICENSE.txt``), the UPOS tag
  of every word: a tag per word.
- Word senses: the Contexts page's built-in corpus (core.contexts.corpus_data): every sentence
  of an ambiguous word, the word marked and its sense the label ("bank/river"): a label per
  marked word. In Chinese the marked word is the segmenter's word holding the character
  (core.words), as the by-word views read it.
- Tense: three tenses of 68 events in each language (core.probes.tense_data): a label per
  sentence.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from core.contexts.corpus_data import CHINESE_SENSES, ENGLISH_SENSES
from core.contexts.vectors import word_characters
from core.models import ModelBundle
from core.probes.files import read_conllu
from core.probes.probe import ProbeTask, marked_words
from core.probes.tense_data import tense_items
from core.tokens import encode

DATA = Path(__file__).resolve().parent / "data"
TREEBANKS = {"en": DATA / "en_ewt-ud-subset.conllu", "zh": DATA / "zh_gsdsimp-ud-subset.conllu"}
LANGUAGES = ("en", "zh")


class BuiltinSet(StrEnum):
    POS = "parts of speech"
    SENSES = "word senses"
    TENSE = "tense"


TASK_OF = {
    BuiltinSet.POS: ProbeTask.WORD_TAGS,
    BuiltinSet.SENSES: ProbeTask.MARKED_WORDS,
    BuiltinSet.TENSE: ProbeTask.SENTENCE_LABELS,
}


def pos_items(language: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The treebank subset of ``language`` as (words, UPOS tags) items."""
    return list(read_conllu(TREEBANKS[language].read_text(encoding="utf-8")).items)


def sense_items(bundle: ModelBundle, language: str) -> list[tuple[str, int, str]]:
    """Every labelled sentence of the built-in corpus in ``language`` as (text, word index,
    "word/sense") items, the index counted over ``bundle``'s words of the sentence; a sentence
    whose word the tokenizer lost (cut, or no characters left) is left out."""
    groups = ENGLISH_SENSES if language == "en" else CHINESE_SENSES
    items = []
    for group in groups:
        for record in group:
            chars = word_characters(record)
            if chars is None:
                continue
            enc = encode(bundle, record.sentence)
            index = next((k for k, w in enumerate(marked_words(enc))
                          if enc.offsets[w.positions[0]][1] <= chars[0]
                          < enc.offsets[w.positions[-1]][2]), None)
            if index is not None:
                items.append((record.sentence, index, f"{record.word}/{record.sense}"))
    return items


def builtin_items(kind: BuiltinSet | str, language: str, bundle: ModelBundle) -> list[Any]:
    """The built-in set ``kind`` in ``language`` ("en" or "zh") as items of ``TASK_OF[kind]``."""
    kind = BuiltinSet(kind)
    if kind is BuiltinSet.POS:
        return list(pos_items(language))
    if kind is BuiltinSet.TENSE:
        return list(tense_items(language))
    return list(sense_items(bundle, language))
