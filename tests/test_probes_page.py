"""The Probes page in AppTest: its curves are core's layer_probe, in both languages; a person's
own set is read with a clear message for what cannot be a probe; two models side by side."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import layer_probe
from core.probes import ProbeTask
from core.probes.tense_data import tense_items
from pages.probes.page import SECTION_KEY, TEXT_KEY
from serving import jobs
from tests.conftest import assert_clean, open_app, plotly_values
from tests.page_runs import figure, texts
from tests.page_runs import settle as settle_jobs

PAGE = "pages/probes/page.py"
WAIT_S = 300
pytestmark = pytest.mark.usefixtures("one_blas_thread")


def settle(at: AppTest) -> AppTest:
    """Wait for the page's probes (background jobs), then rerun, as its progress card would."""
    return settle_jobs(at, wait_s=WAIT_S, rounds=4)


@pytest.fixture(scope="module")
def tense_probe(bundle):
    return layer_probe(bundle, ProbeTask.SENTENCE_LABELS, tense_items("en"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_curves_are_cores(bundle, tense_probe, lang):
    at = settle(open_app(PAGE, lang=lang, prb_set="tense", prb_lang="en"))
    assert_clean(at)
    spec = figure(at, "probes_curves")
    np.testing.assert_allclose(plotly_values(spec["data"][1]["y"]), tense_probe.accuracy,
                               atol=1e-6)
    np.testing.assert_allclose(plotly_values(spec["data"][3]["y"]), tense_probe.control,
                               atol=1e-6)
    np.testing.assert_allclose(plotly_values(spec["data"][4]["y"]), tense_probe.selectivity,
                               atol=1e-6)
    shapes = spec["layout"]["shapes"]
    assert any(s.get("y0") == pytest.approx(tense_probe.majority) for s in shapes)
    notes = " ".join(texts(at, "markdown"))
    assert "all-MiniLM-L6-v2" in notes
    if lang == "zh":
        assert at.title[0].value == "探针" and "期望层" in json.dumps(spec, ensure_ascii=False)
    else:
        assert at.title[0].value == "Probes"
        assert f"read best at layer {tense_probe.best_layer}" in notes


CONLLU_ONE_LABEL = "1\tBirds\tbird\tNOUN\t_\t_\t0\troot\t_\t_\n\n" * 6


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_own_sets_that_cannot_be_a_probe_get_a_clear_message(lang):
    at = open_app(PAGE, lang=lang, **{SECTION_KEY: "Your own set"})
    assert_clean(at)
    # The board is the process's: other tests' jobs may be on it. None may be this set's.
    before = {id(job) for job in jobs.board().jobs()}
    at.text_area(key=TEXT_KEY).set_value(CONLLU_ONE_LABEL).run()
    assert_clean(at)
    assert not [job for job in jobs.board().jobs()
                if id(job) not in before and "own" in job.name]   # said at once
    warning = " ".join(texts(at, "warning"))
    assert "NOUN" in warning
    assert "two different labels" in warning or "两个不同的标签" in warning
    at.text_area(key=TEXT_KEY).set_value("1\tBirds\n\n").run()
    assert_clean(at)
    warning = " ".join(texts(at, "warning"))
    assert "Line `1`" in warning or "第 `1` 行" in warning     # the line is named


def test_a_table_whose_tags_do_not_match_names_the_line():
    at = open_app(PAGE, **{SECTION_KEY: "Your own set", "prb_format": "table",
                           "prb_task": "word tags"})
    at.text_area(key=TEXT_KEY).set_value("the cat sat\tDET NOUN VERB\na dog\tDET\nmy hat\tX\n"
                                         ).run()
    assert_clean(at)
    warning = " ".join(texts(at, "warning"))
    assert "Line `2`\\: words\\: `2`, tags\\: `1`" in warning   # markdown-escaped


def test_two_models_and_a_refused_model_b():
    at = settle(open_app(PAGE, prb_set="tense", prb_lang="en", prb_model="**not** a model",
                         **{SECTION_KEY: "Two models"}))
    assert_clean(at)
    assert any("**not** a model" in e or "\\*\\*not" in e for e in texts(at, "error"))
    spec = figure(at, "probes_two_models")
    assert "with random weights" in json.dumps(spec)
