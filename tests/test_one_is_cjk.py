"""One ``is_cjk`` in the app: core.vocabulary's, with BERT's own CJK ranges; every other module
imports it (there were three, with two different sets of ranges)."""

from __future__ import annotations

import ast

from core.vocabulary import is_cjk
from tests.conftest import ROOT

APP = ("app.py", "core", "serving", "components", "pages", "frame", "bench")


def test_is_cjk_is_defined_once():
    defined = []
    for item in APP:
        path = ROOT / item
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and "cjk" in node.name.lower():
                    defined.append(f"{file.relative_to(ROOT).as_posix()}:{node.name}")
    assert defined == ["core/vocabulary.py:is_cjk"], defined


def test_is_cjk_is_berts_chinese_character_test():
    """The same answer as the ``tokenizers`` library's BERT normaliser (what the fast tokenizer
    runs), which puts spaces around exactly the characters BERT splits one a token: over the
    whole Basic Multilingual Plane and, sampled, the supplementary CJK planes."""
    from tokenizers.normalizers import BertNormalizer

    normaliser = BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                strip_accents=False, lowercase=False)
    for cp in [*range(0x20, 0xD800), *range(0xE000, 0x10000), *range(0x20000, 0x30000, 7)]:
        ch = chr(cp)
        assert is_cjk(ch) == (normaliser.normalize_str(ch) == f" {ch} "), hex(cp)
