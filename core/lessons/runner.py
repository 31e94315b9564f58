"""Run lesson cells notebook-style on the shared model: what ``print`` writes, then the repr of
a last bare expression, as Jupyter shows it.

The cells run on the loaded model without touching it: the tokenizer is reached through the
bundle's lock, and ``print`` writes into this run's own buffer (redirecting ``sys.stdout`` would
mix the output of sessions running at once). Gradients stay on, so tensors show their
``grad_fn`` as in the tutorial; nothing calls backward.
"""

from __future__ import annotations

import ast
import io
import threading
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch

from core.models import ModelBundle, model_run, tokenizer_lock

_SYNTAX_TREES = threading.Lock()   # see _compiled


@dataclass(frozen=True)
class CellOutput:
    code: str
    text: str     # exactly what the notebook shows under the cell


class _LockedTokenizer:
    """The bundle's tokenizer as the cells call it, every call under the tokenizer's lock."""

    def __init__(self, bundle: ModelBundle) -> None:
        self._bundle = bundle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._bundle.tokenize(*args, **kwargs)

    def __len__(self) -> int:
        with tokenizer_lock(self._bundle.tokenizer):
            return len(self._bundle.tokenizer)

    def __getattr__(self, name: str) -> Any:
        """Its methods (``convert_ids_to_tokens``, ...) and attributes, methods under the lock."""
        value = getattr(self._bundle.tokenizer, name)
        if not callable(value):
            return value
        lock = tokenizer_lock(self._bundle.tokenizer)

        def locked(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return value(*args, **kwargs)

        return locked


def _compiled(code: str) -> tuple[CodeType, CodeType | None]:
    """The cell's code, and its last line apart when that is a bare expression (to show it).

    One thread at a time: CPython 3.11 keeps one depth counter for every thread's syntax-tree
    objects, and a server runs several lessons at once ("SystemError: AST constructor recursion
    depth mismatch" otherwise).
    """
    with _SYNTAX_TREES:
        tree = ast.parse(code)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = tree.body[:-1] if last is not None else tree.body
        return (compile(ast.Module(body=body, type_ignores=[]), "<cell>", "exec"),
                None if last is None else compile(ast.Expression(last.value), "<cell>", "eval"))


def run_cells(bundle: ModelBundle, cells: tuple[str, ...] | list[str]) -> list[CellOutput]:
    """Run ``cells`` in order in one namespace holding ``tokenizer``, ``model`` and ``torch``."""
    outputs = []
    buffer = io.StringIO()

    def cell_print(*args: Any, sep: str = " ", end: str = "\n", **_: Any) -> None:
        buffer.write(sep.join(str(a) for a in args) + end)

    namespace: dict[str, Any] = {"tokenizer": _LockedTokenizer(bundle), "model": bundle.model,
                                 "torch": torch, "print": cell_print}
    with model_run():
        for code in cells:
            buffer.seek(0)
            buffer.truncate()
            body, last = _compiled(code)
            exec(body, namespace)
            if last is not None:
                value = eval(last, namespace)
                if value is not None:
                    buffer.write(repr(value) + "\n")
            outputs.append(CellOutput(code, buffer.getvalue().rstrip("\n")))
    return outputs
