"""The open section runs as a fragment (components.sections), seen in Chromium from the messages
the server sends: a control inside a section reruns that section alone (the run names its
fragment; nothing is sent to the sidebar or the page's title), in the reader's language, with
the control's value in the address; a new sentence still reruns the whole page."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.conftest import blank_tab, wait_for_app

pytestmark = pytest.mark.browser
CJK = re.compile(r"[\u4e00-\u9fff]")
SIDEBAR = 1   # a delta's first path index: 0 the main area, 1 the sidebar


class Messages:
    """Every ForwardMsg the page's websocket receives, decoded."""

    def __init__(self, page) -> None:
        self.seen: list[ForwardMsg] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            self.seen.append(msg)

    def since(self, start: int) -> list[ForwardMsg]:
        return self.seen[start:]


def runs(messages: list[ForwardMsg]) -> list[list[str]]:
    """The fragment ids of each run started in ``messages`` (empty: a whole-page run)."""
    return [list(m.metadata.run.fragment_ids) for m in messages
            if m.WhichOneof("type") == "new_session"]


def delta_texts(messages: list[ForwardMsg]) -> str:
    return "\n".join(str(m.delta) for m in messages if m.WhichOneof("type") == "delta")


def sidebar_deltas(messages: list[ForwardMsg]) -> int:
    return sum(1 for m in messages if m.WhichOneof("type") == "delta"
               and m.metadata.delta_path and m.metadata.delta_path[0] == SIDEBAR)


def settle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=60_000)
    page.wait_for_selector("[data-stale='true']", state="detached", timeout=60_000)
    page.wait_for_timeout(300)


def test_encoder_layer_reruns_its_section_in_chinese(server, browser):
    page = blank_tab(browser)
    log = Messages(page)
    page.goto(f"{server}/encoder?lang=zh")
    wait_for_app(page)
    settle(page)
    start = len(log.seen)
    # The layer slider, switched in the browser (the arrow keys step it): layer 1 -> layer 2;
    # its report reruns the fragment under the picture, which redraws the step's check.
    page.locator("#ps-enc_layer").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(500)   # the report leaves 150 ms after the move
    settle(page)
    after = log.since(start)
    assert runs(after) and all(ids for ids in runs(after)), runs(after)   # fragment runs only
    assert sidebar_deltas(after) == 0
    text = delta_texts(after)
    assert CJK.search(text), "the section redrew in English"
    assert "Encoder layer" not in text and "Attention head" not in text
    assert "2" in parse_qs(urlparse(page.url).query).get("enc_layer", [""])[0], page.url
    main = page.locator("[data-testid='stMain']").inner_text()
    assert "编码器" in main and not page.locator("[data-testid='stException']").count()

    # A new sentence reruns the whole page: sidebar and all.
    start = len(log.seen)
    box = page.locator("[data-testid='stSidebar'] textarea").first
    box.fill("Fragments rerun one section.")
    box.press("Control+Enter")
    settle(page)
    after = log.since(start)
    assert [] in runs(after), runs(after)
    assert sidebar_deltas(after) > 0
    assert "2" in parse_qs(urlparse(page.url).query).get("enc_layer", [""])[0], page.url
    page.close()


# The Stages page's stage slider switches its pictures in the browser now (no rerun for the
# picture): tests/test_picture_switcher_browser.py.


def test_a_section_button_that_fills_the_sentences_reruns_the_page(server, browser):
    """Pairs' example buttons sit in a section and put a pair in the sidebar's boxes: the
    section's fragment sees the shared inputs change under it and reruns the whole page."""
    from core.similarity.pair_examples import ONE_PAIR
    from pages.pairs.one_pair import EXAMPLE_LABELS

    name, a, b = ONE_PAIR[0]
    EXAMPLE = EXAMPLE_LABELS[name]  # noqa: N806
    page = blank_tab(browser)
    log = Messages(page)
    page.goto(f"{server}/pairs")
    wait_for_app(page)
    settle(page)
    start = len(log.seen)
    page.get_by_role("button", name=EXAMPLE, exact=True).first.click()
    settle(page)
    assert [] in runs(log.since(start)), runs(log.since(start))
    boxes = page.locator("[data-testid='stSidebar'] textarea")
    assert boxes.nth(0).input_value() == a and boxes.nth(1).input_value() == b
    assert parse_qs(urlparse(page.url).query).get("a") == [a], page.url
    page.close()


def slide(page, key: str = "ArrowLeft") -> None:
    """The main area's first slider moved one step."""
    page.locator("[data-testid='stMain'] [data-testid='stSlider'] input[type='range']").first \
        .focus()
    page.keyboard.press(key)


def test_pairs_layer_slider_redraws_the_pair_alone(server, browser):
    """The token-pair view is a fragment inside the One pair tab's: the layer slider switches
    the picture in the browser (tests/test_picture_switcher_browser.py), then reports the layer
    to that fragment, which sends the pair's numbers and figures again, not the tab's example
    buttons."""
    page = blank_tab(browser)
    log = Messages(page)
    page.goto(f"{server}/pairs?b=It+rained+all+day.")
    wait_for_app(page)
    settle(page)
    start = len(log.seen)
    page.locator("#ps-pr_layer").focus()
    page.keyboard.press("ArrowLeft")   # layer 6 -> layer 5
    page.wait_for_timeout(500)         # the report leaves 150 ms after the move
    settle(page)
    after = log.since(start)
    assert runs(after) and all(ids for ids in runs(after)), runs(after)
    assert sidebar_deltas(after) == 0
    text = delta_texts(after)
    assert "pr_matrix" in text and "pr_example_" not in text   # the layer's download, redrawn
    assert parse_qs(urlparse(page.url).query).get("pr_layer") == ["5"], page.url
    assert "layer 5" in page.locator("[data-testid='stMain']").inner_text()
    page.close()


def test_similarity_stage_reruns_settings_and_tab_not_the_page(server, browser):
    """Similarity's stage picker sits above the tabs, read by every tab: it and the tabs are one
    fragment, so moving it sends neither the sidebar nor the page's header again."""
    from pages.similarity.page import EXPLANATION

    page = blank_tab(browser)
    log = Messages(page)
    # The Sentences tab: on the Tokens tab the stage switches pictures in the browser
    # (tests/test_picture_switcher_browser.py).
    page.goto(f"{server}/similarity?sim_section=Sentences")
    wait_for_app(page)
    settle(page)
    start = len(log.seen)
    # The stage picker, a slider: the last layer -> the one before it.
    page.locator("[data-testid='stMain'] [data-testid='stSlider']").first.locator(
        "input[type='range']").focus()
    page.keyboard.press("ArrowLeft")
    settle(page)
    after = log.since(start)
    assert runs(after) and all(ids for ids in runs(after)), runs(after)
    assert sidebar_deltas(after) == 0
    text = delta_texts(after)
    assert "sim_stage" in text and EXPLANATION[:40] not in text
    assert parse_qs(urlparse(page.url).query).get("sim_stage") == ["layer_5"], page.url
    assert not page.locator("[data-testid='stException']").count()
    page.close()
