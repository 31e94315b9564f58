"""The feed-forward block's checks against the layer's own intermediate and output modules."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from core.encoder import encoder_steps
from core.encoder.ffn import feed_forward_checks


def test_our_steps_equal_the_models_modules(tiny_bundle):
    steps = encoder_steps(tiny_bundle, "The cat sat on the mat.", layer=2)
    checks = feed_forward_checks(tiny_bundle, steps)
    assert checks.intermediate <= 1e-6 and checks.output <= 1e-6
    # The reference is the whole BertLayer's feed-forward chunk, called as transformers calls it.
    layer = tiny_bundle.model.encoder.layer[1]
    with torch.inference_mode():
        whole = layer.feed_forward_chunk(torch.from_numpy(
            np.array(steps.steps["attention.output"]))[None])[0].numpy()
    assert np.max(np.abs(whole - steps.steps["output"])) <= 1e-5


def test_a_wrong_step_shows_its_error(tiny_bundle):
    steps = encoder_steps(tiny_bundle, "The cat sat on the mat.", layer=1)
    wrong = dict(steps.steps)
    wrong["intermediate"] = steps.steps["intermediate"] + 0.25
    checks = feed_forward_checks(tiny_bundle, dataclasses.replace(steps, steps=wrong))
    assert abs(checks.intermediate - 0.25) < 1e-5
    assert checks.output > 1e-3   # the output module read the wrong intermediate
