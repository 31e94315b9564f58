"""What the bad-input tests share: the pages, the texts and URL values they try, and how they read
a run (tests/test_bad_inputs_text.py, tests/test_bad_inputs_url.py, tests/test_bad_inputs_model.py).

The page list is read when the tests are collected (frame.page_list.available_pages() plus Home),
so a page added to the router is covered without touching these files. The model loads once per
process (st.cache_resource), so each case costs a few script runs, not a model load.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from streamlit.testing.v1 import AppTest
from transformers import AutoTokenizer

from core.models import default_model_path
from core.settings import MAX_CHARS
from frame.page_list import HOME, available_pages
from serving import jobs
from tests.conftest import ROOT, assert_clean, new_app, open_app

BACKGROUND_WAIT_S = 180.0   # the built-in corpus pass took 8-60 s on a busy 2-core runner

PAGES = [HOME.path, *(spec.path for spec in available_pages())]
# Model names and the shared keys a/b/model are handled once by the router before any page runs
# (router.run_app -> inputs.draw_shared_inputs -> _load_requested_model): a page only ever sees
# the model that loaded and reads the text through components.analysis_view. So those cases run
# on Home, the first listed page and the last one (pages of different shapes), not on every page.
ROUTER_PAGES = list(dict.fromkeys([HOME.path, PAGES[1 % len(PAGES)], PAGES[-1]]))
# Pages split into section tabs (components.sections): each tab is tried on its own.
SECTION_PAGES = [page for page in PAGES
                 if re.search(r"\b(open_section|draw_sections)\(", (ROOT / page).read_text())]
SHARED_KEYS = {"a", "b", "model", "lang", "max_length", "truncation", "padding"}

GOOD = "The cat sat on the mat."
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LONG = "The quick brown fox jumps over the lazy dog. " * 80   # ~800 tokens, under the char cap
OVER_CAP = "word " * (MAX_CHARS // 5 + 100)                   # 500 characters over the cap
MARKUP = re.compile(r"<\s*(script|img)\b", re.IGNORECASE)
TRUNCATED = re.compile(
    r"Truncated: the input has ([\d,]+) tokens but the limit is ([\d,]+), "
    r"so the last ([\d,]+) tokens were cut"
)

# Markdown and HTML a link can carry: each must reach the screen as the characters it is.
MARKDOWN_VALUES = {
    "md-link": "[x](https://evil.example)",
    "md-image": "![x](https://evil.example/a.png)",
    "md-heading": "# Big",
    "html-bold": "<b>x</b>",
    "html-img": IMG,
}


def page_id(path: str) -> str:
    return Path(path).parent.name


@functools.cache
def reference_tokenizer():
    """The shipped tokenizer loaded by transformers directly, to count tokens independently."""
    return AutoTokenizer.from_pretrained(default_model_path())


def full_token_count(a: str, b: str | None) -> int:
    """Tokens the text has before truncation, after the explorer's documented character cap."""
    tok = reference_tokenizer()
    return len(tok(a[:MAX_CHARS], b[:MAX_CHARS] if b else None)["input_ids"])


# ---------------------------------------------------------------- reading a run


# Markdown that only changes how text looks: a backslash escape before ASCII punctuation, and an
# inline code span (`...`, with as many backticks as needed). Either may wrap user text.
MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
CODE_SPAN = re.compile(r"(`+) ?(.+?) ?\1", re.DOTALL)


def as_read(text: str) -> str:
    """Markdown source as the user reads it: code spans verbatim, escapes outside them undone."""
    parts, end = [], 0
    for span in CODE_SPAN.finditer(text):
        parts += [MARKDOWN_ESCAPE.sub(r"\1", text[end:span.start()]), span.group(2)]
        end = span.end()
    return "".join([*parts, MARKDOWN_ESCAPE.sub(r"\1", text[end:])])


def code_spans(text: str) -> list[str]:
    """The contents of a markdown source's code spans, as they are shown (verbatim)."""
    return [span.group(2) for span in CODE_SPAN.finditer(text)]


def values(at: AppTest, kind: str) -> list[str]:
    """The text of every element of a kind, as the user reads it."""
    return [as_read(e.value) if isinstance(e.value, str) else e.value for e in at.get(kind)]


def notices(at: AppTest) -> list[str]:
    """Warnings and info boxes: a page may state a soft problem either way."""
    return values(at, "warning") + values(at, "info")


def signature(at: AppTest, drop: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The kinds of element the page drew, in order: equal signatures mean the same page."""
    return tuple(node.type for node in at.main if node.type not in drop)


def open_with_query(page: str, query: dict[str, str | list[str]]) -> AppTest:
    """open_app for a query whose keys may clash with its own argument names (e.g. "page")."""
    at = new_app()
    at.query_params.update(query)
    at.run()
    return at.switch_page(page).run() if page != HOME.path else at


def set_inputs(at: AppTest, a: str, b: str = "") -> AppTest:
    """Type into the sidebar as a user would, then rerun; while the page's background work (the
    Contexts page's corpus pass, a job on the process's job board) runs, wait for it and rerun
    once it has finished, as its polling fragment would, so a fresh session and a recovered one
    are compared alike. (A progress bar alone is no sign: the lesson always draws one.)"""
    at.sidebar.text_area(key="a").set_value(a)
    at.sidebar.text_area(key="b").set_value(b)
    at.run()
    pending = [job for job in jobs.board().jobs() if not job.done()]
    if pending and not at.exception:
        deadline = time.monotonic() + BACKGROUND_WAIT_S
        for job in pending:   # result() counts as someone waiting: the job is not abandoned
            with contextlib.suppress(Exception):
                job.result(timeout=max(0.0, deadline - time.monotonic()))
        at.run()
    return at


def model_in_use(at: AppTest) -> str:
    """The model the sidebar names (as the user reads it, the name's code span unwrapped)."""
    captions = [c for c in values(at, "caption") if c.startswith("Model in use:")]
    assert captions, "the sidebar does not say which model is in use"
    return captions[0].removeprefix("Model in use:").strip()


def plotly_strings(spec: str) -> list[str]:
    """Every string in a plotly figure's JSON (labels, hover text, titles)."""
    out: list[str] = []

    def walk(value) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(spec))
    return out


OWN_IMAGE = re.compile(r'<img alt="[^"<>]*"(?: style="height:[\d.]+px")? '
                       r'src="data:image/(?:png|svg\+xml);base64,[A-Za-z0-9+/=]+">')


def assert_no_markup(at: AppTest) -> None:
    """No element that renders HTML carries a <script> or <img> from the user's text."""
    for root in (at.main, at.sidebar):
        for node in root:
            proto = getattr(node, "proto", None)
            if node.type == "html" or getattr(proto, "allow_html", False):
                # The app's own pictures (image heatmaps, the Positions PCA) are the only <img>
                # allowed: PNG or SVG data in the src, nothing else in the tag.
                body = OWN_IMAGE.sub("", proto.body)
                assert not MARKUP.search(body), f"{node.type} renders user HTML"
            if node.type == "plotly_chart":
                bad = [s for s in plotly_strings(proto.spec) if MARKUP.search(s)]
                assert not bad, f"plotly figure carries raw markup: {bad[:3]}"


def markdown_bodies(at: AppTest) -> list[str]:
    """The markdown source of every element that renders markdown: text, captions, titles and
    the boxes (error, warning, info, success), in the page and the sidebar."""
    bodies = []
    for root in (at.main, at.sidebar):
        for node in root:
            proto = getattr(node, "proto", None)
            body = getattr(proto, "body", None)
            if isinstance(body, str) and node.type != "html":
                bodies.append(body)
    return bodies


def assert_shown_as_text(at: AppTest, value: str) -> None:
    """``value`` (markdown or HTML from a link) reaches no markdown element as markup: outside a
    code span (which shows it verbatim) neither it nor its first 20 characters (a message may
    shorten it) are written as they are, and its address is not there even escaped (a bare
    address becomes a link)."""
    assert_no_markup(at)
    for body in markdown_bodies(at):
        outside = CODE_SPAN.sub("", body)
        assert value[:20] not in outside, f"{value!r} reaches markdown as markup: {body[:300]!r}"
        assert "evil.example" not in as_read(outside), f"a link's address: {body[:300]!r}"


def assert_bounded_widgets(at: AppTest) -> None:
    """Number inputs and sliders hold a value inside their own range, whatever the URL said."""
    for node in at.main:
        proto = getattr(node, "proto", None)
        if node.type == "number_input":
            value = node.value
            if proto.has_min:
                assert value >= proto.min, (node.key, value)
            if proto.has_max:
                assert value <= proto.max, (node.key, value)
        elif node.type == "slider" and not proto.options:
            for value in node.value if isinstance(node.value, tuple | list) else (node.value,):
                if isinstance(value, int | float):
                    assert proto.min <= value <= proto.max, (node.key, value)


# ---------------------------------------------------------------- what a fresh session draws


@dataclass(frozen=True)
class Sections:
    """A page's section tabs (components.sections): only the open one runs, so each is tested."""

    key: str                     # the URL key that opens a tab
    labels: tuple[str, ...]      # the first one is open by default


@dataclass(frozen=True)
class Reference:
    signature: tuple[str, ...]   # GOOD typed into a fresh session of this page
    bound_keys: tuple[str, ...]  # the page's own URL-bound widget keys
    sections: Sections | None = None


def page_sections(at: AppTest) -> Sections | None:
    """The URL-bound tabs a run drew, if any."""
    for node in at.main:
        if node.type == "tab_container" and node.proto.tab_container.query_param_key:
            labels = tuple(tab.label for tab in node.children.values())
            return Sections(node.proto.tab_container.query_param_key, labels)
    return None


def source_bound_keys(page: str) -> set[str]:
    """URL keys a page's files name (some widgets are drawn only sometimes): page.py and the
    modules beside it that draw its tabs (a page split by tab, as Pairs is), not its cache,
    figures, pictures or records, which draw nothing."""
    folder = (ROOT / page).parent
    keys: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        if path.stem not in ("cache", "figures", "pictures", "records"):
            keys |= file_bound_keys(path)
    return keys


def file_bound_keys(path: Path) -> set[str]:
    """URL keys one file names: literal keys of widgets bound to the URL, and its module-level
    key constants (``*_KEY`` strings, ``*_KEYS`` collections of strings), which its bound
    widgets and ``whole_number`` use."""
    tree = ast.parse(path.read_text())
    keys = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        kwargs = {k.arg: k.value for k in call.keywords}
        bind, key = kwargs.get("bind"), kwargs.get("key")
        if (isinstance(bind, ast.Constant) and bind.value == "query-params"
                and isinstance(key, ast.Constant) and isinstance(key.value, str)):
            keys.add(key.value)
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        targets = node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) else node.targets
        values = (node.value.elts if isinstance(node.value, ast.Tuple)
                  and len(node.value.elts) == len(targets) else [node.value] * len(targets))
        for target, value in zip(targets, values, strict=True):
            name = getattr(target, "id", "")
            if name.endswith("_KEY") and isinstance(value, ast.Constant):
                keys.add(value.value)
            elif name.endswith("_KEYS"):
                keys |= {c.value for c in ast.walk(value)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return {k for k in keys if isinstance(k, str)}


# Pages whose own widgets are bound to the URL (Home binds none), read from the page files.
KEYED_PAGES = [page for page in PAGES if source_bound_keys(page)]


# The shared helpers of components/ that read a value from the link, each one a kind of URL
# value of its own (besides the kinds of Streamlit widget bound to the URL).
URL_HELPERS = (("components.url_values", "option_in_link"),
               ("components.url_values", "number_in_link"),
               ("components.controls", "whole_number"),
               ("components.controls", "by_word_toggle"),
               ("components.heatmap_image", "exact_toggle"))


@contextmanager
def recording_url_helpers(seen: set[str]) -> Iterator[None]:
    """Note in ``seen`` the name of each URL helper a run calls. A page's script imports them
    anew on every run, so the run calls these wrappers."""
    originals = []
    for module_name, name in URL_HELPERS:
        module = importlib.import_module(module_name)
        original = getattr(module, name)

        @functools.wraps(original)
        def wrapper(*args, _original=original, _name=name, **kwargs):
            seen.add(_name)
            return _original(*args, **kwargs)

        originals.append((module, name, original))
        setattr(module, name, wrapper)
    try:
        yield
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


@dataclass(frozen=True)
class View:
    """What a fresh session of one tab of a page draws for GOOD."""

    signature: tuple[str, ...]
    keys: tuple[str, ...]        # URL keys of the widgets it draws (the shared ones aside)
    kinds: frozenset[str]        # the kinds of widget bound to the URL, and the URL helpers run
    sections: Sections | None


@functools.cache
def view(page: str, label: str | None = None) -> View:
    """GOOD typed into a fresh session of ``page`` (with the tab ``label`` open)."""
    seen: set[str] = set()
    with recording_url_helpers(seen):
        query = {} if label is None else {reference(page).sections.key: label}
        at = set_inputs(open_app(page, **query), GOOD)
    assert_clean(at)
    bound = [(proto.query_param_key, node.type) for node in at.main
             if (proto := getattr(node, "proto", None)) is not None
             and getattr(proto, "query_param_key", "")]
    sections = page_sections(at)
    keys = {key for key, _type in bound} - SHARED_KEYS - ({sections.key} if sections else set())
    kinds = {kind for key, kind in bound if key not in SHARED_KEYS} | seen
    return View(signature(at), tuple(sorted(keys)), frozenset(kinds), sections)


@functools.cache
def reference(page: str) -> Reference:
    first = view(page)
    keys = (set(first.keys) | source_bound_keys(page)) - SHARED_KEYS
    if first.sections:
        keys -= {first.sections.key}   # garbage there opens the default tab: tested on its own
    return Reference(first.signature, tuple(sorted(keys)), first.sections)


def views(page: str) -> list[str | None]:
    """The page's tabs, None for the one open by default (or a page without tabs)."""
    sections = reference(page).sections
    return [None, *(sections.labels[1:] if sections else ())]


def section_signature(page: str, label: str) -> tuple[str, ...]:
    """GOOD typed into a fresh session of this page with the tab ``label`` open."""
    return view(page, label).signature


def assert_recovers(at: AppTest, page: str, section: str | None = None) -> None:
    """A good sentence in the same session brings the page back as a fresh session draws it."""
    set_inputs(at, GOOD)
    assert_clean(at)
    assert not values(at, "error") and not values(at, "warning")
    expected = section_signature(page, section) if section else reference(page).signature
    assert signature(at) == expected, section
