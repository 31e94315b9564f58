"""/tokens' loading card carries the link's tokens (frame/boot_tokens.py): the same tokens, ids,
token_type_ids and masks as transformers' own tokenizer of the default model gives, escaped,
tinted as the page tints them, and only where the link asks for nothing else."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlencode

import pytest
from transformers import AutoTokenizer

from components.cache import get_tokenizer_files
from components.i18n import LANGUAGES, translations
from components.token_table import row_styles, token_table
from core.models import default_model_path
from core.settings import DEFAULT_MODEL, DEFAULT_SENTENCE
from core.tokens import encode
from frame.boot_screen import boot_html
from frame.boot_tokens import (
    CARD_ROWS,
    MORE,
    WORDS,
    card_rows,
    card_texts,
    link_texts,
    table_block,
)
from tests.test_boot_screen import PAGE, SENT, serve


@pytest.fixture(scope="module")
def reference():
    """transformers' tokenizer of the default model, read from the model's own folder."""
    return AutoTokenizer.from_pretrained(str(default_model_path()), local_files_only=True)


def tokens_block(path: str, query: dict[str, list[str]], language: str) -> str:
    """The card's table for a request to ``path`` with ``query``, as the middleware makes it."""
    texts = card_texts(path, query)
    return "" if texts is None else table_block(texts, language)


def rows_of(block: str) -> list[list[str]]:
    """The table's body rows as a reader sees their cells (tags dropped, entities decoded)."""
    body = block.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell))
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body)]


def expected_rows(reference, a: str, b: str | None = None) -> list[list[str]]:
    got = reference(a, b, truncation=True)
    tokens = reference.convert_ids_to_tokens(got["input_ids"])
    return [[str(pos), tok, str(tid), str(seg), str(mask)] for pos, (tok, tid, seg, mask)
            in enumerate(zip(tokens, got["input_ids"], got["token_type_ids"],
                             got["attention_mask"], strict=True))]


def query(**params: str) -> dict[str, list[str]]:
    return parse_qs(urlencode(params), keep_blank_values=True)


@pytest.mark.parametrize(("a", "b"), [
    (DEFAULT_SENTENCE, None),
    ("What is your name?", "My name is BERT."),      # a pair: segments 0 and 1
    ("我爱你", None),                                 # Chinese: [UNK] in an English vocabulary
    ("<b>bold</b> & [MASK]", None),                  # markup and a special token typed as text
])
def test_the_card_shows_transformers_tokens_of_the_link(reference, a, b):
    params = {"a": a, **({"b": b} if b else {}), "lang": "en"}
    block = tokens_block("/tokens", query(**params), "en")
    assert rows_of(block) == expected_rows(reference, a, b)
    assert "<b>bold</b>" not in block   # the text is shown as text, never as markup


def test_no_sentence_in_the_link_is_the_default_sentence(reference):
    assert rows_of(tokens_block("/tokens", {}, "en")) == expected_rows(reference, DEFAULT_SENTENCE)
    assert link_texts(query(b="   ")) == (DEFAULT_SENTENCE, None)   # a blank B: one sentence
    assert link_texts(query(a="")) == ("", None)   # as the page reads an empty A


@pytest.mark.parametrize("params", [
    {"model": "bert-base-uncased"}, {"max_length": "8"}, {"truncation": "false"},
    {"padding": "true"},
])
def test_other_models_and_tokenizer_options_get_the_pages_table_only(params):
    assert tokens_block("/tokens", query(**params), "en") == ""


def test_only_the_tokens_page_and_any_base_path():
    assert tokens_block("/", {}, "en") == "" and tokens_block("/stages", {}, "en") == ""
    assert tokens_block("/class/tokens", {}, "en") != ""
    assert tokens_block("/tokens/", {}, "en") != ""


def test_a_long_text_shows_the_first_rows_and_says_more_follow(reference):
    text = " ".join(["word"] * 40)
    rows, styles = card_rows(text, None)
    assert len(rows) == len(styles) == CARD_ROWS
    assert rows[-1] == [MORE] * 5
    shown = [[str(v) for v in r] for r in rows[:-1]]
    assert shown == expected_rows(reference, text)[:CARD_ROWS - 1]


def test_rows_are_tinted_as_the_pages_token_table(reference):
    """The page's table (components.token_table) and the card's: the same tint per row."""
    files = get_tokenizer_files(DEFAULT_MODEL)
    a, b = "What is your name?", "我爱你"
    page_styles = row_styles(token_table(encode(files, a, b), files.unk_token))
    _rows, card_styles = card_rows(a, b)
    assert card_styles == page_styles
    marked = [row[1] in ("[CLS]", "[SEP]", "[UNK]") for row in expected_rows(reference, a, b)]
    assert ["font-weight:700" in s for s in card_styles] == marked   # specials and [UNK] bold


def test_the_card_holds_the_table_in_the_pages_html():
    _h, out, _s = serve("/tokens", PAGE, b"text/html", query=b"a=What+is+your+name%3F&lang=zh")
    text = out.decode()
    assert 'class="with-tokens"' in text and 'data-table="boot-tokens"' in text
    assert "what" in text and "词元 · all-MiniLM-L6-v2" in text and "位置" in text
    _h, out, _s = serve("/stages", PAGE, b"text/html")
    assert b"boot-tokens" not in out and b'class="with-tokens"' not in out
    assert 'class="with-tokens"' not in boot_html("en")


def test_the_cards_top_is_sent_before_its_table():
    """/tokens' page and the card's top go at once (painted as soon as they can be), the table
    in a second message, then the rest of the page; with no length, as it is streamed."""
    headers, out, _s = serve("/tokens", PAGE, b"text/html")
    first, second = SENT
    assert b'id="boot-screen"' in first and b"Loading" in first and b"<table" not in first
    assert b'data-table="boot-tokens"' in second and second.endswith(b"</body></html>")
    assert b"content-length" not in headers
    assert out.count(b"</body>") == 1


def test_the_tables_words_are_the_catalogs():
    assert set(WORDS) == set(LANGUAGES)
    for code, words in WORDS.items():
        english = WORDS["en"]
        assert [translations(code).gettext(w) for w in english] == list(words)
