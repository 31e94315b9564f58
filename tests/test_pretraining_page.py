"""The Pretraining page: every section on the default model (no heads: the notice), the numbers
on a tiny checkpoint with both heads checked against core (the [MASK] by layer tab against
core.mask_lens and the fill-mask view), bad input, and the Chinese interface.

Only the open tab runs, so each test opens its section through the URL (``?pre_section=...``).
"""

from __future__ import annotations

import html
import json
import re

import pytest

from components.i18n import _, set_language
from core import load_model
from core.pretraining import fill_mask, mask_lens, mask_tokens, next_sentence
from pages.pretraining import cache as page_cache
from pages.pretraining.page import EXPLANATION, SECTIONS, TITLE
from tests.conftest import assert_clean, html_tables, open_app
from tests.pretraining_folders import make_chinese_checkpoint, make_pretraining_folder

PAGE = "pages/pretraining/page.py"
MASKING, FILL, LENS, NSP, FINETUNE = (s.label for s in SECTIONS)
A, B = "The quick brown fox jumps over the lazy dog near the river bank.", "It ran away."


def open_tab(section: str, **query: str):
    return open_app(PAGE, pre_section=section, **query)


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def figures(at) -> dict[str, dict]:
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return {spec["layout"]["meta"]: spec for spec in specs}


def messages(at) -> str:
    return " ".join(e.value for kind in ("warning", "info", "error") for e in getattr(at, kind))


@pytest.fixture
def heads_folder(folder_models_allowed, bundle):
    folder = folder_models_allowed / "tiny-pretraining"
    make_pretraining_folder(folder, bundle.tokenizer)
    return folder


# ---------------------------------------------------------------- the default model


@pytest.mark.parametrize("section", [MASKING, FILL, LENS, NSP, FINETUNE])
def test_every_section_renders_on_the_default_model(section):
    at = open_tab(section, b=B)
    assert_clean(at)
    notice = messages(at)
    if section in (FILL, LENS, NSP):
        assert "pretraining heads" in notice
        assert "python3 -m serving.download bert-base-uncased" in notice   # tested against a hub
        assert any(b.label == "Use bert-base-uncased" for b in at.button)   # one click
        assert "BERT\\_EXPLORER\\_MODEL\\_DIRS" in notice or "BERT_EXPLORER_MODEL_DIRS" in notice
    else:
        assert "pretraining heads" not in notice


def test_masking_counts_equal_core(bundle):
    for seed, prob, wwm in ((0, 0.15, False), (7, 0.3, False), (3, 0.5, True)):
        query = {"a": A, "b": B, "pre_seed": str(seed), "pre_prob": str(prob)}
        if wwm:
            query["pre_wwm"] = "true"
        at = open_tab(MASKING, **query)
        assert_clean(at)
        m = mask_tokens(bundle, A, B, seed=seed, probability=prob, whole_word=wwm)
        shown = metrics(at)
        assert shown == {"Picked": str(m.n_picked), "→ [MASK]": str(m.n_mask),
                         "→ random": str(m.n_random), "Kept": str(m.n_kept)}
        assert f"{m.n_picked} of the {m.n_candidates} ordinary tokens" in " ".join(
            x.value for x in at.markdown)
        [table] = html_tables(at)
        assert list(table["labels"]) == m.labels
        assert list(table["input_ids"]) == m.input_ids


def test_new_draw_increments_the_seed(bundle):
    at = open_tab(MASKING, a=A, pre_seed="41")
    next(b for b in at.button if b.label == "New draw").click().run()
    assert_clean(at)
    m = mask_tokens(bundle, A, seed=42)
    assert metrics(at)["Picked"] == str(m.n_picked)
    assert int(at.session_state["pre_seed"]) == 42


def test_masking_honours_the_shared_max_length(bundle):
    """The masking is tokenised with the sidebar's options, as every page is: a long sentence cut
    at max_length=16 has at most 16 positions to mask (14 ordinary ones between [CLS] and
    [SEP])."""
    long_a = " ".join([A] * 4)
    at = open_tab(MASKING, a=long_a, max_length="16", pre_prob="0.5")
    assert_clean(at)
    [table] = html_tables(at)
    assert len(table) == 16
    m = mask_tokens(bundle, long_a, seed=0, probability=0.5, max_length=16)
    assert m.n_candidates == 14 and len(m.input_ids) == 16
    assert list(table["input_ids"]) == m.input_ids
    assert f"{m.n_picked} of the {m.n_candidates} ordinary tokens" in " ".join(
        x.value for x in at.markdown)


def test_ignored_labels_show_as_minus_100():
    at = open_tab(MASKING, a=A, pre_prob="0.05")
    labels = list(html_tables(at)[0]["labels"])
    assert -100 in labels


# ---------------------------------------------------------------- a checkpoint with both heads


def test_fill_mask_top_k_equals_core(heads_folder):
    text = "The capital of France is [MASK]."
    at = open_tab(FILL, model=str(heads_folder), pre_reveal="true", pre_topk="7")
    assert_clean(at)
    pt = load_model(str(heads_folder))
    expected = fill_mask(pt, text, top_k=7)[0]
    bars = figures(at)["pre_topk"]["data"][0]
    assert list(bars["y"])[::-1] == [p.token for p in expected]
    assert list(bars["x"])[::-1] == pytest.approx([p.probability for p in expected])
    assert "pretraining heads" not in messages(at)


def test_guess_before_reveal(heads_folder):
    pt = load_model(str(heads_folder))
    best = fill_mask(pt, "The capital of France is [MASK].")[0][0].token
    at = open_tab(FILL, model=str(heads_folder))
    assert "pre_topk" not in figures(at)          # nothing shown before the reveal
    at.text_input(key="pre_guess").input(best).run()
    at.toggle(key="pre_reveal").set_value(True).run()
    assert_clean(at)
    assert "is number `1` of the top `5`" in " ".join(m.value for m in at.markdown)
    at.text_input(key="pre_guess").input("zzzzqq").run()
    assert "is not in the model's top `5`" in " ".join(m.value for m in at.markdown)


def test_mask_a_token_of_sentence_a(heads_folder):
    at = open_tab(FILL, model=str(heads_folder), a="This is a test sentence",
                  pre_source="Mask a token of sentence A", pre_pick="4 test", pre_reveal="true")
    assert_clean(at)
    pt = load_model(str(heads_folder))
    expected = fill_mask(pt, "this is a [MASK] sentence")[0]
    assert list(figures(at)["pre_topk"]["data"][0]["y"])[::-1] == [p.token for p in expected]
    assert "The hidden token was `test`" in " ".join(m.value for m in at.markdown)


LENS_CELL = re.compile(r'<td class="([^"]*)">(.*?)</td>')


def lens_table(at) -> list[list[tuple[str, str]]]:
    """The [MASK] by layer table as drawn: a row per layer, each cell (its class, its first line
    of text, unescaped)."""
    [body] = [h.proto.body for h in at.get("html") if 'data-table="pre_lens"' in h.proto.body]
    rows = body.split("<tbody>")[1].split("</tr>")[:-1]
    return [[(kind, html.unescape(text.split("<br>")[0])) for kind, text in LENS_CELL.findall(r)]
            for r in rows]


def said(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_mask_by_layer_equals_core_and_the_fill_mask_view(heads_folder):
    """Every layer's guesses and the answer's rank as core.mask_lens gives them, the answer
    highlighted wherever it is, the sentence's layer counted from the ranks, the curve's points;
    the last layer's first guess is the Fill the mask tab's."""
    text = "The cat [MASK] on the [MASK] ."
    pt = load_model(str(heads_folder))
    fill = open_tab(FILL, model=str(heads_folder), pre_text=text, pre_reveal="true")
    for mask in (0, 1):
        at = open_tab(LENS, model=str(heads_folder), pre_text=text,
                      **({"pre_lens_mask": "2"} if mask else {}))
        assert_clean(at)
        lens = mask_lens(pt, text, k=5)
        rows = lens_table(at)
        assert len(rows) == pt.config.num_hidden_layers + 1
        for layer, row in enumerate(rows):
            (_, name), (_, rank), *guesses = row
            assert name == str(layer)
            assert rank == f"{lens.answer_ranks[mask, layer]:,}"
            assert [t for _, t in guesses] == lens.tokens[mask][layer]
            assert ["answer" in kind for kind, _ in guesses] == [
                i == lens.answer_ids[mask] for i in lens.token_ids[mask, layer]]
        first = next(layer for layer, r in enumerate(lens.answer_ranks[mask]) if r == 1)
        assert f"first reaches the top at layer `{first}` of `{lens.n_layers}`" in said(at)
        assert f"number {mask + 1} (position {lens.positions[mask]})" in rows_caption(at)
        curve = figures(at)["pre_lens"]["data"]
        assert curve[0]["y"] == pytest.approx(lens.answer_probs[mask].tolist(), abs=1e-6)
        assert curve[1]["y"] == lens.answer_ranks[mask].tolist()
    # The last layer's best guess is the fill-mask view's first bar (its first [MASK]).
    first_bar = list(figures(fill)["pre_topk"]["data"][0]["y"])[-1]
    assert first_bar == mask_lens(pt, text).answer_tokens[0]


def rows_caption_body(at) -> str:
    [body] = [h.proto.body for h in at.get("html") if 'data-table="pre_lens"' in h.proto.body]
    return body


def rows_caption(at) -> str:
    return html.unescape(re.search(r"<caption[^>]*>(.*?)</caption>", rows_caption_body(at))[1])


def test_the_decoder_alone_beside_the_whole_head(heads_folder):
    pt = load_model(str(heads_folder))
    text = "The capital of France is [MASK]."
    at = open_tab(LENS, model=str(heads_folder), pre_lens_decoder="true")
    assert_clean(at)
    alone, whole = mask_lens(pt, text, k=5, transform=False), mask_lens(pt, text, k=5)
    assert [[t for _, t in row[2:]] for row in lens_table(at)] == alone.tokens[0]
    assert alone.answer_tokens == whole.answer_tokens        # the model's answer either way
    assert "With the decoder alone" in said(at) and "dense layer, GELU and LayerNorm" in said(at)
    lines = {(d["name"], d["yaxis"]): d["y"] for d in figures(at)["pre_lens"]["data"]}
    assert lines[("the whole head", "y2")] == whole.answer_ranks[0].tolist()
    assert lines[("the decoder alone", "y2")] == alone.answer_ranks[0].tolist()


@pytest.mark.parametrize("query", [
    {"pre_lens_mask": "9"}, {"pre_lens_mask": "abc"}, {"pre_lens_mask": "-1"},
    {"pre_lens_decoder": "maybe"}, {"pre_text": "No mask here."},
    {"pre_text": " ".join(["[MASK]"] * 30)},
])
def test_mask_by_layer_with_garbage(heads_folder, query):
    at = open_tab(LENS, model=str(heads_folder), **{"pre_text": "The [MASK] sat on the [MASK].",
                                                     **query})
    assert_clean(at)
    if "pre_text" in query:
        assert "[MASK]" in messages(at)
    else:
        assert len(lens_table(at)) == 3


def test_mask_by_layer_on_a_chinese_checkpoint_in_chinese(folder_models_allowed):
    """A Chinese-reading checkpoint with both heads, as bert-base-chinese is, on a Chinese
    sentence in the Chinese interface: every guess is one of its characters."""
    folder = folder_models_allowed / "tiny-chinese"
    make_chinese_checkpoint(folder, layers=3)
    text = "今天天气真[MASK]。"
    at = open_tab(_zh(LENS), model=str(folder), pre_text=text, lang="zh")
    assert_clean(at)
    lens = mask_lens(load_model(str(folder)), text, k=5)
    rows = lens_table(at)
    assert [[t for _, t in row[2:]] for row in rows] == lens.tokens[0] and len(rows) == 4
    assert f"<small>{_zh('embeddings')}</small>" in rows_caption_body(at)
    assert "的回答" in said(at) or "答案" in said(at)


def _zh(text: str) -> str:
    set_language("zh")
    try:
        return _(text)
    finally:
        set_language("en")


def test_next_sentence_equals_core(heads_folder):
    at = open_tab(NSP, model=str(heads_folder), a=A, b=B)
    assert_clean(at)
    pt = load_model(str(heads_folder))
    other = page_cache.random_sentence(A, B)
    assert other == page_cache.random_sentence(A, B) and other != B
    shown = metrics(at)
    assert shown["IsNext, A + B"] == f"{next_sentence(pt, A, B).is_next_probability:.3f}"
    assert shown["IsNext, A + a random sentence"] == \
        f"{next_sentence(pt, A, other).is_next_probability:.3f}"


def test_next_sentence_without_b_asks_for_it(heads_folder):
    at = open_tab(NSP, model=str(heads_folder), a=A)
    assert_clean(at)
    assert "Type sentence B" in messages(at)


# ---------------------------------------------------------------- fine-tuning patterns


def test_finetuning_patterns_show_the_heads(bundle):
    at = open_tab(FINETUNE, b=B, pre_classes="5")
    assert_clean(at)
    table = at.table[0].value
    hidden = bundle.config.hidden_size
    # Natural language inference has three classes whatever the number asked for.
    assert list(table["parameters"]) == [f"{hidden * 5 + 5:,}"] * 2 + [f"{hidden * 3 + 3:,}",
                                                                        f"{hidden * 2 + 2:,}"]
    charts = at.get("graphviz_chart")
    assert len(charts) == 4
    # The two-sentence diagrams draw words of both sentences.
    pair_dot = charts[2].proto.spec
    assert "3 class scores" in pair_dot
    b_words = [t for t in bundle.tokenizer.tokenize(B) if t.isalpha()]
    assert any(f'label="{w}"' in pair_dot for w in b_words), pair_dot


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("text, words", [
    ("The capital of France is Paris.", "has no"),
    (" ".join(["[MASK]"] * 50), "at most"),
    ("The capital of France is [mask].", "capital letters"),
])
def test_bad_fill_texts_give_a_message(heads_folder, text, words):
    at = open_tab(FILL, model=str(heads_folder), pre_text=text, pre_reveal="true")
    assert_clean(at)
    assert words in messages(at)


def test_mask_inside_a_word_is_filled(heads_folder):
    at = open_tab(FILL, model=str(heads_folder), pre_text="It was un[MASK]able.",
                  pre_reveal="true")
    assert_clean(at)
    assert "pre_topk" in figures(at)


@pytest.mark.parametrize("section", [MASKING, FINETUNE])
def test_b_without_a_gives_a_message(section):
    at = open_tab(section, a=" ", b=B)
    assert_clean(at)
    assert messages(at)


@pytest.mark.parametrize("query", [
    {"pre_seed": "-5"}, {"pre_seed": "99999999999"}, {"pre_seed": "abc"},
    {"pre_seed": "inf"}, {"pre_prob": "0.9"}, {"pre_prob": "0"}, {"pre_prob": "nan"},
    {"pre_prob": "x"}, {"pre_wwm": "maybe"},
])
def test_garbage_in_the_url_gives_a_message(query):
    at = open_tab(MASKING, **query)
    assert_clean(at)
    if "pre_wwm" not in query:
        assert "is not a number from" in messages(at)
    assert metrics(at)["Picked"].isdigit()


@pytest.mark.parametrize("query", [
    {"pre_section": "nonsense"}, {"pre_classes": "1e400"}, {"pre_classes": "-3"},
    {"pre_topk": "abc"}, {"pre_source": "???"}, {"pre_pick": "99 nothing"},
])
def test_other_garbage_never_raises(query, heads_folder):
    at = open_app(PAGE, model=str(heads_folder), **{"pre_section": FINETUNE, **query})
    assert_clean(at)
    at = open_app(PAGE, model=str(heads_folder), **{"pre_section": FILL, **query})
    assert_clean(at)


# ---------------------------------------------------------------- Chinese


@pytest.mark.parametrize("section", [MASKING, FILL, LENS, NSP, FINETUNE])
def test_chinese_interface(section):
    set_language("zh")
    try:
        zh = {label: _(label) for label in (TITLE, EXPLANATION, MASKING, FILL, LENS, NSP,
                                            FINETUNE)}
    finally:
        set_language("en")
    at = open_tab(zh[section], lang="zh", b=B)
    assert_clean(at)
    assert at.title[0].value == zh[TITLE] != TITLE
    assert at.markdown[0].value == zh[EXPLANATION] != EXPLANATION
    assert [t.label for t in at.tabs] == [zh[s.label] for s in SECTIONS]
    assert all(zh[s.label] != s.label for s in SECTIONS)
