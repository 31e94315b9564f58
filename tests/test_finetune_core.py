"""core.finetune against transformers' own task models and sentence-transformers' own loss.

Most runs use a 2-layer random BERT with the shipped tokenizer (seconds); the pair_score loss and
one learning check use the shipped all-MiniLM-L6-v2.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from sklearn.metrics import accuracy_score, f1_score
from transformers import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
)

from core import FineTuneTask, InputError, ModelBundle, compare_pairs, fine_tune
from core.finetune.batches import encode_batch
from core.finetune.evaluation import Metric, answer_f1
from core.finetune.memory import training_bytes
from core.finetune.training import cosine_similarity_loss, pair_cosines, task_model
from core.models import default_model_path
from core.similarity.recipe import read_recipe

WORDS = {
    "sports": ["The team won the match", "She ran a fast race", "He scored a late goal",
               "The coach trained the players", "They played tennis all day"],
    "food": ["The soup was too salty", "We baked fresh bread", "He cooked rice and beans",
             "The cake tasted sweet", "She ordered a large pizza"],
}
SENTENCES = [(text, label) for label, texts in WORDS.items() for text in texts]
PAIRS = [("A man plays a guitar", "A person plays music", "true"),
         ("A dog sleeps on the sofa", "The dog is running outside", "false"),
         ("The girl reads a book", "The girl reads a novel about cats", "unknown"),
         ("Two kids swim in a lake", "Children are in the water", "true"),
         ("A chef cuts onions", "Nobody is cooking", "false"),
         ("A woman walks in the rain", "The woman is going home", "unknown"),
         ("The bus is full", "There are people on the bus", "true"),
         ("It is snowing", "It is a hot summer day", "false"),
         ("He buys a ticket", "He is going to a concert", "unknown")]
TAGS = [(("arrive", "Taipei", "on", "November", "2nd"), ("other", "dest", "other", "time", "time")),
        (("fly", "to", "Paris", "tomorrow"), ("other", "other", "dest", "time")),
        (("go", "to", "Rome", "on", "Friday"), ("other", "other", "dest", "other", "time")),
        (("book", "Tokyo", "for", "May", "5th"), ("other", "dest", "other", "time", "time")),
        (("travel", "to", "Oslo", "next", "week"), ("other", "other", "dest", "time", "time")),
        (("reach", "Lima", "at", "noon"), ("other", "dest", "other", "time")),
        (("train", "to", "Berlin", "tonight"), ("other", "other", "dest", "time")),
        (("drive", "to", "Madrid", "on", "Monday"), ("other", "other", "dest", "other", "time"))]
PASSAGES = [("Where does Ana live?", "Ana lives in Lisbon with her sister.", "Lisbon"),
            ("What colour is the car?", "The car parked outside is red.", "red"),
            ("Who wrote the letter?", "The letter was written by Tom last year.", "Tom"),
            ("When does the shop open?", "The shop opens at nine every morning.", "nine"),
            ("What does Li play?", "Li plays the piano after school.", "the piano"),
            ("Where is the key?", "The key is under the mat.", "under the mat"),
            ("How many cats are there?", "There are three cats in the garden.", "three"),
            ("What did Sam eat?", "Sam ate an apple at lunch.", "an apple")]
SPANS = [(q, p, p.index(a), a) for q, p, a in PASSAGES]
SCORED = [("A man plays a guitar", "A man is playing a guitar", 4.8),
          ("A man plays a guitar", "A woman cooks dinner", 0.2),
          ("The cat sleeps", "A cat is sleeping", 4.6),
          ("The cat sleeps", "The stock market fell", 0.0),
          ("Kids play football", "Children play soccer", 4.2),
          ("Kids play football", "A dog barks", 0.4),
          ("It rains in London", "London is rainy today", 3.9),
          ("It rains in London", "He reads the news", 0.3)]

ITEMS = {FineTuneTask.SENTENCE_CLASS: SENTENCES, FineTuneTask.PAIR_CLASS: PAIRS,
         FineTuneTask.TOKEN_TAGS: TAGS, FineTuneTask.SPAN: SPANS,
         FineTuneTask.PAIR_SCORE: SCORED}
CLASSES = {FineTuneTask.SENTENCE_CLASS: BertForSequenceClassification,
           FineTuneTask.PAIR_CLASS: BertForSequenceClassification,
           FineTuneTask.TOKEN_TAGS: BertForTokenClassification,
           FineTuneTask.SPAN: BertForQuestionAnswering,
           FineTuneTask.PAIR_SCORE: BertModel}


def weights(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("task", list(FineTuneTask))
def test_each_task_trains_transformers_own_class_on_the_loaded_weights(tiny_bundle, task):
    before = weights(tiny_bundle.model)
    run = fine_tune(tiny_bundle, task, ITEMS[task], held_out=ITEMS[task], epochs=1,
                    batch_size=4, learning_rate=1e-3)
    assert type(run.model) is CLASSES[task]
    assert len(run.losses) == run.steps == 2 + (len(ITEMS[task]) > 8)
    assert all(np.isfinite(run.losses))
    assert [e.epoch for e in run.evaluations] == [0, 1]
    # The shared bundle is untouched: the run trained a copy.
    assert all(torch.equal(before[k], v) for k, v in tiny_bundle.model.state_dict().items())
    assert run.bundle.name == "tiny-random-bert (tuned)"
    changed = any(not torch.equal(before[k], v)
                  for k, v in run.bundle.model.state_dict().items() if k in before)
    assert changed


def test_a_task_model_starts_from_the_encoder_as_loaded(tiny_bundle):
    for task in (FineTuneTask.SENTENCE_CLASS, FineTuneTask.TOKEN_TAGS, FineTuneTask.SPAN):
        model = task_model(tiny_bundle, task, ["a", "b"])
        base = tiny_bundle.model.state_dict()
        for key, value in model.bert.state_dict().items():
            assert torch.equal(value, base[key]), key


def test_the_same_seed_gives_the_same_losses_and_leaves_the_callers_random_state(tiny_bundle):
    torch.manual_seed(123)
    state = torch.get_rng_state()
    runs = [fine_tune(tiny_bundle, "sentence_class", SENTENCES, epochs=2, batch_size=4,
                      seed=seed) for seed in (7, 7, 8)]
    assert runs[0].losses == runs[1].losses
    assert runs[0].losses != runs[2].losses
    assert torch.equal(torch.get_rng_state(), state)


def test_frozen_features_change_no_encoder_weight(tiny_bundle):
    run = fine_tune(tiny_bundle, "pair_class", PAIRS, epochs=2, batch_size=4,
                    learning_rate=1e-2, freeze_encoder=True)
    base = tiny_bundle.model.state_dict()
    for key, value in run.model.bert.state_dict().items():
        assert torch.equal(value, base[key]), key
    assert not torch.equal(run.model.classifier.weight,
                           task_model(tiny_bundle, FineTuneTask.PAIR_CLASS,
                                      run.labels).classifier.weight) or run.steps == 0


def test_the_held_out_figures_are_the_task_models_own_predictions(tiny_bundle):
    run = fine_tune(tiny_bundle, "sentence_class", SENTENCES, held_out=SENTENCES[::-1],
                    epochs=1, batch_size=4, learning_rate=1e-3)
    held = SENTENCES[::-1]
    encoded = tiny_bundle.tokenize([t for t, _ in held], padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = run.model(**encoded).logits
    predicted = [run.labels[i] for i in logits.argmax(-1).tolist()]
    truth = [label for _, label in held]
    after = run.evaluations[-1]
    assert list(after.predictions) == predicted
    assert after.metrics[Metric.ACCURACY] == pytest.approx(accuracy_score(truth, predicted))
    assert after.metrics[Metric.MACRO_F1] == pytest.approx(
        f1_score(truth, predicted, average="macro", zero_division=0))


def test_tags_sit_on_each_words_first_piece(bundle):
    batch = encode_batch(bundle, FineTuneTask.TOKEN_TAGS,
                         [(("arrive", "Taipei", "on", "November", "2nd"),
                           ("other", "dest", "other", "time", "time"))],
                         {"other": 0, "dest": 1, "time": 2}, 32)
    tokens = bundle.ids_to_tokens(batch.inputs["input_ids"][0].tolist())
    labels = batch.inputs["labels"][0].tolist()
    carried = [(t, label) for t, label in zip(tokens, labels, strict=True) if label != -100]
    words = bundle.tokenize(["arrive", "Taipei", "on", "November", "2nd"],
                            is_split_into_words=True).word_ids()
    firsts = [i for i, w in enumerate(words) if w is not None and w not in words[:i]]
    assert [tokens[i] for i in firsts] == [t for t, _ in carried]
    assert [label for _, label in carried] == [0, 1, 0, 2, 2]


def test_span_targets_are_the_answers_tokens(bundle):
    batch = encode_batch(bundle, FineTuneTask.SPAN, SPANS, {}, 64)
    ids = batch.inputs["input_ids"]
    for row, (_, _, _, answer) in enumerate(SPANS):
        start = int(batch.inputs["start_positions"][row])
        end = int(batch.inputs["end_positions"][row])
        text = bundle.tokenizer.decode(ids[row][start:end + 1])
        assert text == answer.lower()


def test_squad_f1_by_hand():
    assert answer_f1("the piano", "piano") == 1.0
    assert answer_f1("under the mat", "the mat") == pytest.approx(2 / 3)   # "under" is extra
    assert answer_f1("a red car", "red bike") == pytest.approx(0.5)
    assert answer_f1("北京大学", "北京") == pytest.approx(2 * 1.0 * 0.5 / 1.5)


def test_pair_score_loss_is_sentence_transformers_cosine_similarity_loss(bundle):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    folder = str(default_model_path())
    st_model = SentenceTransformer(folder, device="cpu").eval()
    loss_module = CosineSimilarityLoss(st_model)
    firsts, seconds = [a for a, _, _ in SCORED], [b for _, b, _ in SCORED]
    targets = torch.tensor([s / 5.0 for _, _, s in SCORED])
    with torch.no_grad():
        theirs = loss_module([st_model.tokenize(firsts), st_model.tokenize(seconds)], targets)
        batch = encode_batch(bundle, FineTuneTask.PAIR_SCORE, SCORED, {}, 128)
        model = copy.deepcopy(bundle.model).eval()
        ours = cosine_similarity_loss(
            pair_cosines(model, batch.inputs, batch.second, read_recipe(folder)), batch.targets)
    assert float(ours) == pytest.approx(float(theirs), abs=1e-6)


def test_pair_score_learns_and_its_figure_is_compare_pairs_on_the_tuned_bundle(bundle):
    run = fine_tune(bundle, "pair_score", SCORED * 2, held_out=SCORED, epochs=2,
                    batch_size=8, learning_rate=5e-5)
    frame = compare_pairs(run.bundle, [(a, b) for a, b, _ in SCORED])
    after = run.evaluations[-1]
    assert np.allclose(after.predictions, frame["cosine"].to_numpy(), atol=1e-6)
    want = spearmanr(frame["cosine"], [s for _, _, s in SCORED]).statistic
    assert after.metrics[Metric.SPEARMAN] == pytest.approx(want)
    assert run.losses[-1] < run.losses[0]


def test_a_saved_run_reloads_with_the_same_logits(tiny_bundle, tmp_path):
    from core import load_model

    run = fine_tune(tiny_bundle, "sentence_class", SENTENCES, epochs=1, batch_size=4)
    run.save(tmp_path / "tuned")
    again = BertForSequenceClassification.from_pretrained(tmp_path / "tuned").eval()
    encoded = tiny_bundle.tokenize(["The team won", "Fresh bread"], padding=True,
                                   return_tensors="pt")
    with torch.no_grad():
        assert torch.allclose(again(**encoded).logits, run.model(**encoded).logits, atol=1e-6)
        loaded = load_model(str(tmp_path / "tuned"))
        assert torch.allclose(loaded.model(**encoded).last_hidden_state,
                              run.bundle.model(**encoded).last_hidden_state, atol=1e-6)


def test_stop_ends_the_run_at_the_next_step(tiny_bundle):
    seen = []
    run = fine_tune(tiny_bundle, "sentence_class", SENTENCES * 3, held_out=SENTENCES,
                    epochs=3, batch_size=2, progress=seen.append,
                    should_stop=lambda: len(seen) >= 3)
    assert run.stopped and run.steps == 3 == len(run.losses)
    assert [s.step for s in seen] == [1, 2, 3] and seen[0].total == 3 * 15
    assert run.evaluations[-1].epoch == 1


def test_texts_longer_than_the_limit_are_cut_and_counted(tiny_bundle):
    long = " ".join(["word"] * 40)
    items = [*SENTENCES[:8], (long, "food"), (long, "sports")]
    run = fine_tune(tiny_bundle, "sentence_class", items, epochs=1, batch_size=4,
                    max_length=16)
    assert run.truncated == 2


@pytest.mark.parametrize(("task", "items", "words"), [
    ("sentence_class", [(t, "food") for t, _ in SENTENCES], "at least two classes"),
    ("sentence_class", SENTENCES[:7], "at least 8"),
    ("sentence_class", [*SENTENCES[:8], ("One more", "3")], "mix numbers"),
    ("span", [*SPANS[:7], ("Who?", "Ana is here.", 0, "Bob")], "not in its passage"),
    ("token_tags", [*TAGS[:7], (("fly", "home"), ("other",))], "2 words but 1 tags"),
    ("pair_score", [*SCORED[:7], ("a", "b", 7)], "from 0 to 5"),
    ("sentence_class", [*SENTENCES[:8], ("   ", "food")], "empty text"),
    ("nonsense", SENTENCES, "not a fine-tuning task"),
])
def test_bad_items_are_refused_with_their_number(tiny_bundle, task, items, words):
    with pytest.raises(InputError) as error:
        fine_tune(tiny_bundle, task, items)
    assert words in str(error.value)
    if "Item" in error.value.template:
        assert "Item 8 " in str(error.value) or "Item 9 " in str(error.value)


def test_held_out_labels_must_be_seen_in_training(tiny_bundle):
    with pytest.raises(InputError, match="which no training item has"):
        fine_tune(tiny_bundle, "sentence_class", SENTENCES, held_out=[("Rain", "weather")])


def test_frozen_pair_score_has_nothing_to_train(tiny_bundle):
    with pytest.raises(InputError, match="nothing to train"):
        fine_tune(tiny_bundle, "pair_score", SCORED, freeze_encoder=True)


def test_the_memory_estimate_counts_weights_gradients_moments_and_activations(bundle):
    parameters = sum(p.numel() for p in bundle.model.parameters())
    full = training_bytes(bundle, "sentence_class", batch_size=16, max_length=128)
    frozen = training_bytes(bundle, "sentence_class", batch_size=16, max_length=128,
                            freeze_encoder=True)
    assert full >= 16 * parameters        # at least weights, gradients and AdamW's two moments
    assert parameters * 4 < frozen < full
    assert training_bytes(bundle, "pair_score", batch_size=16, max_length=128) > full


def test_fine_tuning_a_copy_never_changes_the_shared_model_mode(bundle: ModelBundle):
    fine_tune(bundle, "sentence_class", SENTENCES, epochs=1, batch_size=5)
    assert not bundle.model.training
    assert all(not p.requires_grad or p.grad is None for p in bundle.model.parameters())
