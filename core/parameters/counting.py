"""Parameter counts of a BertModel from its config alone, term by term: the exact formula, the
parameter tutorial's hand formula and what it leaves out, and the closed form.

The terms follow the modules of ``transformers.models.bert.modeling_bert`` so each line of the
breakdown can be found in ``model.named_parameters()`` (see core.parameters.listing). Symbols in
the formulas: V vocabulary, P positions, S token types (segments), h hidden size, i intermediate
size, N layers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transformers import BertConfig

SYMBOLS = {
    "V": "vocab_size",
    "P": "max_position_embeddings",
    "S": "type_vocab_size",
    "h": "hidden_size",
    "i": "intermediate_size",
    "N": "num_hidden_layers",
}

# Readable names for the blocks, keyed by their path inside their group.
BLOCK_LABELS = {
    "word_embeddings": "word embeddings",
    "position_embeddings": "position embeddings",
    "token_type_embeddings": "token type embeddings",
    "LayerNorm": "embeddings LayerNorm",
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention output",
    "attention.output.LayerNorm": "attention LayerNorm",
    "crossattention.self.query": "cross-attention query",
    "crossattention.self.key": "cross-attention key",
    "crossattention.self.value": "cross-attention value",
    "crossattention.output.dense": "cross-attention output",
    "crossattention.output.LayerNorm": "cross-attention LayerNorm",
    "intermediate.dense": "intermediate (FFN up)",
    "output.dense": "output (FFN down)",
    "output.LayerNorm": "output LayerNorm",
    "pooler.dense": "pooler dense",
}
GROUP_LABELS = {"embeddings": "embeddings", "encoder.layer": "encoder", "pooler": "pooler"}


def block_label(module: str) -> str:
    return BLOCK_LABELS.get(module, module)


def has_cross_attention(config: BertConfig) -> bool:
    """A decoder with cross-attention (BertModel as in EncoderDecoderModel): a second attention."""
    return bool(getattr(config, "is_decoder", False)
                and getattr(config, "add_cross_attention", False))


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

    @property
    def label(self) -> str:
        return block_label(self.module)


def _attention_terms(prefix: str, h: int) -> list[tuple[str, str, int]]:
    return [
        (f"{prefix}.self.query", "h*h + h", h * h + h),
        (f"{prefix}.self.key", "h*h + h", h * h + h),
        (f"{prefix}.self.value", "h*h + h", h * h + h),
        (f"{prefix}.output.dense", "h*h + h", h * h + h),
        (f"{prefix}.output.LayerNorm", "2h", 2 * h),
    ]


def _table_terms(config: BertConfig) -> list[ParameterTerm]:
    """The three lookup tables of the embeddings: words, positions, token types."""
    v, p, t = config.vocab_size, config.max_position_embeddings, config.type_vocab_size
    h = config.hidden_size
    return [
        ParameterTerm("embeddings", "word_embeddings", "V*h", v * h),
        ParameterTerm("embeddings", "position_embeddings", "P*h", p * h),
        ParameterTerm("embeddings", "token_type_embeddings", "S*h", t * h),
    ]


def parameter_terms(config: BertConfig, with_pooler: bool = True) -> list[ParameterTerm]:
    """Every parameter block of a BertModel, counted from the config."""
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    terms = [*_table_terms(config), ParameterTerm("embeddings", "LayerNorm", "2h", 2 * h)]
    layer = _attention_terms("attention", h)
    if has_cross_attention(config):
        layer += _attention_terms("crossattention", h)
    layer += [
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


def group_totals(terms: list[ParameterTerm]) -> dict[str, int]:
    """The terms added up per group: embeddings, encoder.layer (all layers) and pooler."""
    return {g: sum(t.total for t in terms if t.group == g) for g in GROUP_LABELS}


def with_numbers(formula: str, config: BertConfig) -> str:
    """The formula with the config's numbers for its symbols: "h*h + h" -> "384×384 + 384"."""
    text = re.sub(r"(\d)([A-Za-z])", r"\1*\2", formula)  # "2h" -> "2*h"
    text = re.sub(r"\b([VPShiN])\b", lambda m: str(getattr(config, SYMBOLS[m[1]])), text)
    return text.replace("*", "×")


# The tutorial's hand count: weight matrices and tables only, no bias vectors, no LayerNorm.
def hand_formula_terms(config: BertConfig, with_pooler: bool = True) -> list[ParameterTerm]:
    """The parameter tutorial's hand formula: lookup tables and weight matrices, nothing else."""
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    terms = [
        *_table_terms(config),
        ParameterTerm("encoder.layer", "Q, K, V, attention output weights", "4*h*h", 4 * h * h, n),
        ParameterTerm("encoder.layer", "FFN up and down weights", "2*h*i", 2 * h * i, n),
    ]
    if with_pooler:
        terms.append(ParameterTerm("pooler", "pooler weight", "h*h", h * h))
    return terms


def omitted_terms(config: BertConfig, with_pooler: bool = True) -> list[ParameterTerm]:
    """What the hand formula leaves out; with it, the hand count becomes the exact count."""
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    terms = [
        ParameterTerm("embeddings", "embeddings LayerNorm (γ, β)", "2h", 2 * h),
        ParameterTerm("encoder.layer", "Q, K, V, attention output biases", "4h", 4 * h, n),
        ParameterTerm("encoder.layer", "FFN biases (up i, down h)", "i + h", i + h, n),
        ParameterTerm("encoder.layer", "two LayerNorms (γ, β each)", "4h", 4 * h, n),
    ]
    if has_cross_attention(config):
        terms.append(
            ParameterTerm("encoder.layer", "cross-attention (all of it)", "4*h*h + 6h",
                          4 * h * h + 6 * h, n)
        )
    if with_pooler:
        terms.append(ParameterTerm("pooler", "pooler bias", "h", h))
    return terms


def _latex_int(value: int) -> str:
    return f"{value:,}".replace(",", "{,}")  # braces: a bare comma adds a space in LaTeX


def closed_form_latex(config: BertConfig, with_pooler: bool = True) -> str | None:
    """The count as one formula, then with the config's numbers, then its three parts (LaTeX).

    None for a decoder with cross-attention, whose second attention the closed form leaves out.
    """
    if has_cross_attention(config):
        return None
    v, p, t = config.vocab_size, config.max_position_embeddings, config.type_vocab_size
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    totals = group_totals(parameter_terms(config, with_pooler))
    parts = [totals["embeddings"], totals["encoder.layer"]]
    lines = [
        r"\text{total} &= (V + P + S + 2)\,h \;+\; N\,(4h^2 + 2hi + 9h + i)"
        + (r" \;+\; (h^2 + h)" if with_pooler else ""),
        rf"&= ({v} + {p} + {t} + 2)\cdot {h}",
        rf"&\quad + {n}\,(4\cdot{h}^2 + 2\cdot{h}\cdot{i} + 9\cdot{h} + {i})",
    ]
    if with_pooler:
        lines.append(rf"&\quad + ({h}^2 + {h})")
        parts.append(totals["pooler"])
    total = sum(totals.values())
    lines.append("&= " + " + ".join(map(_latex_int, parts)) + " = " + _latex_int(total))
    return r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}"



def pretraining_heads_terms(config: BertConfig) -> list[ParameterTerm]:
    """BERT's two pretraining heads (``BertForPreTraining.cls``), counted from the config: the
    MLM head's transform (dense and LayerNorm) and its output bias (its decoder weight is the word
    table, tied, so not counted again), and the next-sentence head."""
    h, v = config.hidden_size, config.vocab_size
    return [
        ParameterTerm("cls", "predictions.transform.dense", "h*h + h", h * h + h),
        ParameterTerm("cls", "predictions.transform.LayerNorm", "2h", 2 * h),
        ParameterTerm("cls", "predictions.bias", "V", v),
        ParameterTerm("cls", "seq_relationship", "2h + 2", 2 * h + 2),
    ]


def count_with_heads(config: BertConfig) -> int:
    """Exact parameter count of ``BertForPreTraining(config)``: BertModel with its pooler, and
    the two pretraining heads."""
    return count_from_config(config) + sum(t.total for t in pretraining_heads_terms(config))
