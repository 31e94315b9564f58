"""The Stages page's core: what it shows beyond the stage arrays of ``core.analysis``.

- ``pipeline``: how each stage is computed (the tutorials' expressions), the autograd node that
  made each one, which dimensions to draw and one colour range for several stages;
- ``printout``: ``print(tensor)`` of a stage, by torch's own rules;
- ``embedding_checks``: LayerNorm taken apart, the lookup as a one-hot product, broadcasting;
- ``lookup_components``: the three lookups compared token by token, and the segment rows.

Each live check is its own function returning its own dataclass. Nothing here imports Streamlit
or changes the shared model.
"""
