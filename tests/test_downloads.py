"""Download file names: translated names keep their script, nothing becomes a path."""

from __future__ import annotations

import pytest

from components.downloads import safe_filename


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
