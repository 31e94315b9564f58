"""Reading what a page sent to components.picture_switcher in AppTest (which runs no JS): the
pictures of every value, the value it opens on, and the words above each picture."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from streamlit.testing.v1 import AppTest

from components.picture_switcher import unpack
from tests.conftest import ImageHeatmap, _HeatmapParser


@dataclass(frozen=True)
class Switcher:
    key: str                 # the URL key the value goes under
    label: str
    names: list[str]         # each value's name, as the slider and the link show it
    pictures: list[str]      # each value's HTML
    index: int               # the value the page opens on
    report: bool
    shown: int = -1          # the picture shown (in a grid of sliders, of every combination)

    def __post_init__(self) -> None:
        if self.shown < 0:
            object.__setattr__(self, "shown", self.index)

    @property
    def value(self) -> str:
        return self.names[self.index]

    def heatmaps(self, i: int | None = None) -> dict[str, ImageHeatmap]:
        """The image heatmaps of value ``i``'s picture (the shown one when None)."""
        parser = _HeatmapParser()
        parser.feed(self.pictures[self.shown if i is None else i])
        return {fig.key: fig for fig in parser.found}

    def words(self, i: int | None = None) -> str:
        """The line of text above value ``i``'s picture, as a reader sees it."""
        found = re.search(r'<p class="ps-words">(.*?)</p>', self.pictures[
            self.shown if i is None else i], re.S)
        return html.unescape(found.group(1)) if found else ""


def switchers(at: AppTest) -> dict[str, Switcher]:
    """Every slider of the picture switchers on the page, by its URL key (the sliders of one
    switcher share its pictures: every combination of their values)."""
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
                                          shown)
    return found
