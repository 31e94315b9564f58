"""Fine-tuning the loaded encoder on one task, as the tutorial describes it: a linear layer trained
from scratch together with BERT's own parameters (or alone, on frozen features: ELMo's way).

    run = fine_tune(bundle, "sentence_class", [("I love this film", "pos"), ...],
                    held_out=[...], epochs=1)
    run.losses            # one per step
    run.evaluations[-1]   # the held-out figures after the last epoch (index 0: before training)
    compare_pairs(run.bundle, pairs)      # the tuned encoder, wherever a bundle is taken

The task models are transformers' own classes (``BertForSequenceClassification``,
``BertForTokenClassification``, ``BertForQuestionAnswering``) built on a copy of the loaded
encoder's weights, so the shared bundle is never touched. pair_score has no head: the model's
own sentence recipe (the pooling ``compare_pairs`` uses) gives two vectors whose cosine is
regressed on the score scaled to 0..1, as sentence-transformers' ``CosineSimilarityLoss`` does.

Every random choice (the new head's weights, dropout, the order of the items) comes from ``seed``
inside ``torch.random.fork_rng``: the same seed and items give the same losses, and the caller's
random state is as it was. Each step runs inside ``core.models.model_run()``, so a run shares
the machine with other sessions' forward passes step by step instead of holding a slot for its
whole length.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch.nn import functional
from transformers import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
    get_linear_schedule_with_warmup,
)

from core.errors import N_, InputError
from core.finetune.batches import Batch, encode_batch
from core.finetune.checks import check_items, check_settings, label_set
from core.finetune.evaluation import (
    Evaluation,
    class_predictions,
    score,
    span_predictions,
    tag_predictions,
)
from core.finetune.runs import FineTuneRun, tuned_bundle
from core.finetune.tasks import FineTuneTask
from core.models import ModelBundle, model_run
from core.similarity.pairs import compare_pairs, prompt_length, recipe_of
from core.similarity.recipe import Recipe, pool

EVAL_BATCH = 32

TASK_MODELS: dict[FineTuneTask, type] = {
    FineTuneTask.SENTENCE_CLASS: BertForSequenceClassification,
    FineTuneTask.PAIR_CLASS: BertForSequenceClassification,
    FineTuneTask.TOKEN_TAGS: BertForTokenClassification,
    FineTuneTask.SPAN: BertForQuestionAnswering,
}


@dataclass(frozen=True)
class TrainingStep:
    """Where a run stands after a step: ``step`` of ``total`` (1-based), its loss, the time."""

    step: int
    total: int
    epoch: int
    loss: float
    seconds: float


def task_model(bundle: ModelBundle, task: FineTuneTask,
               labels: Sequence[str]) -> torch.nn.Module:
    """transformers' model of ``task`` with the loaded encoder's weights (a copy) and a new head
    drawn from torch's current random state; pair_score's is a copy of the encoder itself."""
    if task == FineTuneTask.PAIR_SCORE:
        return copy.deepcopy(bundle.model)
    config = copy.deepcopy(bundle.config)
    if task != FineTuneTask.SPAN:
        config.num_labels = len(labels)
        config.id2label = dict(enumerate(labels))
        config.label2id = {label: i for i, label in enumerate(labels)}
        if task != FineTuneTask.TOKEN_TAGS:
            config.problem_type = "single_label_classification"
    model = TASK_MODELS[task](config)
    # The encoder's weights as loaded; the token and span models have no pooler (transformers
    # builds them without one), so the pooler's weights are the only ones they leave out.
    missing, _ = model.bert.load_state_dict(bundle.model.state_dict(), strict=False)
    assert all(key.startswith("pooler.") for key in missing), missing
    return model


def fine_tune(bundle: ModelBundle, task: FineTuneTask | str, train: Sequence[tuple], *,
              held_out: Sequence[tuple] | None = None, epochs: int = 1, batch_size: int = 16,
              learning_rate: float = 2e-5, warmup: float = 0.1, freeze_encoder: bool = False,
              seed: int = 0, max_length: int = 128, labels: Sequence[str] | None = None,
              progress: Callable[[TrainingStep], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> FineTuneRun:
    """Train ``bundle``'s encoder with ``task``'s head on ``train``; see the module's docstring.

    Raises ``InputError`` (a message for the reader) for items or settings it cannot train on.
    """
    task = _task(task)
    check_settings(task, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                   warmup=warmup, freeze_encoder=freeze_encoder, max_length=max_length)
    max_length = min(max_length, int(bundle.config.max_position_embeddings))
    train = check_items(task, train, part="train")
    held = check_items(task, held_out, part="held_out", minimum=1) if held_out else ()
    labels = label_set(task, train, held, labels)
    label_ids = {label: i for i, label in enumerate(labels)}
    recipe = recipe_of(bundle.name)
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = task_model(bundle, task, labels)
        trainable = _trainable(model, task, freeze_encoder)
        order = torch.Generator().manual_seed(seed)
        steps_per_epoch = math.ceil(len(train) / batch_size)
        total = epochs * steps_per_epoch
        optimizer = torch.optim.AdamW(trainable, lr=learning_rate)
        schedule = get_linear_schedule_with_warmup(optimizer, int(warmup * total), total)
        evaluations = [_evaluate(bundle, model, task, held, labels, label_ids, max_length,
                                 recipe, epoch=0)] if held else []
        losses: list[float] = []
        truncated, stopped, epoch = 0, False, 0
        for epoch in range(1, epochs + 1):
            permutation = torch.randperm(len(train), generator=order).tolist()
            for first in range(0, len(train), batch_size):
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                items = [train[i] for i in permutation[first:first + batch_size]]
                batch = encode_batch(bundle, task, items, label_ids, max_length)
                truncated += batch.truncated if epoch == 1 else 0
                with model_run():
                    _train_mode(model, freeze_encoder)
                    loss = _loss(model, task, batch, recipe, bundle)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    optimizer.step()
                    schedule.step()
                losses.append(float(loss.detach()))
                if progress is not None:
                    progress(TrainingStep(len(losses), total, epoch, losses[-1],
                                          time.perf_counter() - started))
            if held and (losses or not stopped):
                evaluations.append(_evaluate(bundle, model, task, held, labels, label_ids,
                                             max_length, recipe, epoch=epoch))
            if stopped:
                break
        model.eval()
        for parameter in model.parameters():
            parameter.requires_grad_(False)
    encoder = model if isinstance(model, BertModel) else model.bert
    return FineTuneRun(
        task=task, labels=tuple(labels), bundle=tuned_bundle(bundle, encoder),
        base_name=bundle.name, model=model, losses=tuple(losses),
        evaluations=tuple(evaluations), seconds=time.perf_counter() - started,
        steps=len(losses), stopped=stopped, truncated=truncated,
        freeze_encoder=freeze_encoder,
        settings={"epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate,
                  "warmup": warmup, "seed": seed, "max_length": max_length})


def _task(task: FineTuneTask | str) -> FineTuneTask:
    try:
        return FineTuneTask(task)
    except ValueError:
        raise InputError(
            N_("“{task}” is not a fine-tuning task; the tasks are: {tasks}."),
            task=str(task), tasks=", ".join(FineTuneTask)) from None


def _trainable(model: torch.nn.Module, task: FineTuneTask,
               freeze_encoder: bool) -> list[torch.nn.Parameter]:
    """The parameters the optimizer moves: all of them, or the head's alone (frozen features)."""
    if freeze_encoder:
        encoder: torch.nn.Module = getattr(model, "bert", model)
        for parameter in encoder.parameters():
            parameter.requires_grad_(False)
    return [p for p in model.parameters() if p.requires_grad]


def _train_mode(model: torch.nn.Module, freeze_encoder: bool) -> None:
    model.train()
    encoder: torch.nn.Module | None = getattr(model, "bert", None)
    if freeze_encoder and encoder is not None:
        encoder.eval()   # frozen features are the encoder's own: no dropout inside it


def _loss(model: torch.nn.Module, task: FineTuneTask, batch: Batch, recipe: Recipe,
          bundle: ModelBundle) -> torch.Tensor:
    if task != FineTuneTask.PAIR_SCORE:
        return model(**batch.inputs).loss
    assert batch.second is not None and batch.targets is not None
    cosine = pair_cosines(model, batch.inputs, batch.second, recipe,
                          prompt_length(bundle, recipe.prompt))
    return cosine_similarity_loss(cosine, batch.targets)


def pair_cosines(model: torch.nn.Module, first: dict, second: dict, recipe: Recipe,
                 skip: int = 0) -> torch.Tensor:
    """(B,) cosines of the sentence vectors of two batches, by the model's own recipe."""
    u = pool(model(**first).last_hidden_state, first["attention_mask"], recipe, skip)
    v = pool(model(**second).last_hidden_state, second["attention_mask"], recipe, skip)
    return functional.cosine_similarity(u, v)


def cosine_similarity_loss(cosine: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """sentence-transformers' CosineSimilarityLoss: the mean squared error of the cosines."""
    return functional.mse_loss(cosine, targets.to(cosine.dtype))


@torch.no_grad()
def _evaluate(bundle: ModelBundle, model: torch.nn.Module, task: FineTuneTask,
              items: Sequence[tuple], labels: Sequence[str], label_ids: dict[str, int],
              max_length: int, recipe: Recipe, *, epoch: int) -> Evaluation:
    model.eval()
    if task == FineTuneTask.PAIR_SCORE:
        # The checked entry every page uses: the tuned encoder's own figure per pair.
        tuned = tuned_bundle(bundle, model)
        frame = compare_pairs(tuned, [(item[0], item[1]) for item in items], recipe=recipe)
        return score(task, items, [float(c) for c in frame["cosine"]], epoch, labels)
    predictions: list = []
    for first in range(0, len(items), EVAL_BATCH):
        chunk = items[first:first + EVAL_BATCH]
        batch = encode_batch(bundle, task, chunk, label_ids, max_length)
        inputs = {k: v for k, v in batch.inputs.items()
                  if k not in ("labels", "start_positions", "end_positions")}
        with model_run():
            out = model(**inputs)
        if task == FineTuneTask.TOKEN_TAGS:
            predictions += tag_predictions(out.logits, batch, labels)
        elif task == FineTuneTask.SPAN:
            predictions += span_predictions(out.start_logits, out.end_logits, batch,
                                            [item[1] for item in chunk])
        else:
            predictions += class_predictions(out.logits, labels)
    return score(task, items, predictions, epoch, labels)
