"""The views by word against their token views: a page's warm rerun with its "By word" switch on
over the same page with it off, in the browser, on sentences with split words.

Two tabs per page, one by token and one by word (the switch in the link), each rerun with a new
sentence A in turn (order alternated each repetition); the ratio is the median by-word rerun
over the median token rerun. The sentences hold words WordPiece splits ("strumming",
"unbelievably"), so the by-word views really group pieces.

    python3 -m bench.words_bench [--reps 7]     # these rows alone, printed as a table
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.texts import Sentence, SentenceFactory  # noqa: E402 - after the path is set

WORDS_GOAL = 1.2      # a by-word view's warm rerun / its token view's (issue 38)
SPLIT_WORDS = "strumming unbelievably tokenization interpretability misunderstandings"
# (title, url path, the view's own settings, the switch)
VIEWS = (
    ("Encoder, attention by head", "encoder", (("enc_section", "Attention"),), "enc_words"),
    ("Attribution, token importance", "attribution", (), "att_words"),
    ("Pairs, token-pair contributions", "pairs", (("pr_section", "One pair"),), "pr_words"),
)


def split_sentence(factory: SentenceFactory, n_words: int) -> Sentence:
    """A fresh sentence (its marker first) ending in words that WordPiece splits."""
    sentence = factory.sentence(n_words)
    return Sentence(f"{sentence.text} {SPLIT_WORDS}", sentence.marker)


def app_rows(browser, base: str, factory: SentenceFactory, reps: int,
             paths: tuple[str, ...] = ()) -> list:
    """One row per view (those of ``paths``, or all): its by-word warm rerun over its token
    view's, interleaved."""
    from bench.app_bench import Target, checked, log, median_s, open_tabs
    from bench.report import Row, fmt_s
    from bench.texts import SENTENCE_WORDS

    rows = []
    for title, path, view, switch in VIEWS:
        if paths and path not in paths:
            continue
        log(f"app: /{path} by word vs by token")
        b = "A man is playing music on a sunlit riverbank." if path == "pairs" else None
        targets = [Target(f"{title}, by token", base, path, "Control+Enter", view),
                   Target(f"{title}, by word", base, path, "Control+Enter",
                          (*view, (switch, "true")))]
        opened = open_tabs(browser, targets,
                           [split_sentence(factory, SENTENCE_WORDS) for _ in targets], {}, b)
        tabs = [tab for tab, _ in opened]
        # Both wait for the new sentence's marker, or neither does: a marker WordPiece splits
        # shows whole only by word.
        both = all(tab.shows_marker for tab in tabs)
        for tab in tabs:
            tab.shows_marker = both
        runs: list[list] = [[], []]
        for rep in range(reps):
            for i in (rep % 2, 1 - rep % 2):
                runs[i].append(checked(tabs[i].rerun(split_sentence(factory, SENTENCE_WORDS)),
                                       targets[i].title))
        for tab in tabs:
            tab.close()
        token_s, word_s = median_s(runs[0]), median_s(runs[1])
        ratio = word_s / token_s
        errors = sum(r.status != "ok" for r in runs[0] + runs[1])
        rows.append(Row("2 App", f"/{path} {title.split(', ')[1]} by word / by token, warm "
                        f"rerun (median of {reps}{f', {errors} errors' if errors else ''})",
                        f"{ratio:.2f}x ({fmt_s(word_s)} vs {fmt_s(token_s)})",
                        f"≤ {WORDS_GOAL}x", ratio <= WORDS_GOAL and not errors))
    return rows


def script_rows(factory: SentenceFactory, reps: int, paths: tuple[str, ...] = ()) -> list:
    """One row per view: the CPU time of the page's script run (AppTest, no browser) with a new
    sentence, by word over by token, interleaved: steadier than a browser's wall clock on a
    machine busy with other work, and the only part the switch changes on the server."""
    import statistics
    import time

    from streamlit.testing.v1 import AppTest

    from bench.app_bench import log
    from bench.report import Row, fmt_s
    from bench.texts import SENTENCE_WORDS

    rows = []
    for title, path, view, switch in VIEWS:
        if paths and path not in paths:
            continue
        log(f"script: /{path} by word vs by token")
        tests = []
        for words in (False, True):
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            for k, v in (*view, *(((switch, "true"),) if words else ())):
                at.query_params[k] = v
            at.query_params["a"] = split_sentence(factory, SENTENCE_WORDS).text
            if path == "pairs":
                at.query_params["b"] = "A man is playing music on a sunlit riverbank."
            at.run()
            at.switch_page(f"pages/{path}/page.py").run()
            tests.append(at)
        cpu: list[list[float]] = [[], []]
        for rep in range(reps):
            for i in (rep % 2, 1 - rep % 2):
                tests[i].text_area(key="a").set_value(split_sentence(factory, SENTENCE_WORDS).text)
                start = time.process_time()
                tests[i].run()
                cpu[i].append(time.process_time() - start)
                assert not tests[i].exception, [e.value for e in tests[i].exception]
        token_s, word_s = statistics.median(cpu[0]), statistics.median(cpu[1])
        ratio = word_s / token_s
        rows.append(Row("2 App", f"/{path} {title.split(', ')[1]} by word / by token, the "
                        f"script's CPU time with a new sentence (AppTest, median of {reps})",
                        f"{ratio:.2f}x ({fmt_s(word_s)} vs {fmt_s(token_s)})",
                        f"≤ {WORDS_GOAL}x", ratio <= WORDS_GOAL))
    return rows


def main(argv: list[str] | None = None) -> int:
    """These rows alone (the full bench runs them inside bench/run.py)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--script", action="store_true",
                        help="the script's CPU time in AppTest instead of the browser")
    parser.add_argument("--pages", nargs="*", default=[],
                        help="only these pages' views (encoder, attribution, pairs)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from bench.browser import CHROMIUM, CHROMIUM_ARGS
    from bench.report import markdown
    from bench.server import start_server
    from core import load_model

    factory = SentenceFactory(load_model().tokenizer)
    if args.script:
        print(markdown(script_rows(factory, args.reps, tuple(args.pages))))
        return 0
    server = start_server("app.py")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            rows = app_rows(browser, server.url, factory, args.reps, tuple(args.pages))
            browser.close()
    finally:
        server.stop()
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
