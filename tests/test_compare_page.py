"""The Compare page in AppTest: the numbers it shows are core's, in both languages; every bad
input (the same model twice, a model B that fails to load or is too large, tokenizers that
cannot be matched, no sentences) gets a clear message and leaves the page usable."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import compare_pairs, layer_similarity
from core.compare import random_weights
from core.similarity.pair_examples import example_text
from tests.conftest import assert_clean, html_tables, open_app, plotly_values, tiny_config
from tests.model_folders import make_huge_config_folder, save_tokenizer
from tests.page_runs import figure, texts
from tests.page_runs import settle as settle_jobs

PAGE = "pages/compare/page.py"
A, B = "The lighthouse keeper counted ships.", "A sailor watched the boats at night."
WAIT_S = 180


def settle(at: AppTest) -> AppTest:
    """Wait for the page's background work (the map, a pair list, a corpus pass), then rerun,
    as its polling fragment would."""
    return settle_jobs(at, wait_s=WAIT_S)


@pytest.fixture(scope="module")
def random_copy(bundle):
    return random_weights(bundle)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_map_is_cores_with_its_checks(bundle, random_copy, lang):
    at = settle(open_app(PAGE, a=A, b=B, lang=lang, cmp_corpus="A + B"))
    assert_clean(at)
    expected = layer_similarity(bundle, random_copy, [A, B]).cka
    shown = plotly_values(figure(at, "compare_map")["data"][0]["z"])
    np.testing.assert_allclose(shown, expected, atol=1e-6)   # float32 in the figure
    checks = html_tables(at)[0]
    assert list(checks[""]) == ["✓"] * 4 and not texts(at, "error")
    assert float(checks["CKA"][0]) == pytest.approx(1.0, abs=1e-6)
    title = at.title[0].value
    if lang == "zh":
        assert title == "对比" and "随机权重" in json.dumps(figure(at, "compare_map"),
                                                         ensure_ascii=False)
        assert any("只有" in w for w in texts(at, "warning"))   # few rows: CKA reads high
    else:
        assert title == "Compare"
        assert any("Only" in w and "rows" in w for w in texts(at, "warning"))
        best = int(np.argmax(expected.mean(axis=1)))
        assert any(f"layer {best} is the most like the random copy" in m
                   for m in texts(at, "markdown"))
        assert any("with random weights" in m for m in
                   [json.dumps(figure(at, "compare_map"))])
    assert [b.label for b in at.get("download_button")][:2] == ["CSV", ".npy"]


def test_the_built_in_corpus_map_and_the_same_model_twice(bundle):
    at = settle(open_app(PAGE, a=A, b=B, cmp_random="false"))
    assert_clean(at)
    assert any("model A itself" in i for i in texts(at, "info"))
    z = plotly_values(figure(at, "compare_map")["data"][0]["z"])
    assert z.shape == (7, 7)
    np.testing.assert_allclose(np.diagonal(z), 1.0, atol=1e-6)
    np.testing.assert_allclose(z, z.T, atol=1e-6)
    assert any("3,574 tokens of 400 sentences" in m for m in texts(at, "markdown"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_pair_shows_each_models_curve(bundle, random_copy, lang):
    at = settle(open_app(PAGE, a=A, b=B, lang=lang, cmp_section="One pair, two models"))
    assert_clean(at)
    curves = figure(at, "compare_curves")["data"]
    layers = [f"layer_{k}" for k in range(7)]
    for trace, model in zip(curves, (bundle, random_copy), strict=True):
        expected = compare_pairs(model, [(A, B)]).iloc[0][layers].to_numpy(dtype=float)
        np.testing.assert_allclose(plotly_values(trace["y"]), expected, atol=1e-6)
    assert len(at.get("plotly_chart")) == 3   # the curves and both token-pair splits
    if lang == "en" and plotly_values(curves[1]["y"])[-1] > 0.9:
        assert any("point almost the same way" in m for m in texts(at, "markdown"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_many_pairs_says_which_model_ranks_better(lang):
    at = open_app(PAGE, a=A, b=B, lang=lang, cmp_section="Many pairs, two models")
    at.text_area(key="cmp_pairs").set_value(example_text()).run()
    settle(at)
    assert_clean(at)
    table = html_tables(at)[0]
    assert list(table.columns)[1:] == ["Spearman", "Pearson"]
    verdict = " ".join(texts(at, "markdown"))
    assert ("95%" in verdict) and (("interval" in verdict) if lang == "en" else ("区间" in verdict))
    assert len(html_tables(at)[1]) == 10   # the pairs ranked furthest apart


def test_a_model_b_that_fails_to_load_leaves_the_page_usable(closed_hub, folder_models_allowed):
    for asked, words in (("bert-base-uncased", "bert-base-uncased"),
                         (str(make_huge_config_folder(folder_models_allowed / "huge")),
                          "parameters"),
                         ("/etc", "not one of the models")):
        at = settle(open_app(PAGE, a=A, b=B, cmp_model=asked, cmp_corpus="A + B"))
        assert_clean(at)
        errors = " ".join(texts(at, "error"))
        assert words in errors, errors
        assert "with random weights" in errors
        figure(at, "compare_map")   # the page goes on with A's random weights


def test_tokenizers_that_cannot_be_matched_and_no_sentences(bundle, folder_models_allowed):
    import torch
    from transformers import BertModel

    folder = folder_models_allowed / "short"
    torch.manual_seed(0)
    BertModel(tiny_config(max_position_embeddings=16)).save_pretrained(folder)
    save_tokenizer(folder, bundle.tokenizer)
    long_a = "A heron stood very still on the bank of the river while the boats went by."
    at = settle(open_app(PAGE, a=long_a, b=B, cmp_model=str(folder), cmp_random="false",
                         cmp_corpus="A + B"))
    assert_clean(at)
    assert any("cannot be matched" in w for w in texts(at, "warning"))
    at = settle(open_app(PAGE, a="   ", cmp_corpus="A + B"))
    assert_clean(at)
    assert any("no sentences" in w for w in texts(at, "warning"))


def test_neighbours_in_both_models(bundle):
    from components.builtin_corpus import builtin_job
    from core.contexts.neighbours import nearest_tokens

    text = "I sat on the bank of the river."
    at = settle(open_app(PAGE, a=text, cmp_section="Neighbours in both"))
    assert_clean(at)
    tables = html_tables(at)
    assert len(tables) == 2 and all(len(t) == 10 for t in tables)
    position = bundle.tokenizer(text).tokens().index("bank")
    assert at.selectbox(key="cmp_token").value == position   # the corpus's ambiguous word first
    expected = nearest_tokens(bundle, text, position, 6, 10, corpus=builtin_job(
        bundle.name).result())
    np.testing.assert_allclose(tables[0].iloc[:, 1].astype(float),
                               [round(n.cosine, 3) for n in expected], atol=1.5e-3)
    assert any("nearest tokens are the same token of the same sentence" in m
               for m in texts(at, "markdown"))


def test_a_chinese_model_is_compared_on_the_chinese_corpus(folder_models_allowed):
    """The layer map's corpus is the built-in one in model A's language: a vocabulary of Chinese
    characters (as bert-base-chinese's) opens on the Chinese sentences."""
    import torch
    from transformers import BertModel, BertTokenizerFast

    from core.contexts import NEIGHBOUR_CORPUS

    chinese = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == "zh"]
    chars = sorted({c for s in chinese for c in s if "\u4e00" <= c <= "\u9fff"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, "，", "。"]
    folder = folder_models_allowed / "chinese-chars"
    torch.manual_seed(0)
    BertModel(tiny_config(vocab_size=len(vocab))).save_pretrained(folder)
    BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}).save_pretrained(folder)
    at = settle(open_app(PAGE, model=str(folder), a="我爱你"))
    assert_clean(at)
    assert [b.value for b in at.get("button_group") if b.key == "cmp_corpus"] == ["中文"]
    assert any(f"of {len(chinese)} sentences" in m for m in texts(at, "markdown"))
    assert plotly_values(figure(at, "compare_map")["data"][0]["z"]).shape == (3, 3)
