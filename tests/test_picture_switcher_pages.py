"""Every page's picture switcher for a reader who has not reached for a slider: the first run
draws and sends the shown picture only, the reach (components.picture_switcher's "want") sends
every value's, and the picture first sent is the same both ways, so the browser keeps it and
fills in the rest, even when a move changed the value before the reach's run."""

from __future__ import annotations

import pytest

from components.picture_switcher import WHOLE_KEY
from tests.conftest import assert_clean, open_app
from tests.switcher import sent, shown_index
from tests.test_contexts_page import finished  # a background pass (the built-in corpus)

LONG = " ".join(["the river bank was muddy after the rain"] * 9) + "."   # over 64 tokens

CASES = {
    "stages": ("pages/stages/page.py", {}, "st_stage"),
    "similarity": ("pages/similarity/page.py", {"sim_stage": "layer_2"}, "sim_stage"),
    "encoder attention": ("pages/encoder/page.py",
                          {"enc_section": "Attention", "enc_layer": "layer 2",
                           "enc_head": "head 5"}, "enc_layer"),
    "encoder attention by word": ("pages/encoder/page.py",
                                  {"enc_section": "Attention", "enc_words": "true",
                                   "enc_layer": "layer 3"}, "enc_layer"),
    "encoder long input's heads": ("pages/encoder/page.py",
                                   {"enc_section": "Attention", "a": LONG, "enc_head": "head 7"},
                                   "enc_head"),
    "encoder layer walk": ("pages/encoder/page.py",
                           {"enc_step": "attention_probs", "enc_layer": "layer 4",
                            "enc_head": "head 2"}, "enc_layer"),
    "encoder layer walk, whole layer": ("pages/encoder/page.py",
                                        {"enc_step": "intermediate", "enc_layer": "layer 5"},
                                        "enc_layer"),
    "attribution": ("pages/attribution/page.py", {"att_layer": "layer 3"}, "att_layer"),
    "pairs": ("pages/pairs/page.py", {"b": "It rained all day.", "pr_layer": "3"}, "pr_layer"),
    "contexts": ("pages/contexts/page.py", {"ctx_layer": "2"}, "ctx_layer"),
    "positions": ("pages/positions/page.py", {"pos_count": "first 64"}, "pos_count"),
}


def switcher_data(at, key: str) -> dict:
    found = [data for data in sent(at) if key in [axis["key"] for axis in data["axes"]]]
    assert found, f"no switcher of {key}"
    return found[0]


@pytest.mark.parametrize("case", list(CASES))
def test_the_first_run_sends_the_shown_picture_and_the_reach_the_rest(case):
    page, query, key = CASES[case]
    at = finished(open_app(page, reached=False, **query))
    first = switcher_data(at, key)
    shown = shown_index(first)
    sent = [i for i, p in enumerate(first["pictures"]) if p is not None]
    assert sent == [shown] and not first["complete"] and first["count"] > 1
    assert len(first["pictures"]) == first["count"]
    # The browser's "want" (a press on a slider, its focus, the pointer resting on it) notes the
    # session; by the time its run comes, a move may have put another value in the address.
    axis = next(a for a in first["axes"] if a["key"] == key)
    moved = axis["names"][(axis["index"] + 1) % len(axis["names"])]
    at.query_params[key] = moved
    at.session_state[WHOLE_KEY] = True
    at.run()
    assert_clean(at)
    whole = switcher_data(at, key)
    assert whole["complete"] and None not in whole["pictures"]
    assert len(whole["pictures"]) == whole["count"] == first["count"]
    assert shown_index(whole) != shown
    assert [a["names"] for a in whole["axes"]] == [a["names"] for a in first["axes"]]
    # What the browser checks before it keeps its elements and fills in the rest: the picture
    # it holds is the one of the whole set at that index (drawn alone, or as one of every
    # value's), under the same style.
    assert whole["pictures"][shown] == first["pictures"][shown]
    assert whole["style"] == first["style"] and whole["id"] != first["id"]
    # And a later run of the same session sends the whole set again: the reach is kept.
    at.run()
    assert switcher_data(at, key)["id"] == whole["id"]


def test_a_set_keeps_where_it_placed_the_sliders_until_it_is_drawn_anew():
    """A run that sends the same set again sends the values it was placed with (the browser's
    sliders are the reader's by then, and an element sent with another value would go whole,
    every picture again); after another page, the set is placed by the link again."""
    at = open_app("pages/stages/page.py", st_stage="layer_2")
    placed = switcher_data(at, "st_stage")
    assert placed["axes"][0]["names"][placed["axes"][0]["index"]] == "layer_2"
    at.query_params["st_stage"] = "layer_4"    # a report's run, the address a move behind
    at.run()
    assert switcher_data(at, "st_stage") == placed
    at.switch_page("pages/tokens/page.py").run()
    at.switch_page("pages/stages/page.py").run()
    again = switcher_data(at, "st_stage")
    assert again["axes"][0]["names"][again["axes"][0]["index"]] == "layer_4"
