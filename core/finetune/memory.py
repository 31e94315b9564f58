"""How much memory a fine-tuning run needs, counted before it starts (the server's byte budget).

    weights      a copy of every parameter (float32)
    gradients    one per trainable parameter
    optimizer    AdamW's two moments per trainable parameter
    activations  what backpropagation keeps per layer: about s·b·h·(34 + 5·a·s/h) values for a
                 sequence of s tokens, a batch of b, hidden size h and a heads (Korthikanti et
                 al. 2022, "Reducing activation recomputation in large transformer models"),
                 float32 here; none for a frozen encoder, whose activations are not kept
"""

from __future__ import annotations

from core.finetune.tasks import FineTuneTask
from core.models import ModelBundle

FLOAT = 4   # bytes of a float32


def training_bytes(bundle: ModelBundle, task: FineTuneTask | str, *, batch_size: int,
                   max_length: int, freeze_encoder: bool = False) -> int:
    """An upper estimate of the bytes a run of ``task`` on ``bundle`` holds at its peak."""
    config = bundle.config
    parameters = sum(p.numel() for p in bundle.model.parameters())
    hidden, heads = int(config.hidden_size), int(config.num_attention_heads)
    layers = int(config.num_hidden_layers)
    head = hidden * max(2, hidden) if freeze_encoder else 0   # a linear head, generously
    trainable = head if freeze_encoder else parameters
    sides = 2 if FineTuneTask(task) == FineTuneTask.PAIR_SCORE else 1
    s, b = max_length, batch_size * sides
    per_layer = s * b * hidden * (34 + 5 * heads * s / hidden)
    kept_layers = 1 if freeze_encoder else layers   # frozen: one layer's forward at a time
    activations = int(per_layer * kept_layers) * FLOAT
    return parameters * FLOAT + trainable * 3 * FLOAT + activations
