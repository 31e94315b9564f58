"""The router, the shared URL-bound inputs, Home and Tokens, run in Streamlit's AppTest."""

from __future__ import annotations

import time

from core import analyze
from frame.page_list import HOME, available_pages
from tests.conftest import assert_clean, html_tables, open_app

TOKENS = "pages/tokens/page.py"


def token_table(at):
    [table] = html_tables(at)
    return table


def test_home_shows_pipeline_with_live_shapes(bundle):
    at = open_app(a="What is your name?", b="My name is BERT.")
    assert_clean(at)
    assert at.title[0].value == "BERT Embedding Explorer"
    dot = at.get("graphviz_chart")[0].proto.spec
    assert "[1, 13, 384]" in dot and "word_embeddings\\n30522×384" in dot and "[1, 13]" in dot
    assert HOME.path == "pages/home/page.py"


def test_every_page_is_registered_and_renders():
    at = open_app()
    for spec in available_pages():
        at.switch_page(spec.path).run()
        assert_clean(at)
        assert at.title[0].value == spec.title


def test_tokens_table_matches_core(bundle):
    a = "Unaffable xylophonists tokenise strangely."
    at = open_app(TOKENS, a=a)
    assert_clean(at)
    table = token_table(at)
    expected = analyze(bundle, a)
    assert table["token"].tolist() == expected.tokens
    assert table["input_id"].tolist() == expected.input_ids
    assert table["token_type_id"].tolist() == expected.token_type_ids
    assert table["position"].tolist() == expected.position_ids
    assert table["attention_mask"].tolist() == expected.attention_mask
    kinds = dict(zip(table["token"], table["kind"], strict=True))
    assert kinds["[CLS]"] == "special"
    assert any(t.startswith("##") and kinds[t] == "continuation (##)" for t in expected.tokens)


def test_the_tutorial_printout_is_drawn_once_opened(bundle):
    """The printout's code block is sent only once its expander is opened (a code block's
    browser code is large, and /tokens is a fresh server's first page); then it holds the
    tokenizer's own three lists."""
    from pages.tokens.page import PRINTOUT_KEY

    a, b = "What is your name?", "My name is BERT."
    at = open_app(TOKENS, a=a, b=b)
    assert_clean(at)
    assert "As the tutorials print it" in [e.proto.label for e in at.expander]
    assert len(at.code) == 0
    at.session_state[PRINTOUT_KEY] = True
    at.run()
    assert_clean(at)
    [code] = [c.value for c in at.code]
    given = bundle.tokenizer(a, b)
    for name in ("input_ids", "token_type_ids", "attention_mask"):
        assert f"{name:<14} = {given[name]}" in code
    assert f"torch.arange({len(given['input_ids'])})" in code


def test_tokens_pair_from_url_shows_two_segments():
    at = open_app(TOKENS, a="What is your name?", b="My name is BERT.")
    assert_clean(at)
    table = token_table(at)
    assert table["segment"].tolist() == ["A"] * 7 + ["B"] * 6
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Tokens"] == "13" and metrics["Segments"] == "2"


def test_unknown_token_is_marked(bundle):
    a = "snow ☃ man"
    assert "[UNK]" in bundle.tokenizer.tokenize(a)  # the vocabulary has no snowman
    table = token_table(open_app(TOKENS, a=a))
    assert table.loc[table["token"] == "[UNK]", "kind"].tolist() == ["unknown ([UNK])"]


def test_inputs_survive_a_page_change():
    # The URL side of the binding is done by the browser; tests/test_browser.py checks it.
    at = open_app("pages/home/page.py")
    at.sidebar.text_area(key="a").set_value("Shared inputs").run()
    at.sidebar.text_area(key="b").set_value("carry both sentences").run()
    at.switch_page(TOKENS).run()
    assert_clean(at)
    table = token_table(at)
    assert table["token"].tolist()[:3] == ["[CLS]", "shared", "inputs"]
    assert table["segment"].tolist()[-1] == "B"


def test_truncation_notice_says_how_much_was_cut(bundle):
    text = "word " * 600
    cut = len(bundle.tokenizer(text)["input_ids"]) - 512
    at = open_app(TOKENS, a=text)
    assert_clean(at)
    assert any(f"last {cut:,} tokens were cut" in w.value for w in at.warning)
    assert len(token_table(at)) == 512


def test_padding_rows_shown_as_padding():
    at = open_app(TOKENS, a="short", max_length="16", padding="true")
    assert_clean(at)
    table = token_table(at)
    assert len(table) == 16
    pads = table[table["attention_mask"] == 0]
    assert len(pads) == 13 and set(pads["kind"]) == {"padding"} and set(pads["token"]) == {"[PAD]"}


def test_truncation_off_gives_message_not_trace():
    at = open_app(TOKENS, a="word " * 600, truncation="false")
    assert_clean(at)
    assert any("Turn truncation on" in w.value for w in at.warning)


def test_unreachable_model_fails_fast_and_app_stays_on_default():
    start = time.monotonic()
    at = open_app(TOKENS, model="bert-base-uncased", a="still works")
    elapsed = time.monotonic() - start
    assert_clean(at)
    assert elapsed < 10
    assert any("cannot be reached" in e.value for e in at.error)
    assert "all-MiniLM-L6-v2" in at.sidebar.caption[-1].value
    assert token_table(at)["token"].tolist() == ["[CLS]", "still", "works", "[SEP]"]


def test_home_and_tokens_run_no_model_and_stages_runs_it_once():
    """Home and Tokens need only the tokenizer; the first page that needs the model runs it once,
    and a second such page reuses that run."""
    from components.cache import get_analysis

    misses = get_analysis.store.misses
    at = open_app(TOKENS, a="Zebras graze where no other test sentence goes.")
    assert_clean(at)
    assert "zebra" in " ".join(token_table(at)["token"])
    assert get_analysis.store.misses == misses   # Home, then Tokens: no model run
    at.switch_page("pages/stages/page.py").run()
    assert_clean(at)
    assert get_analysis.store.misses == misses + 1
    at.switch_page("pages/similarity/page.py").run()
    assert_clean(at)
    assert get_analysis.store.misses == misses + 1


def test_chinese_examples_are_one_click_away(bundle):
    """我爱你 from the sidebar: the Tokens page shows 我 [UNK] [UNK] and says why."""
    at = open_app(TOKENS)
    at.sidebar.button(key="example_1").click().run()
    assert_clean(at)
    assert at.sidebar.text_area(key="a").value == "我爱你"
    assert token_table(at)["token"].tolist() == ["[CLS]", "我", "[UNK]", "[UNK]", "[SEP]"]
    said = " ".join(m.value for m in at.markdown)
    assert "爱" in said and "你" in said and "[UNK]" in said
    at.sidebar.button(key="example_2").click().run()
    assert_clean(at)
    assert at.sidebar.text_area(key="b").value == "我们去公园散步吧。"
