"""The layer picker every page draws the same way: a slider over the layers, bound to the URL,
that reads a shared link's layer in either language and says in one line when the link asks
for a layer this model (or this corpus) does not have.

    layer = layer_picker("ctx_layer", range(7), _("Layer"))              # ?ctx_layer=4
    layer = layer_picker("att_layer", range(1, 7), _("Encoder layer"),
                         named=True)                                    # ?att_layer=layer+3

A slider, not a selectbox: the arrow keys step to the next layer, one click moves it, and its
move reaches the server sooner (pages.encoder.page.picker has the measurement).
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.i18n import N_, _, every_language
from components.labels import markdown_template
from components.picture_switcher import Axis
from components.url_values import option_in_link

LAYER_LABEL = N_("layer {n}")
NO_LAYER = N_("There is no layer {asked} here: the layers are {first} to {last}. Showing layer "
              "{n}.")
# The same, where the values are shown as names ("layer 3"): a picture switcher's slider.
NO_LAYER_SHOWN = N_("There is no layer {asked} here: the layers run from {first} to {last}. "
                    "Showing {n}.")


def layer_name(n: int, named: bool) -> str:
    """How the slider shows layer ``n`` (and what the link carries for it): "layer 3" in the
    reader's language, or the bare number."""
    return _(LAYER_LABEL).format(n=n) if named else str(n)


def layer_axis(key: str, layers: Iterable[int], label: str, *,
               default: int | None = None) -> Axis[int]:
    """The layer picker as a slider of a picture switcher (components.picture_switcher): the
    layers named "layer 3" in the reader's language, a link's layer read as a bare number or
    its name in either language, ``default`` (the last layer when None) to start on."""
    options = [int(k) for k in layers]
    return Axis(key, options, label, [layer_name(n, True) for n in options], _(NO_LAYER_SHOWN),
                spellings=lambda n: {t.format(n=n) for t in every_language(LAYER_LABEL)},
                default=options[-1] if default is None else default)


def layer_picker(key: str, layers: Iterable[int], label: str, *, default: int | None = None,
                 named: bool = False, help: str | None = None,  # noqa: A002 - Streamlit's name
                 where: DeltaGenerator | None = None) -> int:
    """A slider over ``layers`` (indices, in order) bound to the URL as ``?<key>=``; returns the
    layer picked, ``default`` (the last layer when None) until one is.

    On a session's first run the link's value is read here: a bare number or the layer's name in
    either language picks that layer; anything else (a layer past this model's last, a word)
    shows one line saying which layers there are, and the slider starts on ``default``. A layer
    kept from before that is not among ``layers`` (another model, a corpus keeping fewer
    layers) gives way to ``default`` too. ``named``: the slider shows "layer 3" rather than 3.
    ``where``: the column or container to draw in (the page's main area when None).
    """
    options = [int(k) for k in layers]
    if not options:
        raise ValueError("a layer picker needs at least one layer")
    start = options[-1] if default is None or default not in options else default
    valid, invalid = option_in_link(
        key, options, lambda n: {t.format(n=n) for t in every_language(LAYER_LABEL)})
    if valid is not None:
        st.session_state[key] = valid   # a bare number, or the name in the other language
    elif key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = start
    place = st if where is None else where
    value = place.select_slider(label, options, value=start, key=key, bind="query-params",
                                format_func=lambda n: layer_name(n, named), help=help)
    if invalid is not None:
        # The link's value as text (a code span), never as a link, image or heading.
        place.info(markdown_template(_(NO_LAYER), asked=invalid[:40], first=options[0],
                                     last=options[-1], n=start), icon=":material/link_off:")
    return int(value if value in options else start)
