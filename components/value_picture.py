"""One way to show a picture indexed by a value (a layer, a stage, a head, a count): the pages
give the axis (components.pickers makes one per kind), the pictures
as a function of the value's index, and the value's exact figure; this module decides how it
is shown.

- Exact values off: every value's picture, switched in the browser by the axis's slider
  (components.picture_switcher.picture_slider; the shown one first, the rest when the reader
  reaches for the slider).
- Exact values on: the axis as a server slider bound to the URL
  (components.picture_switcher.axis_slider) and the interactive figure of the value it picks,
  drawn on the server.

Both read and write the link under the axis's key, so the value a reader moved to stays when
exact values are turned on or off, and a shared link opens on it either way (or says in one
line that it names no value).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from streamlit.delta_generator import DeltaGenerator

from components.picture_switcher import Axis, Pictures, axis_slider, picture_slider

V = TypeVar("V", bound=Hashable)


def value_picture(axis: Axis[V], pictures: Pictures, figure: Callable[[V], None], *,
                  exact: bool, slider_at: DeltaGenerator | None = None) -> V:
    """Value ``axis``'s picture: ``pictures`` (``pictures(i)`` the HTML of ``axis.options[i]``)
    switched in the browser, or with ``exact`` the server slider (in ``slider_at``, the page's
    main area when None) and ``figure(value)``, which draws that value's interactive figure.
    Returns the value shown. Put it in a small fragment (components.sections.run_part) with
    only what depends on the value: a move reruns that fragment either way."""
    if not exact:
        return picture_slider(axis, pictures)
    value = axis_slider(axis, where=slider_at)
    figure(value)
    return value
