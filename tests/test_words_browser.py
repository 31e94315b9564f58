"""The views by word as a projector shows them: 1024x768, Chinese text, both languages. Nothing
cut off or unreadable (the projector test's own look), and every label of a by-word view at
least 12 px: chart ticks, the word boxes on Tokens, the importance table, Pairs' pictures and
tables."""

from __future__ import annotations

import pytest

from tests.conftest import open_in_browser, switch_language
from tests.test_projector_browser import look

pytestmark = pytest.mark.browser

# A: 我爱北京天安门. B: 他在天安门广场, whose longest word (天安门广场) is written
# upwards under Pairs' heatmap.
TEXTS = ("a=%E6%88%91%E7%88%B1%E5%8C%97%E4%BA%AC%E5%A4%A9%E5%AE%89%E9%97%A8"
         "&b=%E4%BB%96%E5%9C%A8%E5%A4%A9%E5%AE%89%E9%97%A8%E5%B9%BF%E5%9C%BA")
VIEWS = {
    "tokens": "tokens?tok_words=true",
    "encoder": "encoder?enc_section=Attention&enc_words=true",
    "atlas": "encoder?enc_section=Head+atlas&enc_words=true",
    "attribution": "attribution?att_words=true",
    "pairs": "pairs?pr_words=true",
    "pretraining": "pretraining?pre_wwm=true",
}

# The smallest font of the labels a by-word view draws, and how many there were.
SMALLEST_JS = r"""() => {
  const main = document.querySelector("[data-testid='stMain']");
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const labels = [...main.querySelectorAll(
      ".xtick text, .ytick text, .tok-word .w, .tok-word .t span, .tok-word small, "
      + ".att td, .att th, .hm-row, .hm-cols span, .tab td, .tab th, .bars td, .bars th, "
      + ".pc-yticks span, .pc-xticks span")].filter(shown).filter(e => e.textContent.trim());
  const px = labels.map(e => parseFloat(getComputedStyle(e).fontSize));
  return {n: labels.length, smallest: px.length ? Math.min(...px) : null,
          words: [...main.querySelectorAll(
            ".tok-word .w, .ytick text, .att td.tok, [data-table='pairs_top'] td, .hm-row")]
                   .map(e => e.textContent)};
}"""


# Word labels written upwards under a heatmap that run into its axis title below them.
INTO_AXIS_JS = r"""() => [...document.querySelectorAll("[data-figure]")].flatMap(fig => {
  const axis = fig.querySelector(".hm-axis");
  if (!axis) return [];
  const top = axis.getBoundingClientRect().top;
  return [...fig.querySelectorAll(".hm-word")]
    .filter(w => w.getBoundingClientRect().bottom > top + 1).map(w => w.textContent);
})"""


def check_view(page, view: str, lang: str) -> None:
    """The view as drawn now, in ``lang``: nothing cut off, labels at least 12 px, the words."""
    page.wait_for_timeout(500)   # charts drawn
    # Less an overflow the token view has too at 1024 px with the sidebar open: the Tokens
    # page's token table (565 px in a 533 px column, English).
    problems = [p for p in look(page, f"words-{view}-{lang}-1024x768")
                if not (view == "tokens" and "table" in p and "token_type_id" in p)]
    seen = page.evaluate(SMALLEST_JS)
    assert not problems, "\n".join(problems)
    assert page.evaluate(INTO_AXIS_JS) == []
    if view != "pretraining":
        assert seen["n"] > 0, seen
        assert seen["smallest"] >= 12, seen
    if view in ("tokens", "encoder", "attribution", "pairs"):
        assert any("天安门" in w for w in seen["words"]), seen["words"]


@pytest.mark.parametrize("view", list(VIEWS))
def test_by_word_views_at_1024(server, browser, view):
    """In English, then in Chinese with the sidebar's switch (one page load for both)."""
    page = open_in_browser(browser, f"{server}/{VIEWS[view]}&{TEXTS}", width=1024, height=768)
    try:
        check_view(page, view, "en")
        switch_language(page, "zh")
        check_view(page, view, "zh")
    finally:
        page.close()
