"""The parameter counts as tables (pandas): the grouped breakdown, the named_parameters list and
the formulas term by term. These are the rows the page shows and the CSV downloads hold; how the
columns look is up to the page (pages/parameters/figures.py)."""

from __future__ import annotations

import pandas as pd
from transformers import BertConfig

from core.parameters.counting import GROUP_LABELS, ParameterTerm, block_label, with_numbers
from core.parameters.listing import Block, NamedParameter, Reconciled


def _tensors_text(tensors: tuple[tuple[str, tuple[int, ...]], ...]) -> str:
    return " · ".join(f"{param} {list(shape)}" for param, shape in tensors)


def breakdown_frame(model_blocks: list[Block], per_layer: bool = False) -> pd.DataFrame:
    """The grouped breakdown: one row per block, or per module with the layers added up."""
    total = sum(b.count for b in model_blocks) or 1
    frame = pd.DataFrame(
        {
            "group": [GROUP_LABELS.get(b.group, b.group) for b in model_blocks],
            "stage": [b.stage for b in model_blocks],
            "block": [b.label for b in model_blocks],
            "module": [b.path for b in model_blocks],
            "tensors": [_tensors_text(b.tensors) for b in model_blocks],
            "per_instance": [b.count for b in model_blocks],
            "key": [(b.group, b.module) for b in model_blocks],
        }
    )
    if not per_layer:
        # Every encoder layer has the same blocks: add them up, keeping the first layer's order.
        frame["module"] = frame["module"].str.replace(r"^encoder\.layer\.\d+\.", "encoder.layer.*.",
                                                      regex=True)
        frame = frame.groupby("key", sort=False).agg(
            group=("group", "first"),
            block=("block", "first"),
            module=("module", "first"),
            tensors=("tensors", "first"),
            per_instance=("per_instance", "first"),
            instances=("per_instance", "size"),
            parameters=("per_instance", "sum"),
        )
    else:
        frame["instances"] = 1
        frame["parameters"] = frame["per_instance"]
    frame["share"] = frame["parameters"] / total
    columns = ["group", "stage", "block", "module", "tensors", "per_instance", "instances",
               "parameters", "share"]
    return frame.reset_index(drop=True)[[c for c in columns if c in frame.columns]]


def parameters_frame(rows: list[NamedParameter]) -> pd.DataFrame:
    """The named_parameters list as a table: name, shape, count, dtype, trainable, block."""
    return pd.DataFrame(
        {
            "name": [r.name for r in rows],
            "shape": [str(list(r.shape)) for r in rows],
            "numel": pd.Series([r.numel for r in rows], dtype="int64"),
            "dtype": [r.dtype for r in rows],
            "trainable": pd.Series([r.trainable for r in rows], dtype="bool"),
            "stage": [r.stage for r in rows],
            "block": [block_label(r.module) for r in rows],
        }
    )


def _shown(formula: str) -> str:
    return formula.replace("*", "·")


def _repeated(text: str, repeats: int, times: str) -> str:
    """"4*h*h" repeated over N layers reads "N·(4·h·h)"."""
    if repeats == 1:
        return text
    return f"{times}·({text})" if " " in text or "·" in text or "×" in text else f"{times}·{text}"


def terms_frame(terms: list[ParameterTerm], config: BertConfig) -> pd.DataFrame:
    """A formula's terms, repeats folded in: what, symbols, numbers, total."""
    return pd.DataFrame(
        {
            "term": [t.label for t in terms],
            "formula": [_repeated(_shown(t.formula), t.repeats, "N") for t in terms],
            "with numbers": [
                _repeated(with_numbers(t.formula, config), t.repeats, str(t.repeats))
                .replace("·", "×")
                for t in terms
            ],
            "total": [t.total for t in terms],
        }
    )


def reconcile_frame(rows: list[Reconciled], config: BertConfig) -> pd.DataFrame:
    """The exact formula term by term, beside what the model's named_parameters hold."""
    return pd.DataFrame(
        {
            "block": [block_label(r.module) for r in rows],
            "formula": [_shown(r.term.formula) if r.term else "not in the formula" for r in rows],
            "with numbers": [with_numbers(r.term.formula, config) if r.term else "" for r in rows],
            "each": [r.term.count if r.term else 0 for r in rows],
            "times": [r.term.repeats if r.term else 0 for r in rows],
            "from config": [r.formula_total for r in rows],
            "in the model": [r.model_total for r in rows],
            "equal": [r.matches for r in rows],
        }
    )
