"""BertModel's architecture as data: the steps one input takes on the way through, each with
the weights it holds and the shape of what it outputs for that input. The page draws them
(pages/parameters/figures.py); the lines are English templates with their values apart."""

from __future__ import annotations

from dataclasses import dataclass

from transformers import BertConfig

from core.parameters.text import Text, number


@dataclass(frozen=True)
class SketchStep:
    key: str                 # a short id for the diagram's node
    name: str                # module (or tensor) name as in the model
    lines: tuple[Text, ...]  # the weights it holds, what it does
    shape: str               # the shape of what it outputs for the current input
    kind: str                # "io", "embeddings", "layer" (inside every encoder layer), "pooler"


def architecture_steps(config: BertConfig, tokens: int) -> list[SketchStep]:
    """The path of one input of ``tokens`` tokens through BertModel, with live shapes."""
    T, h, i = tokens, config.hidden_size, config.intermediate_size
    v, p, s = config.vocab_size, config.max_position_embeddings, config.type_vocab_size
    heads = config.num_attention_heads
    d = h // heads
    return [
        SketchStep("inp", "input_ids", (Text("with token_type_ids"), Text("and position_ids")),
                   f"[1, {T}]", "io"),
        SketchStep("emb", "embeddings", (
            Text("word {v}×{h}", {"v": number(v), "h": str(h)}),
            Text("+ position {p}×{h}", {"p": number(p), "h": str(h)}),
            Text("+ token type {s}×{h}", {"s": str(s), "h": str(h)}),
            Text("then LayerNorm"),
        ), f"[1, {T}, {h}]", "embeddings"),
        SketchStep("q", "attention.self", (
            Text("Q, K, V: {h}×{h} each", {"h": str(h)}),
            Text("{heads} heads × {d} dims", {"heads": str(heads), "d": str(d)}),
        ), f"[1, {heads}, {T}, {d}]", "layer"),
        SketchStep("s", "attention scores", (
            Text("softmax(QKᵀ / √{d})", {"d": str(d)}), Text("per head"),
        ), f"[1, {heads}, {T}, {T}]", "layer"),
        SketchStep("ao", "attention.output", (
            Text("heads joined,"), Text("dense {h}×{h}", {"h": str(h)}), Text("+ LayerNorm"),
        ), f"[1, {T}, {h}]", "layer"),
        SketchStep("ffn1", "intermediate", (
            Text("FFN up"), Text("{h} → {i}, GELU", {"h": str(h), "i": str(i)}),
        ), f"[1, {T}, {i}]", "layer"),
        SketchStep("ffn2", "output", (
            Text("FFN down"), Text("{i} → {h}", {"h": str(h), "i": str(i)}), Text("+ LayerNorm"),
        ), f"[1, {T}, {h}]", "layer"),
        SketchStep("out", "last_hidden_state", (
            # The English form for the count (pages/parameters marks both: N_plural).
            Text("after {n} layer" if config.num_hidden_layers == 1 else "after {n} layers",
                 {"n": str(config.num_hidden_layers)}),
        ), f"[1, {T}, {h}]", "io"),
        SketchStep("pool", "pooler", (
            Text("[CLS] row only,"), Text("dense {h}×{h}, tanh", {"h": str(h)}),
        ), f"[1, {h}]", "pooler"),
    ]
