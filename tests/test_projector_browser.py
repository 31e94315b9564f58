"""Every page as a projector shows it: 1024x768 and 1400x900, in English and in Chinese.

For each page: no exception box; no number cut off (a metric value or a table cell whose text is
wider than its box); every paragraph of explanation (widget and expander labels aside) at least
16 px and at least 4.5:1 against white; the title in the page's language; a screenshot in
tests/artifacts/ for the README.
"""

from __future__ import annotations

import pytest

from frame.page_list import HOME, available_pages
from tests.conftest import ARTIFACTS, open_in_browser

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
  return {cut, faint, title: (document.querySelector('h1') || {}).innerText || ''};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(1024, 768), (1400, 900)], ids=["1024x768", "1400x900"])
@pytest.mark.parametrize("spec", PAGES, ids=lambda s: s.folder)
def test_page_on_a_projector(server, browser, spec, size, lang):
    width, height = size
    url = f"{server}/{spec.url_path}?a=What+is+your+name%3F&b=My+name+is+BERT.&lang={lang}"
    page = open_in_browser(browser, url, width=width, height=height)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{spec.folder}-{lang}-{width}x{height}.png"),
                        full_page=False)
        assert page.locator("[data-testid='stException']").count() == 0
        found = page.evaluate(PROBE_JS)
        assert not found["cut"], f"cut off at {width}px: {found['cut']}"
        assert not found["faint"], f"faint or small explanation text: {found['faint'][:3]}"
        title = found["title"]
        has_cjk = any("\u4e00" <= ch <= "\u9fff" for ch in title)
        assert has_cjk == (lang == "zh"), title
        nav = page.locator("[data-testid='stTopNavLink'], [data-testid='stTopNavSection']")
        assert nav.count() >= 2
    finally:
        page.close()
