"""A sketch of BertModel's architecture with the shapes one input takes on the way through,
as steps and as a Graphviz DOT graph."""

from __future__ import annotations

from dataclasses import dataclass

from transformers import BertConfig


@dataclass(frozen=True)
class SketchStep:
    name: str                # module (or tensor) name as in the model
    lines: tuple[str, ...]   # the weights it holds, what it does
    shape: str               # the shape of what it outputs for the current input


def architecture_steps(config: BertConfig, tokens: int) -> list[SketchStep]:
    """The path of one input of ``tokens`` tokens through BertModel, with live shapes."""
    T, h, i = tokens, config.hidden_size, config.intermediate_size
    v, p, s = config.vocab_size, config.max_position_embeddings, config.type_vocab_size
    heads = config.num_attention_heads
    d = h // heads
    return [
        SketchStep("input_ids", ("with token_type_ids", "and position_ids"), f"[1, {T}]"),
        SketchStep(
            "embeddings",
            (f"word {v:,}×{h}", f"+ position {p:,}×{h}", f"+ token type {s}×{h}", "then LayerNorm"),
            f"[1, {T}, {h}]",
        ),
        SketchStep("attention.self", (f"Q, K, V: {h}×{h} each", f"{heads} heads × {d} dims"),
                   f"[1, {heads}, {T}, {d}]"),
        SketchStep("attention scores", (f"softmax(QKᵀ / √{d})", "per head"),
                   f"[1, {heads}, {T}, {T}]"),
        SketchStep("attention.output", ("heads joined,", f"dense {h}×{h}", "+ LayerNorm"),
                   f"[1, {T}, {h}]"),
        SketchStep("intermediate", ("FFN up", f"{h} → {i}, GELU"), f"[1, {T}, {i}]"),
        SketchStep("output", ("FFN down", f"{i} → {h}", "+ LayerNorm"), f"[1, {T}, {h}]"),
        SketchStep("last_hidden_state", (f"after {config.num_hidden_layers} layers",),
                   f"[1, {T}, {h}]"),
        SketchStep("pooler", ("[CLS] row only,", f"dense {h}×{h}, tanh"), f"[1, {h}]"),
    ]


def _dot_node(node_id: str, step: SketchStep, fill: str) -> str:
    text = "\\n".join((step.name, *step.lines, f"→ {step.shape}")).replace('"', "'")
    return f'{node_id} [label="{text}", fillcolor="{fill}"];'


def architecture_dot(config: BertConfig, tokens: int) -> str:
    """A Graphviz DOT graph of ``architecture_steps``: the embeddings, one encoder layer (drawn
    once, × N) as an attention row and a feed-forward row, then the output and the pooler."""
    steps = architecture_steps(config, tokens)
    ids = ["inp", "emb", "q", "s", "ao", "ffn1", "ffn2", "out", "pool"]
    fills = ["#eeeeee", "#cfe2f3"] + ["#d9ead3"] * 5 + ["#eeeeee", "#fce5cd"]
    lines = [
        "digraph bert {",
        "rankdir=TB; nodesep=0.3; ranksep=0.3;",
        'node [shape=box, style="filled", fontname="Helvetica", fontsize=15];',
        *(_dot_node(n, s, f) for n, s, f in zip(ids, steps, fills, strict=True)),
        "{ rank=same; inp; emb; }",
        "subgraph cluster_layer {",
        f'label="encoder.layer × {config.num_hidden_layers}: every layer has these shapes";',
        'fontname="Helvetica"; fontsize=15; style="solid"; color="#6d9eeb";',
        "{ rank=same; q; s; ao; }",
        "{ rank=same; ffn1; ffn2; }",
        "}",
        "{ rank=same; out; pool; }",
        "inp -> emb; emb -> q; q -> s -> ao; ao -> ffn1; ffn1 -> ffn2; ffn2 -> out; out -> pool;",
        "}",
    ]
    return "\n".join(lines)
