"""The Encoder page's core (core.encoder) on the real shipped model and a tiny random BERT.

Every step is compared with two references built here, never with core.encoder's own code:
forward hooks on a SEPARATE copy of the model (hooks must never touch the shared one), and a
float64 numpy forward of the whole layer written out in this file from that copy's weights.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
import torch
from scipy.special import erf
from transformers import BertModel

from core import InputError, ModelBundle, analyze, encode
from core.corpus import CORPUS
from core.encoder import (
    CHECK_AGAINST,
    CLARK_2019,
    STEP_NAMES,
    corpus_head_atlas,
    encoder_steps,
    encoder_steps_of,
    head_atlas,
    head_slice,
    mean_atlas,
    pooler_steps,
    residual_shares,
    special_positions,
    token_trajectory,
    without_specials,
)
from core.encoder.steps import step_checks
from core.models import default_model_path
from tests.conftest import tiny_config

TOL = 1e-4
SEED = "This is a test sentence"
PAIR = ("What is your name?", "My name is BERT.")
INPUTS = {
    "single": ((SEED, None), {}),
    "pair": (PAIR, {}),
    "padded": ((SEED, None), {"max_length": 24, "pad_to_max_length": True}),
}
F32_MIN = float(np.finfo(np.float32).min)


def scale_of(values: np.ndarray) -> float:
    """The largest |value| of a step (at least 1), padded keys' F32_MIN left out.

    A float32 step computed from float32 inputs differs from the float64 chain by an amount that
    grows with the step's size and with the CPU's own summation order: 1.2e-4 on output.dense of
    layer 1 on an AMD EPYC (its values reach tens), within 1e-4 on the Intel Xeon of earlier
    rounds. The page's live checks scale their tolerance the same way (step_tolerance in
    pages/encoder/page.py).
    """
    real = np.abs(values[np.abs(values) < 1e30])
    return max(1.0, float(real.max())) if real.size else 1.0


# --- references -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped_reference() -> BertModel:
    """A second copy of the shipped model, ours to hook."""
    return BertModel.from_pretrained(
        default_model_path(), attn_implementation="eager", use_safetensors=True,
        local_files_only=True,
    ).eval()


@pytest.fixture(scope="module")
def tiny_reference(tiny_bundle: ModelBundle) -> BertModel:
    model = BertModel(tiny_config()).eval()
    model.load_state_dict(tiny_bundle.model.state_dict())
    return model


def hooked_run(model: BertModel, encoding) -> list[dict[str, np.ndarray]]:
    """Every step of every layer as the model's own modules produce it, caught by hooks."""
    caught: list[dict[str, object]] = [{} for _ in model.encoder.layer]
    handles = []
    heads = model.config.num_attention_heads

    def keep(k: int, name: str, split: bool = False):
        def hook(_module, _args, output):
            t = output[0]  # drop the batch dim
            if split:
                t = t.view(t.shape[0], heads, -1).transpose(0, 1)
            caught[k][name] = t.detach().numpy().copy()
        return hook

    def keep_attention(k: int):
        def pre(_module, args, kwargs):
            caught[k]["layer_input"] = args[0][0].detach().numpy().copy()
            mask = kwargs.get("attention_mask")
            caught[k]["mask"] = None if mask is None else mask[0, 0].detach().numpy().copy()

        def post(_module, _args, output):
            context, probs = output
            caught[k]["context"] = context[0].detach().numpy().copy()
            caught[k]["attention_probs"] = probs[0].detach().numpy().copy()
        return pre, post

    for k, layer in enumerate(model.encoder.layer):
        sa = layer.attention.self
        for name in ("query", "key", "value"):
            handles.append(getattr(sa, name).register_forward_hook(
                keep(k, f"attention.self.{name}", split=True)))
        pre, post = keep_attention(k)
        handles.append(sa.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(sa.register_forward_hook(post))
        for name, module in (
            ("attention.output.dense", layer.attention.output.dense),
            ("attention.output", layer.attention.output),
            ("intermediate.dense", layer.intermediate.dense),
            ("intermediate", layer.intermediate),
            ("output.dense", layer.output.dense),
            ("output", layer),
        ):
            handles.append(module.register_forward_hook(keep(k, name)))
    try:
        with torch.inference_mode():
            model(**{key: torch.tensor([getattr(encoding, key)]) for key in
                     ("input_ids", "token_type_ids", "position_ids", "attention_mask")})
    finally:
        for handle in handles:
            handle.remove()
    return caught


def numpy_layer(model: BertModel, k: int, x: np.ndarray, attention_mask) -> dict[str, np.ndarray]:
    """encoder.layer[k] written out in float64 numpy from its weights, starting at ``x``."""
    p = {name: t.detach().double().numpy()
         for name, t in model.encoder.layer[k].state_dict().items()}
    heads = model.config.num_attention_heads
    eps = model.config.layer_norm_eps

    def lin(y, name):
        return y @ p[f"{name}.weight"].T + p[f"{name}.bias"]

    def norm(y, name):
        mu = y.mean(-1, keepdims=True)
        sd = np.sqrt(((y - mu) ** 2).mean(-1, keepdims=True) + eps)
        return (y - mu) / sd * p[f"{name}.weight"] + p[f"{name}.bias"]

    def split(y):
        return y.reshape(len(y), heads, -1).transpose(1, 0, 2)

    x = x.astype(np.float64)
    out = {f"attention.self.{n}": split(lin(x, f"attention.self.{n}"))
           for n in ("query", "key", "value")}
    q, kk, v = (out[f"attention.self.{n}"] for n in ("query", "key", "value"))
    raw = q @ kk.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    real = np.asarray(attention_mask, dtype=bool)
    out["attention_scores"] = np.where(real[None, None, :], raw, F32_MIN)
    e = np.exp(np.where(real, raw, -np.inf) - raw.max(-1, keepdims=True))
    out["attention_probs"] = e / e.sum(-1, keepdims=True)
    out["context"] = (out["attention_probs"] @ v).transpose(1, 0, 2).reshape(len(x), -1)
    out["attention.output.dense"] = lin(out["context"], "attention.output.dense")
    out["attention.output"] = norm(out["attention.output.dense"] + x, "attention.output.LayerNorm")
    out["intermediate.dense"] = lin(out["attention.output"], "intermediate.dense")
    z = out["intermediate.dense"]
    out["intermediate"] = 0.5 * z * (1 + erf(z / math.sqrt(2)))
    out["output.dense"] = lin(out["intermediate"], "output.dense")
    out["output"] = norm(out["output.dense"] + out["attention.output"], "output.LayerNorm")
    return out


def max_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def hook_counts(model: torch.nn.Module) -> list[tuple[int, int]]:
    return [(len(m._forward_hooks), len(m._forward_pre_hooks)) for m in model.modules()]


# --- every step, every layer ------------------------------------------------------------------

CASES = [("shipped", name) for name in INPUTS] + [("tiny", name) for name in INPUTS]


@pytest.mark.parametrize(("which", "input_name"), CASES)
def test_every_step_matches_hooks_and_numpy(
    which, input_name, bundle, tiny_bundle, shipped_reference, tiny_reference, one_blas_thread
):
    b, reference = (bundle, shipped_reference) if which == "shipped" else (
        tiny_bundle, tiny_reference)
    texts, options = INPUTS[input_name]
    encoding = encode(b, *texts, **options)
    hooked = hooked_run(reference, encoding)
    padded = input_name == "padded"
    assert encoding.n_padding == (24 - 7 if padded else 0)
    # transformers hooks every BertLayer and BertSelfAttention itself, once, the first time any
    # output_attentions / output_hidden_states is asked for; after that we must add none.
    encoder_steps(b, *texts, layer=1, **options)
    hooks_before, training = hook_counts(b.model), b.model.training
    for layer in range(1, b.config.num_hidden_layers + 1):
        result = encoder_steps(b, *texts, layer=layer, **options)
        assert result.encoding == encoding and result.layer == layer
        assert tuple(result.steps) == STEP_NAMES
        assert tuple(result.checks) == STEP_NAMES
        caught = hooked[layer - 1]
        by_numpy = numpy_layer(reference, layer - 1, caught["layer_input"],
                               encoding.attention_mask)
        assert max_diff(result.layer_input, caught["layer_input"]) < TOL
        for name in STEP_NAMES:
            ours = result.steps[name]
            assert ours.dtype == np.float32 and not ours.flags.writeable, name
            assert max_diff(ours, by_numpy[name]) < TOL * scale_of(by_numpy[name]), (layer, name)
            assert result.checks[name] < TOL, (layer, name, result.checks[name])
            if name in caught:
                assert max_diff(ours, caught[name]) < TOL, (layer, name)
        # Scores have no module of their own: rebuild them from the copy's hooked Q, K and mask.
        q, k = caught["attention.self.query"], caught["attention.self.key"]
        rebuilt = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        if caught["mask"] is not None:
            rebuilt = rebuilt + caught["mask"][None]
        assert max_diff(result.steps["attention_scores"], rebuilt) < TOL
        # The mask is the model's own: none at all without padding, float32 min on padded keys.
        if padded:
            assert np.array_equal(np.broadcast_to(result.mask_bias, caught["mask"].shape),
                                  caught["mask"])
            assert np.all(result.mask_bias[encoding.n_real:] == F32_MIN)
            assert np.all(result.steps["attention_probs"][..., encoding.n_real:] == 0)
        else:
            assert result.mask_bias is None and caught["mask"] is None
    assert hook_counts(b.model) == hooks_before and b.model.training is training


def test_shapes_and_model_checks_exact(bundle):
    result = encoder_steps(bundle, SEED, layer=2)
    h, t, d, inter = 12, 7, 32, 1536
    assert result.num_heads == h and result.head_dim == d
    expected = {
        "attention.self.query": (h, t, d), "attention.self.key": (h, t, d),
        "attention.self.value": (h, t, d), "attention_scores": (h, t, t),
        "attention_probs": (h, t, t), "context": (t, 384), "attention.output.dense": (t, 384),
        "attention.output": (t, 384), "intermediate.dense": (t, inter),
        "intermediate": (t, inter), "output.dense": (t, 384), "output": (t, 384),
    }
    assert {name: a.shape for name, a in result.steps.items()} == expected
    analysis = analyze(bundle, SEED)
    assert np.array_equal(result.steps["attention_probs"], analysis.attentions[1])
    assert np.array_equal(result.steps["output"], analysis.stages["layer_2"])
    assert np.array_equal(result.layer_input, analysis.stages["layer_1"])
    assert set(CHECK_AGAINST) == set(STEP_NAMES)


def test_checks_are_live(bundle):
    """A step that is off shows in its own check, not only downstream."""
    result = encoder_steps(bundle, SEED, layer=3)
    module = bundle.model.encoder.layer[2]
    steps = dict(result.steps)
    steps["intermediate"] = steps["intermediate"] + np.float32(0.01)
    checks = step_checks(module, bundle.config.hidden_act, result.layer_input, steps,
                         result.encoding.attention_mask)
    assert checks["intermediate"] > 0.009
    assert checks["intermediate.dense"] < TOL


def test_layer_out_of_range(bundle):
    for layer in (0, 7, -1):
        with pytest.raises(InputError, match=f"no encoder layer {layer}: .* layers 1 to 6"):
            encoder_steps(bundle, SEED, layer=layer)
    for layer in (True, 1.5, "2", None):
        with pytest.raises(InputError, match="whole number from 1 to 6"):
            encoder_steps(bundle, SEED, layer=layer)
    encoding = encode(bundle, SEED)
    with pytest.raises(InputError, match="layers 1 to 6"):
        encoder_steps_of(bundle, encoding, 7)
    assert encoder_steps_of(bundle, encoding, np.int64(6)).layer == 6


def test_head_slice(bundle):
    result = encoder_steps(bundle, *PAIR, layer=4)
    for head in (0, 11):
        view = head_slice(result, head)
        assert view.query.shape == (13, 32) and view.probs.shape == (13, 13)
        assert np.array_equal(view.probs, result.steps["attention_probs"][head])
        assert max_diff(view.weighted, view.probs @ view.value) < 1e-5
        assert np.allclose(view.probs.sum(-1), 1, atol=1e-5)
    with pytest.raises(InputError, match="heads 0 to 11"):
        head_slice(result, 12)


def test_threads_share_the_model(bundle):
    """Several sessions at once get the same numbers as one at a time (to float32 rounding:
    torch may split a matmul differently while its threads are busy; a race is off by O(1))."""
    jobs = [(SEED, None, 1), (*PAIR, 6), (SEED, "Another one.", 3), (PAIR[1], None, 5)] * 2
    alone = [encoder_steps(bundle, a, b, layer=k).steps["output"] for a, b, k in jobs]
    together: list[np.ndarray | None] = [None] * len(jobs)

    def run(i: int) -> None:
        a, b, k = jobs[i]
        together[i] = encoder_steps(bundle, a, b, layer=k).steps["output"]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for one, many in zip(alone, together, strict=True):
        assert max_diff(one, many) < 1e-5


# --- pooler -----------------------------------------------------------------------------------

def test_pooler(bundle, shipped_reference):
    analysis = analyze(bundle, *PAIR)
    pooled = pooler_steps(bundle, analysis)
    assert pooled.error < 1e-6
    inputs = {key: torch.tensor([getattr(analysis.encoding, key)]) for key in
              ("input_ids", "token_type_ids", "position_ids", "attention_mask")}
    with torch.inference_mode():
        out = shipped_reference(**inputs)
    assert max_diff(pooled.tanh, out.pooler_output[0]) < TOL
    assert max_diff(pooled.cls, out.last_hidden_state[0, 0]) < TOL
    w = shipped_reference.pooler.dense.weight.detach().double().numpy()
    bias = shipped_reference.pooler.dense.bias.detach().double().numpy()
    by_numpy = w @ pooled.cls.astype(np.float64) + bias
    assert max_diff(pooled.dense, by_numpy) < TOL
    assert max_diff(pooled.tanh, np.tanh(by_numpy)) < TOL
    from_array = pooler_steps(bundle, analysis.stages["layer_6"])
    assert from_array.error < 1e-6 and np.array_equal(from_array.tanh, pooled.tanh)


def test_pooler_missing(bundle):
    torch.manual_seed(0)
    model = BertModel(tiny_config(), add_pooling_layer=False).eval()
    no_pooler = ModelBundle(name="tiny-no-pooler", model=model, tokenizer=bundle.tokenizer)
    with pytest.raises(InputError, match="no pooler"):
        pooler_steps(no_pooler, np.zeros((3, 32), np.float32))


# --- head atlas -------------------------------------------------------------------------------

SPECIAL = [1, 0, 0, 0, 1, 1]  # [CLS] w w w [SEP] [PAD]
MASK = [1, 1, 1, 1, 1, 0]


def pattern(rows: list[int], t: int = 6) -> np.ndarray:
    """(1, 1, T, T): query i puts all its attention on key rows[i]."""
    a = np.zeros((1, 1, t, t))
    a[0, 0, np.arange(t), rows] = 1.0
    return a


def test_special_positions():
    assert special_positions(SPECIAL, MASK) == ([0], [4])
    encoding_pair = ([1, 0, 1, 0, 0, 1, 1], [1, 1, 1, 1, 1, 1, 0])
    assert special_positions(*encoding_pair) == ([0], [2, 5])


def test_atlas_on_pure_patterns():
    prev = head_atlas(pattern([0, 0, 1, 2, 3, 0]), SPECIAL, MASK)
    assert prev.to_prev[0, 0] == 1.0 and prev.to_next[0, 0] == 0.0
    assert prev.to_self[0, 0] == pytest.approx(1 / 5)     # only [CLS] has no previous token
    assert prev.to_cls[0, 0] == pytest.approx(2 / 5)      # rows 0 and 1
    assert prev.to_sep[0, 0] == 0.0 and prev.entropy[0, 0] == 0.0
    nxt = head_atlas(pattern([1, 2, 3, 4, 4, 0]), SPECIAL, MASK)
    assert nxt.to_next[0, 0] == 1.0 and nxt.sep_to_sep[0, 0] == 1.0
    to_sep = head_atlas(pattern([4, 4, 4, 4, 4, 4]), SPECIAL, MASK)
    assert to_sep.to_sep[0, 0] == 1.0 and to_sep.max_share[0, 0] == 1.0
    uniform = np.zeros((1, 1, 6, 6))
    uniform[..., :5] = 0.2
    flat = head_atlas(uniform, SPECIAL, MASK)
    assert flat.entropy[0, 0] == pytest.approx(math.log(5))
    assert flat.cls_entropy[0, 0] == pytest.approx(math.log(5))
    assert flat.max_share[0, 0] == pytest.approx(0.2)


def test_atlas_matches_loops():
    rng = np.random.default_rng(0)
    t, real = 9, 7
    mask = [1] * real + [0] * (t - real)
    special = [1, 0, 0, 1, 0, 0, 1, 1, 1]  # a pair: [CLS] a a [SEP] b b [SEP] [PAD] [PAD]
    a = np.zeros((2, 3, t, t))
    a[..., :real] = rng.dirichlet(np.ones(real), size=(2, 3, t))
    atlas = head_atlas(a, special, mask)
    for layer in range(2):
        for head in range(3):
            m = a[layer, head]
            rows = range(real)
            expect = {
                "to_cls": np.mean([m[i, 0] for i in rows]),
                "to_sep": np.mean([m[i, 3] + m[i, 6] for i in rows]),
                "to_prev": np.mean([m[i, i - 1] for i in rows if i > 0]),
                "to_next": np.mean([m[i, i + 1] for i in rows if i < real - 1]),
                "to_self": np.mean([m[i, i] for i in rows]),
                "entropy": np.mean([-sum(p * math.log(p) for p in m[i, :real]) for i in rows]),
                "sep_to_sep": np.mean([m[i, 3] + m[i, 6] for i in (3, 6)]),
                "cls_entropy": -sum(p * math.log(p) for p in m[0, :real]),
                "max_share": np.mean([m[i].max() for i in rows]),
            }
            for name, value in expect.items():
                assert getattr(atlas, name)[layer, head] == pytest.approx(value), name


def test_corpus_atlas(bundle):
    atlas = corpus_head_atlas(bundle)
    assert atlas.n_inputs == len(CORPUS) and atlas.to_sep.shape == (6, 12)
    for name in ("to_cls", "to_sep", "to_prev", "to_next", "to_self", "max_share"):
        values = getattr(atlas, name)
        assert np.all((values >= 0) & (values <= 1)), name
    assert np.all(atlas.entropy >= 0)
    few = corpus_head_atlas(bundle, CORPUS[:3])
    singles = []
    for text in CORPUS[:3]:
        r = analyze(bundle, text)
        singles.append(head_atlas(r.attentions, r.encoding.special_tokens_mask, r.attention_mask))
    assert np.allclose(few.to_prev, np.mean([s.to_prev for s in singles], axis=0))
    assert np.allclose(mean_atlas(singles).entropy, few.entropy) and few.n_inputs == 3


def test_clark_reference():
    assert CLARK_2019.model == "bert-base"
    assert CLARK_2019.sep_layers == (6, 10) and CLARK_2019.sep_share_min == 0.5
    assert CLARK_2019.sep_to_sep_min == 0.9
    assert (CLARK_2019.prev_heads, CLARK_2019.next_heads) == (4, 5)
    assert CLARK_2019.last_layer_cls_entropy == 3.89 and CLARK_2019.broad_max_share == 0.10


def test_without_specials(bundle):
    analysis = analyze(bundle, *PAIR, max_length=20, pad_to_max_length=True)
    special = analysis.encoding.special_tokens_mask
    words = without_specials(analysis.attentions, special)
    n_words = 13 - 3
    assert words.shape == (6, 12, n_words, n_words)
    assert np.allclose(words.sum(-1), 1, atol=1e-5)
    keep = [i for i, s in enumerate(special) if not s]
    block = analysis.attentions[2, 5][np.ix_(keep, keep)]
    assert np.allclose(words[2, 5], block / block.sum(-1, keepdims=True), atol=1e-6)


# --- residual stream and trajectory -----------------------------------------------------------

def test_residual_shares(bundle):
    result = encoder_steps(bundle, SEED, layer=2)
    r = residual_shares(result)
    assert np.allclose(r.layer_input, np.linalg.norm(result.layer_input, axis=1), rtol=1e-5)
    assert np.allclose(r.attention_update,
                       np.linalg.norm(result.steps["attention.output.dense"], axis=1), rtol=1e-5)
    assert np.allclose(r.ffn_update, np.linalg.norm(result.steps["output.dense"], axis=1),
                       rtol=1e-5)
    assert np.allclose(r.shares().sum(1), 1)
    assert np.allclose(r.attention_residual_share,
                       r.layer_input / (r.layer_input + r.attention_update))


def test_token_trajectory(bundle, shipped_reference):
    analysis = analyze(bundle, *PAIR)
    inputs = {key: torch.tensor([getattr(analysis.encoding, key)]) for key in
              ("input_ids", "token_type_ids", "position_ids", "attention_mask")}
    with torch.inference_mode():
        hidden = [h[0].double().numpy() for h in
                  shipped_reference(**inputs, output_hidden_states=True).hidden_states]
    for position in (0, 4, 12):
        tr = token_trajectory(analysis, position)
        assert tr.stages == ("LayerNorm", *(f"layer_{k}" for k in range(1, 7)))
        assert tr.token == analysis.tokens[position]
        vectors = [h[position] for h in hidden]

        def cos(u, v):
            return u @ v / (np.linalg.norm(u) * np.linalg.norm(v))

        assert np.allclose(tr.norm, [np.linalg.norm(v) for v in vectors], rtol=1e-5)
        assert np.isnan(tr.cos_prev[0])
        assert np.allclose(tr.cos_prev[1:], [cos(vectors[k], vectors[k - 1])
                                             for k in range(1, 7)], atol=1e-5)
        assert np.allclose(tr.cos_input, [cos(v, vectors[0]) for v in vectors], atol=1e-5)
    with pytest.raises(InputError, match="positions 0 to 12"):
        token_trajectory(analysis, 13)


def test_checks_are_computed_when_read(bundle):
    """Each check is computed the first time it is read, once; an unknown step is a KeyError."""
    result = encoder_steps(bundle, SEED, layer=1)
    checks = result.checks
    assert not checks._done
    first = checks["intermediate.dense"]
    assert list(checks._done) == ["intermediate.dense"] and checks["intermediate.dense"] == first
    assert len(checks) == len(STEP_NAMES) and list(checks) == list(STEP_NAMES)
    with pytest.raises(KeyError):
        checks["not a step"]
