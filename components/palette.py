"""Every colour the app draws with, by what it means, so a figure and its legend agree.

Segment A blue and segment B orange stay distinct for colour-blind viewers (Tableau 10); the
three lookups use ColorBrewer's Dark2, which stays apart from the segment pair.
"""

from __future__ import annotations

SEGMENT_A = "#1f77b4"
SEGMENT_B = "#ff7f0e"
SEGMENT = {0: SEGMENT_A, 1: SEGMENT_B}

WORD = "#1b9e77"          # word_embeddings
TOKEN_TYPE = "#d95f02"    # token_type_embeddings
POSITION = "#7570b3"      # position_embeddings
HIGHLIGHT = "#d62728"     # the picked token, a check that failed
GOOD = "#2ca02c"
INK = "#111111"           # text and lines on white: 18:1
SOFT_INK = "#333333"      # secondary text: 12.6:1
MUTED = "#595959"         # the lightest grey text may be on white and keep 7:1
GRID = "#bbbbbb"
PADDING_TEXT = "#595959"
PADDING_FILL = "#f3f3f3"
NODE_FILL = "#eef4fb"      # diagram boxes
NODE_LINE = SEGMENT_A
LAYER_FILL = "#d9ead3"
EMBEDDING_FILL = "#cfe2f3"
HEAD_FILL = "#fce5cd"
PLAIN_FILL = "#eeeeee"
EDGE = "#555555"
