"""The Pairs page: AppTest runs checked against the core's numbers, the job that compares a list,
and one Chromium look at both sections with a bad list, at 1024x768.

Each test opens the section it checks through the URL (``?pr_section=<tab label>``), as a
shared link would.
"""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import compare_pairs, pair_contributions
from core.similarity.pair_examples import ONE_PAIR, SCORED
from core.similarity.pair_lists import read_text
from pages.pairs import cache as pairs_cache
from tests.conftest import (
    ARTIFACTS,
    _TableParser,
    assert_clean,
    bar_tables,
    image_heatmaps,
    open_app,
    open_in_browser,
    wait_for_app,
)
from tests.switcher import switchers

PAGE = "pages/pairs/page.py"
NEGATION = ONE_PAIR[0][1:]
BAD_LIST = "\n".join([
    "A man is playing the guitar.\tSomeone is strumming a guitar.\t4.6",   # 1
    "only one column",                                                    # 2
    "a\tb\t3\textra",                                                     # 3
    "\tempty A\t2",                                                       # 4
    "<script>alert(1)</script>\t**bold** [link](http://x)\tfive",         # 5
    "<img src=x onerror=alert(1)>\t=SUM(A1)\t1",                          # 6
    "The cat sleeps.\tInterest rates rose.\t0",                           # 7
])


def pictures(at) -> dict:
    """Image heatmaps by key: the page's own and the one the layer slider shows (every layer's
    picture is sent, the browser switches between them)."""
    shown = {k: v for s in switchers(at).values() for k, v in s.heatmaps().items()}
    return {**image_heatmaps(at), **shown}


def figures(at) -> dict[str, dict]:
    return {json.loads(c.proto.spec)["layout"]["meta"]: json.loads(c.proto.spec)
            for c in at.get("plotly_chart")}


def curve_points(at) -> tuple[list[tuple[int, float, float]], int]:
    """The cosine-by-layer picture's points (layer, value, top in % of the plot) and the layer
    it rings."""
    body = next(h.proto.body for h in at.get("html") if 'data-figure="pairs_curve"' in h.proto.body)
    points = [(int(k), float(v), float(t)) for k, v, t in re.findall(
        r'data-layer="(\d+)" data-value="([-\d.]+)" style="left:[\d.]+%;top:([-\d.]+)%', body)]
    return points, int(re.search(r'data-shown="(\d+)"', body).group(1))


def named_table(at, name: str) -> pd.DataFrame:
    """An HTML table the page sent (components.html_table), its cells as written."""
    body = next(h.proto.body for h in at.get("html") if f'data-table="{name}"' in h.proto.body)
    parser = _TableParser()
    parser.feed(body)
    (header, rows), = parser.tables
    return pd.DataFrame([r for r in rows if r], columns=header)


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def many(**query):
    return open_app(PAGE, pr_section="Many pairs", **query)


def results(at, timeout_s: float = 120.0):
    """Rerun until the list's job has finished and its table is drawn: a list that takes longer
    than the run's short wait shows a progress bar, polled by a fragment AppTest does not tick."""
    deadline = time.monotonic() + timeout_s
    while not at.dataframe and time.monotonic() < deadline:
        assert_clean(at)
        assert at.get("progress"), "neither a table nor a progress bar"
        time.sleep(0.5)
        at.run()
    return at


def test_one_pair_shows_the_core_figures(bundle):
    at = open_app(PAGE, a=NEGATION[0], b=NEGATION[1])
    assert_clean(at)
    expected = pair_contributions(bundle, *NEGATION)
    assert metrics(at)["cosine at layer 6"] == f"{expected.cosine:.3f}"
    picture = pictures(at)["pairs_matrix"]
    assert picture.rows == [f"{i} {t}" for i, t in enumerate(expected.tokens_a)]
    cells = np.array([[float(v) for v in row] for row in picture.cells])   # written in the cells
    np.testing.assert_allclose(cells, expected.matrix, atol=5e-4)
    assert "all-MiniLM-L6-v2" in picture.title
    assert any("do not" in i.value for i in at.info)          # what to notice in this example
    points, shown = curve_points(at)
    np.testing.assert_allclose([v for _k, v, _top in points], expected.curve, atol=1e-6)
    assert [k for k, _v, _top in points] == list(range(len(expected.curve)))
    assert shown == expected.layer == 6
    # Drawn where each value belongs: height on the plot a straight, falling line of the value.
    values, tops = np.array([v for _k, v, _t in points]), np.array([t for *_x, t in points])
    slope, intercept = np.polyfit(values, tops, 1)
    assert slope < 0 and np.allclose(tops, slope * values + intercept, atol=0.01)
    bars = bar_tables(at)
    for tokens, shares, effect, side in ((expected.tokens_a, expected.shares_a,
                                          expected.effect_a, "a"),
                                         (expected.tokens_b, expected.shares_b,
                                          expected.effect_b, "b")):
        drawn = bars[f"pairs_shares_{side}"]
        assert list(drawn["token"]) == [f"{i} {t}" for i, t in enumerate(tokens)]
        np.testing.assert_allclose(drawn["share of the cosine"].astype(float), shares, atol=5e-5)
        np.testing.assert_allclose(drawn["drop when left out"].astype(float), effect, atol=5e-5)
    top = named_table(at, "pairs_top")
    assert list(top.columns) == ["A", "B", "term", "share"] and len(top) == 10
    i, j, term = expected.top(1)[0]
    assert list(top.iloc[0]) == [f"{i} {expected.tokens_a[i]}", f"{j} {expected.tokens_b[j]}",
                                 f"{term:.4f}", f"{term / expected.cosine:.2%}"]


def test_layer_from_the_link_and_exact_values(bundle):
    at = open_app(PAGE, a=NEGATION[0], b=NEGATION[1], pr_layer="0", pr_exact="true")
    assert_clean(at)
    expected = pair_contributions(bundle, *NEGATION, layer=0)
    assert metrics(at)["cosine at embedding output (LayerNorm)"] == f"{expected.cosine:.3f}"
    assert curve_points(at)[1] == 0                              # the layer ringed on the curve
    spec = figures(at)["pairs_matrix"]
    assert spec["data"][0]["type"] == "heatmap"
    for bad in ("99", "-3", "abc"):   # a layer no model has: the page says so and draws
        at = open_app(PAGE, a=NEGATION[0], b=NEGATION[1], pr_layer=bad)
        assert_clean(at)
        assert any("the layers are `0` to `6`" in i.value for i in at.info), bad
        assert "pairs_matrix" in pictures(at)


def test_every_layer_picture_is_sent_and_the_link_opens_on_its_layer(bundle):
    """The layer slider switches in the browser: each layer's picture is core's split of the
    cosine at that layer (written in its cells), and the page opens on the link's layer, its
    numbers that layer's; a move is reported, to redraw them."""
    at = open_app(PAGE, a=NEGATION[0], b=NEGATION[1], pr_layer="2")
    assert_clean(at)
    layers = switchers(at)["pr_layer"]
    assert layers.names == [str(k) for k in range(7)] and layers.value == "2" and layers.report
    for k in range(7):
        expected = pair_contributions(bundle, *NEGATION, layer=k)
        picture = layers.heatmaps(k)["pairs_matrix"]
        cells = np.array([[float(v) for v in row] for row in picture.cells])
        np.testing.assert_allclose(cells, expected.matrix, atol=5e-4)
    expected = pair_contributions(bundle, *NEGATION, layer=2)
    assert metrics(at)["cosine at layer 2"] == f"{expected.cosine:.3f}"
    assert curve_points(at)[1] == 2


def test_one_pair_without_b_and_the_example_buttons():
    at = open_app(PAGE, a="Only one sentence")
    assert_clean(at)
    assert any("needs sentence B" in i.value for i in at.info)
    at.button(key="pr_example_chinese").click().run()
    assert_clean(at)
    assert at.session_state["b"] == ONE_PAIR[-1][2]
    assert any("[UNK]" in w.value for w in at.warning)        # how many tokens are [UNK]


def test_chinese_interface():
    at = open_app(PAGE, lang="zh", a=NEGATION[0], b=NEGATION[1])
    assert_clean(at)
    at = results(open_app(PAGE, lang="zh", pr_section="多组句子", pr_list="examples"))
    assert_clean(at)
    assert len(at.dataframe[0].value) == len(SCORED)


def test_the_example_set_against_scipy(bundle):
    at = results(many(pr_list="examples"))
    assert_clean(at)
    table = at.dataframe[0].value
    assert len(table) == len(SCORED) and list(table.columns[:5]) == ["line", "a", "b", "score",
                                                                     "cosine"]
    expected = compare_pairs(bundle, [(a, b) for a, b, _ in SCORED])
    np.testing.assert_allclose(table["cosine"], expected["cosine"], atol=1e-6)
    rho = stats.spearmanr(table["cosine"], [s for _, _, s in SCORED]).statistic
    assert metrics(at)["Spearman ρ"] == f"{rho:.3f}"
    assert "pairs_scatter" in figures(at)
    assert "written for this explorer" in " ".join(m.value for m in at.markdown)


def test_a_bad_list_names_its_lines_and_compares_the_rest():
    at = many()
    results(at.text_area(key="pr_text").input(BAD_LIST).run())
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "Skipped 1 line with missing fields: 2. " in warnings
    assert "Skipped 1 line with an empty sentence A or B: 4. " in warnings
    assert "Skipped 1 line whose score is not a number: 5. " in warnings
    assert "quotation marks" not in warnings      # no comma advice for a tab-separated list
    info = " ".join(i.value for i in at.info)
    assert "1 line holds more fields than most lines (3; 1 more): 3. " in info
    assert "A tab inside a sentence also makes an extra field" in info
    table = at.dataframe[0].value
    assert table["line"].tolist() == [1, 3, 6, 7]
    assert table["a"].iloc[2] == "<img src=x onerror=alert(1)>"   # kept as text
    assert "not the whole list's figures" in " ".join(w.value for w in at.warning)
    at.number_input(key="pr_row").set_value(6).run()                # opens line 6
    assert_clean(at)
    assert "pairs_matrix" in pictures(at)


def test_refused_lists():
    at = many()
    at.text_area(key="pr_text").input("no pair here\n\n").run()
    assert_clean(at)
    assert any("No line holds a pair" in e.value for e in at.error)
    at.text_area(key="pr_text").input("a,b\n" * 2_600_000).run()     # 10.4 MB
    assert_clean(at)
    assert any("at most 10 MB" in e.value for e in at.error)


def test_the_job_is_shared_and_equal_to_compare_pairs(bundle):
    """The list runs on the one executor (serving.jobs), shared by the same pairs however they
    were typed, and its table is compare_pairs' own."""
    parsed = read_text("\n".join(f"pair {i}\tanother sentence {i % 7}\t{i % 5}"
                                 for i in range(150)))
    job = pairs_cache.get_job(bundle.name, parsed)
    assert pairs_cache.get_job(bundle.name, read_text(
        "\n".join(f"pair {i},another sentence {i % 7},{i % 5}" for i in range(150)))) is job
    frame = job.result(120)
    assert job.progress.done == job.progress.total == 157    # 150 + 7 distinct sentences
    expected = compare_pairs(bundle, parsed.pairs)
    pd.testing.assert_series_equal(frame["cosine"], expected["cosine"])
    assert frame["line"].tolist() == list(range(1, 151))
    assert pairs_cache.get_compared(bundle.name, parsed) is frame


@pytest.mark.browser
def test_pairs_in_chromium_at_1024(server, browser):
    """Both sections with a bad list, as a projector shows them: no exception box, the text a
    user typed shown as text (no alert ran)."""
    page = open_in_browser(browser, f"{server}/pairs?a=I+love+this+movie.&b=I+do+not+love+this"
                                    "+movie.", width=1024, height=768)
    assert page.locator("[data-testid='stException']").count() == 0
    page.wait_for_selector("[data-figure='pairs_matrix'] img, [data-figure='pairs_matrix'] td",
                           state="attached")
    page.screenshot(path=str(ARTIFACTS / "pairs-one-1024x768.png"), full_page=True)
    page.get_by_role("tab", name="Many pairs").click()
    wait_for_app(page)
    box = page.locator("textarea[aria-label^='Pairs, one a line']")
    box.fill(BAD_LIST)
    box.press("Control+Enter")
    page.wait_for_selector("text=with missing fields", timeout=60_000)
    wait_for_app(page)
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert not page.dialogs
    page.screenshot(path=str(ARTIFACTS / "pairs-many-1024x768.png"), full_page=True)
    # The other tab and back: the list is still there, and so are its results.
    page.get_by_role("tab", name="One pair").click()
    wait_for_app(page)
    page.get_by_role("tab", name="Many pairs").click()
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
    assert "only one column" in box.input_value()
    # The same list as a UTF-16 file (with its BOM) uploaded: the file is compared instead.
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "pairs.tsv", "mimeType": "text/tab-separated-values",
                "buffer": BAD_LIST.replace("\t=SUM(A1)", "\tplus").encode("utf-16")}])
    page.wait_for_selector("text=The uploaded file is compared", timeout=60_000)
    wait_for_app(page)
    assert page.locator("text=with missing fields").count() >= 1
    assert page.locator("[data-testid='stException']").count() == 0
    assert not page.dialogs
    # The benchmark's test split as it ships: 7 fields, 9 on 284 lines, every pair read; the
    # pickers show the proposal, one line names the longer lines, the switch skips them.
    from tests.test_sentence_files import benchmark_bytes

    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "sts-test.csv", "mimeType": "text/csv",
                "buffer": benchmark_bytes(sts_shaped())}])
    page.wait_for_selector("text=Lines read: 1,379; pairs used: 1,379; lines skipped: 0",
                           timeout=60_000)
    wait_for_app(page)
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
    page.wait_for_selector("text=284 lines hold more fields than most lines", timeout=60_000)
    assert page.locator("[data-testid='stSelectbox']").count() >= 4     # A, B, score, order
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTIFACTS / "pairs-file-1024x768.png"), full_page=True)
    page.get_by_text("Skip the lines with extra fields").click()
    page.wait_for_selector("text=Skipped 284 lines with more fields than the columns",
                           timeout=60_000)
    wait_for_app(page)
    assert "pr_skip_extra=true" in page.url
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_the_similarity_page_links_to_the_same_pair():
    at = open_app("pages/similarity/page.py", a=NEGATION[0], b=NEGATION[1],
                  sim_section="Sentences")
    assert_clean(at)
    link = next(link.proto for link in at.get("page_link") if link.proto.page == "pairs")
    assert link.query_string == "pr_section=One+pair"
    # The router carries both sentences into the link it opens; the Pairs page reads them.
    at = open_app(PAGE, a=NEGATION[0], b=NEGATION[1], pr_section="One pair")
    assert_clean(at)
    assert "pairs_matrix" in pictures(at)


def upload(at, name: str, data: bytes):
    at.file_uploader[0].set_value((name, data, "text/plain")).run()
    return results(at)


def test_an_uploaded_benchmark_file_keeps_every_sentence(bundle):
    """A benchmark's test split as distributed (seven tab-separated columns, no header, quotes
    in the sentences): every pair read, each sentence the file's cell, the Spearman on screen
    equal to scipy's on compare_pairs of those cells."""
    from tests.test_sentence_files import benchmark_bytes, benchmark_rows

    rows = benchmark_rows(40)
    at = upload(many(), "sts-test.csv", benchmark_bytes(rows))
    assert_clean(at)
    assert at.selectbox(key="pr_col_a").value == 5 and at.selectbox(key="pr_col_b").value == 6
    assert at.selectbox(key="pr_col_score").value == 4
    summary = " ".join(m.value for m in at.markdown)
    assert "Lines read: 40; pairs used: 40; lines skipped: 0" in summary
    assert "separated by tabs; a quotation mark is part of the sentence" in summary
    table = at.dataframe[0].value
    assert table["a"].tolist() == [r[5] for r in rows]
    assert table["b"].tolist() == [r[6] for r in rows]
    expected = compare_pairs(bundle, [(r[5], r[6]) for r in rows])
    rho = stats.spearmanr(expected["cosine"], [float(r[4]) for r in rows]).statistic
    assert metrics(at)["Spearman ρ"] == f"{rho:.3f}"
    # No score column: the pairs without scores.
    at.selectbox(key="pr_col_score").set_value(-1).run()
    results(at)
    assert_clean(at)
    assert "Spearman ρ" not in metrics(at)
    # The choice from a link (the pickers are bound to it): sentence B from column 2.
    at = upload(many(pr_col_b="2", pr_col_score="none"), "sts-test.csv", benchmark_bytes(rows))
    assert_clean(at)
    assert at.selectbox(key="pr_col_b").value == 1 and at.selectbox(key="pr_col_score").value == -1
    assert at.dataframe[0].value["b"].tolist() == [r[1] for r in rows]


def test_a_chinese_file_with_a_header_and_labels():
    text = "编号\t句子1\t句子2\t分数\n" + "\n".join(
        f"{i}\t我喜欢这部电影{i}。\t{'我很喜欢这部电影' if i % 2 else '今天下雨了'}{i}。\t{i % 2}"
        for i in range(12))
    at = upload(open_app(PAGE, lang="zh", pr_section="多组句子"), "zh.tsv", text.encode("gb18030"))
    assert_clean(at)
    assert at.selectbox(key="pr_col_a").value == 1 and at.selectbox(key="pr_col_score").value == 3
    assert any("GB18030" in w.value for w in at.warning)       # not UTF-8: said
    table = at.dataframe[0].value
    assert table["a"].iloc[0] == "我喜欢这部电影0。" and len(table) == 12
    assert "ROC AUC" in metrics(at)


def test_bad_files_get_a_message():
    at = many()
    for name, data, words in (
            ("book.csv", b"PK\x03\x04" + b"\x00" * 40 + b"[Content_Types].xml xl/", "Excel"),
            ("x.parquet", b"sentence1,sentence2\n", "not a Parquet file"),
            ("h.tsv", b"sentence1\tsentence2\tscore\n", "only its header line")):
        at.file_uploader[0].set_value((name, data, "text/plain")).run()
        assert_clean(at)
        assert any(words in e.value for e in at.error), name


def test_the_table_pages_and_sorts_on_the_server():
    """Only a page of rows reaches the browser; the order and the page are the link's."""
    text = "\n".join(f"sentence number {i} about a topic\tanother one {i % 17} here\t{i % 6}"
                     for i in range(230))
    at = many()
    results(at.text_area(key="pr_text").input(text).run())
    assert_clean(at)
    shown = at.dataframe[0].value
    assert len(shown) == 100 and shown["line"].tolist() == list(range(1, 101))
    at.selectbox(key="pr_sort").set_value("cosine_low").run()
    at.selectbox(key="pr_page").set_value(3).run()
    assert_clean(at)
    last = at.dataframe[0].value
    assert len(last) == 30
    full = pairs_cache.get_compared(at.session_state["model"] if "model" in at.session_state
                                    else "all-MiniLM-L6-v2", read_text(text))
    expected = full.sort_values("cosine", kind="stable")["line"].tolist()[200:]
    assert last["line"].tolist() == expected
    at.number_input(key="pr_row").set_value(int(expected[0])).run()     # opens that line
    assert_clean(at)
    assert "pairs_matrix" in pictures(at)


def test_a_cls_model_gets_its_own_figure_and_a_link_to_attribution(folder_models_allowed,
                                                                   bundle):
    """A model folder with [CLS] pooling (as bge-small has): One pair's headline and Many
    pairs' cosine are SentenceTransformer.encode's; the page says why no exact split exists and
    links the pair to Attribution's pair-cosine target on [CLS]."""
    from tests.test_pairs_recipe import st_cosines, write_folder

    folder = write_folder(folder_models_allowed / "tiny-cls", bundle.tokenizer, "cls")
    a, b = NEGATION
    expected = st_cosines(folder, [(a, b)])[0]
    at = open_app(PAGE, model=str(folder), a=a, b=b)
    assert_clean(at)
    assert metrics(at)["the model's figure"] == f"{expected:.3f}"
    assert any("No exact split into token pairs" in i.value for i in at.info)
    link = next(link.proto for link in at.get("page_link") if link.proto.page == "attribution")
    assert "att_target=pair_cosine" in link.query_string and "att_token=0" in link.query_string
    at = results(open_app(PAGE, model=str(folder), pr_section="Many pairs", pr_list="examples"))
    assert_clean(at)
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["cosine"].iloc[:5],
                               st_cosines(folder, [(x, y) for x, y, _ in SCORED[:5]]), atol=1e-5)


def sts_shaped(lines: int = 1379) -> list[list[str]]:
    """The STS benchmark's test file's shape (tests.test_sentence_files.sts_rows: 7 tab-separated
    fields, 9 on lines 626-879 and 1350-1379), its sentences drawn from 40 distinct ones so that
    compare_pairs encodes 40 sentences, not 2,758, and the test stays fast."""
    from tests.test_sentence_files import QUOTED, sts_rows

    pool = [*QUOTED, *(f"A sentence about topic {k}, with words." for k in range(29))]
    rows = sts_rows(lines)
    for k, row in enumerate(rows):
        row[5], row[6] = pool[k % 40], pool[(k * 7 + 3) % 40]
    return rows


def test_the_sts_benchmark_as_it_ships_reads_every_pair(bundle):
    """All 1,379 pairs of a file shaped as the benchmark ships (284 lines with two more fields),
    each sentence the file's cell, the Spearman on screen scipy's on compare_pairs of all the
    pairs; the switch skips the 284 lines and the figures say they are not the whole file's."""
    from tests.test_sentence_files import benchmark_bytes

    rows = sts_shaped()
    at = upload(many(), "sts-test.csv", benchmark_bytes(rows))
    assert_clean(at)
    assert "Lines read: 1,379; pairs used: 1,379; lines skipped: 0" in " ".join(
        m.value for m in at.markdown)
    info = " ".join(i.value for i in at.info)
    assert ("284 lines hold more fields than most lines (7; 2 more): 626–879, 1350–1379. Their "
            "picked columns come before the extra fields and are read.") in info
    assert "A tab inside a sentence also makes an extra field" in info
    assert not any("Skipped" in w.value or "whole" in w.value for w in at.warning)
    assert len(at.dataframe[0].value) == 100        # the table's first page
    frame = pairs_cache.get_compared(bundle.name, pairs_cache.get_pair_list(
        bundle.name, pairs_cache.ListSource(benchmark_bytes(rows), "sts-test.csv"), (5, 6, 4)))
    assert frame["a"].tolist() == [r[5] for r in rows]
    assert frame["b"].tolist() == [r[6] for r in rows]
    expected = compare_pairs(bundle, [(r[5], r[6]) for r in rows])
    np.testing.assert_allclose(frame["cosine"], expected["cosine"], atol=1e-6)
    rho = stats.spearmanr(expected["cosine"], [float(r[4]) for r in rows]).statistic
    assert metrics(at)["Spearman ρ"] == f"{rho:.3f}" and metrics(at)["scored pairs"] == "1,379"
    assert "over 1,379 scored pairs. Every line of the list is counted." in " ".join(
        m.value for m in at.markdown)
    # Skipped instead, as the switch asks.
    at.checkbox(key="pr_skip_extra").check().run()
    results(at)
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert ("Skipped 284 lines with more fields than the columns, as asked: 626–879, "
            "1350–1379.") in warnings
    assert "284 lines of the list were not read as pairs" in warnings
    kept = [r for r in rows if len(r) == 7]
    rho = stats.spearmanr(compare_pairs(bundle, [(r[5], r[6]) for r in kept])["cosine"],
                          [float(r[4]) for r in kept]).statistic
    assert metrics(at)["Spearman ρ"] == f"{rho:.3f}" and metrics(at)["scored pairs"] == "1,095"


def test_extra_fields_in_chinese_and_from_the_link():
    from tests.test_sentence_files import benchmark_bytes

    rows = sts_shaped(900)              # lines 626-879 with two more fields
    at = upload(open_app(PAGE, lang="zh", pr_section="多组句子"), "sts.tsv", benchmark_bytes(rows))
    assert_clean(at)
    info = " ".join(i.value for i in at.info)
    assert "254 行的字段多于大多数行（7 个；多 2 个）：626–879。所选的列都在多出的字段之前" in info
    at = upload(open_app(PAGE, lang="zh", pr_section="多组句子", pr_skip_extra="true"), "sts.tsv",
                benchmark_bytes(rows))
    assert_clean(at)
    assert at.checkbox(key="pr_skip_extra").value
    warnings = " ".join(w.value for w in at.warning)
    assert "按你的选择，跳过了 254 行字段多于列数的行：626–879。" in warnings
    assert "不代表整个列表" in warnings
    assert len(pairs_cache.get_compared("all-MiniLM-L6-v2", pairs_cache.get_pair_list(
        "all-MiniLM-L6-v2", pairs_cache.ListSource(benchmark_bytes(rows), "sts.tsv"), (5, 6, 4),
        True))) == 900 - 254


def test_a_pasted_csv_names_shifted_fields_and_open_quotes():
    text = "\n".join([
        '"A man, with a hat, plays.",Someone plays.,4.5',       # 1: quoted commas
        "An unquoted, comma here,B,3",                          # 2: shifted: "B" is no score
        '"An open quote,b,2',                                   # 3
        "The cat sleeps.,Interest rates rose.,0",              # 4
        "A dog runs.,A dog is running.,4",                     # 5
    ])
    at = many()
    results(at.text_area(key="pr_text").input(text).run())
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert ("Skipped 1 line whose fields are shifted: 2. It holds more fields than the columns"
            in warnings and "Put a sentence that holds a comma in quotation marks." in warnings)
    assert "Skipped 1 line with an open quote: 3. " in warnings
    table = at.dataframe[0].value
    assert table["line"].tolist() == [1, 4, 5] and table["a"].iloc[0] == "A man, with a hat, plays."


def test_every_reason_a_line_is_skipped_has_its_words():
    from components.skipped_lines import EXTRA_WHY, SEPARATOR_WORDS
    from core.sentence_files.reader import Reason
    from pages.pairs import list_reading as page

    assert set(Reason) == {*page.SKIPPED, Reason.HEADER, Reason.SHIFTED}
    assert set(page.SHIFTED) == set(EXTRA_WHY) == set(SEPARATOR_WORDS) == {"\t", ",", ";"}
