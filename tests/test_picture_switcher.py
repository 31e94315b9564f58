"""components.picture_switcher without a browser: what it sends (the pictures' shared style
once, words as text) and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from components.heatmap_image import STYLE, HeatmapImage, Scale, heatmap_html
from components.picture_switcher import Axis, picture_slider, shared_style, with_words


def pictures(n: int) -> list[str]:
    rng = np.random.default_rng(0)
    return [heatmap_html(HeatmapImage(rng.normal(size=(3, 4)), ["a", "b", "c"], [0, 1, 2, 3],
                                      Scale("RdBu_r", -2, 2), f"value {i}", "dim"), f"fig_{i}")
            for i in range(n)]


def test_the_shared_style_is_sent_once_and_the_pictures_are_whole_again():
    shown = [with_words(f"<b>{i}</b> & more", p) for i, p in enumerate(pictures(3))]
    style, rest = shared_style(shown)
    assert style == STYLE
    assert [style + r for r in rest] == shown
    assert all("<style>" not in r for r in rest)
    # Words are text: a tag typed in them arrives escaped, after the style, before the picture.
    assert rest[0].startswith('<p class="ps-words">&lt;b&gt;0&lt;/b&gt; &amp; more</p>')


def test_pictures_with_different_starts_keep_their_own():
    mixed = ["<p>one</p>", pictures(1)[0]]
    assert shared_style(mixed) == ("", mixed)


def test_one_name_per_value():
    with pytest.raises(ValueError):
        picture_slider(Axis("x", [1, 2], "Layer", ["1"], ""), lambda i: "<p>1</p>")


def test_the_data_goes_compressed_and_comes_back_whole():
    from components.picture_switcher import pack, unpack

    data = {"pictures": pictures(12), "names": ["层 1", "layer 2"], "index": 3}
    packed = pack(data)
    assert unpack(packed) == data
    # Twelve pictures of the same rows compress to far less than they are.
    assert len(packed) * 3 < sum(len(p.encode()) for p in data["pictures"])


def grid_script() -> None:
    import streamlit as st

    from components.picture_switcher import Axis, Drawn, picture_grid

    layers = Axis("l", [1, 2], "Layer", ["layer 1", "layer 2"], "")
    heads = Axis("h", [0, 1, 2], "Head", ["head 0", "head 1", "head 2"], "")
    count = int(st.query_params.get("count", 6))
    try:
        shown = picture_grid([layers, heads], Drawn(
            lambda i: f"<p>{i}</p>", lambda: [f"<p>{i}</p>" for i in range(count)]))
    except ValueError as refused:
        st.write(f"refused: {refused}")
    else:
        st.write(f"shown {shown}")


def test_a_grid_needs_a_picture_for_every_combination():
    from streamlit.testing.v1 import AppTest

    from components.picture_switcher import WHOLE_KEY
    from tests.switcher import sent

    for count in (6, 5):
        at = AppTest.from_function(grid_script, default_timeout=30)
        at.query_params["count"] = str(count)
        at.query_params["h"] = "head 2"
        at.session_state[WHOLE_KEY] = True    # every picture, as after the reader's reach
        at.run()
        if count == 6:
            assert not at.exception and "shown (1, 2)" in [m.value for m in at.markdown]
            [data] = sent(at)
            assert data["complete"] and data["pictures"] == [f"<p>{i}</p>" for i in range(6)]
        else:
            assert not at.exception
            assert [m.value for m in at.markdown] == [
                "refused: a picture switcher needs one picture per combination of options"]


def test_the_code_sent_is_the_folders_files_without_comments_and_no_larger():
    """switcher.js and switcher.css as the page gets them: minified (no comment left), no more
    bytes than the code sent before it had files of its own (6,184 of JS and 1,164 of CSS), and
    the CSS's colours and sizes are the palette's and the explanations' (a projector's back row:
    the label 16 px, the words 17 px, the ends' names 14 px)."""
    from components import palette
    from components.picture_switcher import CSS, JS

    assert "/*" not in CSS and "/*" not in JS
    assert not any(line.lstrip().startswith("//") for line in JS.splitlines())
    assert len(JS.encode()) <= 6184 and len(CSS.encode()) <= 1164
    assert f"color:{palette.INK}" in CSS and f"color:{palette.SOFT_INK}" in CSS
    assert "font-size:16px" in CSS and "font-size:17px" in CSS and "font-size:14px" in CSS
    # Streamlit takes a string with no line break for a file's path, not for code.
    assert "\n" in JS.strip() and "\n" in CSS.strip()
    assert "export default async function" in JS and "class Switcher" in JS
