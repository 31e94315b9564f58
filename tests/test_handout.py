"""The lesson handout: one HTML file with every step's code, output, question and answer (and
the class's answers), everything inside it (no src or href leaving the file, no script), the
typed sentence shown as text; it opens in Chromium with the network off and prints."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from components.i18n import set_language
from core.lessons import run_cells
from pages.lesson.cache import lesson_cells
from pages.lesson.figures import LESSONS, lesson_handout
from pages.lesson.handout import handout_html
from serving.classpoll import Tally
from tests.conftest import ARTIFACTS

HOSTILE = "Teachers <script>alert(1)</script> & <img src=x onerror=alert(2)>"
LINK_ATTRIBUTES = {"src", "href", "srcset", "action", "formaction", "poster", "xlink:href",
                   "data", "background", "ping"}


class Audit(HTMLParser):
    """Every tag and every attribute that could fetch something, and the style text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[tuple[str, str, str]] = []
        self.style = ""
        self.text = ""
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in LINK_ATTRIBUTES or name.startswith("on"):
                self.links.append((tag, name, value or ""))

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data
        else:
            self.text += data


def build(bundle, lesson: str, lang: str = "en", with_class: bool = True) -> str:
    set_language(lang)
    try:
        outputs = run_cells(bundle, lesson_cells(lesson, HOSTILE))
        steps = LESSONS[lesson][1]
        tallies = [Tally(i + 1, tuple(range(len(s.choices))), True) for i, s in enumerate(steps)]
        handout = lesson_handout(lesson, bundle.name, HOSTILE, outputs,
                                 frozenset({"mlm", "nsp"}), tallies if with_class else None,
                                 "K7Q2AB" if with_class else None)
        return handout_html(handout)
    finally:
        set_language("en")


@pytest.mark.parametrize("lesson", list(LESSONS))
def test_the_handout_holds_every_step_and_nothing_outside_itself(bundle, lesson):
    page = build(bundle, lesson)
    audit = Audit()
    audit.feed(page)
    for tag, name, value in audit.links:
        assert name in ("src", "href") and value.startswith("data:image/svg+xml;base64,"), (
            tag, name, value[:60])
    assert not {"script", "link", "iframe", "object", "embed", "base", "frame"} & set(audit.tags)
    assert "url(" not in audit.style and "@import" not in audit.style
    assert "@media print" in audit.style
    steps = LESSONS[lesson][1]
    assert audit.tags.count("section") == len(steps)
    assert audit.tags.count("img") == len(steps)          # one answers chart a step
    for number, (step, code) in enumerate(zip(steps, lesson_cells(lesson, HOSTILE), strict=True),
                                            start=1):
        assert f"{number}. {step.title}" in audit.text
        assert code in audit.text and step.question in audit.text
    assert HOSTILE in audit.text                            # the sentence, as text
    assert "<script>" not in page and "<img src=x" not in page


def test_the_handout_is_in_the_interface_language(bundle):
    audit = Audit()
    audit.feed(build(bundle, "pretraining", lang="zh", with_class=False))
    assert "从语言模型到 BERT" in audit.text or "从语言模型到BERT" in audit.text
    assert "img" not in audit.tags                          # no class: no answers chart


def test_the_handout_opens_offline_in_chromium_and_prints(bundle, browser, tmp_path):
    path = tmp_path / "handout.html"
    path.write_text(build(bundle, "pretraining"), encoding="utf-8")
    url = path.as_uri()
    context = browser.new_context(offline=True)
    requested: list[str] = []

    def only_the_file(route):
        requested.append(route.request.url)
        if route.request.url == url:
            route.continue_()
        else:
            route.abort()

    page = context.new_page()
    page.route("**/*", only_the_file)
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(url)
    page.wait_for_load_state("load")
    assert page.locator("section").count() == len(LESSONS["pretraining"][1])
    assert page.evaluate("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
    assert page.locator("h1").inner_text() == "From language models to BERT"
    assert failed == [] and all(u == url or u.startswith("data:") for u in requested), requested
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    page.screenshot(path=str(ARTIFACTS / "handout-offline.png"), full_page=False)
    context.close()
