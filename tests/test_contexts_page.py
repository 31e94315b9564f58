"""The Contexts page in AppTest: every tab in English and Chinese, its numbers against core,
the link's parameters (and bad ones), your own corpus pasted and uploaded, bad corpora."""

from __future__ import annotations

import html as html_module
import json
import re
import time
import urllib.parse

import numpy as np
import pytest
import torch

from core import load_model
from core.contexts import corpus_pass, nearest_tokens, sense_separation, suggestion
from core.contexts.corpus_data import CorpusRecord
from tests.conftest import assert_clean, open_app
from tests.switcher import switchers

PAGE = "pages/contexts/page.py"
RIVER = "We walked along the bank of the river."
CJK = re.compile(r"[\u4e00-\u9fff]")
TABS = {"en": ("Neighbours", "Senses by layer", "Map", "Your own corpus"),
        "zh": ("最近邻", "逐层看词义", "分布图", "你自己的语料")}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def corpus(bundle):
    return corpus_pass(bundle)


def finished(at, timeout_s: float = 180.0):
    """Rerun until no progress bar is left (a background pass polled by a fragment, which
    AppTest does not tick)."""
    deadline = time.monotonic() + timeout_s
    while at.get("progress") and time.monotonic() < deadline:
        assert_clean(at)
        time.sleep(0.5)
        at.run()
    assert not at.get("progress"), "the pass did not finish"
    assert_clean(at)
    return at


def page(section: str, **query: str):
    return finished(open_app(PAGE, ctx_section=section, a=RIVER, **query))


def htmls(at) -> str:
    """The page's HTML blocks and the picture the layer slider shows (every layer's is sent)."""
    return "\n".join([h.proto.body for h in at.get("html")]
                     + [s.pictures[s.index] for s in switchers(at).values()])


def texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [e.value for e in at.info]
                     + [w.value for w in at.warning] + [e.value for e in at.error]
                     + [s.words() for s in switchers(at).values()])


def neighbour_rows(body: str) -> list[tuple[float, str]]:
    """(cosine, token) per row of the neighbours table."""
    rows = re.findall(r'<td class="num">\d+</td><td class="num">([-\d.]+)</td><td>([^<]*)</td>',
                      body)
    return [(float(c), html_module.unescape(t)) for c, t in rows]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("tab", range(4))
def test_every_tab_renders(lang, tab):
    query = {"lang": "zh"} if lang == "zh" else {}
    at = page(TABS[lang][tab], **query)
    assert at.tabs and at.title[0].value == ("语境" if lang == "zh" else "Contexts")
    shown = texts(at)
    if lang == "zh":
        assert len(CJK.findall(shown)) > 40
    if tab == 0:
        assert len(neighbour_rows(htmls(at))) == 10
    if tab == 1:
        metas = {json.loads(c.proto.spec)["layout"]["meta"] for c in at.get("plotly_chart")}
        assert metas == {"ctx_senses", "ctx_self"}
    if tab == 2:
        assert 'data-picture="ctx_map"' in htmls(at)


def test_neighbours_equal_core(bundle, corpus):
    at = page("Neighbours", ctx_layer="4")
    position = at.selectbox(key="ctx_token").value
    assert bundle.ids_to_tokens(bundle.tokenize(RIVER)["input_ids"])[position] == "bank"
    found = nearest_tokens(bundle, RIVER, position, 4, corpus=corpus)
    rows = neighbour_rows(htmls(at))
    np.testing.assert_allclose([c for c, _ in rows], [n.cosine for n in found], atol=6e-4)
    assert [t for _, t in rows] == [n.token for n in found]
    same = sum(n.token == "bank" for n in found)
    assert f"At layer 4, {same} of the 10 nearest tokens are “bank” itself." in texts(at)


def test_every_layer_neighbours_are_sent_and_the_link_opens_on_its_layer(bundle, corpus):
    """The layer slider switches in the browser: each layer's table is core's nearest tokens at
    that layer, under what to notice there, and the page opens on the link's layer."""
    at = page("Neighbours", ctx_layer="2")
    layers = switchers(at)["ctx_layer"]
    assert layers.names == [str(k) for k in range(7)] and layers.value == "2" and layers.report
    position = at.selectbox(key="ctx_token").value
    for k, picture in enumerate(layers.pictures):
        found = nearest_tokens(bundle, RIVER, position, k, corpus=corpus)
        rows = neighbour_rows(picture)
        np.testing.assert_allclose([c for c, _ in rows], [n.cosine for n in found], atol=6e-4)
        assert [t for _, t in rows] == [n.token for n in found]
        assert layers.words(k).startswith(f"At layer {k}, ")


def test_link_picks_token_and_layer():
    at = page("Neighbours", ctx_token="2", ctx_layer="0")
    assert at.selectbox(key="ctx_token").value == 2
    assert "At layer 0, " in texts(at)
    # Another sentence typed in the same session opens on its own first corpus word, not on the
    # position the link held for the sentence before.
    ducks = "Ducks swam near the bank."
    at.text_area(key="a").set_value(ducks).run()
    at = finished(at)
    tokens = load_model().tokenizer.tokenize(ducks)
    assert at.selectbox(key="ctx_token").value == tokens.index("bank") + 1 != 2


@pytest.mark.parametrize("bad", [{"ctx_token": "0"}, {"ctx_token": "10"}, {"ctx_token": "99"},
                                 {"ctx_token": "x"}, {"ctx_layer": "12"},
                                 {"ctx_layer": "-1"}, {"ctx_word": "zebra"}])
def test_bad_link_values_fall_back_with_a_message(bad):
    section = "Senses by layer" if "ctx_word" in bad else "Neighbours"
    at = page(section, **bad)
    if "ctx_layer" in bad:   # the layer picker's own line (components/pickers.py)
        assert any(f"There is no layer `{bad['ctx_layer']}` here" in i.value
                   for i in at.info), texts(at)
    else:
        assert any("not available here" in w.value for w in at.warning), texts(at)
    if "ctx_word" in bad:
        assert at.selectbox(key="ctx_word").value == "bank"
    else:
        assert len(neighbour_rows(htmls(at))) == 10


def test_senses_name_the_peak_layer(corpus):
    at = page("Senses by layer", ctx_word="crane")
    sep = sense_separation(corpus, "crane")
    assert f"The best layer is {sep.peak_layer} ({sep.accuracy.max():.0%})" in texts(at)
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["meta"] == "ctx_senses")
    np.testing.assert_allclose(spec["data"][0]["y"] if isinstance(spec["data"][0]["y"], list)
                               else sep.accuracy, sep.accuracy)


def test_map_exact_values_and_sentences():
    at = page("Map", ctx_exact="true", ctx_map="every sentence", ctx_layer="3")
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    assert spec["layout"]["meta"] == "ctx_map"
    assert sum(len(trace["text"]) for trace in spec["data"]) == 675


def test_empty_sentence_a_gets_a_message():
    at = finished(open_app(PAGE, ctx_section="Neighbours", a=" "))
    assert not neighbour_rows(htmls(at))
    assert at.warning or at.info


def own(at, text: str):
    return finished(at.text_area(key="ctx_text").input(text).run())


def test_own_corpus_pasted_with_labels():
    at = page("Your own corpus")
    lines = ["The bank raised its rates.\tmoney", "We sat on the river bank.\triver",
             "The bank lent them money.\tmoney", "Ducks swam near the bank.\triver"]
    at = own(at, "\n".join(lines))
    shown = texts(at)
    assert "4 sentences" in shown
    assert at.selectbox(key="ctx_token").value == 5      # "bank", a word of the built-in corpus
    rows = neighbour_rows(htmls(at))
    assert len(rows) == 10 and [t for _, t in rows[:4]] == ["bank"] * 4
    assert 'data-picture="ctx_own_map"' in htmls(at)
    assert "money (2)" in htmls(at) and "river (2)" in htmls(at)


def test_own_corpus_bad_inputs():
    at = page("Your own corpus")
    at = own(at, "Only one sentence here.")
    assert "A map needs at least two sentences." in texts(at)
    at = own(at, "One.\tx\nTwo.\tx\n")
    assert "the same label" in texts(at)
    at = own(at, "   \n\n")
    assert "Paste sentences above" in texts(at)


def test_own_corpus_uploaded_files():
    at = page("Your own corpus")
    data = b'text,label\n"One, two, three.",a\n"He said ""hi"".",b\n,a\n'
    at.file_uploader[0].set_value(("s.csv", data, "text/csv")).run()
    at = finished(at)
    assert "2 sentences" in texts(at)
    assert "Skipped 1 line whose sentence is empty: 4." in texts(at)
    assert "Line 1 holds the column names, not a sentence." in texts(at)
    at.file_uploader[0].set_value(("b.txt", b"\x00\x01\x02" * 500, "text/plain")).run()
    assert "not text" in texts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_own_corpus_names_every_line_left_out(lang):
    """An empty sentence (line 2), a line the reader skips as too long (line 3) and a sentence
    with a tab inside (line 5): each named by its number, with its reason, as a warning; the
    other two lines are read."""
    from core.sentence_files.reader import MAX_LINE_CHARS

    query = {"lang": "zh"} if lang == "zh" else {}
    lines = ["The bank raised its rates.\tmoney", "\tmoney", "word " * (MAX_LINE_CHARS // 5 + 1),
             "We sat on the river bank.\triver", "We sat\ton the bank.\triver"]
    assert len(lines[2]) > MAX_LINE_CHARS
    at = own(page(TABS[lang][3], **query), "\n".join(lines))
    warnings = [w.value for w in at.warning]
    chars = f"{MAX_LINE_CHARS:,}"
    if lang == "zh":
        expected = ["跳过了 1 行句子为空的行：2。", f"跳过了 1 行超过 {chars} 个字符的行：3。",
                    "跳过了 1 行字段比其他行多的行：5。"]
    else:
        expected = ["Skipped 1 line whose sentence is empty: 2. ",
                    f"Skipped 1 line longer than {chars} characters: 3. ",
                    "Skipped 1 line with more fields than the other lines: 5. "]
    for words in expected:
        assert any(words in w for w in warnings), (words, warnings)
    assert ("2 个句子" if lang == "zh" else "2 sentences") in texts(at)
    assert 'data-picture="ctx_own_map"' in htmls(at)


def left_out_script() -> None:
    """report_corpus alone, on lines skipped for a reason the corpus page has no words of its
    own (a pair list's score), in 14 runs, and an empty sentence."""
    from core.contexts.corpus_data import CorpusRecord
    from core.contexts.user_corpus import UserCorpus
    from core.sentence_files.reader import Reason, Skipped
    from pages.contexts.page import report_corpus

    skipped = tuple(Skipped(line, Reason.SCORE) for line in (3, *range(10, 40, 2)))
    report_corpus(UserCorpus(records=(CorpusRecord("One."),), lines=(1,), tokens=4,
                             empty_lines=(2,), skipped=skipped, read=2), 2)


def test_a_reason_without_words_of_its_own_still_names_its_lines():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(left_out_script, default_timeout=30).run()
    assert_clean(at)
    warnings = [w.value for w in at.warning]
    # line_ranges shows 12 runs: 3, 10, 12 ... 30; the 4 lines after (32 to 38) are counted.
    runs = ", ".join(str(n) for n in (3, *range(10, 31, 2)))
    assert warnings == [
        "Skipped 1 line whose sentence is empty: 2. Write the sentence on the line or remove the "
        "line; if the sentences are in another column, pick that column.",
        f"Skipped 16 lines that could not be read as written: {runs} and 4 more. Check these "
        "lines and correct them."]


def test_own_neighbours_equal_core(bundle):
    """The table over a pasted corpus is what nearest_tokens returns over that corpus's pass."""
    lines = ["The bank raised its rates.", "We sat on the river bank.",
             "The bank lent them money.", "Ducks swam near the bank."]
    at = own(page("Your own corpus", ctx_layer="3"), "\n".join(lines))
    position = at.selectbox(key="ctx_token").value
    own_corpus = corpus_pass(bundle, [CorpusRecord(line) for line in lines])
    found = nearest_tokens(bundle, RIVER, position, 3, corpus=own_corpus)
    rows = neighbour_rows(htmls(at))
    np.testing.assert_allclose([c for c, _ in rows], [n.cosine for n in found], atol=6e-4)
    assert [t for _, t in rows] == [n.token for n in found]


def try_link(at) -> tuple[str, dict[str, list[str]]]:
    """The sentence the page suggests and its link's query, from the one line that says so."""
    line = next(m.value for m in at.markdown if "](?" in m.value)
    text, link = re.search(r"\[(.*?)\]\((\?[^)]*)\)", line).groups()
    return text.replace("\\", ""), urllib.parse.parse_qs(link[1:])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_first_look(lang):
    """The tutorial's sentence holds no word the corpus has in two senses: the page says so in
    one line and links this page with a sentence that has one, in the reader's language; that
    link opens on the word. The word picker opens on a word of the reader's language."""
    query = {"lang": "zh"} if lang == "zh" else {}
    at = finished(open_app(PAGE, ctx_section=TABS[lang][0], **query))
    assert at.selectbox(key="ctx_token").value == 1            # "this", the only kind it has
    sentence, link = try_link(at)
    assert sentence == suggestion(lang) and link["a"] == [sentence]
    assert link.get("lang", ["en"]) == [lang] and "ctx_token" not in link
    assert bool(CJK.search(sentence)) == (lang == "zh")
    at = finished(open_app(PAGE, **{k: v[0] for k, v in link.items()}))
    picker = at.selectbox(key="ctx_token")
    assert picker.options[picker.index].split(": ")[1] == ("花" if lang == "zh" else "bank")
    assert not any("](?" in m.value for m in at.markdown)
    at = finished(open_app(PAGE, ctx_section=TABS[lang][1], **query))
    word = at.selectbox(key="ctx_word").value
    assert word == ("行" if lang == "zh" else "bank")


def test_a_sentence_with_no_corpus_word_says_which_to_try():
    at = finished(open_app(PAGE, ctx_section="Neighbours", a="Xyzzy qwrt"))
    assert "No word of sentence A is in the corpus" in texts(at)
    assert try_link(at)[0] == suggestion("en")


def test_own_corpus_file_is_kept_apart_from_its_widget():
    """The uploaded file is kept by the shared KeptUpload (components/kept_upload.py), apart
    from the uploader whose value Streamlit forgets on a run of another tab; taking the file
    out of the uploader (its x) drops it, and the page asks for sentences again."""
    at = page("Your own corpus")
    data = b"text,label\nThe bank raised its rates.,money\nWe sat on the river bank.,river\n"
    at = finished(at.file_uploader[0].set_value(("senses.csv", data, "text/csv")).run())
    assert "2 sentences" in texts(at)
    kept = at.session_state["ctx_file_kept"]
    assert (kept.name, kept.data, kept.size) == ("senses.csv", data, len(data))
    at = at.file_uploader[0].set_value(None).run()
    assert_clean(at)
    assert at.session_state["ctx_file_kept"] is None and "Paste sentences above" in texts(at)
