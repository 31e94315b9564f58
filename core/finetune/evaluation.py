"""How a task model does on held-out items: the usual figure of each task.

    sentence_class, pair_class   accuracy and macro F1 over the items
    token_tags                   accuracy and macro F1 over the words (a word's tag is read on its
                                 first piece, as it was trained)
    span                         exact match and F1 of the answer text (SQuAD's: lower case, no
                                 punctuation or English articles; Chinese compared by character)
    pair_score                   Spearman and Pearson of the sentence vectors' cosine with the score
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import f1_score

from core.finetune.batches import IGNORED, Batch
from core.finetune.tasks import FineTuneTask
from core.vocabulary import is_cjk

MAX_ANSWER_TOKENS = 30   # the longest span considered, as transformers' QA examples do
PUNCTUATION = set(string.punctuation) | set("，。？！、；：“”‘’（）《》")
CLOSE_SCORE = 0.2        # a pair_score cosine within this of score / 5 counts as right


class Metric(StrEnum):
    ACCURACY = "accuracy"
    MACRO_F1 = "macro_f1"
    EXACT_MATCH = "exact_match"
    F1 = "f1"
    SPEARMAN = "spearman"
    PEARSON = "pearson"


@dataclass(frozen=True)
class Evaluation:
    """The held-out figures after ``epoch`` epochs (0: before training), each item's prediction
    (a label, a tuple of tags, an answer text or a cosine) and whether it is right."""

    epoch: int
    metrics: dict[Metric, float]
    predictions: tuple
    correct: tuple[bool, ...]


def class_predictions(logits: torch.Tensor, labels: Sequence[str]) -> list[str]:
    """The label of the largest logit of each row of (B, classes)."""
    return [labels[i] for i in logits.argmax(dim=-1).tolist()]


def tag_predictions(logits: torch.Tensor, batch: Batch, labels: Sequence[str]) -> list[tuple]:
    """Each item's tags, read on the tokens that carry a word's tag (its first piece)."""
    carried = batch.inputs["labels"] != IGNORED                         # (B, T)
    best = logits.argmax(dim=-1)                                        # (B, T)
    return [tuple(labels[i] for i in best[row][carried[row]].tolist())
            for row in range(len(best))]


def span_predictions(start: torch.Tensor, end: torch.Tensor, batch: Batch,
                     passages: Sequence[str]) -> list[str]:
    """The best-scoring answer in each passage: start <= end, at most MAX_ANSWER_TOKENS long."""
    answers = []
    for row, passage in enumerate(passages):
        inside = torch.tensor(batch.passage_tokens[row])
        s = start[row].masked_fill(~inside, float("-inf"))
        e = end[row].masked_fill(~inside, float("-inf"))
        scores = s[:, None] + e[None, :]                                # (T, T)
        allowed = torch.triu(torch.ones_like(scores, dtype=torch.bool))
        allowed &= ~torch.triu(allowed, diagonal=MAX_ANSWER_TOKENS)
        scores = scores.masked_fill(~allowed, float("-inf"))
        flat = int(scores.argmax())
        first, last = divmod(flat, scores.shape[1])
        offsets = batch.offsets[row]
        answers.append(passage[offsets[first][0]:offsets[last][1]])
    return answers


def _answer_parts(text: str) -> list[str]:
    """SQuAD's normalisation, then words; text with CJK characters is compared by character."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in PUNCTUATION)
    if any(is_cjk(ch) for ch in text):
        return [ch for ch in text if not ch.isspace()]
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return text.split()


def answer_f1(predicted: str, truth: str) -> float:
    """SQuAD's token F1 of two answers (1.0 when both are empty)."""
    got, want = _answer_parts(predicted), _answer_parts(truth)
    if not got or not want:
        return float(got == want)
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def score(task: FineTuneTask, items: Sequence[tuple], predictions: Sequence,
          epoch: int, labels: Sequence[str]) -> Evaluation:
    """The task's figures for ``predictions`` of ``items`` (in the same order)."""
    if task in (FineTuneTask.SENTENCE_CLASS, FineTuneTask.PAIR_CLASS):
        truth = [item[-1] for item in items]
        correct = tuple(p == t for p, t in zip(predictions, truth, strict=True))
        metrics = {Metric.ACCURACY: float(np.mean(correct)),
                   Metric.MACRO_F1: _macro_f1(truth, list(predictions), labels)}
    elif task == FineTuneTask.TOKEN_TAGS:
        # Words the model's positions cut have no prediction: compared on the words it read.
        predicted_words = [tag for pred in predictions for tag in pred]
        truth_words = [tag for item, pred in zip(items, predictions, strict=True)
                       for tag in tuple(item[1])[:len(pred)]]
        correct = tuple(tuple(pred) == tuple(item[1])
                        for item, pred in zip(items, predictions, strict=True))
        metrics = {Metric.ACCURACY: float(np.mean([p == t for p, t in zip(
                       predicted_words, truth_words, strict=True)])),
                   Metric.MACRO_F1: _macro_f1(truth_words, predicted_words, labels)}
    elif task == FineTuneTask.SPAN:
        f1s = [answer_f1(p, item[3]) for p, item in zip(predictions, items, strict=True)]
        exact = tuple(_answer_parts(p) == _answer_parts(item[3])
                      for p, item in zip(predictions, items, strict=True))
        correct = exact
        metrics = {Metric.EXACT_MATCH: float(np.mean(exact)), Metric.F1: float(np.mean(f1s))}
    else:
        cosines = np.asarray(predictions, dtype=np.float64)
        scores = np.asarray([float(item[2]) for item in items])
        correct = tuple(bool(abs(c - s / 5.0) <= CLOSE_SCORE) for c, s in zip(
            cosines, scores, strict=True))
        metrics = {Metric.SPEARMAN: float(spearmanr(cosines, scores).statistic),
                   Metric.PEARSON: float(pearsonr(cosines, scores).statistic)}
    return Evaluation(epoch, metrics, tuple(predictions), correct)


def _macro_f1(truth: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> float:
    # Over the labels the held-out part has: a label it never shows would count as an F1 of 0.
    present = [label for label in labels if label in set(truth)]
    return float(f1_score(truth, predicted, labels=present, average="macro", zero_division=0))
