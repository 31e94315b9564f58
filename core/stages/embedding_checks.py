"""Live checks of the embedding layer's arithmetic, each against the model's own modules.

- LayerNorm taken apart: per-token mean and std before and after, gamma and beta, the formula;
- the word lookup as a matrix product with a one-hot matrix;
- the broadcast of a ``[T, h]`` position lookup over the batch, with real shapes.

Nothing here changes the shared model: no training mode, no hooks, no new parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from core.analysis import Analysis, input_tensors
from core.models import ModelBundle, model_run

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
    """LayerNorm by its formula in float64 numpy, and LayerNorm(sum) next to the embeddings
    module's own output (eval mode, so dropout is the identity).

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
        module_error=float(np.abs(embeddings_output(bundle, analysis) - after).max()),
    )


@torch.inference_mode()
def embeddings_output(bundle: ModelBundle, analysis: Analysis) -> np.ndarray:
    """(T, h): ``model.embeddings(input_ids, token_type_ids, position_ids)``, the module whole."""
    inputs = input_tensors(analysis.encoding)
    with model_run():
        out = bundle.model.embeddings(
            input_ids=inputs["input_ids"],
            token_type_ids=inputs["token_type_ids"],
            position_ids=inputs["position_ids"],
        )
    return out[0].numpy().astype(np.float64)


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
