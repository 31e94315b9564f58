"""The "By word" switch on every page that has one, in AppTest: from the link, in English and
Chinese, for English and Chinese text, no exception, and the numbers on screen are core's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core import analyze, mask_tokens
from core.similarity.pairs import pair_contributions
from core.words import attention_by_word, words_of_encoding
from tests.conftest import assert_clean, open_app, plotly_values
from tests.switcher import switchers

ZH_PAIR = {"a": "我爱北京天安门", "b": "我们在银行门口见面。"}
EN_PAIR = {"a": "He was strumming the guitar.", "b": "A man is playing music."}
CASES = [pytest.param("en", EN_PAIR, id="en"), pytest.param("zh", ZH_PAIR, id="zh")]


def figure(at, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
    return json.loads(chart.proto.spec)


@pytest.mark.parametrize("lang, texts", CASES)
def test_encoder_attention_by_word(bundle, lang, texts):
    at = open_app("pages/encoder/page.py", enc_section="Attention", enc_words="true",
                  enc_layer="2", enc_head="3", enc_exact="true", lang=lang, **texts)
    assert_clean(at)
    head = figure(at, "fig_att_head")["data"][0]
    result = analyze(bundle, texts["a"], texts["b"])
    words = words_of_encoding(result.encoding)
    expected = attention_by_word(result.attentions[1], words)[3]
    shown = plotly_values(head["z"])
    np.testing.assert_allclose(shown, expected, atol=1e-5)
    np.testing.assert_allclose(shown.sum(-1), 1.0, atol=1e-4)
    if lang == "zh":
        assert any("北京" in y for y in head["y"]) and any("天安门" in y for y in head["y"])
    else:   # (AppTest formats a picked option in English, so no click in the Chinese run)
        at.toggle(key="enc_hide_specials").set_value(True).run()
        assert_clean(at)


@pytest.mark.parametrize("lang, texts", CASES)
def test_encoder_atlas_by_word(lang, texts):
    at = open_app("pages/encoder/page.py", enc_section="Head atlas", enc_words="true",
                  lang=lang, **texts)
    assert_clean(at)
    assert at.get("plotly_chart")


@pytest.mark.parametrize("lang, texts", CASES)
def test_attribution_by_word(lang, texts):
    at = open_app("pages/attribution/page.py", att_words="true", lang=lang, **texts)
    assert_clean(at)
    table = next(s.pictures[s.index] for s in switchers(at).values())   # the layer's table
    words = ["天安门", "银行"] if lang == "zh" else ["strumming"]
    assert all(f">{w}</td>" in table for w in words)
    at = open_app("pages/attribution/page.py", att_words="true", lang=lang,
                  att_target="sentence_cosine", a=texts["a"])
    assert_clean(at)


@pytest.mark.parametrize("lang, texts", CASES)
def test_pairs_contributions_by_word(bundle, lang, texts):
    at = open_app("pages/pairs/page.py", pr_words="true", pr_exact="true", lang=lang, **texts)
    assert_clean(at)
    matrix = figure(at, "pairs_matrix")["data"][0]
    shown = plotly_values(matrix["z"])
    words = pair_contributions(bundle, texts["a"], texts["b"]).by_word()
    assert shown.shape == words.matrix.shape
    assert abs(float(shown.astype(np.float64).sum()) - words.cosine) < 1e-4
    at = open_app("pages/pairs/page.py", pr_words="true", lang=lang, **texts)
    assert_clean(at)


@pytest.mark.parametrize("lang, texts", CASES)
def test_tokens_words_above_tokens(lang, texts):
    at = open_app("pages/tokens/page.py", tok_words="true", lang=lang, **texts)
    assert_clean(at)
    strip = next(h.proto.body for h in at.get("html") if "tok-words" in h.proto.body)
    words = ["天安门", "银行"] if lang == "zh" else ["strumming", "playing"]
    assert all(f'<div class="w">{w}</div>' in strip for w in words)
    # the sentences' words and the three specials: [CLS] A [SEP] B [SEP]
    expected = 4 + 6 + 3 if lang == "zh" else 6 + 6 + 3
    assert f'data-words="{expected}"' in strip


@pytest.mark.parametrize("lang, texts", CASES)
def test_pretraining_whole_word_masking(bundle, lang, texts):
    at = open_app("pages/pretraining/page.py", pre_section="Masking", pre_wwm="true",
                  pre_seed="3", pre_prob="0.5", lang=lang, **texts)
    assert_clean(at)
    m = mask_tokens(bundle, texts["a"], texts["b"], seed=3, probability=0.5, whole_word=True)
    counts = m.word_counts()
    text = " ".join(x.value for x in at.markdown)
    if lang == "en":
        assert (f"By word: picked {len(m.candidate_words) - counts[None]} of "
                f"{len(m.candidate_words)}; became [MASK]: {counts['mask']};") in text
    assert ("Cui" in text) and ("BERT-wwm" in text)
