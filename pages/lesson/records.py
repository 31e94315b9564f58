"""The records the lesson page passes between its functions: Lesson.

Kept out of page.py because Streamlit runs a page's file anew on every rerun, and making a
dataclass costs about 1 ms each time (measured); an imported module makes them once.
"""

from dataclasses import dataclass

from pages.lesson.figures import Step


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    steps: tuple[Step, ...]
    step: int         # 1-based
    present: bool
