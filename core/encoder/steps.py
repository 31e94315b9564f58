"""One BertLayer taken apart: every intermediate tensor, computed by the model's own submodules.

The shared model is used by every session's thread at once, so nothing here registers a hook,
switches train/eval, moves the model or touches its config. Instead the layer's input comes from
one ordinary forward pass (``hidden_states[layer - 1]``, held by an Analysis; the embeddings
module's output for layer 1) and the layer is replayed step by step
by calling its submodules (``attention.self.query``, ``attention.output.dense``, ...) exactly as
``BertLayer.forward`` does in eval mode (dropout is the identity there, so it is left out).

Steps, in order, named after the modules of ``BertLayer`` (batch dim dropped, float32, read-only):

    attention.self.query / .key / .value   (heads, T, head_dim)
    attention_scores      QKᵀ/√head_dim + padding mask, before softmax      (heads, T, T)
    attention_probs       softmax of the scores == the layer's attention weights (heads, T, T)
    context               attention_probs @ V, heads joined                  (T, hidden)
    attention.output.dense                                                   (T, hidden)
    attention.output      LayerNorm(attention.output.dense + layer input)    (T, hidden)
    intermediate.dense    before the activation                              (T, intermediate)
    intermediate          after the activation (GELU for BERT)               (T, intermediate)
    output.dense                                                             (T, hidden)
    output                LayerNorm(output.dense + attention.output) == hidden_states[layer]
"""

from __future__ import annotations

import functools
import operator
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F
from transformers.masking_utils import create_bidirectional_mask
from transformers.models.bert.modeling_bert import BertLayer

from core.analysis import Analysis, analyze_encoding, input_tensors
from core.encoder import reference as ref
from core.errors import N_, InputError
from core.models import ModelBundle, model_run
from core.tokens import Encoding, encode

STEP_NAMES: tuple[str, ...] = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention_scores",
    "attention_probs",
    "context",
    "attention.output.dense",
    "attention.output",
    "intermediate.dense",
    "intermediate",
    "output.dense",
    "output",
)

# What each entry of EncoderSteps.checks compares. Two steps have a counterpart in the model's
# own forward pass; every other one is recomputed in float64 numpy from the layer's weights and
# our own previous step, so a wrong step shows its own error.
CHECK_AGAINST: dict[str, str] = {
    "attention.self.query": "numpy: layer input @ Wqᵀ + bq, split into heads",
    "attention.self.key": "numpy: layer input @ Wkᵀ + bk, split into heads",
    "attention.self.value": "numpy: layer input @ Wvᵀ + bv, split into heads",
    "attention_scores": "numpy: Q Kᵀ / √head_dim, padded keys + float32 min",
    "attention_probs": "model: the layer's attention.self module (what output_attentions gives)",
    "context": "numpy: attention_probs @ V, heads joined",
    "attention.output.dense": "numpy: context @ Wᵀ + b",
    "attention.output": "numpy: LayerNorm formula of attention.output.dense + layer input",
    "intermediate.dense": "numpy: attention.output @ Wᵀ + b",
    "intermediate": "numpy: the activation's formula (GELU: x/2 (1 + erf(x/√2)))",
    "output.dense": "numpy: intermediate @ Wᵀ + b",
    "output": "model: hidden_states[layer] of the forward pass",
}


@dataclass(frozen=True)
class EncoderSteps:
    """Every intermediate tensor of one BertLayer for one input.

    ``checks`` maps each step name to a live max |ours - reference|: for ``attention_probs`` and
    ``output`` the reference is the model's own forward pass, for every other step a float64 numpy
    recomputation (see ``CHECK_AGAINST``). NaN means no formula is known (an unusual activation).

    ``mask_bias`` is the additive bias the model puts on every query row's scores, per key: 0 for a
    real token, float32's lowest value (-3.4e38, not -inf) for padding. It is None when the model
    adds no mask at all, which transformers does when nothing is padded. Padded key columns of
    ``attention_scores`` therefore hold about -3.4e38: clip them before drawing a colour scale.
    """

    model_name: str
    encoding: Encoding
    layer: int                        # 1-based, as in hidden_states[layer]
    layer_input: np.ndarray           # (T, hidden) == hidden_states[layer - 1]
    steps: dict[str, np.ndarray]      # STEP_NAMES -> array, in order
    mask_bias: np.ndarray | None      # (T,) additive bias per key, None if the model adds none
    checks: Mapping[str, float]       # step name -> max |ours - reference|, computed when read

    @property
    def num_heads(self) -> int:
        return int(self.steps["attention.self.query"].shape[0])

    @property
    def head_dim(self) -> int:
        return int(self.steps["attention.self.query"].shape[2])

    @property
    def tokens(self) -> list[str]:
        return self.encoding.tokens


@dataclass(frozen=True)
class HeadView:
    """One head's slice of the attention steps."""

    head: int             # 0-based
    query: np.ndarray     # (T, head_dim)
    key: np.ndarray       # (T, head_dim)
    value: np.ndarray     # (T, head_dim)
    scores: np.ndarray    # (T, T) before softmax
    probs: np.ndarray     # (T, T) each row sums to 1
    weighted: np.ndarray  # (T, head_dim) probs @ value: this head's columns of context


def check_layer(bundle: ModelBundle, layer: object) -> int:
    """``layer`` as an int in 1..num_hidden_layers, or an InputError that says the range."""
    n = int(bundle.config.num_hidden_layers)
    try:
        # ints and numpy ints pass; floats, strings and None raise TypeError, caught here
        number = operator.index(layer)  # type: ignore[arg-type]  # any object, checked by the call
    except TypeError:
        number = None
    if number is None or isinstance(layer, bool):
        raise InputError(N_("A layer is a whole number from 1 to {n}, not “{layer}”."),
                         layer=layer, n=n)
    if not 1 <= number <= n:
        raise InputError(N_("There is no encoder layer {layer}: {model} has layers 1 to {n}."),
                         layer=number, model=bundle.name, n=n)
    return number


def encoder_steps(
    bundle: ModelBundle,
    text_a: str,
    text_b: str | None = None,
    layer: int = 1,
    max_length: int | None = None,
    truncation: bool = True,
    pad_to_max_length: bool = False,
) -> EncoderSteps:
    """Tokenise one sentence (or a pair) and take encoder layer ``layer`` (1-based) apart."""
    check_layer(bundle, layer)
    encoding = encode(bundle, text_a, text_b, max_length, truncation, pad_to_max_length)
    return encoder_steps_of(bundle, encoding, layer)


def encoder_steps_of(bundle: ModelBundle, encoding: Encoding, layer: int) -> EncoderSteps:
    """Take encoder layer ``layer`` (1-based) apart for an already tokenised input."""
    return encoder_steps_from(bundle, analyze_encoding(bundle, encoding, attentions=False), layer)


@torch.inference_mode()
def encoder_steps_from(bundle: ModelBundle, analysis: Analysis, layer: int) -> EncoderSteps:
    """Take encoder layer ``layer`` apart, its input and output read from ``analysis`` (the
    model's forward pass over the same input, which the app already holds in its cache).

    The layer's input is ``hidden_states[layer - 1]``: the embeddings module's output for layer
    1, else the previous layer's output; the model's ``hidden_states[layer]`` checks our output.
    The attention weights are checked against the layer's own self-attention module run on that
    input, whose second output is what ``output_attentions`` returns for the layer.
    """
    layer = check_layer(bundle, layer)
    config = bundle.config
    # Attention is eager in every bundle (ModelBundle sets it), so the layer's own self-attention
    # gives its weights below; a decoder's causal mask is not the one rebuilt here.
    if config.is_decoder:
        raise _not_an_encoder(bundle)
    encoding = analysis.encoding
    inputs = input_tensors(encoding)
    module = bundle.model.encoder.layer[layer - 1]
    with model_run():
        x = (bundle.model.embeddings(input_ids=inputs["input_ids"],
                                     token_type_ids=inputs["token_type_ids"],
                                     position_ids=inputs["position_ids"])
             if layer == 1 else torch.tensor(analysis.stages[f"layer_{layer - 1}"])[None])
        # The very function BertModel._create_attention_masks calls for an encoder, so the mask
        # is the model's own: (1, 1, T, T) of 0 / float32 min, or None when nothing is padded.
        mask = create_bidirectional_mask(
            config=config, inputs_embeds=x, attention_mask=inputs["attention_mask"]
        )
        steps = {name: _numpy(t[0]) for name, t in layer_steps(module, x, mask).items()}
        _, model_weights = module.attention.self(x, mask)
    if model_weights is None:   # an attention that keeps no weights (not eager)
        raise _not_an_encoder(bundle)
    live = {
        "attention_probs": _numpy(model_weights[0]),
        "output": analysis.stages[f"layer_{layer}"],
    }
    layer_input = _numpy(x[0])
    checks = _check_formulas(module, config.hidden_act, layer_input, steps,
                             encoding.attention_mask)
    for name, model_value in live.items():
        checks[name] = functools.partial(_max_abs, steps[name], model_value)
    mask_bias = None if mask is None else _numpy(mask[0, 0, 0])
    for array in (layer_input, *steps.values(), mask_bias):
        if array is not None:
            array.setflags(write=False)
    return EncoderSteps(
        model_name=bundle.name,
        encoding=encoding,
        layer=layer,
        layer_input=layer_input,
        steps=steps,
        mask_bias=mask_bias,
        checks=LazyChecks({name: checks[name] for name in STEP_NAMES}),
    )


def layer_steps(
    module: BertLayer, x: torch.Tensor, mask: torch.Tensor | None
) -> dict[str, torch.Tensor]:
    """Replay ``BertLayer.forward`` (eval mode) on ``x`` (1, T, hidden), keeping every step.

    Same modules and the same order of operations as transformers' ``eager_attention_forward``
    (matmul, then * scaling, then + mask, softmax), so the results match the model's bit for bit
    or to float32 rounding.
    """
    sa = module.attention.self
    heads, head_dim = sa.num_attention_heads, sa.attention_head_size
    _, t, _ = x.shape

    def split(y: torch.Tensor) -> torch.Tensor:
        return y.view(1, t, heads, head_dim).transpose(1, 2)  # (1, heads, T, head_dim)

    q, k, v = split(sa.query(x)), split(sa.key(x)), split(sa.value(x))
    scores = torch.matmul(q, k.transpose(2, 3)) * getattr(sa, "scaling", head_dim**-0.5)
    if mask is not None:
        scores = scores + mask  # (1, heads, T, T) + (1, 1, T, T)
    probs = F.softmax(scores, dim=-1)
    context = torch.matmul(probs, v).transpose(1, 2).reshape(1, t, heads * head_dim)
    attn_dense = module.attention.output.dense(context)
    attn_out = module.attention.output.LayerNorm(attn_dense + x)
    inter_dense = module.intermediate.dense(attn_out)
    inter = module.intermediate.intermediate_act_fn(inter_dense)
    out_dense = module.output.dense(inter)
    out = module.output.LayerNorm(out_dense + attn_out)
    return dict(zip(STEP_NAMES, (q, k, v, scores, probs, context, attn_dense, attn_out,
                                 inter_dense, inter, out_dense, out), strict=True))


class ModelReleasedError(Exception):
    """A check read after the model cache let its model go."""


class LazyChecks(Mapping[str, float]):
    """Step name -> max |ours - reference|, each computed the first time it is read.

    A page shows one step's check at a time; the float64 products behind all twelve were a third
    of an Encoder rerun at 64 tokens. A value read twice is computed once (two threads reading
    it at once may both compute it: the same number).
    """

    def __init__(self, compute: dict[str, Callable[[], float]]) -> None:
        self._compute = compute
        self._done: dict[str, float] = {}

    def __getitem__(self, name: str) -> float:
        if name not in self._done:
            compute = self._compute[name]   # KeyError for a name that is not a step
            try:
                self._done[name] = float(compute())
            except ModelReleasedError:   # the model was let go before this check was read
                return float("nan")
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._compute)

    def __len__(self) -> int:
        return len(self._compute)


def step_checks(
    module: BertLayer,
    hidden_act: object,
    layer_input: np.ndarray,
    steps: dict[str, np.ndarray],
    attention_mask: list[int],
) -> LazyChecks:
    """max |ours - float64 numpy| for every step but the two the model's forward pass checks.

    Each formula takes our previous step (in float64) as its input, see ``core.encoder.reference``.
    """
    return LazyChecks(_check_formulas(module, hidden_act, layer_input, steps, attention_mask))


def _check_formulas(
    module: BertLayer,
    hidden_act: object,
    layer_input: np.ndarray,
    steps: dict[str, np.ndarray],
    attention_mask: list[int],
) -> dict[str, Callable[[], float]]:
    """step_checks' checks, each as a function computing it."""
    # The layer is held weakly: a cached result must not keep a model the model cache has let go.
    layer = weakref.ref(module)

    def w(name: str) -> tuple[np.ndarray, np.ndarray]:
        held = layer()
        if held is None:
            raise ModelReleasedError(name)
        return _weights(getattr_path(held, name))

    def s(name: str) -> np.ndarray:
        return steps[name].astype(np.float64)

    x = layer_input.astype(np.float64)
    heads = steps["attention.self.query"].shape[0]
    eps = module.attention.output.LayerNorm.eps
    act = ref.activation(hidden_act)

    def projection(name: str) -> Callable[[], np.ndarray]:
        return lambda: ref.split_heads(ref.linear(x, *w(name)), heads)

    expected: dict[str, Callable[[], np.ndarray]] = {
        **{name: projection(name)
           for name in ("attention.self.query", "attention.self.key", "attention.self.value")},
        "attention_scores": lambda: ref.scores(s("attention.self.query"),
                                               s("attention.self.key"), attention_mask),
        "context": lambda: np.concatenate(list(s("attention_probs") @ s("attention.self.value")),
                                          -1),
        "attention.output.dense": lambda: ref.linear(s("context"), *w("attention.output.dense")),
        "attention.output": lambda: ref.layer_norm(s("attention.output.dense") + x,
                                                   *w("attention.output.LayerNorm"), eps),
        "intermediate.dense": lambda: ref.linear(s("attention.output"), *w("intermediate.dense")),
        "output.dense": lambda: ref.linear(s("intermediate"), *w("output.dense")),
    }

    def against(name: str, formula: Callable[[], np.ndarray]) -> Callable[[], float]:
        return lambda: _max_abs(steps[name], formula())

    checks = {name: against(name, formula) for name, formula in expected.items()}
    checks["intermediate"] = (
        (lambda: float("nan")) if act is None
        else lambda: _max_abs(steps["intermediate"], act(s("intermediate.dense"))))
    return checks


def head_slice(steps: EncoderSteps, head: int) -> HeadView:
    """The Q, K, V, scores, probabilities and probs @ V of one head (0-based)."""
    n = steps.num_heads
    if isinstance(head, bool) or not isinstance(head, int | np.integer) or not 0 <= head < n:
        raise InputError(N_("There is no head {head}: layer {layer} has heads 0 to {last}."),
                         head=head, layer=steps.layer, last=n - 1)
    d = steps.head_dim
    s = steps.steps
    return HeadView(
        head=int(head),
        query=s["attention.self.query"][head],
        key=s["attention.self.key"][head],
        value=s["attention.self.value"][head],
        scores=s["attention_scores"][head],
        probs=s["attention_probs"][head],
        weighted=s["context"][:, head * d:(head + 1) * d],
    )


def getattr_path(module: torch.nn.Module, path: str) -> torch.nn.Module:
    """``module.attention.self.query`` from "attention.self.query"."""
    for part in path.split("."):
        module = getattr(module, part)
    return module


def _weights(linear_or_norm: torch.nn.Module) -> tuple[np.ndarray, np.ndarray]:
    assert isinstance(linear_or_norm, torch.nn.Linear | torch.nn.LayerNorm), linear_or_norm
    """The module's weight and bias in float64, made for the one check being computed and not
    kept: a copy per module lived as long as the model (a class walking every step of every
    layer would hold ~80 MB for MiniLM, outside any cache's budget), and making one costs
    0.3 ms for the largest matrix, against 0.8 ms for the float64 product it feeds at 14 tokens."""
    return (linear_or_norm.weight.detach().to(torch.float64).numpy(),
            linear_or_norm.bias.detach().to(torch.float64).numpy())


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float32).numpy().copy()


def _max_abs(ours: np.ndarray, expected: np.ndarray) -> float:
    return float(np.max(np.abs(ours.astype(np.float64) - expected))) if ours.size else 0.0


def _not_an_encoder(bundle: ModelBundle) -> InputError:
    return InputError(
        N_("{model} is not an encoder with eager attention, so its layers cannot be taken "
           "apart here."),
        model=bundle.name,
    )
