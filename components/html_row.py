"""Page fragments side by side where the page is wide enough, one under the other where it is
not (at 1024 px with the sidebar open): st.columns would keep them side by side at any width, and
a table or picture too wide for its half would scroll or be cut."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

STYLE = """<style>
.html-row { display:flex; flex-wrap:wrap; gap:16px 28px; align-items:flex-start; }
</style>"""


def side_by_side_html(blocks: Sequence[str], min_px: int = 340) -> str:
    """``blocks`` (HTML fragments) in one row; each at least ``min_px`` wide, or on a line of its
    own."""
    cells = "".join(f'<div style="flex:1 1 {min_px}px;min-width:0">{b}</div>' for b in blocks)
    return f'{STYLE}<div class="html-row">{cells}</div>'


def draw_side_by_side(blocks: Sequence[str], min_px: int = 340) -> None:
    st.html(side_by_side_html(blocks, min_px))
