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
    compact: bool = False,
) -> str:
    """A DOT digraph of boxed nodes (label lines joined) and edges; ``extra`` adds raw DOT lines
    (ranks, clusters) written by the caller.

    ``compact``: boxes as narrow as their labels and less room between them, for a row of many
    short labels (a sentence's tokens). The diagram is drawn to the column's width, so a wide
    row shrinks every label: at 1024x768 a row of eight tokens drew 14-point labels 11-12 px tall,
    compact 16 px.
    """
    sizes = ('nodesep=0.25; ranksep=0.3;', ' margin="0.1,0.04", width=0.2, height=0.3,')
    sep, box = sizes if compact else ("nodesep=0.3; ranksep=0.3;", "")
    lines = [
        "digraph G {",
        f'rankdir={direction}; bgcolor="transparent"; {sep}',
        f'node [shape=box, style="filled", color="{palette.NODE_LINE}", fontname="Helvetica",'
        f"{box} fontsize={font_size}];",
        f'edge [color="{palette.EDGE}"];',
    ]
    for node in nodes:
        label = "\\n".join(_quoted(line) for line in node.lines)  # DOT's own line break
        lines.append(f'{node.key} [label="{label}", fillcolor="{node.fill}"];')
    lines += list(extra)
    lines += [f"{a} -> {b};" for a, b in edges]
    lines.append("}")
    return "\n".join(lines)
