"""The records the pairs page passes between its functions: Context.

Kept out of page.py because Streamlit runs a page's file anew on every rerun, and making a
dataclass costs about 1 ms each time (measured); an imported module makes them once.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.input_key import InputKey
from core import Encoding, ModelBundle


@dataclass(frozen=True)
class Context:
    key: InputKey
    bundle: ModelBundle
    encoding: Encoding | None   # the sidebar's input as every page tokenises it (None: refused)
