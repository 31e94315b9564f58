"""A slider that switches between pictures in the browser: every value's picture is sent once
(when the reader reaches for the slider), and a move shows another one at once, with no request
to the server.

A move of a Streamlit slider is a server run of the part that holds it (a bare page's rerun or
more, bench/HISTORY.md); a move here is a change of which picture is visible, painted in the
next frame. It is Streamlit's own component API (``st.components.v2``: HTML, CSS and JS run in
the page itself, no build step); the JS and CSS are this folder's ``switcher.js`` and
``switcher.css``, read once at import and sent without their comments and spaces (rjsmin,
rcssmin). One function per use:

    layer = picture_slider(layer_axis("enc_layer", range(1, 7), _("Encoder layer")), pictures)
    layer, head = picture_grid([layer_axis(...), head_axis(...)], pictures)

``Axis`` says what a slider runs over and how it is named (components.pickers makes the
layer's, stage's, head's and count's). ``axis_slider`` is the same axis as a server slider
bound to the URL (where the page draws an exact figure instead of the pictures): both read and
write the link under the same key, and the reconciliation of the two lives here, not in pages.

The link keeps saying where the reader is: a move writes the value into the address at once
(``?enc_layer=layer+3``, the same key and text the URL-bound slider uses, through
``history.replaceState``), and a shared link opens on it (a number or the value's name in
either language; anything else is said in one line).

The server learns the value too: after the picture has switched, the browser reports it
(``setStateValue``), which reruns the fragment that holds the switcher, as a widget would, and
the function returns it. So put a switcher in a small fragment (components.sections.run_part)
with only what depends on the value on the server (a download, a check, a line of text). The
pictures are not sent again on that rerun (Streamlit sends an unchanged element over 10 kB as a
reference to the copy the browser keeps) and the browser keeps the picture it shows. A report
also brings Streamlit's own copy of the address in line (its frontend keeps one, which a
script's ``history.replaceState`` does not reach), so a later run of any part reads the value
the reader moved to.

When the pictures are sent: a page gives them as a function of the value's index, and a new
input's first run draws and sends the shown one only. The reader's reaching for a slider (the
pointer over it, a touch, the keyboard's focus) asks for the rest, one run of the part that holds
it; the session keeps that wish, so every later picture set comes whole. A class that reads
and types but never moves costs the server one picture a page, as before the switcher; a key
pressed before the rest arrive moves the slider and dims the picture until its own is there.
The wish is the session's (``WHOLE_KEY``), for every switcher: a reader who moves one picture
moves others, whose first move then needs no round trip.

Nothing of the slider is lost: it is a native ``<input type="range">`` (arrow keys, Home, End,
Page Up/Down step it; a screen reader reads its label and ``aria-valuetext``, "layer 3"); its
labels come translated from the page; the pictures are the pages' own (components.heatmap_image),
with their hover text.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

import rcssmin
import rjsmin
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.labels import markdown_template
from components.url_values import linked_option

V = TypeVar("V", bound=Hashable)

COMPONENT = "bert_explorer.picture_switcher"
HERE = Path(__file__).parent
HTML = '<div class="ps" data-testid="pictureSwitcher"></div>'
# As the page gets them: Streamlit sends a component's code inline with every page that shows
# it, and the comments are half of the files.


def _inline(code: str, end: str) -> str:
    """``code`` with a line break after its first statement (``end``): Streamlit takes a string
    with none for the path of a file of a packaged component (ComponentPathUtils.
    looks_like_inline_content), and the minifiers leave none."""
    if end not in code:
        raise ValueError("the switcher's code has no statement")
    return code.replace(end, end + "\n", 1)


JS = _inline(rjsmin.jsmin((HERE / "switcher.js").read_text(encoding="utf-8")), ";")
CSS = _inline(rcssmin.cssmin((HERE / "switcher.css").read_text(encoding="utf-8")), "}")

# In the page's own tree (no iframe, no shadow root), as st.html puts the pages' other pictures
# (their styles are the same classes), so a test or the bench finds the shown picture as a
# reader's tools do.
_mount = st.components.v2.component(COMPONENT, html=HTML, css=CSS, js=JS, isolate_styles=False)


@dataclass(frozen=True)
class Drawn:
    """Pictures drawn when sent: ``one(i)`` draws the picture of index ``i`` (a first run sends
    it alone); ``every()`` gives all of them at once when the page keeps them (a cache: a
    move's report then draws none again), else each is ``one``'s."""

    one: Callable[[int], str]
    every: Callable[[], Sequence[str]] | None = None
    # What ``one`` drew, by index: a Drawn made outside the switcher's fragment is that
    # fragment's argument on its reruns (a move's report), which then draw nothing again.
    kept: dict[int, str] = field(default_factory=dict, compare=False, repr=False)

    def picture(self, i: int) -> str:
        if i not in self.kept:
            self.kept[i] = self.one(i)
        return self.kept[i]

    def all(self, count: int) -> Sequence[str]:
        return self.every() if self.every is not None else [self.picture(i) for i in range(count)]


# A function that draws the picture of an index, or ``Drawn`` (that function, and every picture
# at once where the page keeps them).
Pictures = Callable[[int], str] | Drawn


@dataclass(frozen=True)
class Axis(Generic[V]):
    """One slider: its URL ``key``, the ``options`` it runs over and how it shows them
    (``names[i]``: "layer 3" in the reader's language, also what the link carries for
    ``options[i]``; ``spellings(option)``: what else a link may say for it, its name in the
    other language; ``str(option)`` always works). ``default``: the start (the first option
    when None or not an option). ``invalid``: the one line shown (translated) when the link
    asks for a value there is none of, a template with ``{asked}``, ``{first}``, ``{last}``
    and ``{n}`` (the value shown instead)."""

    key: str
    options: Sequence[V]
    label: str
    names: Sequence[str]
    invalid: str
    spellings: Callable[[V], set[str]] | None = None
    default: V | None = None
    help: str | None = None

    def start(self) -> V:
        default = self.default
        return default if default is not None and default in self.options else self.options[0]

    def name(self, option: V) -> str:
        return self.names[list(self.options).index(option)]

    def in_link(self) -> tuple[V | None, str | None]:
        """The link's value for this axis now: ``(option, None)``, ``(None, text)`` for a value
        no option has, ``(None, None)`` for none (components.url_values.linked_option)."""
        spellings = self.spellings
        names = dict(zip(self.options, self.names, strict=True))
        return linked_option(self.key, self.options, lambda o: {names[o]} | (
            spellings(o) if spellings is not None else set()))

    def refused(self, asked: str, shown: V, where: DeltaGenerator | None) -> None:
        """Say in one line (in ``where``, the page's main area when None) that the link asked
        for ``asked``, which no option is."""
        # The link's value as text (a code span), never as a link, image or heading.
        line = markdown_template(self.invalid, asked=asked[:40], first=self.names[0],
                                 last=self.names[-1], n=self.name(shown))
        (st if where is None else where).info(line, icon=":material/link_off:")


def picture_slider(axis: Axis[V], pictures: Pictures, *,
                   where: DeltaGenerator | None = None) -> V:
    """A slider over ``axis``'s options that shows ``pictures(i)`` (HTML, e.g.
    components.heatmap_image.heatmap_html) for ``options[i]``, switched in the browser;
    returns the value the reader is on (reported after each move: see the module docstring)."""
    value: V = picture_grid([axis], pictures, where=where)[0]
    return value


def picture_grid(axes: Sequence[Axis[Any]], pictures: Pictures, *,
                 where: DeltaGenerator | None = None) -> tuple[Any, ...]:
    """Sliders side by side (a layer and a head), each one ``Axis``, and the picture of every
    combination of their values, switched in the browser; returns the value of each.

    ``pictures`` run through the last axis's values first: for a layer and a head, layer 1's
    heads, then layer 2's. Only the shown picture is drawn and sent until the reader reaches
    for a slider in this session (``wants_all``), then every one.
    """
    axes = [replace(axis, options=list(axis.options)) for axis in axes]
    count = math.prod(len(a.options) for a in axes)
    if not axes or any(not a.options or len(a.names) != len(a.options) for a in axes):
        raise ValueError("a picture switcher needs one name per option")
    place = st if where is None else where
    linked = [a.in_link() for a in axes]
    values = [valid if valid is not None else a.start() for a, (valid, _) in zip(axes, linked,
                                                                                strict=True)]
    keys = [a.key for a in axes]
    key = f"{'_'.join(keys)}_pictures"
    # The value the browser last reported, before anything is drawn: the address this run
    # carries may be Streamlit's own copy, a report behind, and the picture sent with an older
    # value would move the slider back.
    state = st.session_state.get(key)
    reported = state.get("value") if isinstance(state, Mapping) else None
    values = [_reported_value(a, reported, v) for a, v in zip(axes, values, strict=True)]
    shown = flat_index(axes, values)
    names = [n for a in axes for n in a.names]
    drawn = pictures if isinstance(pictures, Drawn) else Drawn(pictures)
    if not wants_all():
        style, [picture] = shared_style([drawn.picture(shown)])
        sent: list[str | None] = [None] * count
        sent[shown] = picture
        ident = partial_id(keys, shown, picture, names)
    else:
        built = drawn.all(count)
        if len(built) != count:
            raise ValueError("a picture switcher needs one picture per combination of options")
        style, complete = shared_style(built)
        sent = list(complete)
        # Names the set of pictures: a rerun that sends the same ones keeps the browser's
        # elements (and the picture it shows).
        ident = f"{'+'.join(keys)}:{digest([*complete, *names])}"
    data: dict[str, Any] = {
        "id": ident,
        "complete": all(p is not None for p in sent),
        "count": count,
        "axes": [{"key": a.key, "label": a.label, "help": a.help or "", "names": list(a.names),
                  "index": i}
                 for a, i in zip(axes, placing(key, ident, axes, values), strict=True)],
        "style": style,
        "pictures": sent,
    }
    with place.container():
        # A callback makes "value" (a move's report) and "want" (the reach) states the browser
        # may set.
        _mount(key=key, data=pack(data), on_value_change=_reported, on_want_change=_wanted)
    for a, v, (_, asked) in zip(axes, values, linked, strict=True):
        if asked is not None:
            a.refused(asked, v, where)
    return tuple(values)


def axis_slider(axis: Axis[V], *, where: DeltaGenerator | None = None) -> V:
    """``axis`` as a Streamlit slider bound to the URL as ``?<key>=`` (its names shown, and in
    the link); returns the value picked, the axis's start until one is.

    The link's value is read on every run: a bare number or a name in either language picks
    that option, and a value the browser's switcher of the same key wrote into the address
    (the page drew the pictures before, the exact figure now) moves this slider to it.
    Anything else (a layer past this model's last, a word) shows one line, and the slider
    starts on the axis's start; the line stays on later runs (Streamlit drops the refused value
    from the address at once) until the reader moves the slider. A value kept from before that
    is not among the options (another model, a corpus keeping fewer layers) gives way to the
    start.
    """
    options = list(axis.options)
    if not options:
        raise ValueError("a slider needs at least one option")
    start = axis.start()
    first = axis.key not in st.session_state
    valid, asked = axis.in_link()
    if valid is not None and st.session_state.get(axis.key) != valid:
        st.session_state[axis.key] = valid
    elif not first and st.session_state[axis.key] not in options:
        st.session_state[axis.key] = start
    place = st if where is None else where
    value = place.select_slider(axis.label, options, value=start, key=axis.key,
                                bind="query-params", format_func=axis.name, help=axis.help)
    refused = f"{axis.key}_refused"
    if first:   # a new slider (a session's first run, or back from another page): a new link
        if asked is not None:
            st.session_state[refused] = asked
        else:
            st.session_state.pop(refused, None)
    if refused in st.session_state:
        if value == start:
            axis.refused(st.session_state[refused], start, where)
        else:
            del st.session_state[refused]
    return value if value in options else start


def placing(key: str, ident: str, axes: Sequence[Axis[Any]], values: Sequence[Any]) -> list[int]:
    """Where the sliders start on set ``ident``: the values of the run that first sent it, kept
    for the session while the same set is sent again (the browser places its sliders on a new
    set only; a value sent anew on each report would change the element, which Streamlit then
    sends whole, every picture again)."""
    now = [list(a.options).index(v) for a, v in zip(axes, values, strict=True)]
    kept = st.session_state.get(f"{key}_placed")
    # Only while the component's own state lives: Streamlit drops it when a run does not draw
    # the component (another page), and the browser then builds it anew, placed by ``now``.
    if key in st.session_state and isinstance(kept, tuple) and len(kept) == 2 \
            and kept[0] == ident and len(kept[1]) == len(now):
        return list(kept[1])
    st.session_state[f"{key}_placed"] = (ident, tuple(now))
    return now


def flat_index(axes: Sequence[Axis[Any]], values: Sequence[Any]) -> int:
    """The index of the picture of ``values`` (the last axis's values first)."""
    at = 0
    for axis, value in zip(axes, values, strict=True):
        at = at * len(axis.options) + list(axis.options).index(value)
    return at


def partial_id(keys: Sequence[str], shown: int, picture: str, names: Sequence[str]) -> str:
    """The name of a set sent with only picture ``shown`` (the rest to follow)."""
    return f"{'+'.join(keys)}:{digest(['shown', str(shown), picture, *names])}"


# The session's note that the reader has reached for a picture slider: from then on, every
# switcher's pictures come whole, on this page and the others (a reader who moves one picture
# moves others, and their first move then needs no round trip).
WHOLE_KEY = "pictures_whole"


def wants_all() -> bool:
    """Whether this session has reached for a picture slider (``WHOLE_KEY``)."""
    return bool(st.session_state.get(WHOLE_KEY))


def _wanted() -> None:
    """The browser's "want" (the pointer over a slider, a touch, the keyboard's focus)."""
    st.session_state[WHOLE_KEY] = True


def _reported() -> None:
    """The report's callback: the value is read from the component's state after it."""


def _reported_value(axis: Axis[V], reported: object, value: V) -> V:
    """The value the browser reported for ``axis`` (``{key: name}``), else ``value``."""
    name = reported.get(axis.key) if isinstance(reported, dict) else None
    if not isinstance(name, str) or name not in axis.names:
        return value
    if st.query_params.get(axis.key) != name:
        # The browser's address already says it; the server's copy of the address follows,
        # so a later run does not write the old value back.
        st.query_params[axis.key] = name
    return axis.options[list(axis.names).index(name)]


def pack(data: dict[str, Any]) -> bytes:
    """The component's data as compressed JSON: a value's picture repeats most of the others'
    (row and column labels, colour bar), so together they compress several times over."""
    return zlib.compress(json.dumps(data, ensure_ascii=False).encode("utf-8"), 6)


def unpack(payload: bytes) -> dict[str, Any]:
    """``pack`` undone (what the browser's DecompressionStream does; for tests)."""
    return dict(json.loads(zlib.decompress(payload)))


def shared_style(pictures: Sequence[str]) -> tuple[str, list[str]]:
    """The ``<style>`` block every picture starts with (components.heatmap_image's, 3 kB), once,
    and the pictures without it: sent once, not once a value."""
    first = pictures[0] if pictures else ""
    style = first[:first.find("</style>") + len("</style>")] \
        if first.startswith("<style>") and "</style>" in first else ""
    if style and all(p.startswith(style) for p in pictures):
        return style, [p[len(style):] for p in pictures]
    return "", list(pictures)


def with_words(text: str, picture: str) -> str:
    """A picture with a line of our own text above it (escaped: it is shown as text), in the
    explanations' size, so the words switch with the picture."""
    words = f'<p class="ps-words">{html.escape(text)}</p>'
    end = picture.find("</style>") + len("</style>") if picture.startswith("<style>") else 0
    return picture[:end] + words + picture[end:]   # after a leading style (shared_style)


def digest(parts: Sequence[str]) -> str:
    """A short name for these strings, the same in every process."""
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()
