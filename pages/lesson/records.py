"""The lesson page's records (Lesson): made once here, not on every rerun as in
page.py (README, "Adding a page")."""

from dataclasses import dataclass

from pages.lesson.figures import Step


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    steps: tuple[Step, ...]
    step: int         # 1-based
    present: bool
