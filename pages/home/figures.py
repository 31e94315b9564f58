"""Home's pipeline diagram: text -> tokens -> three lookups -> sum -> LayerNorm -> encoder ->
pooler, with the live shapes of the current input. No Streamlit calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.graphs import Node, dot_graph
from components.i18n import N_, _
from core import Encoding

if TYPE_CHECKING:   # types only: Home draws the pipeline before torch and transformers load
    from transformers import BertConfig

    from core.tokenizer_files import ModelShape

PAGE_BLURBS = {
    "tokens": N_("Tokens, input_ids, token_type_ids, position_ids and the attention mask."),
    "stages": N_("The three lookups, their sum, LayerNorm, dropout and every encoder layer."),
    "positions": N_("The learned position table: PCA, cosines, a probe, and the sinusoidal "
                    "formula."),
    "similarity": N_("Cosine matrices by layer, sentence A vs B, and one word in two contexts."),
    "pairs": N_("Which token pairs make two sentences alike, and many pairs against your "
                "scores."),
    "contexts": N_("One word across many sentences: its nearest neighbours at every layer, where "
                   "its senses come apart, a map, and your own corpus."),
    "encoder": N_("Inside one encoder layer: Q, K, V, attention by head, the feed-forward "
                  "block, the pooler."),
    "attribution": N_("Which input tokens drive the output: attention, rollout, flow, gradients, "
                      "and a blank-out test of which to believe."),
    "pretraining": N_("How BERT was trained: masking 15% of the tokens, [MASK] prediction, next "
                      "sentence, fine-tuning."),
    "parameters": N_("Where every parameter lives, counted from the config and from the model."),
    "checks": N_("Published figures (README cosines, parameter counts, token ids, a benchmark) "
                "reproduced live, each beside its source."),
    "compare": N_("Two models side by side: a map of how alike their layers are, one pair and "
                  "its words on both, and a model against its own random weights."),
    "finetune": N_("Train the model live on the tutorial's four patterns: the loss as it falls, "
                   "the score before and after, and which layers training changed."),
    "probes": N_("Which layer knows what: a linear probe at every layer for parts of speech, "
                 "word senses and tense, with its control task and expected layer."),
    "lesson": N_("The tutorials step by step, each printout live, with a question at every "
                 "step."),
}


def pipeline_dot(config: BertConfig | ModelShape, enc: Encoding) -> str:
    """The pipeline as a Graphviz graph; every label is our own text with live numbers.

    Top to bottom, with a table's name, size and output on lines of their own: drawn left to
    right on one line each, the graph was so wide that a 1024-pixel screen shrank its labels
    to 7 px; this way at most the three lookups stand side by side.
    """
    T, h = len(enc.tokens), config.hidden_size
    text = _("sentences A + B") if 1 in enc.token_type_ids else _("sentence A")
    nodes = [
        Node("text", [_("text"), text]),
        Node("ids", [_("tokenizer"), "input_ids", f"[1, {T}]"]),
        Node("w", ["word_embeddings", f"{config.vocab_size}×{h}", f"→ [1, {T}, {h}]"]),
        Node("t", ["token_type_embeddings", f"{config.type_vocab_size}×{h}", f"→ [1, {T}, {h}]"]),
        Node("p", ["position_embeddings", f"{config.max_position_embeddings}×{h}",
                   f"→ [1, {T}, {h}]"]),
        Node("sum", [_("sum"), f"[1, {T}, {h}]"]),
        Node("ln", ["LayerNorm", f"[1, {T}, {h}]"]),
        Node("enc", [_("encoder: {layers} layers").format(layers=config.num_hidden_layers),
                     _("{heads} heads, FFN {h}→{i}→{h}").format(
                         heads=config.num_attention_heads, h=h, i=config.intermediate_size),
                     f"[1, {T}, {h}]"]),
        Node("pool", [_("pooler on [CLS]"), f"[1, {h}]"]),
    ]
    edges = [("text", "ids"), ("ids", "w"), ("ids", "t"), ("ids", "p"), ("w", "sum"),
             ("t", "sum"), ("p", "sum"), ("sum", "ln"), ("ln", "enc"), ("enc", "pool")]
    # Tight spacing: the three lookups side by side set the graph's width.
    tight = ['nodesep=0.04; pad=0.01;']
    return dot_graph(nodes, edges, direction="TB", extra=tight)


def model_line(name: str, config: BertConfig, n_params: int, tokens: int) -> str:
    """One line naming the model the diagram is of, with its sizes."""
    return _("Model: {name} · {layers} layers · hidden size {hidden} · vocabulary {vocab} · "
             "{params} parameters · this input: {tokens} tokens").format(
        name=name, layers=config.num_hidden_layers, hidden=config.hidden_size,
        vocab=f"{config.vocab_size:,}", params=f"{n_params:,}", tokens=tokens)
