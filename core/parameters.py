"""Parameter counts of a BertModel from its config alone, term by term.

The terms follow the modules of ``transformers.models.bert.modeling_bert`` so each line of the
breakdown can be found in ``model.named_parameters()``.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import BertConfig


@dataclass(frozen=True)
class ParameterTerm:
    group: str      # "embeddings", "encoder.layer", "pooler"
    module: str     # module name as in the model, e.g. "attention.self.query"
    formula: str    # in the config's symbols, e.g. "h*h + h"
    count: int      # for one instance (one layer for encoder terms)
    repeats: int = 1

    @property
    def total(self) -> int:
        return self.count * self.repeats


def parameter_terms(config: BertConfig, with_pooler: bool = True) -> list[ParameterTerm]:
    """Every parameter block of a BertModel, counted from the config."""
    v, p, t = config.vocab_size, config.max_position_embeddings, config.type_vocab_size
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    terms = [
        ParameterTerm("embeddings", "word_embeddings", "V*h", v * h),
        ParameterTerm("embeddings", "position_embeddings", "P*h", p * h),
        ParameterTerm("embeddings", "token_type_embeddings", "T*h", t * h),
        ParameterTerm("embeddings", "LayerNorm", "2h", 2 * h),
    ]
    layer = [
        ("attention.self.query", "h*h + h", h * h + h),
        ("attention.self.key", "h*h + h", h * h + h),
        ("attention.self.value", "h*h + h", h * h + h),
        ("attention.output.dense", "h*h + h", h * h + h),
        ("attention.output.LayerNorm", "2h", 2 * h),
        ("intermediate.dense", "h*i + i", h * i + i),
        ("output.dense", "i*h + h", i * h + h),
        ("output.LayerNorm", "2h", 2 * h),
    ]
    terms += [ParameterTerm("encoder.layer", m, f, c, repeats=n) for m, f, c in layer]
    if with_pooler:
        terms.append(ParameterTerm("pooler", "pooler.dense", "h*h + h", h * h + h))
    return terms


def count_from_config(config: BertConfig, with_pooler: bool = True) -> int:
    """Exact parameter count of ``BertModel(config)``, without building it."""
    return sum(term.total for term in parameter_terms(config, with_pooler))
