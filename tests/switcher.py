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
    shown: int = -1          # the picture shown (in a grid of sliders, of every combination)

    def __post_init__(self) -> None:
        if self.shown < 0:
            object.__setattr__(self, "shown", self.index)

    @property
    def report(self) -> bool:
        """Every switcher reports a move to the server (components.picture_switcher)."""
        return True

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


def switchers(at: AppTest) -> dict[str, Switcher]:
    """Every slider of the picture switchers on the page, by its URL key (the sliders of one
    switcher share its pictures: every combination of their values).

    A page draws only the shown picture until the reader reaches for a slider (tests.conftest.
    open_app notes that reach by default, as the browser's "want" does); when some switcher
    sent only that, note it now and run again, so each picture can be read."""
    found = _read(at)
    if any(None in s.pictures for s in found.values()):
        at.session_state[WHOLE_KEY] = True
        at.run()
        found = _read(at)
    return found


def sent(at: AppTest) -> list[dict]:
    """What each switcher on the page sent (components.picture_switcher's data, unpacked)."""
    return [unpack(element.proto.bytes) for element in at.get("bidi_component")]


def shown_index(data: dict) -> int:
    """The picture a switcher's data opens on (every combination of its sliders' values, the
    last slider's first)."""
    at = 0
    for axis in data["axes"]:
        at = at * len(axis["names"]) + axis["index"]
    return at


def _read(at: AppTest) -> dict[str, Switcher]:
    found = {}
    for data in sent(at):
        for axis in data["axes"]:
            found[axis["key"]] = Switcher(axis["key"], axis["label"], axis["names"],
                                          data["pictures"], axis["index"], shown_index(data))
    return found
