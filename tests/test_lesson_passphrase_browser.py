"""A server that asks for a teacher passphrase, in Chromium and in Chinese: a wrong passphrase
is refused in plain words and emptied from its box, the right one starts the class, and the
teacher's browser keeps the class over a reload. Two faults a browser alone shows: the teacher's
cookie after a refused start (a second cookie script of the page redeclared its variable and set
nothing), and the teacher's box in English once its fragment reran on its own."""

from __future__ import annotations

import pytest

from components.i18n import translations
from tests.conftest import ARTIFACTS, start_server, stop_server, wait_for_app

pytestmark = pytest.mark.browser

PASSPHRASE = "3fa9c1-07be44-9d2e10"
VIEW = {"width": 1024, "height": 768}


@pytest.fixture(scope="module")
def guarded_server():
    proc, url = start_server(env={"BERT_EXPLORER_TEACHER_PASSPHRASE": PASSPHRASE})
    yield url
    stop_server(proc)


def test_a_teacher_starts_a_class_with_the_passphrase_and_keeps_it(guarded_server, browser):
    t = translations("zh").gettext
    page = browser.new_page(viewport=VIEW)
    try:
        page.goto(f"{guarded_server}/lesson?lesson=pretraining&present=1&step=2&lang=zh")
        wait_for_app(page)
        page.get_by_text(t("Class poll")).click()
        box = page.get_by_label(t("Teacher passphrase"), exact=True).and_(page.locator("input"))
        box.wait_for(timeout=30_000)
        assert box.get_attribute("type") == "password"
        start = page.get_by_role("button", name=t("Start a class"))
        box.fill("maple orbit")
        start.click()
        wrong = page.locator("[data-testid=stAlert]").filter(has_text=t(
            "That is not this server's teacher passphrase, so no class was started. Whoever "
            "runs this server gives it to its teachers; the lesson itself works without a "
            "class.")[:12])
        wrong.wait_for(timeout=30_000)
        assert box.input_value() == "" and "class=" not in page.url
        box.fill(PASSPHRASE)
        start.click()
        page.wait_for_function("location.search.includes('class=')", timeout=30_000)
        code = page.url.split("class=")[1].split("&")[0]
        reveal = page.get_by_role("button", name=t("Reveal the answer"))
        reveal.wait_for(timeout=30_000)
        page.wait_for_timeout(2_500)      # the teacher's box reruns by itself every second
        assert reveal.count() == 1, page.locator("button").all_inner_texts()
        page.reload()                     # the projector laptop slept, say
        wait_for_app(page)
        reveal.wait_for(timeout=30_000)
        assert code in page.url
        assert PASSPHRASE not in page.content() and PASSPHRASE not in page.url
        assert PASSPHRASE not in str(page.context.cookies())
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "lesson-passphrase-failed.png"), full_page=True)
        raise
    finally:
        page.close()
