"""What a fine-tuning run learns: the tutorial's four patterns and a sentence model's own, and the
items each one reads.

    sentence_class  (text, label)                               BertForSequenceClassification
    token_tags      (words, tags)                               BertForTokenClassification
    pair_class      (a, b, label)                               BertForSequenceClassification
                                                                over [CLS] a [SEP] b [SEP]
    span            (question, passage, answer_start, answer_text)  BertForQuestionAnswering
    pair_score      (a, b, score)                               no head: the model's own sentence
                                                                vectors' cosine against the score
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class FineTuneTask(StrEnum):
    SENTENCE_CLASS = "sentence_class"
    TOKEN_TAGS = "token_tags"
    PAIR_CLASS = "pair_class"
    SPAN = "span"
    PAIR_SCORE = "pair_score"


class SentenceItem(NamedTuple):
    text: str
    label: str


class TaggedWords(NamedTuple):
    words: tuple[str, ...]
    tags: tuple[str, ...]


class PairItem(NamedTuple):
    a: str
    b: str
    label: str


class SpanItem(NamedTuple):
    question: str
    passage: str
    answer_start: int     # a character offset into ``passage``
    answer_text: str      # ``passage[answer_start:answer_start + len(answer_text)]``


class ScoredPair(NamedTuple):
    a: str
    b: str
    score: float


Item = SentenceItem | TaggedWords | PairItem | SpanItem | ScoredPair

ITEM_TYPES: dict[FineTuneTask, type] = {
    FineTuneTask.SENTENCE_CLASS: SentenceItem,
    FineTuneTask.TOKEN_TAGS: TaggedWords,
    FineTuneTask.PAIR_CLASS: PairItem,
    FineTuneTask.SPAN: SpanItem,
    FineTuneTask.PAIR_SCORE: ScoredPair,
}

# The tasks whose items carry a label from a fixed set (a class or a tag).
LABELLED = (FineTuneTask.SENTENCE_CLASS, FineTuneTask.TOKEN_TAGS, FineTuneTask.PAIR_CLASS)
