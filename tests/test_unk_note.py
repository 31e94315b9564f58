"""The [UNK] note: on every page whose figure involves [UNK], how many there are (counted by
the tokenizer here), what it does to the figure, and the model that fixes it; none without."""

from __future__ import annotations

import pytest

from components.unk_note import FETCH_CHINESE
from tests.conftest import assert_clean, open_app

# Unrelated, and mostly [UNK] for an English vocabulary.
A, B = "我喜欢这部电影。", "今天的天气很好。"
PAGES = [
    (None, {}),
    ("pages/stages/page.py", {}),
    ("pages/similarity/page.py", {"sim_section": "Sentences"}),
    ("pages/similarity/page.py", {"sim_section": "Tokens"}),
    ("pages/pretraining/page.py", {"pre_section": "Masking"}),
    ("pages/lesson/page.py", {"lesson": "embedding", "step": "3"}),
]


def unk_notes(at) -> list[str]:
    return [w.value for w in at.warning if "are \\[UNK\\]" in w.value or "are [UNK]" in w.value]


@pytest.mark.parametrize(("page", "query"), PAGES, ids=str)
def test_the_note_counts_the_unknown_tokens_and_names_the_fix(bundle, page, query):
    at = open_app(page, a=A, b=B, **query) if page != "pages/lesson/page.py" \
        else open_app(page, a=A, **query)
    assert_clean(at)
    texts = [A, B] if page != "pages/lesson/page.py" else [A]
    enc = bundle.tokenizer(*texts)
    k = enc["input_ids"].count(bundle.tokenizer.unk_token_id)
    n = len(enc["input_ids"])
    [note] = unk_notes(at)
    assert f"{k} of the {n} tokens are" in note.replace("\\", ""), note
    assert "bert-base-chinese" in note and FETCH_CHINESE in note


def test_no_note_without_unknown_tokens():
    at = open_app("pages/similarity/page.py", a="The cat sat.", b="A dog ran.",
                  sim_section="Sentences")
    assert_clean(at)
    assert not unk_notes(at)
