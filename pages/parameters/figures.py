"""The Parameters page's figures and tables: the treemap, the architecture diagram, the tables'
columns and the translated words of core's text. No Streamlit calls.

Core (core/parameters/) writes its labels and messages in English; the N_ marks below put the
same English text in this page's catalog, so ``_()`` finds its translation where it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
from transformers import BertConfig

from components import palette
from components.graphs import Node, dot_graph
from components.html_table import Format
from components.i18n import N_, N_plural, _
from core.parameters.architecture import architecture_steps
from core.parameters.listing import TreeNodes
from core.parameters.text import Text

# Core's English words, marked for this page's catalog (tests check that none is missing).
CORE_WORDS = frozenset({
    # core.parameters.counting.BLOCK_LABELS
    N_("word embeddings"), N_("position embeddings"), N_("token type embeddings"),
    N_("embeddings LayerNorm"), N_("query"), N_("key"), N_("value"), N_("attention output"),
    N_("attention LayerNorm"), N_("cross-attention query"), N_("cross-attention key"),
    N_("cross-attention value"), N_("cross-attention output"), N_("cross-attention LayerNorm"),
    N_("intermediate (FFN up)"), N_("output (FFN down)"), N_("output LayerNorm"),
    N_("pooler dense"),
    # hand_formula_terms and omitted_terms
    N_("Q, K, V, attention output weights"), N_("FFN up and down weights"),
    N_("pooler weight"), N_("embeddings LayerNorm (γ, β)"),
    N_("Q, K, V, attention output biases"), N_("FFN biases (up i, down h)"),
    N_("two LayerNorms (γ, β each)"), N_("cross-attention (all of it)"), N_("pooler bias"),
    # core.parameters.tables
    N_("not in the formula"),
    # core.parameters.presets: LIMITS and the size messages
    N_("Layers"), N_("Hidden size"), N_("Heads"), N_("Intermediate size"), N_("Vocabulary"),
    N_("Positions"), N_("Token types"),
    N_("every layer is built to check the count"), N_("GPT-3 itself uses 12,288"),
    N_("no BERT uses more than 16"), N_("4 x hidden is usual"),
    N_("multilingual models use about 250,000"), N_("BERT reads 512 tokens"),
    N_("BERT has 2 segments, A and B"),
    N_("{label} must be a whole number, like {example}."),
    N_("{label} must be at least 1 (got {value}): zero or negative sizes build no model."),
    N_("{label} is capped at {cap} here (got {value}); {why}."),
    N_("Hidden size {hidden} is not divisible by {heads} heads: each head gets hidden / heads = "
       "{ratio} dimensions, and that must be a whole number. Try one of these hidden sizes: "
       "{options}; or a number of heads that divides {hidden}."),
    # core.parameters.architecture
    N_("with token_type_ids"), N_("and position_ids"), N_("word {v}×{h}"),
    N_("+ position {p}×{h}"), N_("+ token type {s}×{h}"), N_("then LayerNorm"),
    N_("Q, K, V: {h}×{h} each"), N_("{heads} heads × {d} dims"), N_("softmax(QKᵀ / √{d})"),
    N_("per head"), N_("heads joined,"), N_("dense {h}×{h}"), N_("+ LayerNorm"), N_("FFN up"),
    N_("{h} → {i}, GELU"), N_("FFN down"), N_("{i} → {h}"),
    *N_plural("after {n} layer", "after {n} layers"),   # both forms (core picks by the count)
    N_("[CLS] row only,"), N_("dense {h}×{h}, tanh"),
})
TRANSLATED_PARAMS = ("label", "why")  # a Text's values that are core's words, not numbers


def shown(text: Text) -> str:
    """A core text in the reader's language, its values filled in."""
    params = {k: _(v) if k in TRANSLATED_PARAMS else v for k, v in text.params.items()}
    return _(text.template).format(**params)


@dataclass(frozen=True)
class ColumnSpec:
    """How a table column is shown: its header (English, translated by the page), number or
    text, width and help. None in a layout hides the column (it stays in the CSV)."""

    label: str
    number: bool = False
    width: int | None = None   # pixels
    format: str | None = None
    help: str | None = None


COUNT = "localized"
BREAKDOWN_COLUMNS = {
    # The module path is in the CSV, the treemap's hover and the list of named parameters.
    "group": None,
    "module": None,
    # Which tensors a block holds is in the list of named parameters: without that column the
    # grid fits the ~520 px a 1024-pixel screen leaves it, "parameters" and "share" in view.
    "tensors": None,
    "stage": ColumnSpec(N_("stage"), width=80),
    "block": ColumnSpec(N_("block"), width=150),
    "per_instance": ColumnSpec(N_("each"), True, 85, COUNT),
    "instances": ColumnSpec("×", True, 30),
    "parameters": ColumnSpec(N_("parameters"), True, 95, COUNT),
    "share": ColumnSpec(N_("share"), True, 70, "%.3f %%"),
}
# Every grid's widths add up to at most ~510 px, what a 1024-pixel screen leaves it beside the
# sidebar, so no column sits past the right edge. What a grid leaves out is in its CSV and said
# beside it (the numbers of the formula in the formula below the table; dtype and trainable in
# the headline).
RECONCILE_COLUMNS = {
    "block": ColumnSpec(N_("block"), width=90), "formula": ColumnSpec(N_("formula"), width=115),
    "with numbers": None,
    "each": ColumnSpec(N_("each"), True, 70, COUNT),
    "times": ColumnSpec(N_("times"), True, 40), "from config": ColumnSpec(
        N_("from config"), True, 80, COUNT),
    "in the model": ColumnSpec(N_("in the model"), True, 80, COUNT),
    "equal": ColumnSpec(N_("equal"), width=35),
}
TERMS_COLUMNS = {
    "term": ColumnSpec(N_("term"), width=130), "formula": ColumnSpec(N_("formula"), width=130),
    "with numbers": ColumnSpec(N_("with numbers"), width=160),
    "total": ColumnSpec(N_("total"), True, 90, COUNT),
}
LIST_COLUMNS = {
    "name": ColumnSpec(N_("name"), width=255), "shape": ColumnSpec(N_("shape"), width=90),
    "numel": ColumnSpec("numel", True, 80, COUNT), "dtype": None, "trainable": None,
    "stage": None, "block": ColumnSpec(N_("block"), width=85),
}
_SYMBOLS = {"N": (N_("layers"), 42), "h": (N_("hidden size"), 55),
            "i": (N_("intermediate size"), 55), "V": (N_("vocabulary"), 72),
            "P": (N_("positions"), 45),
            "S": (N_("token types (segments)"), 38)}
# Two grids of one table: the sizes, then the two counts.
PRESET_SIZE_COLUMNS = {
    "model": ColumnSpec(N_("model"), width=150),
    "heads": ColumnSpec(N_("heads"), True, 50),
    "equal": None,  # said once below the table
    **{k: ColumnSpec(k, True, width, COUNT, help) for k, (help, width) in _SYMBOLS.items()},
    "from config": None, "on meta device": None,
}
PRESET_COLUMNS = {
    "model": ColumnSpec(N_("model"), width=150),
    "heads": None, "equal": None, **{k: None for k in _SYMBOLS},
    "from config": ColumnSpec(N_("from config"), True, 105, COUNT),
    "on meta device": ColumnSpec(N_("on meta device"), True, 115, COUNT),
}
TEXT_COLUMNS = ("block", "term", "formula")  # cells holding core's words


# A ColumnSpec's number format (the grid's) as an HTML table writes it.
HTML_FORMATS: dict[str, Format] = {COUNT: ",", "%.3f %%": lambda value: f"{value:.3f} %"}
TRUE_FALSE = ("✓", "✗")


def html_columns(frame: pd.DataFrame, columns: Mapping[str, ColumnSpec | None]
                 ) -> tuple[pd.DataFrame, dict[str, Format]]:
    """The columns ``columns`` shows, headed in the reader's language, and each number column's
    format, for an HTML table: what the grid shows, every cell written out (a yes/no as ✓/✗)."""
    shown = {name: spec for name, spec in columns.items() if spec is not None}
    out = localized(frame)[list(shown)]
    for name in shown:
        if pd.api.types.is_bool_dtype(out[name]):
            out[name] = out[name].map(lambda yes: TRUE_FALSE[0] if yes else TRUE_FALSE[1])
    formats = {_(spec.label): HTML_FORMATS.get(spec.format or "", "")
               for spec in shown.values() if spec.number}
    return out.rename(columns={name: _(spec.label) for name, spec in shown.items()}), formats


def localized(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose cells of core's words are in the reader's language (headers stay English:
    the page shows them translated through the column layout)."""
    out = frame.copy()
    for column in TEXT_COLUMNS:
        if column in out.columns:
            out[column] = out[column].map(_)
    return out


def treemap_figure(nodes: TreeNodes, model_name: str, total: int) -> go.Figure:
    """Root -> group -> (layer ->) block, each rectangle's area its share of the parameters."""
    tree = go.Figure(
        go.Treemap(
            ids=nodes.ids,
            labels=[_(label) for label in nodes.labels],
            parents=nodes.parents,
            values=nodes.values,
            customdata=nodes.paths,
            branchvalues="total",
            textinfo="label+value+percent root",
            texttemplate="%{label}<br>%{value:,}<br>%{percentRoot:.1%}",
            hovertemplate=_("%{label}<br>%{customdata}<br>%{value:,} parameters<br>"
                            "%{percentRoot:.2%} of the model") + "<extra></extra>",
            maxdepth=-1,
            sort=False,  # keep the model's order: embeddings, layer_1 ... layer_N, pooler
        )
    )
    title = _("{model}: {count} parameters").format(model=model_name, count=f"{total:,}")
    tree.update_layout(height=540, margin={"l": 4, "r": 4, "t": 44, "b": 4}, font={"size": 15},
                       title={"text": title, "x": 0, "font": {"size": 17}})
    return tree


_FILLS = {"io": palette.PLAIN_FILL, "embeddings": palette.EMBEDDING_FILL,
          "layer": palette.LAYER_FILL, "pooler": palette.HEAD_FILL}


def architecture_dot(config: BertConfig, tokens: int) -> str:
    """The steps of core.parameters.architecture as a Graphviz graph: the embeddings, one
    encoder layer (drawn once, × N) as an attention row and a feed-forward row, then the output
    and the pooler."""
    steps = architecture_steps(config, tokens)
    nodes = [Node(s.key, [s.name, *(shown(t) for t in s.lines), f"→ {s.shape}"], _FILLS[s.kind])
             for s in steps]
    label = _("encoder.layer × {n}: every layer has these shapes").format(
        n=config.num_hidden_layers).replace('"', "'")
    # One node a row: with the attention steps side by side the graph was so wide that a
    # 1024-pixel screen shrank its labels to 8 px.
    extra = [
        "subgraph cluster_layer {",
        f'label="{label}";',
        f'fontname="Helvetica"; fontsize=15; style="solid"; color="{palette.SEGMENT_A}";',
        "q; s; ao; ffn1; ffn2;",
        "}",
    ]
    edges = [("inp", "emb"), ("emb", "q"), ("q", "s"), ("s", "ao"), ("ao", "ffn1"),
             ("ffn1", "ffn2"), ("ffn2", "out"), ("out", "pool")]
    return dot_graph(nodes, edges, direction="TB", extra=extra, font_size=15)
