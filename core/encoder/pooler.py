"""The pooler: tanh(W · h[CLS] + b), the one vector BERT's next-sentence head was trained on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.analysis import Analysis
from core.errors import N_, InputError
from core.models import ModelBundle, model_run


@dataclass(frozen=True)
class PoolerSteps:
    """The pooler's two steps for one input. Arrays are float32, (hidden,)."""

    cls: np.ndarray    # last layer's [CLS] vector, hidden_states[-1][0]
    dense: np.ndarray  # pooler.dense(cls) = W cls + b, before tanh
    tanh: np.ndarray   # pooler.activation(dense) == pooler_output
    error: float       # max |tanh - the model's pooler_output|


@torch.inference_mode()
def pooler_steps(bundle: ModelBundle, analysis_or_hidden: Analysis | np.ndarray) -> PoolerSteps:
    """Take the pooler apart for an ``Analysis`` or a last-layer hidden state (T, hidden).

    With an Analysis the error compares against the ``pooler_output`` of its forward pass; with a
    bare array, against the pooler module run as a whole on it. A model without a pooler (loaded
    with ``add_pooling_layer=False``) raises InputError: there is nothing to take apart.
    """
    pooler = bundle.model.pooler
    if pooler is None:
        raise InputError(
            N_("{model} has no pooler (it was saved without one), so there is no pooled [CLS] "
               "vector to show."),
            model=bundle.name,
        )
    if isinstance(analysis_or_hidden, Analysis):
        if analysis_or_hidden.model_name != bundle.name:
            raise InputError(N_("This analysis is of {other}, not of {model}."),
                             other=analysis_or_hidden.model_name, model=bundle.name)
        hidden = analysis_or_hidden.stages[analysis_or_hidden.layer_names[-1]]
        expected = analysis_or_hidden.pooler_output
    else:
        hidden = np.asarray(analysis_or_hidden, dtype=np.float32)
        expected = None
    if hidden.ndim != 2 or hidden.shape[1] != bundle.config.hidden_size or not len(hidden):
        raise InputError(
            N_("The pooler takes a (tokens, {hidden}) last hidden state; got shape {shape}."),
            hidden=bundle.config.hidden_size, shape=tuple(hidden.shape),
        )
    states = torch.from_numpy(np.array(hidden, dtype=np.float32))[None]  # (1, T, h), a copy
    cls = states[:, 0]                                               # (1, h)
    with model_run():
        dense = pooler.dense(cls)
        tanh = pooler.activation(dense)
        if expected is None:
            expected = pooler(states)[0].numpy()
    tanh_np = tanh[0].numpy().copy()
    return PoolerSteps(
        cls=cls[0].numpy().copy(),
        dense=dense[0].numpy().copy(),
        tanh=tanh_np,
        error=float(np.max(np.abs(tanh_np.astype(np.float64) - expected))),
    )
