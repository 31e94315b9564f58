"""core.probes: the probe at every layer against one written here with scikit-learn on
transformers' own hidden states, the control task, the folds, the built-in sets and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from transformers import BertModel

from core import InputError, ModelBundle, layer_probe
from core.contexts.corpus_data import CHINESE_SENSES, ENGLISH_SENSES
from core.probes import (
    TASK_OF,
    BuiltinSet,
    ProbeTask,
    builtin_items,
    expected_layer,
    read_conllu,
    read_labelled_table,
)
from core.probes.probe import control_labels
from tests.conftest import tiny_config

pytestmark = pytest.mark.usefixtures("one_blas_thread")

# Labelled sentences written for this test alone (no other test or built-in set has them).
TAGGED = [
    ("Seven grey geese crossed the frozen pond".split(), "NUM ADJ NOUN VERB DET ADJ NOUN".split()),
    ("A tired miner sang quietly".split(), "DET ADJ NOUN VERB ADV".split()),
    ("The lanterns flickered over the harbour".split(), "DET NOUN VERB ADP DET NOUN".split()),
    ("Old sailors mend torn nets".split(), "ADJ NOUN VERB ADJ NOUN".split()),
    ("Her cousin painted three blue doors".split(), "PRON NOUN VERB NUM ADJ NOUN".split()),
    ("Quiet owls watched the sleeping village".split(), "ADJ NOUN VERB DET ADJ NOUN".split()),
    ("Two clever foxes escaped".split(), "NUM ADJ NOUN VERB".split()),
    ("The baker slowly kneaded warm dough".split(), "DET NOUN ADV VERB ADJ NOUN".split()),
    ("Bright kites drifted above the dunes".split(), "ADJ NOUN VERB ADP DET NOUN".split()),
    ("My neighbour repaired an ancient clock".split(), "PRON NOUN VERB DET ADJ NOUN".split()),
    ("Five hungry gulls circled".split(), "NUM ADJ NOUN VERB".split()),
    ("The violinist played softly".split(), "DET NOUN VERB ADV".split()),
]
LABELLED = [
    ("The heron waded into the marsh.", "past"), ("The heron wades into the marsh.", "present"),
    ("Our choir rehearsed on Tuesdays.", "past"), ("Our choir rehearses on Tuesdays.", "present"),
    ("The miller ground the wheat.", "past"), ("The miller grinds the wheat.", "present"),
    ("Lena knitted a scarf.", "past"), ("Lena knits a scarf.", "present"),
    ("The ferry crossed the strait.", "past"), ("The ferry crosses the strait.", "present"),
    ("They whistled a tune.", "past"), ("They whistle a tune.", "present"),
]


def hand_probe(states: list[np.ndarray], labels: list[str], groups: np.ndarray, folds: int,
               seed: int = 0) -> np.ndarray:
    """Mean test accuracy at every layer: scikit-learn alone, folds by sentence."""
    y = np.asarray(labels)
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    splits = list(splitter.split(np.zeros(len(y)), groups=groups))
    out = []
    for x in states:
        scores = []
        for train, test in splits:
            probe = make_pipeline(StandardScaler(),
                                  LogisticRegression(C=0.1, max_iter=100,
                                                     random_state=seed))
            scores.append(probe.fit(x[train], y[train]).score(x[test], y[test]))
        out.append(np.mean(scores))
    return np.asarray(out)


@pytest.fixture(scope="module")
def tiny(bundle: ModelBundle) -> ModelBundle:
    torch.manual_seed(1)
    model = BertModel(tiny_config(num_hidden_layers=3)).eval()
    return ModelBundle(name="tiny-probe-bert", model=model, tokenizer=bundle.tokenizer)


def word_vectors(bundle: ModelBundle, words: list[str]) -> np.ndarray:
    """(layers + 1, words, d): each word the mean of its pieces, by the tokenizer's own word
    ids, from BertModel(..., output_hidden_states=True) on the sentence alone."""
    enc = bundle.tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = bundle.model(**enc, output_hidden_states=True).hidden_states
    ids = enc.word_ids(0)
    states = torch.stack(hidden)[:, 0].double().numpy()           # (L+1, T, d)
    return np.stack([states[:, [p for p, w in enumerate(ids) if w == k]].mean(axis=1)
                     for k in range(len(words))], axis=1)


def test_word_probe_equals_scikit_learn_on_transformers_hidden_states(tiny):
    probe = layer_probe(tiny, ProbeTask.WORD_TAGS, TAGGED, folds=4, seed=0)
    vectors = np.concatenate([word_vectors(tiny, w) for w, _ in TAGGED], axis=1)
    labels = [t for _, tags in TAGGED for t in tags]
    groups = np.repeat(np.arange(len(TAGGED)), [len(w) for w, _ in TAGGED])
    assert probe.accuracy.shape == (tiny.config.num_hidden_layers + 1,)
    np.testing.assert_allclose(probe.accuracy, hand_probe(list(vectors), labels, groups, 4))
    types = [w.casefold() for words, _ in TAGGED for w in words]
    control = control_labels(types, labels, seed=0)
    np.testing.assert_allclose(probe.control, hand_probe(list(vectors), control, groups, 4))
    np.testing.assert_allclose(probe.selectivity, probe.accuracy - probe.control)
    assert probe.majority == pytest.approx(labels.count("NOUN") / len(labels))
    assert probe.examples == len(labels) and probe.sentences == len(TAGGED)
    assert not tiny.model.training   # the shared model was only read


def test_sentence_probe_equals_scikit_learn_on_the_shipped_model(bundle):
    probe = layer_probe(bundle, ProbeTask.SENTENCE_LABELS, LABELLED, folds=3, seed=2)
    states = []
    for text, _ in LABELLED:
        enc = bundle.tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            hidden = BertModel.forward(bundle.model, **enc, output_hidden_states=True)
        inner = torch.stack(hidden.hidden_states)[:, 0, 1:-1].double()   # no [CLS], [SEP]
        states.append(inner.mean(axis=1).numpy())
    vectors = np.stack(states, axis=1)                                  # (L+1, n, d)
    labels = [label for _, label in LABELLED]
    expected = hand_probe(list(vectors), labels, np.arange(len(LABELLED)), 3, seed=2)
    np.testing.assert_allclose(probe.accuracy, expected)
    assert probe.majority == 0.5


def test_control_labels_are_a_function_of_the_word_type_alone():
    types = ["the", "cat", "the", "sat", "cat", "on", "the", "mat"] * 20
    labels = ["DET", "NOUN", "DET", "VERB", "NOUN", "ADP", "DET", "NOUN"] * 20
    control = control_labels(types, labels, seed=3)
    of_type: dict[str, set[str]] = {}
    for t, c in zip(types, control, strict=True):
        of_type.setdefault(t, set()).add(c)
    assert all(len(found) == 1 for found in of_type.values())
    assert set(control) <= set(labels)
    assert control == control_labels(types, labels, seed=3)                 # fixed by the seed
    # the same types in another order (and more of them) keep their labels
    assert control_labels(list(reversed(types)), labels, seed=3) == list(reversed(control))
    # drawn with the labels' own frequencies: over many types, near them
    many = [f"w{k}" for k in range(4000)]
    drawn = control_labels(many, ["A"] * 3000 + ["B"] * 1000, seed=0)
    assert drawn.count("A") / len(drawn) == pytest.approx(0.75, abs=0.03)


def test_no_sentence_in_both_a_train_and_a_test_fold(tiny):
    probe = layer_probe(tiny, ProbeTask.WORD_TAGS, TAGGED, folds=5, seed=7)
    for sentence in np.unique(probe.sentence_of):
        assert len(np.unique(probe.test_fold[probe.sentence_of == sentence])) == 1
    assert sorted(np.unique(probe.test_fold)) == list(range(5))


def test_expected_layer_is_the_centre_of_gravity_of_the_gains():
    assert expected_layer(np.array([0.5, 0.7, 0.8, 0.8])) == pytest.approx((0.2 + 0.2) / 0.3)
    assert expected_layer(np.array([0.2, 0.2, 0.9])) == pytest.approx(2.0)
    assert np.isnan(expected_layer(np.array([0.9, 0.8, 0.7])))
    # a probe on one layer alone can fall; the gains are those of the running best, as
    # Tenney's cumulative probe's, so the centre stays between layer 1 and the last
    assert expected_layer(np.array([0.8, 0.9, 0.85, 0.95])) == pytest.approx(
        (1 * 0.1 + 3 * 0.05) / 0.15)
    falls = np.array([0.843, 0.946, 0.995, 0.99, 1.0, 0.98, 0.931])
    assert 1 <= expected_layer(falls) <= 6


# --- built-in sets ------------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["en", "zh"])
def test_builtin_sets(bundle, language):
    pos = builtin_items(BuiltinSet.POS, language, bundle)
    assert len(pos) == 400
    assert all(len(w) == len(t) for w, t in pos)
    assert {t for _, tags in pos for t in tags} <= {
        "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
        "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"}
    tense = builtin_items(BuiltinSet.TENSE, language, bundle)
    assert len(tense) >= 200
    assert {label for _, label in tense} == {"past", "present", "future"}
    senses = builtin_items(BuiltinSet.SENSES, language, bundle)
    groups = ENGLISH_SENSES if language == "en" else CHINESE_SENSES
    assert len(senses) == sum(len(g) for g in groups)
    from core.probes.probe import marked_words
    from core.tokens import encode
    for text, index, label in senses[:24]:
        word = marked_words(encode(bundle, text))[index]
        assert label.split("/")[0].lower() in word.text.lower()
    assert TASK_OF[BuiltinSet.SENSES] is ProbeTask.MARKED_WORDS


def test_marked_word_probe_runs_on_the_senses(tiny):
    items = builtin_items(BuiltinSet.SENSES, "en", tiny)[:48]     # bank, bat, spring, light
    probe = layer_probe(tiny, ProbeTask.MARKED_WORDS, items, folds=3)
    assert probe.examples == 48 and len(probe.labels) == 8
    # one word type per ambiguous word: a control label each
    assert probe.majority == pytest.approx(6 / 48)


# --- a person's files and bad input -------------------------------------------------------------

CONLLU = """# sent_id = 1
# text = I don't like cold tea.
1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tlike\tlike\tVERB\tVB\t_\t0\troot\t_\t_
5\tcold\tcold\tADJ\tJJ\t_\t6\tamod\t_\t_
6\ttea\ttea\tNOUN\tNN\t_\t4\tobj\t_\tSpaceAfter=No
6.1\tlikes\tlike\tVERB\tVBZ\t_\t_\t_\t4:conj\t_
7\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = 2
1\tBirds\tbird\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tsing\tsing\tVERB\tVBP\t_\t0\troot\t_\t_
"""


def test_conllu_with_multiword_tokens_and_empty_nodes():
    read = read_conllu(CONLLU)
    assert read.items[0] == (("I", "do", "n't", "like", "cold", "tea", "."),
                             ("PRON", "AUX", "PART", "VERB", "ADJ", "NOUN", "PUNCT"))
    assert read.items[1] == (("Birds", "sing"), ("NOUN", "VERB"))
    assert (read.multiword_tokens, read.empty_nodes, read.lines) == (1, 1, (1, 13))


def test_conllu_errors_name_the_line():
    with pytest.raises(InputError) as bad:
        read_conllu("1\tBirds\tbird\tNOUN\n\n1\tsing\n")
    assert bad.value.params["line"] in (1, 3)
    with pytest.raises(InputError) as untagged:
        read_conllu(CONLLU.replace("5\tcold\tcold\tADJ", "5\tcold\tcold\t_"))
    assert untagged.value.params["line"] == 8 and untagged.value.params["word"] == "cold"
    with pytest.raises(InputError):
        read_conllu("# only a comment\n\n")


def test_tags_that_do_not_match_the_words_name_the_line():
    with pytest.raises(InputError) as bad:
        read_labelled_table("words\ttags\nthe cat sat\tDET NOUN VERB\na dog ran\tDET NOUN\n",
                            ProbeTask.WORD_TAGS)
    assert bad.value.params == {"line": 3, "words": 3, "tags": 2}
    with pytest.raises(InputError) as in_core:
        layer_probe(None, ProbeTask.WORD_TAGS, [(["a", "b"], ["X"])])   # type: ignore[arg-type]
    assert in_core.value.params["number"] == 1


def test_a_table_of_text_and_label():
    table = read_labelled_table("text,label\nIt rained.,past\nIt rains.,present\n",
                                ProbeTask.SENTENCE_LABELS)
    assert table.items == (("It rained.", "past"), ("It rains.", "present"))
    assert table.lines == (2, 3)
    marked = read_labelled_table("He sat on the bank\t4\triver\n", ProbeTask.MARKED_WORDS)
    assert marked.items == (("He sat on the bank", 4, "river"),)


def test_one_label_only(tiny):
    with pytest.raises(InputError) as bad:
        layer_probe(tiny, ProbeTask.SENTENCE_LABELS, [(t, "past") for t, _ in LABELLED])
    assert bad.value.params == {"label": "past"}


def test_too_few_sentences_for_the_folds(tiny):
    with pytest.raises(InputError) as bad:
        layer_probe(tiny, ProbeTask.WORD_TAGS, TAGGED[:3], folds=5)
    assert bad.value.params == {"folds": 5, "sentences": 3}
    assert "3" in str(bad.value) and "5 folds" in str(bad.value)


def test_a_marked_word_out_of_range(tiny):
    with pytest.raises(InputError) as bad:
        layer_probe(tiny, ProbeTask.MARKED_WORDS, [("Birds sing.", 5, "x")] * 6)
    assert bad.value.params["index"] == 5 and bad.value.params["count"] == 3


def test_check_items_says_it_before_the_model_reads_anything():
    from core.probes import check_items
    check_items(ProbeTask.WORD_TAGS, TAGGED, folds=5)
    with pytest.raises(InputError) as mismatch:
        check_items(ProbeTask.WORD_TAGS, [*TAGGED, (["a", "b"], ["DET"])])
    assert mismatch.value.params == {"number": len(TAGGED) + 1, "words": 2, "tags": 1}
    with pytest.raises(InputError) as one_label:
        check_items(ProbeTask.MARKED_WORDS, [("Birds sing.", 0, "x")] * 6)
    assert one_label.value.params == {"label": "x"}
    with pytest.raises(InputError) as few:
        check_items(ProbeTask.SENTENCE_LABELS, LABELLED[:4], folds=5)
    assert few.value.params == {"folds": 5, "sentences": 4}
