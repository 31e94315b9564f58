"""The parameters a model really holds: ``named_parameters()`` classified by group, layer and
module, grouped into blocks, counted (also on the meta device, without weights), paired with
the formula's terms, and arranged as a tree for the treemap."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import torch
from transformers import BertConfig, BertModel

from core.parameters.counting import GROUP_LABELS, ParameterTerm, block_label

_EMBEDDINGS = re.compile(r"^embeddings\.(?P<module>.+)\.(?P<param>[^.]+)$")
_LAYER = re.compile(r"^encoder\.layer\.(?P<layer>\d+)\.(?P<module>.+)\.(?P<param>[^.]+)$")
_POOLER = re.compile(r"^(?P<module>pooler\..+)\.(?P<param>[^.]+)$")


@dataclass(frozen=True)
class NamedParameter:
    name: str                 # as in model.named_parameters(), e.g. "encoder.layer.0.attention..."
    shape: tuple[int, ...]
    numel: int
    dtype: str
    trainable: bool
    group: str                # "embeddings", "encoder.layer", "pooler" or "other"
    layer: int | None         # 0-based index of encoder.layer, None outside the encoder
    module: str               # path inside the group, as in ParameterTerm.module
    param: str                # "weight" or "bias"

    @property
    def stage(self) -> str:
        """The stage name of the app: layer_1..layer_N for encoder layers, else the group."""
        return f"layer_{self.layer + 1}" if self.layer is not None else self.group


def classify(name: str) -> tuple[str, int | None, str, str]:
    """(group, layer, module, param) of a parameter name of BertModel."""
    if m := _LAYER.match(name):
        return "encoder.layer", int(m["layer"]), m["module"], m["param"]
    if m := _EMBEDDINGS.match(name):
        return "embeddings", None, m["module"], m["param"]
    if m := _POOLER.match(name):
        return "pooler", None, m["module"], m["param"]
    module, _, param = name.rpartition(".")
    return "other", None, module or name, param


def named_parameter_list(model: torch.nn.Module) -> list[NamedParameter]:
    """Every tensor of ``model.named_parameters()`` with its shape and where it belongs."""
    rows = []
    for name, p in model.named_parameters():
        group, layer, module, param = classify(name)
        rows.append(
            NamedParameter(
                name=name,
                shape=tuple(p.shape),
                numel=p.numel(),
                dtype=str(p.dtype).removeprefix("torch."),
                trainable=p.requires_grad,
                group=group,
                layer=layer,
                module=module,
                param=param,
            )
        )
    return rows


def filter_parameters(rows: list[NamedParameter], text: str) -> list[NamedParameter]:
    """Rows whose name contains every word of ``text``, ignoring case (plain text, not regex)."""
    words = text.lower().split()
    return [r for r in rows if all(w in r.name.lower() for w in words)]


@dataclass(frozen=True)
class Block:
    """One module's parameters in one place (in one encoder layer, the embeddings or the pooler)."""

    group: str
    layer: int | None
    module: str
    tensors: tuple[tuple[str, tuple[int, ...]], ...]  # (("weight", (384, 384)), ("bias", (384,)))
    count: int

    @property
    def label(self) -> str:
        return block_label(self.module)

    @property
    def stage(self) -> str:
        return f"layer_{self.layer + 1}" if self.layer is not None else self.group

    @property
    def path(self) -> str:
        """The module's full name in the model, e.g. "encoder.layer.0.attention.self.query"."""
        if self.layer is not None:
            return f"encoder.layer.{self.layer}.{self.module}"
        return f"embeddings.{self.module}" if self.group == "embeddings" else self.module


def blocks(rows: list[NamedParameter]) -> list[Block]:
    """The named parameters grouped by module, in the model's order."""
    grouped: dict[tuple, list[NamedParameter]] = defaultdict(list)
    for r in rows:
        grouped[(r.group, r.layer, r.module)].append(r)
    return [
        Block(g, layer, module, tuple((r.param, r.shape) for r in rs), sum(r.numel for r in rs))
        for (g, layer, module), rs in grouped.items()
    ]


def model_counts(model: torch.nn.Module) -> tuple[int, int]:
    """(total, trainable): ``sum(p.numel())`` over the model's parameters."""
    params = list(model.parameters())
    return sum(p.numel() for p in params), sum(p.numel() for p in params if p.requires_grad)


def meta_model(config: BertConfig, with_pooler: bool = True) -> BertModel:
    """``BertModel(config)`` on the meta device: every shape, no memory, no weights to load."""
    # torch's device context is thread-local, so other sessions' threads are not affected.
    with torch.device("meta"):
        return BertModel(config, add_pooling_layer=with_pooler)


def meta_count(config: BertConfig, with_pooler: bool = True) -> int:
    """``sum(p.numel())`` of the model built on the meta device."""
    return model_counts(meta_model(config, with_pooler))[0]


@dataclass(frozen=True)
class Reconciled:
    """One term of the formula next to what the model really holds for that block."""

    term: ParameterTerm | None     # None: the model has a block the formula does not know
    group: str
    module: str
    model_total: int

    @property
    def formula_total(self) -> int:
        return self.term.total if self.term else 0

    @property
    def matches(self) -> bool:
        return self.formula_total == self.model_total


def reconcile(terms: list[ParameterTerm], model_blocks: list[Block]) -> list[Reconciled]:
    """Pair each term with the sum of the model's blocks of the same module (over all layers)."""
    held: dict[tuple[str, str], int] = defaultdict(int)
    for b in model_blocks:
        held[(b.group, b.module)] += b.count
    rows = [Reconciled(t, t.group, t.module, held.pop((t.group, t.module), 0)) for t in terms]
    rows += [Reconciled(None, g, m, c) for (g, m), c in held.items()]
    return rows


# --- The tree the treemap draws --------------------------------------------------------


@dataclass(frozen=True)
class TreeNodes:
    ids: list[str]
    labels: list[str]
    parents: list[str]
    values: list[int]
    paths: list[str]  # where the node lives in named_parameters, for the hover


def tree_nodes(model_blocks: list[Block], root: str = "BertModel") -> TreeNodes:
    """Root -> group -> (layer ->) block, with each parent's value the sum of its children."""
    nodes: dict[str, list] = {}  # id -> [label, parent, value, path]

    def add(node_id: str, label: str, parent: str, value: int, path: str) -> None:
        if node_id in nodes:
            nodes[node_id][2] += value
        else:
            nodes[node_id] = [label, parent, value, path]

    for b in model_blocks:
        group_id = GROUP_LABELS.get(b.group, b.group)
        add(root, root, "", b.count, "")
        add(group_id, group_id, root, b.count, "encoder.layer" if b.layer is not None else b.group)
        parent = group_id
        if b.layer is not None:
            parent = f"{group_id}/{b.stage}"
            add(parent, b.stage, group_id, b.count, f"encoder.layer.{b.layer}")
        add(f"{parent}/{b.module}", b.label, parent, b.count, b.path)
    return TreeNodes(
        ids=list(nodes),
        labels=[v[0] for v in nodes.values()],
        parents=[v[1] for v in nodes.values()],
        values=[v[2] for v in nodes.values()],
        paths=[v[3] for v in nodes.values()],
    )
