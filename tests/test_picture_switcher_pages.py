"""Every page's picture switcher for a reader who has not reached for a slider: the first run
draws and sends the shown picture only, the reach (components.picture_switcher's "want") sends
every value's, and the shown one is the same picture both ways, so the browser keeps it (the
whole set names the partial one it completes)."""

from __future__ import annotations

import pytest

from components.picture_switcher import WHOLE_KEY, unpack
from tests.conftest import assert_clean, open_app

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
    for element in at.get("bidi_component"):
        data = unpack(element.proto.bytes)
        if key in [axis["key"] for axis in data["axes"]]:
            return data
    raise AssertionError(f"no switcher of {key}")


def shown_index(data: dict) -> int:
    at = 0
    for axis in data["axes"]:
        at = at * len(axis["names"]) + axis["index"]
    return at


@pytest.mark.parametrize("case", list(CASES))
def test_the_first_run_sends_the_shown_picture_and_the_reach_the_rest(case):
    page, query, key = CASES[case]
    at = open_app(page, reached=False, **query)
    assert_clean(at)
    first = switcher_data(at, key)
    shown = shown_index(first)
    sent = [i for i, p in enumerate(first["pictures"]) if p is not None]
    assert sent == [shown] and not first["complete"] and first["count"] > 1
    assert len(first["pictures"]) == first["count"]
    # The browser's "want" (the pointer over a slider, a touch, its focus) notes the session.
    at.session_state[WHOLE_KEY] = True
    at.run()
    assert_clean(at)
    whole = switcher_data(at, key)
    assert whole["complete"] and None not in whole["pictures"]
    assert len(whole["pictures"]) == whole["count"] == first["count"]
    assert shown_index(whole) == shown and whole["axes"] == first["axes"]
    # The same picture both ways (drawn alone, or as one of every value's), the same style.
    assert whole["pictures"][shown] == first["pictures"][shown]
    assert whole["style"] == first["style"]
    assert whole["extends"] == first["id"] != whole["id"]
    # And a later run of the same session sends the whole set again: the reach is kept.
    at.run()
    assert switcher_data(at, key)["id"] == whole["id"]
