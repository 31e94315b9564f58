"""Download file names: translated names keep their script, nothing becomes a path; a matrix
from the cache is made again on click, never held by its button."""

from __future__ import annotations

import numpy as np
import pytest

from components.downloads import from_cache, safe_filename


@pytest.mark.parametrize(("name", "expected"), [
    ("句子相似度", "句子相似度"),
    ("layer_6 cosines", "layer_6_cosines"),
    ("../../etc/passwd", "etc_passwd"),
    ('a"b\\c\r\nd', "a_b_c_d"),
    ("", "matrix"),
    ("///", "matrix"),
])
def test_safe_filename(name, expected):
    assert safe_filename(name) == expected


def test_a_recipe_calls_its_cache_again_on_every_click():
    """A download made from the cache runs the cached function with its key each time it is
    clicked, so a result dropped from the cache meanwhile is computed again, not kept by the
    button."""
    calls = []

    def get(key, layer):
        calls.append((key, layer))
        return {"steps": np.arange(6.0).reshape(2, 3) * layer}

    rebuild = from_cache(get, ("model", "text"), 2, part=lambda r: r["steps"])
    assert calls == []   # nothing computed until the click
    np.testing.assert_array_equal(rebuild(), np.arange(6.0).reshape(2, 3) * 2)
    rebuild()
    assert calls == [(("model", "text"), 2)] * 2


def test_a_recipe_refuses_to_hold_arrays():
    """An array as a key, or one captured by the part that picks the matrix, would stay alive
    for as long as the button is shown: refused when the page is drawn."""
    matrix = np.zeros((512, 384), dtype=np.float32)
    with pytest.raises(TypeError):
        from_cache(lambda m: m, matrix)
    with pytest.raises(TypeError):
        from_cache(lambda key: key, "key", part=lambda _r: matrix)
    stage = "embeddings"   # small values in the closure are what a recipe should hold
    assert from_cache(lambda key: {stage: 1}, "key", part=lambda r: r[stage])() == 1
