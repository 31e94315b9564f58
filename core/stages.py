"""What the Stages page shows beyond the stage arrays of ``core.analysis``, each checked live.

- the autograd node that made every stage, from a real forward with gradients on;
- the tutorials' printout of a stage (``tensor([[[ 0.0123, ...]]], grad_fn=<...>)``);
- LayerNorm taken apart: per-token mean and std before and after, gamma and beta, the formula;
- the word lookup as a matrix product with a one-hot matrix;
- the broadcast of a ``[T, h]`` position lookup over the batch, with real shapes;
- per token, how large each of the three lookups is and how they point relative to each other;
- the distinct rows of the token-type lookup (one per segment).

Nothing here changes the shared model: no training mode, no hooks, no new parameters.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics.pairwise import paired_cosine_distances
from transformers import BertConfig

from core.analysis import Analysis, embedding_stages, input_tensors
from core.models import ModelBundle

LOOKUPS = ("word_embeddings", "token_type_embeddings", "position_embeddings")
PAIRS = (  # the three pairs of lookups, in the order the cosine columns are reported
    ("word_embeddings", "token_type_embeddings"),
    ("word_embeddings", "position_embeddings"),
    ("token_type_embeddings", "position_embeddings"),
)
MODULE_OUTPUT = "model.embeddings(...)"
DEFAULT_DIMS = 64           # dimensions drawn by default: a 512-token stage is ~175 KB of JSON
CLIP_PERCENTILE = 99.0      # colour limit when clipping: a rogue dimension cannot wash out the rest


# ---------------------------------------------------------------------------------------------
# How each stage is computed, written as the tutorials write it
# ---------------------------------------------------------------------------------------------

def stage_expression(stage: str) -> str:
    """The Python that gives this stage's tensor, as in the tutorials (``model`` a BertModel)."""
    fixed = {
        "word_embeddings": "model.embeddings.word_embeddings(input_ids)",
        "token_type_embeddings": "model.embeddings.token_type_embeddings(token_type_ids)",
        "position_embeddings": "model.embeddings.position_embeddings(position_ids)",
        "sum": "word_embeddings + token_type_embeddings + position_embeddings",
        "LayerNorm": "model.embeddings.LayerNorm(sum)",
        "dropout": "LayerNorm * mask / (1 - p)  # seeded mask, as nn.Dropout in training",
        MODULE_OUTPUT: "model.embeddings(input_ids, token_type_ids, position_ids)  # eval mode",
    }
    if stage in fixed:
        return fixed[stage]
    if stage.startswith("layer_"):
        k = int(stage.removeprefix("layer_"))
        return (
            f"model(**inputs, output_hidden_states=True).hidden_states[{k}]"
            f"  # encoder.layer[{k - 1}]"
        )
    raise KeyError(stage)


def stage_description(stage: str, config: BertConfig) -> str:
    """One or two sentences on what a stage holds, with the model's own table sizes."""
    h, p = config.hidden_size, config.hidden_dropout_prob
    fixed = {
        "word_embeddings": f"Row input_id of the {config.vocab_size:,} × {h} vocabulary table: "
        "a token gets the same vector wherever it stands and whatever its neighbours.",
        "token_type_embeddings": f"Row 0 or 1 of the {config.type_vocab_size} × {h} segment "
        "table: every token of sentence A gets one vector, every token of sentence B another.",
        "position_embeddings": f"Row i of the {config.max_position_embeddings} × {h} position "
        "table for the token at position i: the only place where word order enters the model.",
        "sum": "word + token_type + position, number by number: still one vector per token, "
        "nothing has moved between tokens yet.",
        "LayerNorm": "Each row shifted to mean 0 and scaled to standard deviation 1, then "
        "multiplied by γ and shifted by β per dimension: this is model.embeddings(...) in eval "
        "mode, the input of layer_1.",
        "dropout": f"What training would feed the encoder: {p:.0%} of the values zeroed and the "
        f"rest scaled by 1/(1 − {p:g}), with a fixed seed. In eval mode, as here and in the "
        "tutorials, dropout does nothing and layer_1 reads LayerNorm.",
    }
    if stage in fixed:
        return fixed[stage]
    k = int(stage.removeprefix("layer_"))
    return (
        f"Output of encoder.layer[{k - 1}]: self-attention has mixed information between the "
        "tokens, so each row now depends on the whole input."
    )


# ---------------------------------------------------------------------------------------------
# Autograd nodes from a real forward with gradients on
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AutogradTrace:
    """For every stage (and the embeddings module's output): its autograd node and real shape."""

    grad_fn: dict[str, str | None]         # stage -> "EmbeddingBackward0", ...; None if no graph
    shapes: dict[str, tuple[int, ...]]     # stage -> (1, T, h)
    max_diff: dict[str, float]             # stage -> max |grad forward - analysis array|


def node_name(tensor: torch.Tensor) -> str | None:
    """The autograd node's name exactly as ``repr(tensor)`` prints it in ``grad_fn=<...>``."""
    fn = tensor.grad_fn
    if fn is None:
        return None
    name = type(fn).__name__
    return fn.name().rsplit("::", 1)[-1] if name == "CppFunction" else name


def autograd_trace(bundle: ModelBundle, analysis: Analysis) -> AutogradTrace:
    """Run the stages again with gradients on and read which operation made each tensor.

    ``torch.enable_grad`` is local to this thread, ``backward`` is never called and the graph is
    dropped on return, so the shared model is used exactly as ``analyze`` uses it. The values are
    compared with the analysis' arrays, so the names belong to the numbers the page shows.
    Cost: one more forward pass; for 512 tokens on all-MiniLM-L6-v2 the graph holds ~180 MB
    until this returns.
    """
    inputs = input_tensors(analysis.encoding)
    with torch.enable_grad():
        tensors = embedding_stages(bundle, inputs)
        tensors[MODULE_OUTPUT] = bundle.model.embeddings(
            input_ids=inputs["input_ids"],
            token_type_ids=inputs["token_type_ids"],
            position_ids=inputs["position_ids"],
        )
        out = bundle.model(**inputs, output_hidden_states=True, return_dict=True)
        for k, hidden in enumerate(out.hidden_states[1:], start=1):
            tensors[f"layer_{k}"] = hidden
    reference = dict(analysis.stages)
    reference[MODULE_OUTPUT] = analysis.stages["LayerNorm"]  # eval mode: dropout is the identity
    max_diff = {
        name: float(np.abs(t.detach()[0].numpy() - reference[name]).max())
        for name, t in tensors.items()
    }
    return AutogradTrace(
        grad_fn={name: node_name(t) for name, t in tensors.items()},
        shapes={name: tuple(t.shape) for name, t in tensors.items()},
        max_diff=max_diff,
    )


# ---------------------------------------------------------------------------------------------
# The tutorials' printout, formatted by torch's own rules
# ---------------------------------------------------------------------------------------------

PRINT_PRECISION = 4      # torch's default print options
PRINT_EDGEITEMS = 3
PRINT_LINEWIDTH = 80
_PREFIX = "tensor("


@dataclass(frozen=True)
class _NumberFormat:
    """torch._tensor_str._Formatter: one width, fixed or scientific, for all values shown."""

    sci: bool
    integer: bool
    width: int

    @classmethod
    def of(cls, shown: np.ndarray) -> _NumberFormat:
        values = shown.astype(np.float64).ravel()
        nonzero = values[np.isfinite(values) & (values != 0)]
        if nonzero.size == 0:
            return cls(sci=False, integer=True, width=1)
        magnitude = np.abs(nonzero)
        low, high = magnitude.min(), magnitude.max()
        sci = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        integer = bool(np.all(nonzero == np.ceil(nonzero)))
        if sci:
            texts = [f"{v:.{PRINT_PRECISION}e}" for v in nonzero]
        elif integer:
            texts = [f"{v:.0f} " for v in nonzero]  # room for the trailing "."
        else:
            texts = [f"{v:.{PRINT_PRECISION}f}" for v in nonzero]
        return cls(sci=sci, integer=integer and not sci, width=max(1, *map(len, texts)))

    def __call__(self, value: float) -> str:
        if self.sci:
            text = f"{value:{self.width}.{PRINT_PRECISION}e}"
        elif self.integer:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRINT_PRECISION}f}"
        return text.rjust(self.width)


def _edges(n: int, summarize: bool) -> tuple[list[int], bool]:
    """Indices torch shows along one axis of size n, and whether "..." stands for the rest."""
    if summarize and n > 2 * PRINT_EDGEITEMS:
        return [*range(PRINT_EDGEITEMS), *range(n - PRINT_EDGEITEMS, n)], True
    return list(range(n)), False


def _row_text(values: Iterable[float], cut: bool, fmt: _NumberFormat, indent: int) -> str:
    items = [fmt(float(v)) for v in values]
    if cut:
        items.insert(PRINT_EDGEITEMS, " ...")
    per_line = max(1, (PRINT_LINEWIDTH - indent) // (fmt.width + 2))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def torch_printout(values: np.ndarray, grad_fn: str | None = None, every_row: bool = True) -> str:
    """``print(tensor)`` of a (T, h) stage as the batch-of-one tensor [1, T, h] the model made.

    Each row shows its first and last three values. With ``every_row=False`` the rows are cut to
    the first and last three too, which is character for character what ``print`` shows; with
    ``every_row=True`` every token gets its line, in the same format.
    """
    matrix = np.asarray(values, dtype=np.float32)
    n_rows, n_cols = matrix.shape
    summarize = matrix.size > 1000 or every_row  # torch summarizes above 1000 elements
    cols, col_cut = _edges(n_cols, summarize)
    rows, row_cut = _edges(n_rows, summarize and not every_row)
    fmt = _NumberFormat.of(matrix[np.ix_(rows, cols)])
    row_indent = len(_PREFIX) + 2  # "tensor(" then "[[" of the batch and the matrix
    texts = [_row_text(matrix[r, cols], col_cut, fmt, row_indent) for r in rows]
    if row_cut:
        texts.insert(PRINT_EDGEITEMS, "...")
    body = _PREFIX + "[[" + (",\n" + " " * row_indent).join(texts) + "]]"
    if grad_fn is None:
        return body + ")"
    suffix = f"grad_fn=<{grad_fn}>"
    last_line = len(body) - body.rfind("\n") + 1  # as torch counts it
    if last_line + len(suffix) + 2 > PRINT_LINEWIDTH:
        return body + ",\n" + " " * len(_PREFIX) + suffix + ")"
    return body + ", " + suffix + ")"


def torch_size(shape: Sequence[int]) -> str:
    """``torch.Size([1, 7, 384])`` as torch prints a shape."""
    return f"torch.Size([{', '.join(str(int(n)) for n in shape)}])"


# ---------------------------------------------------------------------------------------------
# LayerNorm taken apart
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LayerNormCheck:
    """Per-token statistics (T,) of the sum, the normalised sum and LayerNorm's output."""

    mean_before: np.ndarray
    std_before: np.ndarray
    mean_normalised: np.ndarray
    std_normalised: np.ndarray
    mean_after: np.ndarray
    std_after: np.ndarray
    gamma: np.ndarray            # (h,) LayerNorm.weight
    beta: np.ndarray             # (h,) LayerNorm.bias
    eps: float
    formula_error: float         # max |gamma (x - mean) / sqrt(var + eps) + beta - LayerNorm|
    module_error: float          # max |LayerNorm(sum) - model.embeddings(...)|

    def table(self) -> np.ndarray:
        """(T, 6): mean and std before, normalised and after, in that order."""
        return np.column_stack(
            [
                self.mean_before, self.std_before,
                self.mean_normalised, self.std_normalised,
                self.mean_after, self.std_after,
            ]
        ).astype(np.float32)


LAYERNORM_COLUMNS = (
    "mean before", "std before", "mean normalised", "std normalised", "mean after", "std after",
)


def layernorm_check(bundle: ModelBundle, analysis: Analysis) -> LayerNormCheck:
    """LayerNorm by its formula in float64 numpy, next to the module's own output.

    The standard deviation is the population one (ddof=0), as LayerNorm uses.
    """
    ln = bundle.model.embeddings.LayerNorm
    gamma = ln.weight.detach().numpy().astype(np.float32)
    beta = ln.bias.detach().numpy().astype(np.float32)
    x = analysis.stages["sum"].astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    normalised = (x - mean) / np.sqrt(var + ln.eps)
    by_hand = normalised * gamma + beta
    after = analysis.stages["LayerNorm"].astype(np.float64)
    return LayerNormCheck(
        mean_before=mean[:, 0],
        std_before=np.sqrt(var[:, 0]),
        mean_normalised=normalised.mean(axis=1),
        std_normalised=normalised.std(axis=1),
        mean_after=after.mean(axis=1),
        std_after=after.std(axis=1),
        gamma=gamma,
        beta=beta,
        eps=float(ln.eps),
        formula_error=float(np.abs(by_hand - after).max()),
        module_error=float(analysis.stage_identity_error),
    )


# ---------------------------------------------------------------------------------------------
# The lookup as a matrix product
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OneHotCheck:
    vocab_size: int
    one_hot_shape: tuple[int, ...]   # (1, T, V), as F.one_hot(input_ids) gives it
    product_shape: tuple[int, ...]   # (1, T, h)
    error: float                     # max |one_hot(input_ids) @ W - word_embeddings(input_ids)|
    columns: np.ndarray              # the distinct input_ids, ascending: the non-zero columns
    compact: np.ndarray              # (T, len(columns)) uint8: the one-hot matrix, zero columns cut


@torch.inference_mode()
def one_hot_check(bundle: ModelBundle, analysis: Analysis) -> OneHotCheck:
    """Multiply the one-hot rows by the whole vocabulary table and compare with the lookup."""
    weight = bundle.model.embeddings.word_embeddings.weight             # (V, h)
    ids = input_tensors(analysis.encoding)["input_ids"]                # (1, T)
    # F.one_hot(ids, V).to(float) without its int64 copy: 62 MB less for 512 tokens.
    one_hot = torch.zeros(*ids.shape, weight.shape[0], dtype=weight.dtype)
    one_hot.scatter_(2, ids[..., None], 1.0)                            # (1, T, V)
    product = one_hot @ weight                                          # (1, T, h)
    error = float(np.abs(product[0].numpy() - analysis.stages["word_embeddings"]).max())
    columns, inverse = np.unique(np.asarray(analysis.input_ids), return_inverse=True)
    compact = F.one_hot(torch.from_numpy(inverse), num_classes=len(columns)).numpy()
    return OneHotCheck(
        vocab_size=int(weight.shape[0]),
        one_hot_shape=tuple(one_hot.shape),
        product_shape=tuple(product.shape),
        error=error,
        columns=columns,
        compact=compact.astype(np.uint8),
    )


def one_hot_matrix(input_ids: Sequence[int], vocab_size: int) -> np.ndarray:
    """The full (T, V) one-hot matrix as uint8, for downloads of short inputs."""
    ids = torch.tensor(list(input_ids), dtype=torch.long)
    return F.one_hot(ids, num_classes=vocab_size).to(torch.uint8).numpy()


# ---------------------------------------------------------------------------------------------
# Broadcasting: a [T, h] position lookup added to [1, T, h] tensors
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShapeLine:
    code: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class BroadcastDemo:
    lines: list[ShapeLine]
    error: float                 # max |broadcast sum - the analysis' sum|


@torch.inference_mode()
def broadcast_demo(bundle: ModelBundle, analysis: Analysis) -> BroadcastDemo:
    """Redo the sum the tutorial's way, ``pos_ids = torch.arange(T)``, and record every shape."""
    emb = bundle.model.embeddings
    inputs = input_tensors(analysis.encoding)
    input_ids, token_type_ids = inputs["input_ids"], inputs["token_type_ids"]   # (1, T)
    pos_ids = torch.arange(input_ids.shape[1])                                   # (T,)
    word = emb.word_embeddings(input_ids)                                        # (1, T, h)
    token_type = emb.token_type_embeddings(token_type_ids)                       # (1, T, h)
    position = emb.position_embeddings(pos_ids)                                  # (T, h)
    total = word + token_type + position                                         # (1, T, h)
    batch = emb.word_embeddings(input_ids.expand(2, -1)) + position              # (2, T, h)
    lines = [
        ("input_ids", input_ids),
        ("pos_ids = torch.arange(input_ids.shape[1])", pos_ids),
        ("word = word_embeddings(input_ids)", word),
        ("token_type = token_type_embeddings(token_type_ids)", token_type),
        ("position = position_embeddings(pos_ids)", position),
        ("word + token_type + position", total),
        ("word_embeddings(input_ids.expand(2, -1)) + position", batch),
    ]
    error = float(np.abs(total[0].numpy() - analysis.stages["sum"]).max())
    return BroadcastDemo([ShapeLine(code, tuple(t.shape)) for code, t in lines], error)


# ---------------------------------------------------------------------------------------------
# Per token: how much of the sum is word, segment and position
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Components:
    """Per token (rows), for the three lookups in LOOKUPS order and the pairs in PAIRS order."""

    norms: np.ndarray        # (T, 3) L2 norm of each lookup
    sum_norms: np.ndarray    # (T,) L2 norm of their sum
    cosines: np.ndarray      # (T, 3) cosine between the two lookups of each pair
    shares: np.ndarray       # (T, 3) c . s / |s|^2: each lookup's part of the sum; rows add to 1

    def table(self) -> np.ndarray:
        return np.column_stack([self.norms, self.sum_norms, self.cosines, self.shares]).astype(
            np.float32
        )


COMPONENT_COLUMNS = (
    "|word|", "|token_type|", "|position|", "|sum|",
    "cos(word, token_type)", "cos(word, position)", "cos(token_type, position)",
    "share word", "share token_type", "share position",
)


def components(analysis: Analysis) -> Components:
    """Norms, pairwise cosines and shares of the three lookups for every token.

    The share of a lookup c in the sum s is its projection on s, c . s / |s|^2: the three shares
    add up to exactly 1 (their dot products with s add up to s . s) and a negative share means
    the lookup points away from the sum.
    """
    parts = {name: analysis.stages[name].astype(np.float64) for name in LOOKUPS}
    total = sum(parts.values())
    norms = np.column_stack([np.linalg.norm(parts[name], axis=1) for name in LOOKUPS])
    cosines = np.column_stack([1.0 - paired_cosine_distances(parts[a], parts[b]) for a, b in PAIRS])
    total_sq = np.einsum("th,th->t", total, total)
    safe = np.where(total_sq > 0, total_sq, 1.0)
    shares = np.column_stack(
        [np.einsum("th,th->t", parts[name], total) / safe for name in LOOKUPS]
    )
    return Components(
        norms=norms.astype(np.float32),
        sum_norms=np.sqrt(total_sq).astype(np.float32),
        cosines=cosines.astype(np.float32),
        shares=shares.astype(np.float32),
    )


# ---------------------------------------------------------------------------------------------
# Segments: the token-type lookup has one distinct row per segment
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SegmentRows:
    n_distinct: int                  # distinct rows of the token-type stage
    segments: list[int]              # token_type_id of each distinct row, ascending
    counts: list[int]                # tokens per distinct row
    table_error: float               # max |distinct row - token_type_embeddings.weight[segment]|


def segment_rows(bundle: ModelBundle, analysis: Analysis) -> SegmentRows:
    """Group the rows of the token-type stage; each distinct row is one row of the 2 x h table."""
    rows, first, counts = np.unique(
        analysis.stages["token_type_embeddings"], axis=0, return_index=True, return_counts=True
    )
    segments = [analysis.token_type_ids[i] for i in first]
    table = bundle.model.embeddings.token_type_embeddings.weight.detach().numpy()
    error = float(np.abs(rows - table[segments]).max()) if segments else 0.0
    order = np.argsort(segments)
    return SegmentRows(
        n_distinct=int(len(rows)),
        segments=[int(segments[i]) for i in order],
        counts=[int(counts[i]) for i in order],
        table_error=error,
    )


# ---------------------------------------------------------------------------------------------
# View helpers: which dimensions to draw, and one colour range for several stages
# ---------------------------------------------------------------------------------------------

def dimension_window(
    hidden: int, mode: str, first_n: int = DEFAULT_DIMS, span: tuple[int, int] | None = None
) -> range:
    """The hidden dimensions to draw: ``"first"`` N, a ``"range"`` (inclusive) or ``"all"``.

    Out-of-range numbers are clamped, so a hand-edited URL still gives a sensible window.
    """
    if mode == "all":
        return range(hidden)
    if mode == "range" and span is not None:
        lo, hi = sorted(int(v) for v in span)
        lo, hi = min(max(lo, 0), hidden - 1), min(max(hi, 0), hidden - 1)
        return range(lo, hi + 1)
    return range(min(max(int(first_n), 1), hidden))


def colour_bound(matrices: Iterable[np.ndarray], clip: bool) -> float:
    """Half-width of a colour range centred on 0 that covers all the matrices.

    With ``clip`` it is the 99th percentile of |value| instead of the maximum, so one rogue
    dimension does not turn every other cell white (colours saturate beyond it).
    """
    values = np.concatenate([np.abs(np.asarray(m, dtype=np.float32)).ravel() for m in matrices])
    if values.size == 0:
        return 1.0
    bound = float(np.percentile(values, CLIP_PERCENTILE) if clip else values.max())
    return bound if bound > 0 else 1.0


# ---------------------------------------------------------------------------------------------
# Everything at once, for one cached call per input
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StageDetails:
    trace: AutogradTrace
    layernorm: LayerNormCheck
    one_hot: OneHotCheck
    broadcast: BroadcastDemo
    components: Components
    segments: SegmentRows


def stage_details(bundle: ModelBundle, analysis: Analysis) -> StageDetails:
    """Every live check and derived table of the Stages page for one analysed input."""
    return StageDetails(
        trace=autograd_trace(bundle, analysis),
        layernorm=layernorm_check(bundle, analysis),
        one_hot=one_hot_check(bundle, analysis),
        broadcast=broadcast_demo(bundle, analysis),
        components=components(analysis),
        segments=segment_rows(bundle, analysis),
    )

