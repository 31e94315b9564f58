"""The four ways the tutorial fine-tunes BERT, as data for diagrams (no weights, no model run).

Each pattern is one linear layer, trained from scratch, on top of outputs the pretrained model
already gives; its parameter count is exact (weight + bias) and equals the head of the matching
transformers class built from the same config:

    sentence -> class           BertForSequenceClassification.classifier  on pooler_output ([CLS])
    every token -> a class      BertForTokenClassification.classifier     on last_hidden_state
    pair -> class               BertForSequenceClassification.classifier  on pooler_output ([CLS])
    question + text -> a span   BertForQuestionAnswering.qa_outputs       on last_hidden_state,
                                one start and one end score per token (hidden -> 2)
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import BertConfig

from core.errors import N_, InputError

MAX_CLASSES = 1000


@dataclass(frozen=True)
class FinetuningPattern:
    """One fine-tuning set-up: what goes in, which output vectors the new head reads, its size."""

    key: str                        # "sentence_class", "token_class", "pair_class", "span"
    title: str                      # English, marked for translation
    example: str                    # the tutorial's example task, English, marked for translation
    inputs: int                     # sentences fed in: 1 or 2 (a [SEP]-separated pair)
    uses: str                       # "pooler_output" ([CLS] through the pooler) or
                                    # "last_hidden_state" (every token's last-layer vector)
    uses_pooler: bool
    transformers_class: str         # the transformers model with this head
    head_module: str                # the head's attribute in that class
    n_outputs: int                  # outputs per vector read (classes, or 2 for start/end)
    weight_shape: tuple[int, int]   # nn.Linear's weight, (out_features, in_features)
    parameters: int                 # hidden * n_outputs + n_outputs (weight and bias)
    output_shape: str               # what the head gives for a sequence of T tokens


def finetuning_patterns(config: BertConfig, n_classes: int = 2) -> list[FinetuningPattern]:
    """The tutorial's four fine-tuning patterns for a model of ``config`` (e.g. bundle.config).

    ``n_classes`` is the number of classes of the three classification patterns; the span
    pattern always has two outputs per token (start and end score).
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, int) or not (
            1 <= n_classes <= MAX_CLASSES):
        raise InputError(
            N_("The number of classes must be a whole number from 1 to {limit}; “{value}” is "
               "not."),
            limit=MAX_CLASSES, value=str(n_classes),
        )
    hidden = int(config.hidden_size)

    def pattern(key: str, title: str, example: str, inputs: int, pooled: bool, cls: str,
                module: str, n_out: int, output_shape: str) -> FinetuningPattern:
        return FinetuningPattern(
            key=key, title=title, example=example, inputs=inputs,
            uses="pooler_output" if pooled else "last_hidden_state", uses_pooler=pooled,
            transformers_class=cls, head_module=module, n_outputs=n_out,
            weight_shape=(n_out, hidden), parameters=hidden * n_out + n_out,
            output_shape=output_shape,
        )

    return [
        pattern("sentence_class", N_("One sentence in, one class out"),
                N_("Sentiment: is this review positive or negative?"),
                1, True, "BertForSequenceClassification", "classifier", n_classes,
                f"({n_classes},)"),
        pattern("token_class", N_("One sentence in, a class for every token"),
                N_("Slot filling: “arrive Taipei on November 2nd” -> other, dest, other, time, "
                   "time"),
                1, False, "BertForTokenClassification", "classifier", n_classes,
                f"(T, {n_classes})"),
        pattern("pair_class", N_("Two sentences in, one class out"),
                N_("Natural language inference: does the premise make the hypothesis true, "
                   "false or unknown?"),
                2, True, "BertForSequenceClassification", "classifier", n_classes,
                f"({n_classes},)"),
        pattern("span", N_("A question and a text in, the answer's span out"),
                N_("Extractive question answering: the answer is the text from the token with "
                   "the best start score to the token with the best end score"),
                2, False, "BertForQuestionAnswering", "qa_outputs", 2, "(T, 2)"),
    ]
