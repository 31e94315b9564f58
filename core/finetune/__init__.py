"""Fine-tuning in the room: the tutorial's four patterns, and a sentence model on scored pairs,
trained live on the loaded model with transformers' own task heads (core.finetune.training).

    from core import load_model, fine_tune
    from core.finetune import builtin_set
    data = builtin_set("sentence_class", "en")
    run = fine_tune(load_model(), "sentence_class", data.train, held_out=data.held_out)
    run.evaluations[0].metrics, run.evaluations[-1].metrics    # before and after
"""

from typing import TYPE_CHECKING

from core.lazy import lazy_names

if TYPE_CHECKING:
    from core.finetune.builtin import BuiltinSet, builtin_set
    from core.finetune.evaluation import Evaluation, Metric
    from core.finetune.memory import training_bytes
    from core.finetune.runs import FineTuneRun
    from core.finetune.tasks import FineTuneTask
    from core.finetune.training import TrainingStep, fine_tune

__all__ = ["BuiltinSet", "Evaluation", "FineTuneRun", "FineTuneTask", "Metric", "TrainingStep",
           "builtin_set", "fine_tune", "training_bytes"]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(globals(), {
        "core.finetune.builtin": ("BuiltinSet", "builtin_set"),
        "core.finetune.evaluation": ("Evaluation", "Metric"),
        "core.finetune.memory": ("training_bytes",),
        "core.finetune.runs": ("FineTuneRun",),
        "core.finetune.tasks": ("FineTuneTask",),
        "core.finetune.training": ("TrainingStep", "fine_tune"),
    })
