"""How much memory a fine-tuning run needs, counted before it starts (the server's byte budget).

    weights and what training adds to them   12 x the weights' bytes: the copy trained, its
                 gradients, AdamW's two moments, and the optimizer step's and the word table's
                 gradient temporaries (measured below; 4 x is the textbook figure, far too low)
    activations  what backpropagation keeps per layer: s·b·h·(34 + 5·a·s/h) bytes for a sequence
                 of s tokens, a batch of b, hidden size h and a heads (Korthikanti et al. 2022,
                 "Reducing activation recomputation in large transformer models"); one layer's
                 for a frozen encoder, whose activations are not kept
    a floor      64 MB: autograd's own buffers on a first backward pass

Measured here (peak resident memory above the loaded model, one process, 140-token sentences
cut to 128, 2026-12-06): the shipped all-MiniLM-L6-v2 at batch 16, 1,285 MB (this estimate
1,347 MB), at batch 32, 1,525 MB (1,590 MB); a random 2-layer model of hidden size 256, 425 MB
(547 MB); of hidden size 32, 94 MB (125 MB).
"""

from __future__ import annotations

from core.finetune.tasks import FineTuneTask
from core.models import ModelBundle

FLOAT = 4                   # bytes of a float32
TRAINING_COPIES = 12        # weights' bytes a full run holds per byte of weights (measured)
FROZEN_COPIES = 2           # the copy, and a forward pass's temporaries
FLOOR = 64 * 2**20


def training_bytes(bundle: ModelBundle, task: FineTuneTask | str, *, batch_size: int,
                   max_length: int, freeze_encoder: bool = False) -> int:
    """An estimate of the bytes a run of ``task`` on ``bundle`` holds at its peak."""
    config = bundle.config
    weights = sum(p.numel() for p in bundle.model.parameters()) * FLOAT
    hidden, heads = int(config.hidden_size), int(config.num_attention_heads)
    layers = int(config.num_hidden_layers)
    sides = 2 if FineTuneTask(task) == FineTuneTask.PAIR_SCORE else 1
    s, b = max_length, batch_size * sides
    per_layer = s * b * hidden * (34 + 5 * heads * s / hidden)
    if freeze_encoder:
        return int(weights * FROZEN_COPIES + per_layer + FLOOR)
    return int(weights * TRAINING_COPIES + per_layer * layers + FLOOR)
