"""The sliders a picture indexed by a value runs over, one maker per kind: a layer, a stage, a
head, a count of positions. Each gives an axis (components.picture_switcher.Axis): its values'
names in the reader's language (what the link carries too), a link's value read as a bare value
or its name in either language, and the one line said when a link names a value there is none
of. The same axis is the slider of a picture switcher, a server slider (``axis_slider``), or
either as components.value_picture decides; every link is read through
components.url_values.linked_option.

    layer = layer_picker("ctx_layer", range(7), _("Layer"))              # ?ctx_layer=4
    layer = layer_picker("att_layer", range(1, 7), _("Encoder layer"),
                         named=True)                                    # ?att_layer=layer+3
    head = picture_slider(head_axis("enc_head", range(12), _("Attention head")), pictures)

A slider, not a selectbox: the arrow keys step to the next layer, one click moves it, and its
move reaches the server sooner (in Chromium, from the key to the rerun's request: 25 ms for a
selectbox's Enter, 12 ms for a slider's arrow key).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from streamlit.delta_generator import DeltaGenerator

from components.i18n import N_, _, every_language
from components.picture_switcher import Axis, axis_slider

LAYER_LABEL = N_("layer {n}")
HEAD_LABEL = N_("head {n}")
COUNT_NAME = N_("first {n}")      # the first n positions of a table
ALL_NAME = N_("all {n}")          # the whole table
NO_HEAD = N_("There is no head {asked} in this layer: showing {n}.")
NO_STAGE = N_("There is no stage {asked} here: the stages run from {first} to {last}. Showing "
              "{n}.")
NO_COUNT = N_("There is no choice {asked} of positions to project here: the choices run from "
              "{first} to {last}. Showing {n}.")
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


def head_axis(key: str, heads: Iterable[int], label: str) -> Axis[int]:
    """The heads of a layer: "head 3" in the reader's language."""
    options = [int(h) for h in heads]
    return Axis(key, options, label, [_(HEAD_LABEL).format(n=h) for h in options], _(NO_HEAD),
                spellings=lambda h: {t.format(n=h) for t in every_language(HEAD_LABEL)})


def stage_axis(key: str, stages: Sequence[str], label: str, *, default: str,
               help: str | None = None) -> Axis[str]:  # noqa: A002 - Streamlit's name
    """The stages of the embeddings and the layers, in order (word_embeddings ... layer_6):
    named as the model's modules are, in every language."""
    return Axis(key, list(stages), label, list(stages), _(NO_STAGE), default=default, help=help)


def count_name(count: int, total: int) -> str:
    """A count of the first positions as the slider and the link say it: "first 64", or
    "all 512" for the whole table of ``total``."""
    return _(ALL_NAME if count == total else COUNT_NAME).format(n=count)


def count_axis(key: str, counts: Sequence[int], total: int, label: str, *,
               help: str | None = None) -> Axis[int]:  # noqa: A002 - Streamlit's name
    """Counts of the first positions of a table of ``total`` ("first 64" ... "all 512"), the
    largest to start on."""
    options = [int(c) for c in counts]
    return Axis(key, options, label, [count_name(c, total) for c in options], _(NO_COUNT),
                spellings=lambda c: {t.format(n=c) for t in
                                     every_language(COUNT_NAME) | every_language(ALL_NAME)},
                default=options[-1], help=help)
