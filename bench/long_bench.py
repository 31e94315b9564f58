"""Every page with a long pair: warm reruns at ``LONG_TOKENS`` tokens against /tokens, and the
websocket bytes each rerun sends.

Every page is opened in its own tab with one pair of exactly LONG_TOKENS tokens (sentence A with
a marker word, sentence B kept), then, round-robin so a change in the machine's load hits every
page, sentence A is replaced by a new one of the same length (bench.texts checks the count) and
the rerun is timed as in bench.browser until the new content is on the page.
"""

from __future__ import annotations

from playwright.sync_api import Browser

from bench.app_bench import MarkerMemo, app_targets, checked, log, open_tabs
from bench.browser import Rerun
from bench.texts import SentenceFactory

LONG_TOKENS = 512    # the models' whole position table


def long_pair_reruns(browser: Browser, base: str, factory: SentenceFactory, reps: int,
                     memo: MarkerMemo, n_tokens: int = LONG_TOKENS,
                     ) -> dict[str, tuple[str, list[Rerun]]]:
    """url path -> (page title, warm reruns) for Home and every page, at ``n_tokens``."""
    targets = app_targets(base)
    a, b = factory.pair(n_tokens)
    n_words = len(a.text.split())
    _assume_no_marker(memo, targets, n_words)
    log(f"long pair: opening {len(targets)} pages at {n_tokens} tokens")
    opened = open_tabs(browser, targets, [a] * len(targets), memo, b)
    runs: dict[str, tuple[str, list[Rerun]]] = {t.path: (t.title, []) for t in targets}
    pages = [(target, tab) for target, (tab, _) in zip(targets, opened, strict=True)]
    try:
        for rep in range(reps):
            shift = rep % len(pages)   # rotate which page goes first
            for target, tab in pages[shift:] + pages[:shift]:
                sentence = factory.sentence(n_words)
                factory.check_length(sentence.text, b, n_tokens)
                runs[target.path][1].append(checked(tab.rerun(sentence, timeout_s=120),
                                                    f"{target.title} at {n_tokens} tokens"))
            log(f"long pair: round {rep + 1}/{reps} done")
    finally:
        for _, tab in pages:
            tab.close()
    return runs


def _assume_no_marker(memo: MarkerMemo, targets: list, n_words: int) -> None:
    """A page that did not print a shorter sentence's marker will not print a longer one's
    (plots thin their labels as sentences grow): skip the wait that finds it out again."""
    for target in targets:
        where = f"{target.base}/{target.path}{target.view}"
        if any(not shown for (key, words), shown in memo.items()
               if key == where and words < n_words):
            memo.setdefault((where, n_words), False)
