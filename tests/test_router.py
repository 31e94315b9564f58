"""The router's pages (frame/router.py): made once per session and language, never shared
between sessions (st.navigation marks the page a run may call on the object itself)."""

from __future__ import annotations

from frame.router import PAGES_KEY, SessionPages
from tests.conftest import assert_clean, open_app


def kept(at) -> SessionPages:
    pages = at.session_state[PAGES_KEY]
    assert isinstance(pages, SessionPages)
    return pages


def titles(pages: SessionPages) -> list[str]:
    return [page.title for group in pages.groups.values() for page in group]


def test_a_sessions_reruns_reuse_its_pages_until_the_language_changes():
    at = open_app("pages/tokens/page.py")
    first = kept(at)
    at.run()
    assert kept(at) is first and first.language == "en"
    at.switch_page("pages/stages/page.py").run()
    assert kept(at) is first
    assert_clean(at)
    at.query_params["lang"] = "zh"
    at.session_state["lang"] = "zh"
    at.run()
    chinese = kept(at)
    assert chinese is not first and chinese.language == "zh"
    assert "词元" in titles(chinese) and "Tokens" in titles(first)
    assert_clean(at)


def test_two_sessions_never_share_page_objects():
    one, two = open_app("pages/tokens/page.py"), open_app("pages/tokens/page.py")
    pages_one = [p for group in kept(one).groups.values() for p in group]
    pages_two = [p for group in kept(two).groups.values() for p in group]
    assert not {id(p) for p in pages_one} & {id(p) for p in pages_two}
    assert titles(kept(one)) == titles(kept(two))
