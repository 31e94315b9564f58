"""Which layer knows what: a linear probe at every layer, with its control task.

``layer_probe(bundle, task, items)`` runs every sentence once through the model (batched by
length, each batch under ``core.models.model_run``, the shared model never changed), keeps one
vector per example at every hidden state (0 = the embedding output), and fits scikit-learn's
``LogisticRegression`` on the standardised vectors of each layer alone, with folds split by
sentence (``GroupKFold``: no sentence has examples on both sides of a fold).

- An example's vector is a word's for word tasks, read by ``core.words``' rule: the mean of its
  pieces' vectors (``membership`` rows, as the by-word views and the Compare page take a word);
  a sentence's for sentence tasks: the mean of its tokens' vectors, [CLS] and [SEP] left out
  (the sentence vector of the Contexts page and of mean-pooling models).
- The control task (Hewitt & Liang 2019): every word type (its text, case folded), or every
  sentence for a sentence task, gets a label drawn at random from the task's own label
  frequencies, fixed by ``seed``; the same probe is fitted on it. A probe that scores well on the
  control only memorises; ``selectivity`` = accuracy - control accuracy.
- ``expected_layer`` (Tenney et al. 2019): the centre of gravity of the gains from one layer to
  the next, E = sum_l l (acc_l - acc_{l-1}) / sum_l (acc_l - acc_{l-1}), over the running best
  accuracy (``expected_layer`` says why).

    from core import load_model, layer_probe
    from core.probes import ProbeTask, builtin_items, BuiltinSet
    bundle = load_model()
    probe = layer_probe(bundle, ProbeTask.WORD_TAGS, builtin_items(BuiltinSet.POS, "en", bundle))
    probe.accuracy, probe.control, probe.expected_layer
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core.contexts.vectors import batches, padded
from core.errors import N_, InputError, N_plural
from core.models import ModelBundle, model_run
from core.tokens import Encoding, encode
from core.words import Word, membership, words_of_encoding

Progress = Callable[[int, int], None]
C = 0.1               # L2 strength: a little more than scikit-learn's default (C = 1), the
                      # usual choice for probes; it also converges in far fewer steps
MAX_ITER = 100        # scikit-learn's default number of lbfgs steps
MIN_FOLDS = 2


class ProbeTask(StrEnum):
    """What an example is and what its items look like."""

    WORD_TAGS = "word tags"            # items (words, tags): a tag per word
    SENTENCE_LABELS = "sentence labels"  # items (text, label): a label per sentence
    MARKED_WORDS = "marked words"      # items (text, word_index, label): one word in its sentence


@dataclass(frozen=True)
class LayerProbe:
    """A probe's scores at every hidden state (index 0 = the embedding output)."""

    task: ProbeTask
    model_name: str
    accuracy: np.ndarray        # (layers + 1,) mean test accuracy over the folds
    spread: np.ndarray          # (layers + 1,) its standard deviation over the folds
    control: np.ndarray         # (layers + 1,) the same probe on the control task
    control_spread: np.ndarray  # (layers + 1,)
    majority: float             # the most frequent label's share of the examples
    labels: tuple[str, ...]     # the task's labels, sorted
    counts: tuple[int, ...]     # examples of each label
    sentences: int              # sentences the examples come from
    folds: int
    sentence_of: np.ndarray     # (examples,) each example's sentence (its item's index)
    test_fold: np.ndarray       # (examples,) the fold each example is tested in
    dropped: int = 0            # examples with no token left (cut at the model's limit)
    seconds: float = 0.0

    @property
    def examples(self) -> int:
        return int(len(self.sentence_of))

    @property
    def selectivity(self) -> np.ndarray:
        """accuracy - control accuracy, at every layer (Hewitt & Liang 2019)."""
        return self.accuracy - self.control

    @property
    def expected_layer(self) -> float:
        """Tenney et al. 2019's centre of gravity of the gains (``expected_layer``); NaN when
        no layer beats the embedding output."""
        return expected_layer(self.accuracy)

    @property
    def best_layer(self) -> int:
        """The first layer with the highest accuracy."""
        return int(np.argmax(self.accuracy))


def expected_layer(scores: np.ndarray) -> float:
    """Tenney et al. 2019's expected layer: E = sum_l l (s_l - s_{l-1}) / sum_l (s_l - s_{l-1}),
    l = 1..L, over the running best s_l = max(score_0 .. score_l). Their probe at layer l reads
    every layer up to l (a learned mix), so its score never falls with depth; a probe on one
    layer alone can fall (a sentence model's last layers), and the raw drops would pull the
    centre below layer 1 or past L. The running best stands in for their cumulative probe, so E
    lies between 1 and L. NaN when no layer beats the embedding output (no gain to centre)."""
    best = np.maximum.accumulate(np.asarray(scores, dtype=np.float64))
    gains = np.diff(best)
    total = float(gains.sum())
    if total <= 1e-12:
        return float("nan")
    return float(np.arange(1, len(gains) + 1) @ gains / total)


# --- items to examples --------------------------------------------------------------------------

@dataclass(frozen=True)
class Examples:
    """The sentences the model reads and, per sentence, its examples: the token positions each
    example's vector is the mean of, its label and its type (what the control labels follow)."""

    encodings: tuple[Encoding, ...]
    positions: tuple[tuple[tuple[int, ...], ...], ...]   # per sentence, per example
    labels: tuple[tuple[str, ...], ...]
    types: tuple[tuple[str, ...], ...]
    dropped: int


def _label(value: Any, number: int) -> str:
    label = "" if value is None else str(value).strip()
    if not label:
        raise InputError(N_("Example {number} has no label."), number=number)
    return label


def _tag_examples(bundle: ModelBundle, items: Sequence[Any]) -> Examples:
    encodings, positions, labels, types, dropped = [], [], [], [], 0
    for number, item in enumerate(items, start=1):
        words, tags = (list(x) for x in item)
        if len(words) != len(tags):
            raise InputError(N_("Sentence {number}: words: {words}, tags: {tags}. Give one tag "
                                "per word."), number=number, words=len(words),
                             tags=len(tags))
        words = [str(w).strip() for w in words]
        if not words or not all(words):
            raise InputError(N_("Sentence {number} has an empty word."), number=number)
        # The words joined by single spaces are the text the model reads; each word is the
        # tokens inside its characters (core.words' Word), its vector the mean of theirs.
        text = " ".join(words)
        enc = encode(bundle, text)
        starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
        kept_pos, kept_tags, kept_types = [], [], []
        for word, start, tag in zip(words, starts, tags, strict=True):
            inside = tuple(p for p, (_, s, e) in enumerate(enc.offsets)
                           if not enc.special_tokens_mask[p] and e > s
                           and s < start + len(word) and e > start)
            if not inside:
                dropped += 1     # cut at the model's position limit
                continue
            kept_pos.append(inside)
            kept_tags.append(_label(tag, number))
            kept_types.append(word.casefold())
        encodings.append(enc)
        positions.append(tuple(kept_pos))
        labels.append(tuple(kept_tags))
        types.append(tuple(kept_types))
    return Examples(tuple(encodings), tuple(positions), tuple(labels), tuple(types), dropped)


def _sentence_examples(bundle: ModelBundle, items: Sequence[Any]) -> Examples:
    encodings, positions, labels, types, dropped = [], [], [], [], 0
    for number, (text, label) in enumerate(items, start=1):
        if not str(text or "").strip():
            raise InputError(N_("Sentence {number} is empty."), number=number)
        enc = encode(bundle, str(text))
        inside = tuple(p for p in range(len(enc.input_ids)) if not enc.special_tokens_mask[p])
        if not inside:
            dropped += 1
        encodings.append(enc)
        positions.append((inside,) if inside else ())
        labels.append((_label(label, number),) if inside else ())
        types.append((f"sentence {number}",) if inside else ())   # each sentence its own type
    return Examples(tuple(encodings), tuple(positions), tuple(labels), tuple(types), dropped)


def marked_words(encoding: Encoding) -> list[Word]:
    """The words a marked-word item's index counts: ``core.words``' words, [CLS], [SEP] and
    padding left out (index 0 is the sentence's first word)."""
    return [w for w in words_of_encoding(encoding) if not w.special and w.real]


def _marked_examples(bundle: ModelBundle, items: Sequence[Any]) -> Examples:
    encodings, positions, labels, types = [], [], [], []
    for number, (text, index, label) in enumerate(items, start=1):
        if not str(text or "").strip():
            raise InputError(N_("Sentence {number} is empty."), number=number)
        enc = encode(bundle, str(text))
        words = marked_words(enc)
        try:
            k = int(index)
        except (TypeError, ValueError):
            k = -1
        if not 0 <= k < len(words):
            raise InputError(N_plural("Sentence {number} has {count} word (counted from 0), so "
                                      "it has no word {index}.",
                                      "Sentence {number} has {count} words (counted from 0), so "
                                      "it has no word {index}."),
                             how_many=len(words), number=number, count=len(words),
                             index=index)
        encodings.append(enc)
        positions.append((words[k].positions,))
        labels.append((_label(label, number),))
        types.append((words[k].text.casefold(),))
    return Examples(tuple(encodings), tuple(positions), tuple(labels), tuple(types), 0)


def examples_of(bundle: ModelBundle, task: ProbeTask, items: Sequence[Any]) -> Examples:
    """The items as examples over the model's own tokens; InputError for an item that is not
    of the task's shape."""
    try:
        if task is ProbeTask.WORD_TAGS:
            return _tag_examples(bundle, items)
        if task is ProbeTask.SENTENCE_LABELS:
            return _sentence_examples(bundle, items)
        return _marked_examples(bundle, items)
    except (TypeError, ValueError) as exc:   # an item that does not unpack as the task's
        raise InputError(N_("The examples are not in the task's form: {form}."),
                         form=_FORMS[ProbeTask(task)]) from exc


_FORMS = {
    ProbeTask.WORD_TAGS: "(words, tags)",
    ProbeTask.SENTENCE_LABELS: "(text, label)",
    ProbeTask.MARKED_WORDS: "(text, word index, label)",
}


# --- the model's vectors ------------------------------------------------------------------------

@torch.inference_mode()
def example_vectors(bundle: ModelBundle, examples: Examples, progress: Progress | None = None
                    ) -> np.ndarray:
    """(layers + 1, examples, d) float32: each example's vector at every hidden state, in
    sentence order; each the mean of its tokens' vectors (``core.words.membership``)."""
    counts = [len(p) for p in examples.positions]
    first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    layers = int(bundle.config.num_hidden_layers) + 1
    out = np.empty((layers, int(first[-1]), int(bundle.config.hidden_size)), dtype=np.float32)
    ids = [e.input_ids for e in examples.encodings]
    done = 0
    for group in batches([len(x) for x in ids]):
        inputs = padded(bundle, [ids[i] for i in group])
        with model_run():
            hidden = bundle.model(**inputs, output_hidden_states=True,
                                  return_dict=True).hidden_states
        states = torch.stack(hidden).numpy()                        # (L+1, B, T, d)
        for row, i in enumerate(group):
            if not counts[i]:
                continue
            groups = [Word(text="", positions=p) for p in examples.positions[i]]
            member = membership(groups, states.shape[2])            # (W, T)
            mean = (member / member.sum(axis=1, keepdims=True)).astype(np.float32)
            out[:, first[i]:first[i + 1]] = mean @ states[:, row]   # (L+1, W, d)
        done += len(group)
        if progress is not None:
            progress(done, len(ids))
    return out


# --- the probe ----------------------------------------------------------------------------------

def control_labels(types: Sequence[str], labels: Sequence[str], seed: int = 0) -> list[str]:
    """Hewitt & Liang's control task: each distinct type (in sorted order) gets a label drawn
    from the labels' own frequencies, so an example's control label is a function of its type
    alone."""
    names, counts = np.unique(np.asarray(labels, dtype=object).astype(str), return_counts=True)
    rng = np.random.default_rng(seed)
    distinct = sorted(set(types))
    drawn = rng.choice(len(names), size=len(distinct), p=counts / counts.sum())
    of_type = {t: str(names[k]) for t, k in zip(distinct, drawn, strict=True)}
    return [of_type[t] for t in types]


def fold_split(groups: np.ndarray, folds: int, seed: int = 0) -> np.ndarray:
    """(examples,) the fold each example is tested in: scikit-learn's GroupKFold over the
    sentences, shuffled by ``seed``."""
    test_fold = np.empty(len(groups), dtype=np.int64)
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    for k, (_, test) in enumerate(splitter.split(np.zeros(len(groups)), groups=groups)):
        test_fold[test] = k
    return test_fold


def make_probe(seed: int = 0) -> Any:
    """The probe: standardise each dimension on the training fold, then a multinomial logistic
    regression (L2 with ``C``, lbfgs, ``MAX_ITER`` steps)."""
    return make_pipeline(StandardScaler(),
                         LogisticRegression(C=C, max_iter=MAX_ITER, random_state=seed))


def fold_scores(x: np.ndarray, y: np.ndarray, test_fold: np.ndarray, seed: int = 0
                ) -> np.ndarray:
    """(folds,) the probe's test accuracy on each fold of one layer's vectors ``x``."""
    scores = []
    for k in range(int(test_fold.max()) + 1):
        train, test = test_fold != k, test_fold == k
        if len(np.unique(y[train])) < 2:   # one label left to learn: that label is the answer
            scores.append(float(np.mean(y[test] == y[train][0])))
            continue
        probe = make_probe(seed).fit(x[train], y[train])
        scores.append(float(probe.score(x[test], y[test])))
    return np.asarray(scores)


def _check(labels: list[str], sentences: int, folds: int) -> None:
    if folds < MIN_FOLDS:
        raise InputError(N_("A probe needs at least {least} folds, not {folds}."),
                         least=MIN_FOLDS, folds=folds)
    if not labels:
        raise InputError(N_("There are no examples to probe: give at least a few labelled "
                            "sentences."))
    distinct = set(labels)
    if len(distinct) < 2:
        raise InputError(N_("Every example has the label “{label}”: a probe needs at least two "
                            "different labels to tell apart."), label=next(iter(distinct)))
    if sentences < folds:
        raise InputError(N_("{folds} folds need at least {folds} sentences with examples (each "
                            "fold tests on sentences the probe was not trained on); there are "
                            "{sentences}. Add sentences or use fewer folds."),
                         folds=folds, sentences=sentences)


def check_items(task: ProbeTask | str, items: Sequence[Any], folds: int = 5) -> None:
    """What can be said of ``items`` before the model reads them: InputError for a sentence
    whose tags do not match its words, one label only, or too few sentences for the folds
    (``layer_probe`` checks the same again on the examples the tokenizer leaves)."""
    task = ProbeTask(task)
    labels: list[str] = []
    sentences = 0
    for number, item in enumerate(items, start=1):
        if task is ProbeTask.WORD_TAGS:
            words, tags = (list(x) for x in item)
            if len(words) != len(tags):
                raise InputError(N_("Sentence {number}: words: {words}, tags: {tags}. Give one "
                                    "tag per word."), number=number, words=len(words),
                                 tags=len(tags))
            labels += [_label(t, number) for t in tags]
        else:
            labels.append(_label(item[-1], number))
        sentences += 1
    _check(labels, sentences, int(folds))


def layer_probe(bundle: ModelBundle, task: ProbeTask | str, items: Sequence[Any], *,
                folds: int = 5, seed: int = 0, progress: Progress | None = None) -> LayerProbe:
    """Probe every hidden state of ``bundle`` for ``task`` on ``items`` (see the module doc).
    ``progress(done, total)`` is called as sentences are read, then as layers are fitted.
    InputError for items that cannot make a probe (one label only, too few sentences for the
    folds, a sentence whose tags do not match its words, ...)."""
    started = time.perf_counter()
    task = ProbeTask(task)
    examples = examples_of(bundle, task, list(items))
    labels = [label for sentence in examples.labels for label in sentence]
    types = [t for sentence in examples.types for t in sentence]
    sentence_of = np.repeat(np.arange(len(examples.labels)),
                            [len(x) for x in examples.labels])
    _check(labels, len(set(sentence_of.tolist())), int(folds))
    layers = int(bundle.config.num_hidden_layers) + 1
    total = len(examples.encodings) + 2 * layers

    def read(done: int, _total: int) -> None:
        if progress is not None:
            progress(done, total)

    vectors = example_vectors(bundle, examples, read)
    y = np.asarray(labels, dtype=object).astype(str)
    y_control = np.asarray(control_labels(types, labels, seed), dtype=object).astype(str)
    test_fold = fold_split(sentence_of, int(folds), seed)
    accuracy, control = np.empty((2, layers, int(folds)))
    done = len(examples.encodings)
    for layer in range(layers):
        accuracy[layer] = fold_scores(vectors[layer], y, test_fold, seed)
        control[layer] = fold_scores(vectors[layer], y_control, test_fold, seed)
        done += 2
        read(done, total)
    counter = Counter(labels)
    names = tuple(sorted(counter))
    for array in (sentence_of, test_fold):
        array.flags.writeable = False
    return LayerProbe(
        task=task, model_name=bundle.name,
        accuracy=accuracy.mean(axis=1), spread=accuracy.std(axis=1),
        control=control.mean(axis=1), control_spread=control.std(axis=1),
        majority=max(counter.values()) / len(labels), labels=names,
        counts=tuple(counter[n] for n in names), sentences=len(set(sentence_of.tolist())),
        folds=int(folds), sentence_of=sentence_of, test_fold=test_fold,
        dropped=examples.dropped, seconds=time.perf_counter() - started)
