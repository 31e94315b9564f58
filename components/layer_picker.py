"""The layer picker every page draws the same way: a slider over the layers, bound to the URL,
that reads a shared link's layer in either language and says in one line when the link asks
for a layer this model (or this corpus) does not have.

    layer = layer_picker("ctx_layer", range(7), _("Layer"))              # ?ctx_layer=4
    layer = layer_picker("att_layer", range(1, 7), _("Encoder layer"),
                         named=True)                                    # ?att_layer=layer+3

``layer_axis`` is the same layers as an axis (components.picture_switcher.Axis): the slider of a
picture switcher, or of components.value_picture, which picks between the two. The picker is
that axis as a server slider (components.picture_switcher.axis_slider), so the link is read,
checked and reconciled with a switcher of the same key in one place.

A slider, not a selectbox: the arrow keys step to the next layer, one click moves it, and its
move reaches the server sooner (in Chromium, from the key to the rerun's request: 25 ms for a
selectbox's Enter, 12 ms for a slider's arrow key).
"""

from __future__ import annotations

from collections.abc import Iterable

from streamlit.delta_generator import DeltaGenerator

from components.i18n import N_, _, every_language
from components.picture_switcher import Axis, axis_slider

LAYER_LABEL = N_("layer {n}")
NO_LAYER = N_("There is no layer {asked} here: the layers are {first} to {last}. Showing layer "
              "{n}.")
# The same, where the values are shown as names ("layer 3").
NO_LAYER_SHOWN = N_("There is no layer {asked} here: the layers run from {first} to {last}. "
                    "Showing {n}.")


def layer_name(n: int, named: bool) -> str:
    """How the slider shows layer ``n`` (and what the link carries for it): "layer 3" in the
    reader's language, or the bare number."""
    return _(LAYER_LABEL).format(n=n) if named else str(n)


def layer_axis(key: str, layers: Iterable[int], label: str, *, default: int | None = None,
               named: bool = True, help: str | None = None,  # noqa: A002 - Streamlit's name
               ) -> Axis[int]:
    """The layers as a slider's axis: named "layer 3" in the reader's language (``named``) or
    shown as bare numbers, a link's layer read as a bare number or its name in either language,
    ``default`` (the last layer when None) to start on."""
    options = [int(k) for k in layers]
    if not options:
        raise ValueError("a layer picker needs at least one layer")
    return Axis(key, options, label, [layer_name(n, named) for n in options],
                _(NO_LAYER_SHOWN if named else NO_LAYER),
                spellings=lambda n: {t.format(n=n) for t in every_language(LAYER_LABEL)},
                default=options[-1] if default is None else default, help=help)


def layer_picker(key: str, layers: Iterable[int], label: str, *, default: int | None = None,
                 named: bool = False, help: str | None = None,  # noqa: A002 - Streamlit's name
                 where: DeltaGenerator | None = None) -> int:
    """A slider over ``layers`` (indices, in order) bound to the URL as ``?<key>=``; returns the
    layer picked, ``default`` (the last layer when None) until one is.

    A bare number or the layer's name in either language in the link picks that layer; anything
    else (a layer past this model's last, a word) shows one line saying which layers there are,
    and the slider starts on ``default``. A layer kept from before that is not among ``layers``
    (another model, a corpus keeping fewer layers) gives way to ``default`` too. ``named``: the
    slider shows "layer 3" rather than 3. ``where``: the column or container to draw in (the
    page's main area when None).
    """
    return int(axis_slider(layer_axis(key, layers, label, default=default, named=named,
                                      help=help), where=where))
