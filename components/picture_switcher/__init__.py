"""A slider that switches between pictures in the browser: every value's picture is sent once
(when the reader reaches for the slider), and a move shows another one at once, with no request
to the server.

A move of a Streamlit slider is a server run of the part that holds it (a bare page's rerun or
more, README, Performance); a move here is a change of which picture is visible, painted in the
next frame. It is Streamlit's own component API (``st.components.v2``: inline HTML, CSS and JS
run in the page itself, no build step):

    layer = picture_switcher("enc_layer", range(1, 7), pictures, _("Encoder layer"),
                             names=[layer_name(n, True) for n in range(1, 7)])

Two sliders over one set of pictures (the Encoder's layer and head) are ``picture_grid``: one
``Axis`` each, a picture for every combination, each slider keeping its own key in the link.

The link keeps saying where the reader is: a move writes the value into the address at once
(``?enc_layer=layer+3``, the same key and text the URL-bound slider used, through
``history.replaceState``), and a shared link opens on it (read here as components.layer_picker
reads it: a number or the value's name in either language; anything else is said in one line).

How the server learns the value, per use (``report``):

- ``report=False``: the component tells the server nothing. The browser's address holds the
  value; the server reads it from the link on its next run that carries the address as the
  browser has it: a reload, a shared link, a move of any control bound to the URL (Streamlit
  then reads the whole address again). A button's or an unbound control's rerun carries the
  address Streamlit last knew (measured: its frontend keeps its own copy, and a script's
  ``history.replaceState`` does not reach it), so the server may draw with the value before
  the moves; the browser keeps showing the picture moved to (the JS takes the server's value
  only when it changes). So only for a picture nothing on the server depends on.
- ``report=True``: after the picture has switched, the component also reports the value
  (``setStateValue``), which reruns the fragment that holds it, as a widget would: put it in a
  small fragment (components.sections.run_part) with only what depends on the value on the
  server (a download, a check, a line of text). The pictures are not sent again on that rerun
  (Streamlit sends an unchanged element over 10 kB as a reference to the copy the browser keeps)
  and the browser keeps the picture it shows.

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
import re
import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import palette
from components.labels import markdown_template

V = TypeVar("V", bound=Hashable)

COMPONENT = "bert_explorer.picture_switcher"
LABEL_PX = 16          # the slider's label and value: a projector's back row (DESIGN.md)
WORDS_PX = 17          # as components.explain's body text
TICK_PX = 14           # the first and last value under the track

HTML = '<div class="ps" data-testid="pictureSwitcher"></div>'

CSS = f"""
.ps {{ font-family: var(--st-font, "Source Sans Pro", sans-serif); color: {palette.INK}; }}
/* Two sliders (a layer and a head) side by side, as the pages' two pickers in st.columns(2). */
.ps-controls {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr));
  column-gap: 24px; }}
.ps-head {{ display: flex; justify-content: space-between; align-items: baseline; gap: 12px;
  font-size: {LABEL_PX}px; line-height: 1.4; }}
.ps-label {{ font-weight: 400; }}
.ps-value {{ font-weight: 600; color: var(--st-primary-color, #ff4b4b); }}
.ps-range {{ display: block; width: 100%; margin: 6px 0 2px 0; height: 24px;
  accent-color: var(--st-primary-color, #ff4b4b); cursor: pointer; }}
.ps-range:focus-visible {{ outline: 3px solid var(--st-primary-color, #ff4b4b);
  outline-offset: 2px; }}
.ps-ends {{ display: flex; justify-content: space-between; font-size: {TICK_PX}px;
  color: {palette.SOFT_INK}; margin-bottom: 8px; }}
.ps-pictures {{ display: grid; }}
/* Every picture laid out once, in the same grid cell: a move changes only which one is visible.
   Streamlit's own sheet says [hidden] {{ display: none !important }}: without the !important
   here a hidden picture was not laid out at all, and every move built the new one's layout from
   nothing (measured: 5-7 ms of a move on /similarity). A hidden picture keeps the height it had
   when last laid out (contain-intrinsic-size auto; not its width, so a narrower window still
   fits), so the pictures' box keeps the tallest one's height and a move does not push what is
   under it up or down. */
.ps-picture {{ grid-area: 1 / 1; contain-intrinsic-size: none auto none; }}
.ps-picture[hidden] {{ display: block !important; visibility: hidden; }}
/* Once all have been laid out (ps-ready, the frame after they arrived), a hidden picture is
   skipped by style, layout and paint and keeps what was computed for it (content-visibility):
   a move then paints the one shown and lays out little else. Skipped content is not read by a
   screen reader, found by the page search or reached by the pointer, as hidden content. */
.ps-pictures.ps-ready > .ps-picture[hidden] {{ content-visibility: hidden; }}
/* A key pressed before the other values' pictures have arrived: the slider and its value move,
   the last picture stays, dimmed, until the one asked for is there (a fraction of a second). */
.ps-pictures.ps-waiting > .ps-picture {{ opacity: 0.45; }}
.ps-words {{ font-size: {WORDS_PX}px; line-height: 1.5; margin: 0 0 8px 0; }}
"""

# Every picture is in the page from the start (hidden but one, all laid out in one grid cell),
# so a move only flips ``hidden`` on two of them: the browser has decoded and laid out each
# already, and the new one is painted in the next frame. The function runs again whenever
# Streamlit sends the element again (a rerun): the same pictures (``data.id``) keep their
# elements, so only the value is brought in line.
JS = """
const unpack = async (bytes) => {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(stream).text());
};

// One slider of the switcher: its label and value above, the first and last value's names under.
const slider = (axis, n) => {
  const box = document.createElement("div");
  box.className = "ps-axis";
  box.dataset.axis = axis.key;
  const head = document.createElement("div");
  head.className = "ps-head";
  const label = document.createElement("label");
  label.className = "ps-label";
  label.textContent = axis.label;
  const value = document.createElement("span");
  value.className = "ps-value";
  value.setAttribute("aria-hidden", "true");
  // A move changes this text node's data, not the span's children: the page's tabs watch
  // their panel for added and removed nodes and, on each, walk it for what takes focus,
  // reading styles (a forced style recalculation, 2-3 ms, in the key press's task).
  const text = document.createTextNode("");
  value.append(text);
  head.append(label, value);
  const range = document.createElement("input");
  range.type = "range";
  range.className = "ps-range";
  range.min = "0";
  range.max = String(n - 1);
  range.step = "1";
  range.id = "ps-" + axis.key;
  label.htmlFor = range.id;
  range.setAttribute("aria-label", axis.label);
  if (axis.help) range.title = axis.help;
  const ends = document.createElement("div");
  ends.className = "ps-ends";
  ends.setAttribute("aria-hidden", "true");
  const first = document.createElement("span");
  const last = document.createElement("span");
  first.textContent = axis.names[0];
  last.textContent = axis.names[n - 1];
  ends.append(first, last);
  box.append(head, range, ends);
  return { box, range, text };
};

// How long the pointer rests on a slider before it counts as reaching for it.
const REST_MS = 200;

export default async function(component) {
  const { data: packed, parentElement, setStateValue } = component;
  const root = parentElement.querySelector(".ps");
  if (!root || !packed) return;
  // Sent compressed (the pictures share their labels); a newer call wins over an older one.
  const ticket = (root._ticket = (root._ticket || 0) + 1);
  const data = await unpack(packed);
  if (ticket !== root._ticket) return;
  const axes = data.axes;
  const sizes = axes.map((axis) => axis.names.length);
  const clamp = (k, i) => Math.max(0, Math.min(sizes[k] - 1, Math.round(Number(i)) || 0));
  // The pictures run through the last slider's values first (a layer's heads, then the next
  // layer's): the picture of a position is at this index.
  const flat = (position) => position.reduce((at, i, k) => at * sizes[k] + i, 0);
  // The rest of the set the browser holds part of keeps its elements (and the focus, a drag):
  // the same sliders, names and style, and each picture it holds is the one sent now. Checked
  // on the pictures, not on which value the server drew first: a move between the reach and
  // its run changes that.
  const rest = data.complete && root.dataset.complete === "0" && root._count === data.count
    && root.dataset.keys === axes.map((axis) => axis.key).join(" ")
    && root._style === data.style
    && JSON.stringify(root._names) === JSON.stringify(axes.map((axis) => axis.names))
    && [...root._frames.children].every((frame, i) =>
      frame.dataset.pending || frame._html === data.pictures[i]);
  if (root.dataset.id !== data.id && !rest) {
    root.replaceChildren();
    root.dataset.id = data.id;
    root.dataset.keys = axes.map((axis) => axis.key).join(" ");
    const controls = document.createElement("div");
    controls.className = "ps-controls";
    const sliders = axes.map((axis, k) => slider(axis, sizes[k]));
    controls.append(...sliders.map((s) => s.box));
    const frames = document.createElement("div");
    frames.className = "ps-pictures";
    if (data.style) {
      // The pictures' shared style block, sent once for all of them.
      const style = document.createElement("div");
      style.hidden = true;
      style.innerHTML = data.style;
      root.append(style);
    }
    for (let i = 0; i < data.count; i++) {
      const frame = document.createElement("div");
      frame.className = "ps-picture";
      frame.dataset.index = String(i);
      frame.hidden = true;
      frame.dataset.pending = "1";
      frames.append(frame);
    }
    root.append(controls, frames);
    // The other values' pictures are asked for when the reader reaches for a slider (a touch
    // or a press on it, the keyboard's focus, the pointer resting on it), before the first
    // move: a page nobody moves on costs the server one picture. A pointer only passing over
    // (the page scrolled under it) is not a reach.
    const want = () => {
      if (root.dataset.complete === "1" || root._wanted) return;
      root._wanted = true;
      root._setState("want", Date.now());
    };
    ["pointerdown", "focusin"].forEach((type) => controls.addEventListener(type, want, true));
    sliders.forEach((s) => {
      let resting = null;
      s.box.addEventListener("pointerenter", () => {
        clearTimeout(resting);
        resting = setTimeout(want, REST_MS);
      });
      s.box.addEventListener("pointerleave", () => clearTimeout(resting));
      s.box.addEventListener("wheel", () => clearTimeout(resting), { passive: true });
    });
    let timer = null;
    const show = (position) => {
      const i = flat(position);
      sliders.forEach((s, k) => {
        // Only what changed: the other slider's text and attributes are left as they are.
        const name = root._axes[k].names[position[k]];
        if (s.range.value !== String(position[k])) s.range.value = String(position[k]);
        if (s.text.data === name) return;
        s.range.setAttribute("aria-valuetext", name);
        s.text.data = name;
      });
      root._position = position;
      if (frames.children[i].dataset.pending) {
        // Not here yet: the last picture stays, dimmed, until fill() brings it.
        if (root._shown >= 0) frames.classList.add("ps-waiting");
        else frames.children[i].hidden = false;
        frames.setAttribute("aria-busy", "true");
        return;
      }
      if (frames.hasAttribute("aria-busy")) {
        // Only when it was waiting: a class or attribute set again is a style change.
        frames.classList.remove("ps-waiting");
        frames.removeAttribute("aria-busy");
      }
      const shown = root._shown;
      if (shown === i) return;
      if (shown >= 0 && frames.children[shown]) frames.children[shown].hidden = true;
      frames.children[i].hidden = false;
      root._shown = i;
    };
    root._show = show;
    sliders.forEach((s, k) => s.range.addEventListener("input", () => {
      const position = [...root._position];
      position[k] = clamp(k, s.range.value);
      show(position);
      // The address says where the reader is, under the keys the URL-bound sliders used.
      const url = new URL(window.location.href);
      root._axes.forEach((axis, j) => url.searchParams.set(axis.key, axis.links[position[j]]));
      window.history.replaceState(window.history.state, "", url.toString());
      if (root._report) {
        // After the picture: a held arrow key sends one report when it is let go of.
        clearTimeout(timer);
        timer = setTimeout(() => root._setState("value", Object.fromEntries(
          root._axes.map((axis, j) => [axis.key, axis.links[root._position[j]]]))), root._wait);
      }
    }));
    // The pictures that came: all of them, or the shown one until the reader reaches for a
    // slider. Each frame is laid out once (hidden ones invisible); from the frame after, the
    // hidden ones are skipped and keep that layout (CSS ps-ready). Decoded now, while the reader
    // looks at the first: a picture shown for the first time would otherwise be decoded in the
    // frame of the move.
    root._fill = (pictures) => {
      frames.classList.remove("ps-ready");
      pictures.forEach((html, i) => {
        const frame = frames.children[i];
        if (html === null || !frame || !frame.dataset.pending) return;
        // The page's own picture (components.heatmap_image.heatmap_html): every label in it is
        // escaped on the server, so text a user typed arrives as text.
        frame.innerHTML = html;
        frame._html = html;
        delete frame.dataset.pending;
        frame.querySelectorAll("img").forEach((img) => img.decode().catch(() => {}));
      });
      requestAnimationFrame(() => requestAnimationFrame(() => frames.classList.add("ps-ready")));
    };
    root._frames = frames;
    root._count = data.count;
    root._style = data.style;
    root._names = axes.map((axis) => axis.names);
    // New pictures (another input, language or model): none of them is shown yet.
    root._shown = -1;
    root._wanted = false;
    root._fill(data.pictures);
    root._placed = false;
  } else if (rest) {
    // The rest of the set the browser has: the pictures it holds stay as they are, the others
    // arrive (and the one a key asked for meanwhile is shown).
    root.dataset.id = data.id;
    root._fill(data.pictures);
    root._show(root._position);
  }
  if (root.dataset.id === data.id) root.dataset.complete = data.complete ? "1" : "0";
  root._axes = axes;
  root._report = data.report;
  root._wait = data.wait_ms;
  root._setState = setStateValue;
  // The server's values place the sliders on a new set of pictures (a first run, a shared
  // link, another input, language or model); after that the sliders are the reader's, and a
  // later run of the same set (a report, a button) does not move them: its values may be a
  // report behind (the address Streamlit last knew).
  if (!root._placed) {
    root._placed = true;
    root._show(axes.map((axis, k) => clamp(k, axis.index)));
  }
}
"""

# In the page's own tree, as st.html puts the pages' other pictures (their styles are the same
# classes), so a test or the bench finds the shown picture as a reader's tools do.
def without_comments(code: str) -> str:
    """Our own JS or CSS as the page gets it: without its comments (whole ``//`` lines and
    ``/* */`` blocks) and indentation. Streamlit sends a component's code inline with every page
    that shows it; the comments were 3.3 of its 8.8 kB. Only for this module's code, whose
    strings hold no ``/*`` and no line that starts with ``//``."""
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    return "\n".join(line.strip() for line in code.splitlines()
                     if line.strip() and not line.strip().startswith("//"))


_mount = st.components.v2.component(COMPONENT, html=HTML, css=without_comments(CSS),
                                    js=without_comments(JS), isolate_styles=False)


def _no_spellings(_option: object) -> set[str]:
    return set()


def _reported() -> None:
    """The report's callback: the value is read from the component's state after it."""


def _link_value(key: str, options: Sequence[V], names: Sequence[str],
                spellings: Callable[[Any], set[str]]) -> tuple[V | None, str | None]:
    """The link's value for ``key`` on every run (the address is where the value lives: the
    component is no bound widget): ``(option, None)``, ``(None, text)`` for a value no option
    has, ``(None, None)`` for none."""
    asked = st.query_params.get(key)
    if asked is None:
        return None, None
    text = asked.strip()
    for option, name in zip(options, names, strict=True):
        if text in (str(option), name) or text in spellings(option):
            return option, None
    return None, (text or None)


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


# Every value's picture; a function that draws the picture of an index; or ``Drawn``.
Pictures = Sequence[str] | Callable[[int], str] | Drawn


@dataclass(frozen=True)
class Axis(Generic[V]):
    """One slider of a switcher: its URL ``key``, the ``options`` it runs over and how it shows
    them (``names[i]``: "layer 3" in the reader's language, also what the link carries for
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


def picture_switcher(
    key: str,
    options: Sequence[V],
    pictures: Pictures,
    label: str,
    *,
    names: Sequence[str],
    spellings: Callable[[V], set[str]] | None = None,
    default: V | None = None,
    invalid: str,
    report: bool = False,
    help: str | None = None,  # noqa: A002 - Streamlit's name
    where: DeltaGenerator | None = None,
) -> V:
    """A slider over ``options`` that shows ``pictures[i]`` or ``pictures(i)`` (HTML, e.g.
    components.heatmap_image.heatmap_html) for ``options[i]``, switched in the browser; returns
    the value the page is on. The other arguments are ``Axis``'s; ``report``: tell the server
    about each move (a rerun of the fragment holding it), see the module docstring."""
    axis = Axis(key, list(options), label, names, invalid, spellings, default, help)
    value: V = picture_grid([axis], pictures, report=report, where=where)[0]
    return value


def picture_grid(axes: Sequence[Axis[Any]], pictures: Pictures, *, report: bool = False,
                 where: DeltaGenerator | None = None) -> tuple[Any, ...]:
    """Sliders side by side (a layer and a head), each one ``Axis``, and the picture of every
    combination of their values, switched in the browser; returns the value of each.

    ``pictures`` run through the last axis's values first: for a layer and a head, layer 1's
    heads, then layer 2's. Given as a function of that index (or ``Drawn``), only the shown
    picture is drawn and sent until the reader reaches for a slider in this session
    (``wants_all``); a list is sent whole. ``report``: as picture_switcher's.
    """
    axes = [replace(axis, options=list(axis.options)) for axis in axes]
    count = math.prod(len(a.options) for a in axes)
    if not axes or any(not a.options or len(a.names) != len(a.options) for a in axes) \
            or (isinstance(pictures, Sequence) and len(pictures) != count):
        raise ValueError("a picture switcher needs one name per option and one picture per "
                         "combination of options")
    place = st if where is None else where
    linked = [_link_value(a.key, a.options, a.names, a.spellings or _no_spellings)
              for a in axes]
    values = [valid if valid is not None else a.start() for a, (valid, _) in zip(axes, linked,
                                                                                strict=True)]
    keys = [a.key for a in axes]
    key = f"{'_'.join(keys)}_pictures"
    if report:
        # The value the browser last reported, before anything is drawn: the address this run
        # carries may be Streamlit's own copy, a report behind, and the picture sent with an
        # older value would move the slider back.
        state = st.session_state.get(key)
        reported = state.get("value") if isinstance(state, Mapping) else None
        values = [_reported_value(a, reported, v) for a, v in zip(axes, values, strict=True)]
    shown = flat_index(axes, values)
    names = [n for a in axes for n in a.names]
    drawn = Drawn(pictures) if callable(pictures) else pictures
    if isinstance(drawn, Drawn) and not wants_all():
        style, [picture] = shared_style([drawn.picture(shown)])
        sent: list[str | None] = [None] * count
        sent[shown] = picture
        ident = partial_id(keys, shown, picture, names)
    else:
        built = drawn.all(count) if isinstance(drawn, Drawn) else drawn
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
                  "links": list(a.names), "index": i}
                 for a, i in zip(axes, placing(key, ident, axes, values), strict=True)],
        "style": style,
        "pictures": sent,
        "report": report,
        "wait_ms": 150,
    }
    with place.container():
        # A callback makes "value" (report) and "want" states the browser may set.
        _mount(key=key, data=pack(data), on_value_change=_reported if report else None,
               on_want_change=_wanted)
    for a, v, (_, asked) in zip(axes, values, linked, strict=True):
        if asked is not None:
            # The link's value as text (a code span), never as a link, image or heading.
            place.info(markdown_template(a.invalid, asked=asked[:40], first=a.names[0],
                                         last=a.names[-1], n=a.names[list(a.options).index(v)]),
                       icon=":material/link_off:")
    return tuple(values)


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
