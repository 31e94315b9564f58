"""The Parameters page's treemap as a picture: nested rectangles in HTML, laid out on the server.

The interactive plotly treemap costs a tab its plotly bundle the first time it is shown (the
page switch to Parameters took 2.84 s the first time, 0.43 s the second; bench/HISTORY.md),
so the page opens with this picture and keeps the zoomable figure one toggle away, as every
page does with its heatmaps. squarify lays the rectangles out (Bruls et al.'s squarified
treemap, the layout plotly uses too): each rectangle's area is its share of the parameters.

A name is written only where it fits on the narrowest page (a 1024-pixel projector), at
LABEL_PX (a layer's blocks at SMALL_LABEL_PX); every rectangle names itself and its count when
the pointer rests on it, and the breakdown table below the picture lists them all.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

import squarify

from components import palette
from components.i18n import _
from core.parameters.listing import TreeNodes

WIDTH_PX = 530     # the picture's width on a 1024-pixel page with the sidebar open (535 px)
HEIGHT_PX = 460
HEADER_PX = 24     # a group's or layer's name strip, above its blocks
LABEL_PX = 14
SMALL_LABEL_PX = 12   # a layer's blocks: the smallest diagram label the app draws
CHAR_EM = 0.48        # a character's width, generous (Chromium: 0.44 em for these names)
LINE_EM = 1.3
PAD_PX = 3          # around a parent's children, and left and right of a name
TEXT_PAD_Y = 2      # above and below a name
PARENT_BORDER_PX, LEAF_BORDER_PX = 2, 1
_FILLS = {"embeddings": palette.EMBEDDING_FILL, "encoder": palette.LAYER_FILL,
          "pooler": palette.HEAD_FILL}


@dataclass(frozen=True)
class Box:
    """One rectangle of the picture, in pixels of the WIDTH_PX x HEIGHT_PX layout."""
    node: str        # the node's id, e.g. "encoder/layer_1/intermediate.dense"
    label: str       # translated
    value: int
    share: float     # of the whole model
    x: float
    y: float
    dx: float
    dy: float
    depth: int       # 1 a group, 2 a layer or block, 3 a layer's block
    parent: bool     # has rectangles inside it (drawn as a frame with a name strip)


def _children(nodes: TreeNodes) -> dict[str, list[int]]:
    below: dict[str, list[int]] = {}
    for i, parent in enumerate(nodes.parents):
        below.setdefault(parent, []).append(i)
    return below


def layout(nodes: TreeNodes) -> list[Box]:
    """Every node below the root as a rectangle, parents before their children."""
    below = _children(nodes)
    root = nodes.ids[nodes.parents.index("")]
    total = nodes.values[nodes.ids.index(root)]
    boxes: list[Box] = []

    def place(parent: str, x: float, y: float, dx: float, dy: float, depth: int) -> None:
        kids = [i for i in below.get(parent, []) if nodes.values[i] > 0]
        if not kids or dx <= 0 or dy <= 0:
            return
        # Largest first gives squarer rectangles; sorted() is stable, so equal layers keep
        # their order.
        kids.sort(key=lambda i: -nodes.values[i])
        sizes = squarify.normalize_sizes([nodes.values[i] for i in kids], dx, dy)
        rects = squarify.squarify(sizes, x, y, dx, dy)
        if len({nodes.values[i] for i in kids}) == 1:
            # Equal parts (the encoder's layers): any rectangle fits any of them, so they
            # take them in reading order, layer_1 at the top left.
            rects.sort(key=lambda r: (round(r["y"]), r["x"]))
        for i, rect in zip(kids, rects, strict=True):
            node = nodes.ids[i]
            inner = bool(below.get(node))
            boxes.append(Box(node, _(nodes.labels[i]), nodes.values[i],
                             nodes.values[i] / total, rect["x"], rect["y"], rect["dx"],
                             rect["dy"], depth, inner))
            if inner and rect["dy"] > HEADER_PX + 2 * PAD_PX:
                place(node, rect["x"] + PAD_PX, rect["y"] + HEADER_PX,
                      rect["dx"] - 2 * PAD_PX, rect["dy"] - HEADER_PX - PAD_PX, depth + 1)

    place(root, 0.0, 0.0, float(WIDTH_PX), float(HEIGHT_PX), 1)
    return boxes


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def _label_px(box: Box) -> int:
    return SMALL_LABEL_PX if box.depth >= 3 else LABEL_PX


def _text_px(text: str, px: int) -> float:
    """How wide ``text`` is drawn at ``px``, generously: a Chinese character is a whole em."""
    return px * sum(1.0 if _wide(c) else CHAR_EM for c in text)


def _fits(lines: list[str], box: Box) -> bool:
    """Whether ``lines`` fit inside the rectangle's border and the text's padding (STYLE)."""
    border = PARENT_BORDER_PX if box.parent else LEAF_BORDER_PX
    room_y = box.dy - 2 * border
    if box.parent:
        room_y = min(room_y, HEADER_PX)
    px = _label_px(box)
    return (max(_text_px(line, px) for line in lines) + 2 * (PAD_PX + border) <= box.dx
            and len(lines) * LINE_EM * px + 2 * TEXT_PAD_Y <= room_y)


# A line may break between words, and anywhere between two Chinese characters.
_PIECES = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff"
                     r"\uff00-\uffef]+")


_CLOSING = set("）)」』，。、：；")


def _name_lines(label: str, box: Box) -> list[str]:
    """The name broken to the rectangle's width ("intermediate" / "(FFN up)")."""
    room, px = box.dx - 2 * (PAD_PX + LEAF_BORDER_PX), _label_px(box)
    lines: list[str] = []
    for piece in _PIECES.findall(label):
        if not lines:
            lines.append(piece)
            continue
        joined = lines[-1] + ("" if _wide(piece[0]) or _wide(lines[-1][-1]) else " ") + piece
        # Closing punctuation never starts a line (it goes with the character before it).
        if _text_px(joined, px) <= room or piece in _CLOSING:
            lines[-1] = joined
        else:
            lines.append(piece)
    return lines or [label]


def _caption(box: Box) -> str:
    """What the rectangle says: its name, count and share where they fit, its name alone where
    only that fits, nothing where nothing does."""
    numbers = [f"{box.value:,}", f"{box.share:.1%}"]
    if box.parent:
        candidates = [[f"{box.label} · {numbers[0]} · {numbers[1]}"], [box.label]]
    else:
        name = _name_lines(box.label, box)
        candidates = [name + numbers, name]
    for lines in candidates:
        if _fits(lines, box):
            return "<br>".join(html.escape(line) for line in lines)
    return ""


def _fill(box: Box) -> str:
    return _FILLS.get(box.node.split("/")[0], palette.PLAIN_FILL)


def _rectangle(box: Box) -> str:
    where = _("{name}: {count} parameters, {share} of the model").format(
        name=box.label, count=f"{box.value:,}", share=f"{box.share:.2%}")
    style = (f"left:{100 * box.x / WIDTH_PX:.3f}%;top:{box.y:.1f}px;"
             f"width:{100 * box.dx / WIDTH_PX:.3f}%;height:{box.dy:.1f}px;")
    kind = "tm-parent" if box.parent else "tm-leaf"
    style += f"background:{_fill(box)};font-size:{_label_px(box)}px;"
    return (f'<div class="tm-box {kind}" style="{style}" title="{html.escape(where)}" '
            f'data-node="{html.escape(box.node)}" data-value="{box.value}">'
            f'<span>{_caption(box)}</span></div>')


STYLE = f"""<style>
.tm {{ color:{palette.INK}; }}
.tm-title {{ font-size:18px; font-weight:600; margin:0 0 6px 0; overflow-wrap:anywhere; }}
.tm-area {{ position:relative; height:{HEIGHT_PX}px; max-width:100%; }}
.tm-box {{ position:absolute; box-sizing:border-box; overflow:hidden; line-height:{LINE_EM}; }}
.tm-box span {{ display:block; padding:{TEXT_PAD_Y}px {PAD_PX}px; white-space:nowrap; }}
.tm-parent {{ border:{PARENT_BORDER_PX}px solid {palette.EDGE}; }}
.tm-parent > span {{ font-weight:600; }}
.tm-leaf {{ border:{LEAF_BORDER_PX}px solid #ffffff; }}
</style>"""


def treemap_html(nodes: TreeNodes, model_label: str, total: int, key: str) -> str:
    """The page fragment: the title (the model and its count, as the figure's), then every
    rectangle. ``data-figure`` names it for tests and the benchmark, as a chart's key does."""
    title = _("{model}: {count} parameters").format(model=model_label, count=f"{total:,}")
    boxes = "".join(_rectangle(box) for box in layout(nodes))
    return (f'{STYLE}<div class="tm" data-figure="{html.escape(key)}">'
            f'<div class="tm-title">{html.escape(title)}</div>'
            f'<div class="tm-area" role="img" aria-label="{html.escape(title)}">{boxes}</div>'
            "</div>")
