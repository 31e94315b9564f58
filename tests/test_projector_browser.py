"""Every page as a projector shows it: Chinese and English at 1024x768, English at 1400x900.

For each page: no exception box; no number cut off (a metric value or a table cell whose text is
wider than its box); every paragraph of explanation (widget and expander labels aside) at least
16 px and at least 4.5:1 against white; the title in the page's language; a screenshot in
tests/artifacts/ for the README. Each page is loaded once, in Chinese at 1024x768; then the
sidebar's switch turns it to English, seen at 1024x768 and, its window enlarged as a teacher moving
from the projector to a laptop screen would, at 1400x900. Chinese is not looked at again at
1400x900: a wider window only widens the boxes a number could be cut off in, and the size and
contrast of text do not change with it.

At 1024x768 (in Chinese), every tab of every page and every lesson step are looked at as a
person sees them (SEEN_JS): code output wider than its box (a scrolled printout hides its right
side), a formula wider than its box, a data grid whose columns run past its visible width, a
diagram label drawn under 12 px, chart labels that overlap one another.
"""

from __future__ import annotations

import pytest

from core.vocabulary import is_cjk
from frame.page_list import HOME, available_pages
from pages.lesson.figures import LESSONS
from tests.conftest import ARTIFACTS, open_in_browser, switch_language, wait_for_app

pytestmark = pytest.mark.browser

PAGES = [HOME, *available_pages()]

# Text boxes whose content is wider than the box (cut off with an ellipsis or hidden), and every
# explanation paragraph's size and contrast on white (WCAG relative luminance).
PROBE_JS = """() => {
  const cut = [...document.querySelectorAll(
      "[data-testid='stMetricValue'] div, [data-testid='stMetricValue'], "
      + "[data-testid='stMetricLabel'] p")]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText);
  const lum = c => {
    const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(v => {
      v = v / 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const faint = [...document.querySelectorAll(
      "[data-testid='stMain'] [data-testid='stMarkdownContainer'] p")]
    .filter(p => p.innerText.trim().length > 40
                 && !p.closest("[data-testid='stWidgetLabel'], summary"))
    .map(p => { const s = getComputedStyle(p);
      const alpha = parseFloat(s.opacity);
      return {text: p.innerText.slice(0, 60), px: parseFloat(s.fontSize),
              ratio: 1.05 / (lum(s.color) + 0.05), alpha}; })
    .filter(p => p.px < 16 || p.ratio < 4.5 || p.alpha < 1);
  // What the controls show as chosen: after a language switch, in the new language.
  const chosen = [...document.querySelectorAll("[data-testid='stMain'] input")].map(i => i.value)
    .concat([...document.querySelectorAll(
        "[data-testid='stMain'] [data-testid='stMultiSelect'] [data-baseweb='tag']")]
      .map(e => e.innerText));
  return {cut, faint, chosen, title: (document.querySelector('h1') || {}).innerText || ''};
}"""


def has_cjk(text: str) -> bool:
    return any(map(is_cjk, text))


def probe(page, spec, lang: str, width: int, height: int) -> None:
    """The page as drawn at ``width`` x ``height``: its screenshot, then no exception box, no
    number cut off, no faint or small explanation, the title in the page's language, the menus."""
    page.screenshot(path=str(ARTIFACTS / f"{spec.folder}-{lang}-{width}x{height}.png"),
                    full_page=False)
    assert page.locator("[data-testid='stException']").count() == 0
    found = page.evaluate(PROBE_JS)
    assert not found["cut"], f"cut off at {width}px: {found['cut']}"
    assert not found["faint"], f"faint or small explanation text: {found['faint'][:3]}"
    title = found["title"]
    assert has_cjk(title) == (lang == "zh"), title
    if lang == "en":   # the sentences are English, so a Chinese choice is one left untranslated
        assert not [c for c in found["chosen"] if has_cjk(c)], found["chosen"]
    nav = page.locator("[data-testid='stTopNavLink'], [data-testid='stTopNavSection']")
    assert nav.count() >= 2


# What a person at 1024x768 cannot read, each as a short description of the element.
SEEN_JS = r"""() => {
  const main = document.querySelector("[data-testid='stMain']");
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const wide = (sel, what) => [...main.querySelectorAll(sel)].filter(shown)
    .filter(e => e.scrollWidth > e.clientWidth + 2)
    .map(e => `${what} ${e.scrollWidth}>${e.clientWidth}px: ${e.innerText.slice(0, 50)}`);
  const found = [
    ...wide("[data-testid='stCode'] pre", "code"),
    ...wide(".katex-display, [data-testid='stMarkdownContainer'] .katex", "formula"),
    ...wide("[data-testid='stDataFrame'] .dvn-scroller", "grid"),
    ...wide("[data-testid='stHtml'] .tab-wrap", "table"),
  ];
  // A static table scrolls inside its own box: its table wider than the box is cut off.
  for (const box of main.querySelectorAll("[data-testid='stTable']")) {
    const table = box.querySelector("table");
    if (table && shown(box) && table.getBoundingClientRect().width
        > box.getBoundingClientRect().width + 2)
      found.push(`table ${Math.round(table.getBoundingClientRect().width)}>`
                 + `${Math.round(box.getBoundingClientRect().width)}px: `
                 + table.innerText.slice(0, 50));
  }
  for (const svg of main.querySelectorAll("[data-testid='stGraphVizChart'] svg")) {
    const small = [...svg.querySelectorAll("text")].filter(shown)
      .map(t => [t.textContent, t.getBoundingClientRect().height])
      .filter(([, h]) => h < 12);
    if (small.length) found.push(`diagram labels under 12px: ` + small.slice(0, 3)
      .map(([t, h]) => `${t} (${h.toFixed(1)}px)`).join(", "));
  }
  // The treemap picture's names: at least 12 px, and whole inside their rectangles.
  for (const span of main.querySelectorAll(".tm-box > span")) {
    if (!span.textContent.trim() || !shown(span)) continue;
    const box = span.parentElement, px = parseFloat(getComputedStyle(span).fontSize);
    if (px < 12 || span.scrollWidth > box.clientWidth + 1
        || span.offsetHeight > box.clientHeight + 1)
      found.push(`treemap name cut off or small: ${span.textContent.slice(0, 30)} (${px}px)`);
  }
  // Chart labels: ticks, text on points and cells, annotations, per chart.
  for (const chart of main.querySelectorAll(".js-plotly-plot")) {
    const labels = [...chart.querySelectorAll(
        ".xtick text, .ytick text, .textpoint text, .annotation-text, .legendtext")]
      .filter(shown).filter(t => t.textContent.trim())
      // Plotly spaces rotated tick labels itself; their upright boxes overlap by design.
      .filter(t => !/rotate\(\s*-?[1-9]/.test(t.getAttribute("transform") || ""))
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    const hits = [];
    for (let i = 0; i < labels.length && hits.length < 3; i++)
      for (let j = i + 1; j < labels.length; j++) {
        const [ta, a] = labels[i], [tb, b] = labels[j];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        const small = Math.min(a.width * a.height, b.width * b.height);
        if (w > 0 && h > 0 && w * h > 0.25 * small) { hits.push(`${ta} / ${tb}`); break; }
      }
    if (hits.length) found.push("overlapping chart labels: " + hits.join(", "));
  }
  return found;
}"""


def look(page, name: str) -> list[str]:
    """The screenshot for a person to look at, and what SEEN_JS finds cut off or unreadable."""
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)
    assert page.locator("[data-testid='stException']").count() == 0, name
    return [f"{name}: {problem}" for problem in page.evaluate(SEEN_JS)]


TAB = "[data-testid='stMain'] [data-testid='stTab']"

# Every chart, diagram and picture of the open tab drawn: a diagram not drawn yet has no label to
# measure, so a fixed wait let its small labels pass when the machine was busy.
DRAWN_JS = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const all = sel => [...main.querySelectorAll(sel)];
  return all("[data-testid='stGraphVizChart']").every(c => c.querySelector("svg text"))
    && all("[data-testid='stPlotlyChart']").every(c => c.querySelector(".main-svg"))
    && all("img").every(i => i.complete);
}"""


def wait_drawn(page) -> None:
    """Until every chart, diagram and picture of the open tab is drawn (DRAWN_JS)."""
    page.wait_for_function(DRAWN_JS, timeout=60_000)


# Every tab is walked in Chinese only: its labels and explanations are the wider of the two
# languages, and walking every tab twice would add minutes to the suite (English passed the same
# walk when added).
WALK_LANGUAGES = ["zh"]


def walk_tabs(page, spec, lang: str) -> list[str]:
    """Each tab clicked in turn, as a teacher walks the page before class; back to the first."""
    problems: list[str] = []
    tabs = page.locator(TAB)
    count = tabs.count()
    for i in range(max(1, count)):
        if i:
            tabs.nth(i).click()
            wait_for_app(page)
        wait_drawn(page)
        problems += look(page, f"{spec.folder}-{lang}-tab{i}-1024x768")
    if count > 1:
        tabs.nth(0).click()
        wait_for_app(page)
    return problems


def drawn_at(page, width: int, height: int) -> None:
    """The window resized, and every chart drawn again at the new width."""
    page.set_viewport_size({"width": width, "height": height})
    wait_drawn(page)
    page.wait_for_timeout(500)   # charts redraw at the new width after the resize event


# A page's own options for the walk: Compare's layer map over the sidebar's two sentences is
# drawn within the page's first run (over the built-in corpus it is a background job).
PAGE_QUERY = {"compare": "&cmp_corpus=A+%2B+B",
              "probes": "&prb_set=tense"}   # the quickest built-in probe


@pytest.mark.parametrize("spec", PAGES, ids=lambda s: s.folder)
def test_page_on_a_projector(server, browser, spec):
    """Opened in Chinese at 1024x768 (every tab walked there); then switched to English with the
    sidebar's language switch, as a teacher would, and seen at 1024x768 and, the window enlarged,
    at 1400x900. One page load for both languages and both sizes: a load costs the browser about
    twice what the language switch does."""
    url = f"{server}/{spec.url_path}?a=What+is+your+name%3F&b=My+name+is+BERT.&lang=zh" \
        + PAGE_QUERY.get(spec.folder, "")
    page = open_in_browser(browser, url, width=1024, height=768)
    problems: list[str] = []
    try:
        wait_drawn(page)
        probe(page, spec, "zh", 1024, 768)
        if spec.folder != "lesson":
            problems += walk_tabs(page, spec, "zh")
        switch_language(page, "en")
        wait_drawn(page)
        probe(page, spec, "en", 1024, 768)
        drawn_at(page, 1400, 900)
        probe(page, spec, "en", 1400, 900)
    finally:
        page.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", WALK_LANGUAGES)
@pytest.mark.parametrize("lesson", list(LESSONS))
def test_every_lesson_step_at_1024(server, browser, lesson, lang):
    """Each step in turn with Next, then presenter mode's first screen: the step's output and
    its question visible without scrolling, the choices as large as the question."""
    page = open_in_browser(browser, f"{server}/lesson?lesson={lesson}&lang={lang}",
                           width=1024, height=768)
    problems: list[str] = []
    try:
        for step in range(1, len(LESSONS[lesson][1]) + 1):
            if step > 1:
                page.locator("[data-testid='stMain'] button").filter(
                    has=page.locator("[data-testid='stIconMaterial']",
                                     has_text="arrow_forward")).first.click()
                wait_for_app(page)
            problems += look(page, f"lesson-{lesson}-{lang}-step{step}-1024x768")
    finally:
        page.close()
    page = open_in_browser(browser, f"{server}/lesson?lesson={lesson}&lang={lang}&present=1",
                           width=1024, height=768)
    try:
        problems += look(page, f"lesson-{lesson}-{lang}-present-1024x768")
        seen = page.evaluate(PRESENT_JS)
        assert seen["choice_px"] >= seen["question_px"] - 0.5, seen
        assert seen["output_bottom"] <= 768 and seen["question_top"] <= 768, seen
    finally:
        page.close()
    assert not problems, "\n".join(problems)


# Presenter mode: the question's and the answer choices' font sizes, and where the step's
# output ends and the question starts (both must be on the first screen).
PRESENT_JS = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  const radio = main.querySelector("[data-testid='stRadio']");
  const box = radio.closest("[data-testid='stVerticalBlock']");
  const question = box.querySelector("[data-testid='stMarkdownContainer'] p");
  const choice = radio.querySelector("label [data-testid='stMarkdownContainer'] p")
                 || radio.querySelector("label");
  const codes = [...main.querySelectorAll("[data-testid='stCode']")];
  const output = codes[codes.length - 1];
  return {question_px: parseFloat(getComputedStyle(question).fontSize),
          choice_px: parseFloat(getComputedStyle(choice).fontSize),
          output_bottom: output.getBoundingClientRect().bottom,
          question_top: question.getBoundingClientRect().top};
}"""


def test_a_tab_named_in_the_other_language_stays_open(server, browser):
    """?lang=zh with the English tab name opens that tab, and it stays open on the next click
    and when the reader switches the language."""
    page = open_in_browser(browser, f"{server}/stages?st_section=Printouts&lang=zh",
                           width=1024, height=768)
    try:
        selected = page.locator(TAB + "[aria-selected='true']")
        assert selected.inner_text().strip() == "打印输出"
        page.locator("[data-testid='stMain'] [data-testid='stRadio'] label").nth(1).click()
        wait_for_app(page)
        assert selected.inner_text().strip() == "打印输出"
        # The language switched with the tabs drawn: the same tab, now in English (the page
        # wrote the tab's name to the link, which Streamlit refuses once the link is bound to
        # the tabs: an error box instead of the page).
        switch_language(page, "en")
        assert page.locator("[data-testid='stException']").count() == 0
        assert selected.inner_text().strip() == "Printouts"
    finally:
        page.close()


# The [MASK] by layer table's smallest text, its caption, and the smallest chart label.
LENS_JS = """() => {
  const table = document.querySelector("[data-table='pre_lens']");
  const px = sel => Math.min(...[...document.querySelectorAll(sel)]
    .filter(e => e.textContent.trim()).map(e => parseFloat(getComputedStyle(e).fontSize)));
  return {rows: table.querySelectorAll("tbody tr").length,
          caption: table.querySelector("caption").innerText,
          table_px: px("[data-table='pre_lens'] :is(th, td, small, caption)"),
          chart_px: px("[data-testid='stMain'] .js-plotly-plot :is(.xtick, .ytick) text")};
}"""


def test_mask_by_layer_on_a_projector(browser, bundle, tmp_path):
    """The Pretraining page's [MASK] by layer tab with checkpoints that have an MLM head (the
    shared server's model has none: the walk above sees its notice only), at 1024x768: in
    Chinese on a Chinese-reading checkpoint with two [MASK]s, in English on an English one, the
    whole head and the decoder alone; nothing cut off, no label under 12 px, the model named."""
    from urllib.parse import urlencode

    from tests.conftest import start_server, stop_server
    from tests.pretraining_folders import make_chinese_checkpoint, make_pretraining_folder

    make_pretraining_folder(tmp_path / "tiny-bert", bundle.tokenizer)
    make_chinese_checkpoint(tmp_path / "tiny-chinese", layers=4)
    proc, url = start_server(env={"BERT_EXPLORER_MODEL_DIRS": str(tmp_path)})
    problems: list[str] = []
    try:
        for lang, model, text, layers in (
                ("zh", "tiny-chinese", "今天天气真[MASK]。我[MASK]你。", 4),
                ("en", "tiny-bert", "The capital of France is [MASK].", 2)):
            for decoder in ("false", "true"):
                query = urlencode({"model": str(tmp_path / model), "lang": lang,
                                   "pre_section": "[MASK] by layer", "pre_text": text,
                                   "pre_lens_decoder": decoder})
                page = open_in_browser(browser, f"{url}/pretraining?{query}", 1024, 768)
                try:
                    wait_drawn(page)
                    page.locator("[data-table='pre_lens']").scroll_into_view_if_needed()
                    name = f"pretraining-lens-{lang}-decoder-{decoder}-1024x768"
                    problems += look(page, name)
                    seen = page.evaluate(LENS_JS)
                    assert seen["rows"] == layers + 1, seen
                    assert model in seen["caption"], seen
                    assert seen["table_px"] >= 12 and seen["chart_px"] >= 12, (name, seen)
                finally:
                    page.close()
    finally:
        stop_server(proc)
    assert not problems, "\n".join(problems)
