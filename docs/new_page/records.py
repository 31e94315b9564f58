"""The records the new_page page passes between its functions: Context.

Kept out of page.py because Streamlit runs a page's file anew on every rerun, and making a
dataclass costs about 1 ms each time (measured); an imported module makes them once.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Analysis, ModelBundle


@dataclass(frozen=True)
class Context:
    """What every section reads: the input key, the model and the analysis of the input."""

    key: InputKey
    bundle: ModelBundle
    result: Analysis
