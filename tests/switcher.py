"""Reading what a page sent to components.picture_switcher in AppTest (which runs no JS): the
pictures of every value, the value it opens on, and the words above each picture."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from streamlit.testing.v1 import AppTest

from components.picture_switcher import WHOLE_KEY, unpack
from tests.conftest import ImageHeatmap, _HeatmapParser


@dataclass(frozen=True)
class Switcher:
    key: str                 # the URL key the value goes under
    label: str
    names: list[str]         # each value's name, as the slider and the link show it
    pictures: list[str | None]   # each value's HTML (None: not sent yet)
    index: int               # the value the page opens on
    report: bool
    shown: int = -1          # the picture shown (in a grid of sliders, of every combination)
    keys: tuple[str, ...] = ()   # the URL keys of the switcher's sliders

    def __post_init__(self) -> None:
        if self.shown < 0:
            object.__setattr__(self, "shown", self.index)

    @property
    def value(self) -> str:
        return self.names[self.index]

    def picture(self, i: int | None = None) -> str:
        """Value ``i``'s picture (the shown one when None), which must have been sent."""
        picture = self.pictures[self.shown if i is None else i]
        assert picture is not None, f"picture {i} of {self.key} was not sent"
        return picture

    def heatmaps(self, i: int | None = None) -> dict[str, ImageHeatmap]:
        """The image heatmaps of value ``i``'s picture (the shown one when None)."""
        parser = _HeatmapParser()
        parser.feed(self.picture(i))
        return {fig.key: fig for fig in parser.found}

    def words(self, i: int | None = None) -> str:
        """The line of text above value ``i``'s picture, as a reader sees it."""
        found = re.search(r'<p class="ps-words">(.*?)</p>', self.picture(i), re.S)
        return html.unescape(found.group(1)) if found else ""


def switchers(at: AppTest, *, whole: bool = True) -> dict[str, Switcher]:
    """Every slider of the picture switchers on the page, by its URL key (the sliders of one
    switcher share its pictures: every combination of their values).

    A page draws only the shown picture until the reader reaches for a slider (tests.conftest.
    open_app notes that reach by default, as the browser's "want" does); ``whole``: when some
    switcher sent only that, note it now and run again, so each picture can be read.
    ``whole=False``: as sent, a picture not sent is None."""
    found = _read(at)
    if whole and any(None in s.pictures for s in found.values()):
        at.session_state[WHOLE_KEY] = True
        at.run()
        found = _read(at)
    return found


def complete(at: AppTest) -> bool:
    """Whether every switcher on the page sent every value's picture."""
    return all(None not in s.pictures for s in _read(at).values())


def _read(at: AppTest) -> dict[str, Switcher]:
    found = {}
    for element in at.get("bidi_component"):
        data = unpack(element.proto.bytes)
        axes = data["axes"]
        shown = 0
        for axis in axes:
            shown = shown * len(axis["names"]) + axis["index"]
        for axis in axes:
            found[axis["key"]] = Switcher(axis["key"], axis["label"], axis["names"],
                                          data["pictures"], axis["index"], data["report"],
                                          shown, tuple(a["key"] for a in axes))
    return found
