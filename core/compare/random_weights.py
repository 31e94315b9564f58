"""The control that needs no download: a model's own architecture with the weights transformers
gives it before any training.

The same config, every weight as ``BertModel(config)`` initialises it after
``torch.manual_seed(0)`` (normal with the config's initializer_range, LayerNorm 1 and 0), the
same tokenizer. Set against the trained model, it shows what pretraining bought; the embedding
output is then a LayerNorm of random lookups, and the last layer of random attention.
"""

from __future__ import annotations

import copy

import torch
from transformers import BertModel

from core.models import _BUILD_LOCK, ModelBundle

SEED = 0
PREFIX = "random weights:"   # a bundle name no model folder or hub name can have (a colon)


def random_name(name: str) -> str:
    """The bundle name of ``name``'s random-weights copy."""
    return PREFIX + name


def trained_name(name: str) -> str | None:
    """The model a random-weights bundle name was made from; None for any other name."""
    return name[len(PREFIX):] if name.startswith(PREFIX) else None


def random_weights(bundle: ModelBundle, seed: int = SEED) -> ModelBundle:
    """``bundle``'s architecture and tokenizer with freshly initialised weights, in eval mode.

    Built under the models' build lock with torch's global generator saved and restored around
    the seed, so neither another model's build nor anyone's random numbers are disturbed."""
    config = copy.deepcopy(bundle.config)
    with _BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertModel(config, add_pooling_layer=bundle.model.pooler is not None)
    model.eval()   # once, before the bundle is shared
    return ModelBundle(name=random_name(bundle.name), model=model, tokenizer=bundle.tokenizer)
