"""Graphviz diagrams (the Home pipeline, the Parameters architecture, the encoder layer), built
one way: square boxes, our own labels with live numbers, drawn with ``st.graphviz_chart``.

Square corners on purpose: d3-graphviz sampled every rounded outline point by point, about 90 ms
of browser time per rerun.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from components import palette


@dataclass(frozen=True)
class Node:
    key: str
    lines: Sequence[str]
    fill: str = palette.NODE_FILL


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', "'")


def dot_graph(
    nodes: Iterable[Node],
    edges: Iterable[tuple[str, str]],
    *,
    direction: str = "LR",
    extra: Sequence[str] = (),
    font_size: int = 18,
) -> str:
    """A DOT digraph of boxed nodes (label lines joined) and edges; ``extra`` adds raw DOT lines
    (ranks, clusters) written by the caller."""
    lines = [
        "digraph G {",
        f'rankdir={direction}; bgcolor="transparent"; nodesep=0.3; ranksep=0.3;',
        f'node [shape=box, style="filled", color="{palette.NODE_LINE}", fontname="Helvetica", '
        f"fontsize={font_size}];",
        f'edge [color="{palette.EDGE}"];',
    ]
    for node in nodes:
        label = "\\n".join(_quoted(line) for line in node.lines)  # DOT's own line break
        lines.append(f'{node.key} [label="{label}", fillcolor="{node.fill}"];')
    lines += list(extra)
    lines += [f"{a} -> {b};" for a, b in edges]
    lines.append("}")
    return "\n".join(lines)
