// The picture switcher in the browser (components/picture_switcher/__init__.py sends its data).
//
// Every picture is in the page from the start (hidden but one, all laid out in one grid cell),
// so a move only flips `hidden` on two of them: the browser has decoded and laid out each
// already, and the new one is painted in the next frame. Streamlit calls the default export
// again whenever it sends the element again (a rerun): the same pictures (`data.id`) keep their
// elements, so only the value is brought in line. Each switcher's state is one `Switcher`,
// kept by its root element for as long as the element lives.

// How long the pointer rests on a slider before it counts as reaching for it.
const REST_MS = 200;
// After a move, how long the report to the server waits: a held arrow key sends one report when
// it is let go of.
const REPORT_WAIT_MS = 150;

// Sent compressed (the pictures share their labels): zlib's deflate, as Python's zlib writes it.
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

const keysOf = (axes) => axes.map((axis) => axis.key).join(" ");
const namesOf = (axes) => JSON.stringify(axes.map((axis) => axis.names));

class Switcher {
  constructor(root) {
    this.root = root;
    this.ticket = 0;          // a newer call wins over an older one still unpacking
    this.id = null;           // the set of pictures the elements were built for
    this.complete = false;    // every picture of the set is here
    this.axes = [];
    this.setState = () => {};
    this.frames = null;       // the pictures' box, one child per picture
    this.held = [];           // each picture's HTML as it arrived (null: still to come)
    this.sliders = [];
    this.position = [];       // each slider's value (an index)
    this.shown = -1;          // the picture shown
    this.wanted = false;      // the other pictures were asked for
    this.placed = false;      // the sliders were placed by the server's values
    this.timer = null;
  }

  // A call of Streamlit's: the element's data, sent again on every run that draws it.
  async update(packed, setStateValue) {
    const ticket = ++this.ticket;
    const data = await unpack(packed);
    if (ticket !== this.ticket) return;
    this.setState = setStateValue;
    if (this.id !== data.id && !this.isRestOf(data)) {
      this.build(data);
      this.fill(data.pictures);
    } else if (this.id !== data.id) {
      // The rest of the set the browser has: the pictures it holds stay as they are, the
      // others arrive (and the one a key asked for meanwhile is shown).
      this.id = data.id;
      this.fill(data.pictures);
      this.show(this.position);
    }
    this.axes = data.axes;
    this.complete = data.complete;
    this.root.dataset.complete = data.complete ? "1" : "0";
    // The server's values place the sliders on a new set of pictures (a first run, a shared
    // link, another input, language or model); after that the sliders are the reader's, and a
    // later run of the same set (a report, a button) does not move them: its values may be a
    // report behind (the address Streamlit last knew).
    if (!this.placed) {
      this.placed = true;
      this.show(data.axes.map((axis, k) => this.clamp(k, axis.index)));
    }
  }

  // Is `data` the whole of the set the browser holds part of? Then its elements are kept (and
  // the focus, a drag): the same sliders, names and style, and each picture it holds is the one
  // sent now. Checked on the pictures, not on which value the server drew first: a move between
  // the reach and its run changes that.
  isRestOf(data) {
    return data.complete && !this.complete && this.frames !== null
      && this.held.length === data.count && keysOf(this.axes) === keysOf(data.axes)
      && this.style === data.style && namesOf(this.axes) === namesOf(data.axes)
      && this.held.every((html, i) => html === null || html === data.pictures[i]);
  }

  clamp(k, i) {
    const size = this.axes[k].names.length;
    return Math.max(0, Math.min(size - 1, Math.round(Number(i)) || 0));
  }

  // The pictures run through the last slider's values first (a layer's heads, then the next
  // layer's): the picture of a position is at this index.
  flat(position) {
    return position.reduce((at, i, k) => at * this.axes[k].names.length + i, 0);
  }

  build(data) {
    const root = this.root;
    root.replaceChildren();
    this.id = data.id;
    this.axes = data.axes;
    this.style = data.style;
    root.dataset.keys = keysOf(data.axes);
    const controls = document.createElement("div");
    controls.className = "ps-controls";
    this.sliders = data.axes.map((axis) => slider(axis, axis.names.length));
    controls.append(...this.sliders.map((s) => s.box));
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
    this.frames = frames;
    this.held = new Array(data.count).fill(null);
    // New pictures (another input, language or model): none of them is shown yet.
    this.shown = -1;
    this.wanted = false;
    this.placed = false;
    this.complete = false;
    this.listen(controls);
  }

  listen(controls) {
    // The other values' pictures are asked for when the reader reaches for a slider (a touch
    // or a press on it, the keyboard's focus, the pointer resting on it), before the first
    // move: a page nobody moves on costs the server one picture. A pointer only passing over
    // (the page scrolled under it) is not a reach.
    const want = () => this.want();
    ["pointerdown", "focusin"].forEach((type) => controls.addEventListener(type, want, true));
    this.sliders.forEach((s, k) => {
      let resting = null;
      s.box.addEventListener("pointerenter", () => {
        clearTimeout(resting);
        resting = setTimeout(want, REST_MS);
      });
      s.box.addEventListener("pointerleave", () => clearTimeout(resting));
      s.box.addEventListener("wheel", () => clearTimeout(resting), { passive: true });
      s.range.addEventListener("input", () => this.moved(k, s.range.value));
    });
  }

  want() {
    if (this.complete || this.wanted) return;
    this.wanted = true;
    this.setState("want", Date.now());
  }

  // Slider `k` moved to `value`: the picture first, then the address, then the report.
  moved(k, value) {
    const position = [...this.position];
    position[k] = this.clamp(k, value);
    this.show(position);
    // The address says where the reader is, under the keys the URL-bound sliders use.
    const url = new URL(window.location.href);
    this.axes.forEach((axis, j) => url.searchParams.set(axis.key, axis.names[position[j]]));
    window.history.replaceState(window.history.state, "", url.toString());
    // After the picture: the server reruns the part that holds the switcher with this value.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.setState("value", Object.fromEntries(
      this.axes.map((axis, j) => [axis.key, axis.names[this.position[j]]]))), REPORT_WAIT_MS);
  }

  show(position) {
    const frames = this.frames;
    const i = this.flat(position);
    this.sliders.forEach((s, k) => {
      // Only what changed: the other slider's text and attributes are left as they are.
      const name = this.axes[k].names[position[k]];
      if (s.range.value !== String(position[k])) s.range.value = String(position[k]);
      if (s.text.data === name) return;
      s.range.setAttribute("aria-valuetext", name);
      s.text.data = name;
    });
    this.position = position;
    if (this.held[i] === null) {
      // Not here yet: the last picture stays, dimmed, until fill() brings it.
      if (this.shown >= 0) frames.classList.add("ps-waiting");
      else frames.children[i].hidden = false;
      frames.setAttribute("aria-busy", "true");
      return;
    }
    if (frames.hasAttribute("aria-busy")) {
      // Only when it was waiting: a class or attribute set again is a style change.
      frames.classList.remove("ps-waiting");
      frames.removeAttribute("aria-busy");
    }
    const shown = this.shown;
    if (shown === i) return;
    if (shown >= 0 && frames.children[shown]) frames.children[shown].hidden = true;
    frames.children[i].hidden = false;
    this.shown = i;
  }

  // The pictures that came: all of them, or the shown one until the reader reaches for a
  // slider. Each frame is laid out once (hidden ones invisible); from the frame after, the
  // hidden ones are skipped and keep that layout (CSS ps-ready). Decoded now, while the reader
  // looks at the first: a picture shown for the first time would otherwise be decoded in the
  // frame of the move.
  fill(pictures) {
    const frames = this.frames;
    frames.classList.remove("ps-ready");
    pictures.forEach((html, i) => {
      const frame = frames.children[i];
      if (html === null || !frame || this.held[i] !== null) return;
      // The page's own picture (components.heatmap_image.heatmap_html): every label in it is
      // escaped on the server, so text a user typed arrives as text.
      frame.innerHTML = html;
      this.held[i] = html;
      delete frame.dataset.pending;
      frame.querySelectorAll("img").forEach((img) => img.decode().catch(() => {}));
    });
    requestAnimationFrame(() => requestAnimationFrame(() => frames.classList.add("ps-ready")));
  }
}

// Each switcher's state, by its root element: dropped with the element.
const switchers = new WeakMap();

export default async function (component) {
  const { data: packed, parentElement, setStateValue } = component;
  const root = parentElement.querySelector(".ps");
  if (!root || !packed) return;
  if (!switchers.has(root)) switchers.set(root, new Switcher(root));
  await switchers.get(root).update(packed, setStateValue);
}
