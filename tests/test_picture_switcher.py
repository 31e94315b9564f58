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


def test_one_picture_and_one_name_per_value():
    with pytest.raises(ValueError):
        picture_slider(Axis("x", [1, 2], "Layer", ["1", "2"], ""), ["<p>1</p>"])


def test_the_data_goes_compressed_and_comes_back_whole():
    from components.picture_switcher import pack, unpack

    data = {"pictures": pictures(12), "names": ["层 1", "layer 2"], "index": 3}
    packed = pack(data)
    assert unpack(packed) == data
    # Twelve pictures of the same rows compress to far less than they are.
    assert len(packed) * 3 < sum(len(p.encode()) for p in data["pictures"])


def test_a_grid_needs_a_picture_for_every_combination():
    from components.picture_switcher import Axis, picture_grid

    layers = Axis("l", [1, 2], "Layer", ["layer 1", "layer 2"], "")
    heads = Axis("h", [0, 1, 2], "Head", ["head 0", "head 1", "head 2"], "")
    with pytest.raises(ValueError):
        picture_grid([layers, heads], pictures(5))
    with pytest.raises(ValueError):
        picture_grid([Axis("l", [1, 2], "Layer", ["layer 1"], ""), heads], pictures(6))
