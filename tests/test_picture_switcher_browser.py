"""The pictures switched in the browser (components.picture_switcher), seen in Chromium: an arrow
key on the focused slider shows the next value's picture with no request to the server, the
address says the new value at once, and the address opened afresh shows it. Where the page also
tells the server (``report``, for what it redraws under the picture), that message leaves after
the picture has changed, and its fragment's run neither sends the pictures again (a reference
to the browser's copy, or the element of under 10 kB it is) nor redraws them."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.conftest import blank_tab, open_in_browser, wait_for_app

pytestmark = pytest.mark.browser


class Frames:
    """The page's websocket traffic: reruns asked for (BackMsg rerun_script) with the time each
    left, and every ForwardMsg received."""

    def __init__(self, page) -> None:
        self.reruns: list[tuple[float, str]] = []
        self.received: list[ForwardMsg] = []
        page.on("websocket", self._socket)

    def _socket(self, ws) -> None:
        ws.on("framesent", self._sent)
        ws.on("framereceived", self._received)

    def _sent(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = BackMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "rerun_script":
                self.reruns.append((time.monotonic(), msg.rerun_script.fragment_id))

    def _received(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            self.received.append(msg)


def shown(page, key: str) -> str:
    """Which picture the switcher of ``key`` shows (its index), once it holds a figure."""
    picture = page.locator(f"[data-keys~='{key}'] .ps-picture:not([hidden])")
    assert picture.locator("[data-figure]").count() == 1
    return str(picture.get_attribute("data-index"))


def sent_pictures(page, key: str) -> int:
    """How many of the switcher's pictures the browser holds (the rest are still to come)."""
    return page.evaluate("(key) => document.querySelectorAll(`[data-keys~='${key}'] "
                         ".ps-picture:not([data-pending])`).length", key)


def pictures_resent(messages: list[ForwardMsg]) -> int:
    """Bytes of the component elements sent in full (not as a reference to the browser's copy,
    which Streamlit sends for an unchanged element of 10 kB or more)."""
    return sum(m.ByteSize() for m in messages if m.WhichOneof("type") == "delta"
               and m.delta.WhichOneof("type") == "new_element"
               and m.delta.new_element.WhichOneof("type") == "bidi_component")


def watch_the_move(page, key: str) -> None:
    """Note in the page when the switcher of ``key`` next changes its shown picture and when
    each message to the server leaves (``window.__move``), in the page's own time."""
    page.evaluate("""(key) => {
      window.__move = {shown: null, sent: []};
      if (!window.__sendWatched) {
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) {
          if (window.__move) window.__move.sent.push(performance.now());
          return send.call(this, data);
        };
        window.__sendWatched = true;
      }
      const pictures = document.querySelector(`[data-keys~='${key}'] .ps-pictures`);
      const seen = new MutationObserver(() => {
        if (window.__move.shown === null) window.__move.shown = performance.now();
        seen.disconnect();
      });
      seen.observe(pictures, {attributes: true, subtree: true, attributeFilter: ["hidden"]});
    }""", key)


def move_and_check(browser, url: str, key: str, report: bool) -> None:
    page = blank_tab(browser, 1024, 768)
    frames = Frames(page)
    page.goto(url)
    wait_for_app(page)
    page.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden])", timeout=30_000)
    page.wait_for_timeout(500)
    before, value_before = shown(page, key), parse_qs(urlparse(page.url).query).get(key)
    slider = page.locator(f"#ps-{key}")
    assert slider.get_attribute("aria-label")
    # Legible on a 1024x768 projector: label and value 16 px, the ends' names at least 12 px,
    # nothing of the slider past the page's right edge.
    sizes = page.evaluate("""(key) => {
      const root = document.querySelector(`[data-keys~='${key}']`);
      const px = (sel) => [...root.querySelectorAll(sel)].map(
          e => parseFloat(getComputedStyle(e).fontSize));
      return {label: px('.ps-label, .ps-value'), ends: px('.ps-ends span'),
              right: root.getBoundingClientRect().right, width: window.innerWidth};
    }""", key)
    assert min(sizes["label"]) >= 16 and min(sizes["ends"]) >= 12, sizes
    assert sizes["right"] <= sizes["width"], sizes
    # A reader who has not reached for a slider was sent the shown picture only.
    assert sent_pictures(page, key) == 1, sent_pictures(page, key)
    # The pictures' elements are kept through any later run: marked here, found again after.
    page.evaluate("(key) => { document.querySelector(`[data-keys~='${key}'] .ps-pictures`)"
                  ".__kept = true; }", key)
    reruns = len(frames.reruns)
    slider.focus()
    # The keyboard's focus asks for the rest: one run of the part holding the switcher.
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=60_000)
    assert len(frames.reruns) == reruns + 1, frames.reruns[reruns:]
    assert sent_pictures(page, key) > 1 and shown(page, key) == before
    reruns, received = len(frames.reruns), len(frames.received)
    watch_the_move(page, key)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([key, before]) => { const f = document.querySelector(`[data-keys~='${key}'] "
        ".ps-picture:not([hidden])`); return f && f.dataset.index !== before; }",
        arg=[key, before], timeout=5_000)
    after = shown(page, key)
    assert after != before
    moved = parse_qs(urlparse(page.url).query)[key]
    assert moved != value_before, page.url
    assert slider.get_attribute("aria-valuetext") == moved[0]
    # Nothing left for the server before the picture changed (timed in the page: this process
    # may see the picture late on a loaded machine, after the report 150 ms on).
    watched = page.evaluate("() => window.__move")
    assert watched["shown"] is not None and all(t > watched["shown"] for t in watched["sent"]), \
        watched
    page.wait_for_timeout(1_000)
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=60_000)
    asked = frames.reruns[reruns:]
    if report:
        # One report, for the fragment holding the switcher, after the picture; its run sends
        # the pictures as a reference to the browser's copy, and the picture stays.
        assert len(asked) == 1 and asked[0][1], asked
        assert pictures_resent(frames.received[received:]) < 10_000
    else:
        assert asked == []
    assert shown(page, key) == after
    assert page.evaluate("(key) => document.querySelector(`[data-keys~='${key}'] .ps-pictures`)"
                         ".__kept === true", key)
    again = open_in_browser(browser, page.url, 1024, 768)
    again.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden])", timeout=30_000)
    assert shown(again, key) == after and sent_pictures(again, key) == 1
    again.close()
    page.close()


def test_stages_stage_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/stages?lang=zh", "st_stage", report=True)


def test_similarity_stage_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/similarity?sim_stage=layer_2", "sim_stage", report=True)


def test_encoder_head_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/encoder?enc_section=Attention&enc_layer=layer+2",
                   "enc_head", report=True)


def test_encoder_layer_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/encoder?enc_section=Attention&enc_head=head+4",
                   "enc_layer", report=True)


def test_encoder_walk_layer_and_head_switch_in_the_browser(server, browser):
    url = f"{server}/encoder?enc_step=attention_probs&enc_layer=layer+2"
    move_and_check(browser, url, "enc_layer", report=True)
    move_and_check(browser, url, "enc_head", report=True)


def test_attribution_layer_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/attribution?att_layer=layer+3", "att_layer", report=True)


def test_pairs_layer_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/pairs?b=It+rained+all+day.&pr_layer=3", "pr_layer",
                   report=True)


def test_contexts_layer_switches_in_the_browser(server, browser):
    move_and_check(browser, f"{server}/contexts?ctx_layer=3", "ctx_layer", report=True)


def test_a_move_before_the_other_pictures_arrive_waits_for_its_own(server, browser):
    """A value picked before the rest of the pictures came (here set with no focus, so nothing
    asked for them): the slider and the link move, the last picture stays, dimmed; the pointer
    over the slider then asks for the rest, and the picked value's picture is shown."""
    key = "sim_stage"
    page = open_in_browser(browser, f"{server}/similarity?sim_stage=layer_2", 1024, 768)
    page.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden])", timeout=30_000)
    before = shown(page, key)
    assert sent_pictures(page, key) == 1
    page.evaluate("""(key) => {
      const range = document.querySelector(`#ps-${key}`);
      range.value = String(Number(range.value) + 1);
      range.dispatchEvent(new Event("input", {bubbles: true}));
    }""", key)
    assert shown(page, key) == before
    waiting = f"[data-keys~='{key}'] .ps-pictures.ps-waiting[aria-busy='true']"
    assert page.locator(waiting).count() == 1
    assert parse_qs(urlparse(page.url).query)[key] == ["layer_3"]
    page.locator(f"#ps-{key}").hover()
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    page.wait_for_function(
        "([key, before]) => { const f = document.querySelector(`[data-keys~='${key}'] "
        ".ps-picture:not([hidden])`); return f && f.dataset.index !== before "
        "&& !f.parentElement.classList.contains('ps-waiting'); }",
        arg=[key, before], timeout=5_000)
    assert int(shown(page, key)) == int(before) + 1
    page.close()


def slider_state(page, key: str) -> dict:
    """The slider's value, the picture shown and the one of every slider's value (``flat``),
    the link's value, and whether the elements made at first are still there (``__first``
    marks them)."""
    return page.evaluate("""(key) => {
      const root = document.querySelector(`[data-keys~='${key}']`);
      const range = root.querySelector(`#ps-${key}`);
      const shown = root.querySelector('.ps-picture:not([hidden])');
      // The picture of the sliders' values (the last slider's values first).
      const flat = [...root.querySelectorAll('.ps-range')].reduce(
        (at, r) => at * (Number(r.max) + 1) + Number(r.value), 0);
      return {value: range.value, shown: shown && shown.dataset.index, flat: String(flat),
              text: range.getAttribute('aria-valuetext'), kept: range.__first === true,
              complete: root.dataset.complete,
              waiting: root.querySelector('.ps-pictures').classList.contains('ps-waiting'),
              link: new URL(location.href).searchParams.get(key)};
    }""", key)


def test_a_drag_from_the_first_press_keeps_its_slider(server, browser):
    """A press on the track and a drag at once, on a page opened with no value in its link: the
    press asks for the other pictures, the drag moves the value (and the link) before they
    come, and the slider the reader holds is kept: every step of the drag moves it, and the
    picture of where it ends is shown."""
    key = "st_stage"
    page = open_in_browser(browser, f"{server}/stages", 1024, 768)
    page.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden]) [data-figure]",
                           timeout=30_000)
    page.evaluate(f"() => {{ document.querySelector('#ps-{key}').__first = true; }}")
    page.locator(f"#ps-{key}").scroll_into_view_if_needed()
    box = page.locator(f"#ps-{key}").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 4, y)
    page.mouse.down()
    for step in range(1, 21):
        page.mouse.move(box["x"] + 4 + step * box["width"] * 0.03, y)
        page.wait_for_timeout(15)
    page.mouse.up()
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=60_000)
    page.wait_for_timeout(500)
    state = slider_state(page, key)
    assert state["kept"], state
    assert int(state["value"]) >= 4 and state["shown"] == state["flat"], state
    assert not state["waiting"] and state["link"] == state["text"], state
    page.close()


@pytest.mark.parametrize("url,key", [
    ("/encoder?enc_section=Attention", "enc_layer"),
    ("/stages?st_stage=sum", "st_stage"),
])
def test_moves_in_a_row_keep_the_picture_the_slider_and_the_link_together(server, browser, url,
                                                                          key):
    """Several moves, each one's report to the server run before the next (the run of the
    report names the value the browser reported, not an older one): after each, the picture,
    the slider and the link say the same value."""
    page = open_in_browser(browser, server + url, 1024, 768)
    page.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden]) [data-figure]",
                           timeout=30_000)
    page.locator(f"#ps-{key}").focus()
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    start = int(slider_state(page, key)["value"])
    for step in range(1, 4):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(400)    # the report leaves 150 ms after the move
        page.wait_for_selector("[data-test-script-state='notRunning']", timeout=60_000)
        page.wait_for_timeout(300)
        state = slider_state(page, key)
        assert int(state["value"]) == start + step, (step, state)
        assert state["shown"] == state["flat"] and state["link"] == state["text"], (step, state)
    page.close()


def test_a_pointer_passing_over_a_slider_does_not_ask_for_the_pictures(server, browser):
    """The pointer crossing a slider (the page scrolled under it, the pointer on its way
    elsewhere) is not a reach: nothing is asked for. Resting on it is."""
    key = "sim_stage"
    page = open_in_browser(browser, f"{server}/similarity", 1024, 768)
    page.wait_for_selector(f"[data-keys~='{key}'] .ps-picture:not([hidden]) [data-figure]",
                           timeout=30_000)
    page.locator(f"[data-keys~='{key}'] .ps-axis").scroll_into_view_if_needed()
    box = page.locator(f"[data-keys~='{key}'] .ps-axis").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 40)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] + 40, steps=4)
    page.wait_for_timeout(1_000)
    assert slider_state(page, key)["complete"] == "0"
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(f"[data-keys~='{key}'][data-complete='1']", timeout=30_000)
    page.close()
