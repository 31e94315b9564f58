"""Every bad input from DESIGN.md ("Bad input") on every page, in AppTest.

For each one: no uncaught exception, a clear message where one is due (its text is asserted), and
the app stays usable: in the same session a good sentence (or the default model) brings the page
back exactly as a fresh session draws it.

The page list is read when the tests are collected (frame.page_list.available_pages() plus Home),
so a page added to the router is covered without touching this file. The model loads once per
process (st.cache_resource), so each case costs a few script runs, not a model load.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from transformers import AutoTokenizer

from core import DEFAULT_MODEL, encode
from core.models import default_model_path
from core.settings import MAX_CHARS
from core.similarity.choices import default_tokens
from frame.page_list import HOME, available_pages
from tests.conftest import APPTEST_TIMEOUT, LOAD_DEADLINE_S, ROOT, assert_clean, open_app
from tests.model_folders import (
    make_bin_only_folder,
    make_huge_config_folder,
    make_not_bert_folder,
    make_tiny_bert_folder,
)

PAGES = [HOME.path, *(spec.path for spec in available_pages())]
# Model names and the shared keys a/b/model are handled once by the router before any page runs
# (router.run_app -> inputs.draw_shared_inputs -> _load_requested_model): a page only ever sees
# the model that loaded and reads the text through components.analysis_view. So those cases run
# on Home, the first listed page and the last one (pages of different shapes), not on every page;
# text inputs and each page's own URL-bound widgets differ per page and run on every page.
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
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.query_params.update(query)
    at.run()
    return at.switch_page(page).run() if page != HOME.path else at


def set_inputs(at: AppTest, a: str, b: str = "") -> AppTest:
    """Type into the sidebar as a user would, then rerun."""
    at.sidebar.text_area(key="a").set_value(a)
    at.sidebar.text_area(key="b").set_value(b)
    return at.run()


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
    """URL keys a page file names (some widgets are drawn only sometimes): literal keys of
    widgets bound to the URL, and the page's module-level key constants (``*_KEY`` strings,
    ``*_KEYS`` collections of strings), which its bound widgets and ``whole_number`` use."""
    tree = ast.parse((ROOT / page).read_text())
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


@functools.cache
def reference(page: str) -> Reference:
    at = set_inputs(open_app(page), GOOD)
    assert_clean(at)
    drawn = {
        proto.query_param_key
        for root in (at.main, at.sidebar)
        for node in root
        if (proto := getattr(node, "proto", None)) is not None
        and getattr(proto, "query_param_key", "")
    }
    keys = (drawn | source_bound_keys(page)) - SHARED_KEYS
    sections = page_sections(at)
    if sections:
        keys -= {sections.key}   # garbage there opens the default tab: tested on its own
    return Reference(signature(at), tuple(sorted(keys)), sections)


@functools.cache
def section_signature(page: str, label: str) -> tuple[str, ...]:
    """GOOD typed into a fresh session of this page with the tab ``label`` open."""
    sections = reference(page).sections
    at = set_inputs(open_app(page, **{sections.key: label}), GOOD)
    assert_clean(at)
    return signature(at)


def assert_recovers(at: AppTest, page: str, section: str | None = None) -> None:
    """A good sentence in the same session brings the page back as a fresh session draws it."""
    set_inputs(at, GOOD)
    assert_clean(at)
    assert not values(at, "error") and not values(at, "warning")
    expected = section_signature(page, section) if section else reference(page).signature
    assert signature(at) == expected, section


# ---------------------------------------------------------------- text inputs, every page


@dataclass(frozen=True)
class TextCase:
    id: str
    a: str
    b: str = ""
    notice: str | None = None    # regex a warning or info box must match
    check: str | None = None     # extra check: "truncated", "char-cap" or "literal"


TEXT_CASES = [
    TextCase("empty", "", notice="Type a sentence"),
    TextCase("whitespace-only", " \t\n \u00a0\u3000 ", notice="Type a sentence"),
    TextCase("b-without-a", "", "My name is BERT.", notice="Sentence B needs a sentence A"),
    TextCase("over-512-tokens", LONG, notice="Truncated", check="truncated"),
    TextCase("over-512-tokens-pair", LONG, LONG, notice="Truncated", check="truncated"),
    TextCase("over-char-cap", OVER_CAP, notice="characters over", check="char-cap"),
    TextCase("emoji", "BERT loves 🤗🔥👍🏽 and 👨‍👩‍👧 too", "🎉🎉"),
    TextCase("cjk", "我爱自然语言处理。東京タワーは高い。한국어 문장입니다"),
    TextCase("rtl-arabic-hebrew", "مرحبا بالعالم، هذا اختبار", "שלום עולם, זה מבחן"),
    TextCase("bidi-mixed", "BERT אומר hello مرحبا 123 \u202eevil\u202c end"),
    TextCase("zero-width-only", "\u200b\u200c\u200d\ufeff\u2060", notice="zero-width"),
    TextCase("zero-width-mixed", "zero\u200bwidth jo\u200din\ufeffed"),
    TextCase("control-only", "\x00\x07\x1b", notice="control"),
    TextCase("control-mixed", "null\x00byte, bell\x07 and \x1b[31mred\x1b[0m text"),
    TextCase("script-tag", SCRIPT, IMG, check="literal"),
    TextCase("img-onerror", IMG, SCRIPT, check="literal"),
]


def check_truncation(at: AppTest, case: TextCase) -> None:
    """The page says it truncated, with the input's true length and how many tokens were cut."""
    found = [m for w in notices(at) if (m := TRUNCATED.search(w))]
    assert found, notices(at)
    full, limit, cut = (int(g.replace(",", "")) for g in found[0].groups())
    assert full == full_token_count(case.a, case.b or None)
    assert limit <= 512 and cut == full - limit > 0


def check_literal(at: AppTest, case: TextCase) -> None:
    """The HTML is kept as typed and reaches no element that would render it."""
    assert at.sidebar.text_area(key="a").value == case.a
    assert at.sidebar.text_area(key="b").value == case.b
    assert_no_markup(at)
    for frame in (d.value for d in [*at.dataframe, *at.table]):
        if "token" in frame.columns:  # the brackets are tokens of their own, shown as text
            assert "<" in set(frame["token"]) and ">" in set(frame["token"])


@pytest.mark.parametrize("case", TEXT_CASES, ids=lambda case: case.id)
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_bad_text(page, case):
    at = open_app(page)
    assert_clean(at)
    set_inputs(at, case.a, case.b)
    assert_clean(at)
    assert not values(at, "error"), values(at, "error")
    if case.notice:
        assert any(re.search(case.notice, n) for n in notices(at)), notices(at)
    if case.check == "truncated":
        check_truncation(at, case)
    elif case.check == "char-cap":
        cut = len(case.a) - MAX_CHARS
        assert any(f"{cut:,} characters over" in n for n in notices(at)), notices(at)
        check_truncation(at, case)
    elif case.check == "literal":
        check_literal(at, case)
    if case.b and case.notice and "Sentence B" in case.notice:
        # Typing A next to the lone B makes a valid pair at once.
        at.sidebar.text_area(key="a").set_value(GOOD).run()
        assert_clean(at)
        assert not values(at, "warning") and not values(at, "error")
    assert_recovers(at, page)


# Texts that reach every section (the rest stop above the tabs with a notice), run in each tab
# that is not open by default: the default tab is covered by test_bad_text.
SECTION_TEXT_CASES = [case for case in TEXT_CASES if case.id in {
    "over-512-tokens-pair", "emoji", "bidi-mixed", "control-mixed", "script-tag",
}]


@pytest.mark.parametrize("case", SECTION_TEXT_CASES, ids=lambda case: case.id)
@pytest.mark.parametrize("page", SECTION_PAGES, ids=page_id)
def test_bad_text_in_every_section(page, case):
    sections = reference(page).sections
    assert sections and len(sections.labels) > 1, f"{page} draws no section tabs"
    key = sections.key
    for label in sections.labels[1:]:
        at = open_app(page, **{key: label})
        assert_clean(at)
        set_inputs(at, case.a, case.b)
        assert_clean(at)
        assert not values(at, "error"), (label, values(at, "error"))
        assert_no_markup(at)
        if case.check == "truncated":
            check_truncation(at, case)
        elif case.check == "literal":
            check_literal(at, case)
        assert_recovers(at, page, label)


# ---------------------------------------------------------------- model names, router pages


@pytest.fixture(scope="module")
def folders(tmp_path_factory, bundle) -> dict[str, str]:
    """Model folders built in code: one loadable tiny BERT and the kinds that must be refused."""
    root = tmp_path_factory.mktemp("model-folders")
    make_tiny_bert_folder(root / "tiny-bert", bundle.tokenizer)
    make_not_bert_folder(root / "gpt2", "gpt2", bundle.tokenizer)
    make_huge_config_folder(root / "huge")
    (root / "huge" / "model.safetensors").write_bytes(b"never read")
    make_bin_only_folder(root / "bin-only", bundle.tokenizer)
    return {p.name: str(p) for p in root.iterdir()}


REFUSED = "is not one of the models this server offers"

# (name or @folder, regex the error must match)
MODEL_CASES = [
    pytest.param("no-such-model-xyz", REFUSED, id="unknown-name"),
    pytest.param("bert-base-uncased", "cannot be reached", id="unreachable-hub-model"),
    pytest.param("@gpt2", "is a gpt2 model, not BERT", id="not-bert-folder"),
    pytest.param("@huge", r"has [\d,]+ parameters; this explorer loads at most",
                 id="huge-config-folder"),
    pytest.param("@bin-only", "safetensors", id="bin-only-folder"),
    pytest.param("/no/such/model/folder", REFUSED, id="missing-folder"),
    # Refused, or (when ../../etc exists from the working directory) not readable as a model.
    pytest.param("../../etc", r"\.\./\.\./etc", id="path-traversal"),
    pytest.param("../../../../../../../../etc/passwd", REFUSED, id="traversal-to-file"),
    pytest.param("https://evil.example/model", REFUSED, id="url"),
    pytest.param(IMG, REFUSED, id="html"),
    # Names no file system takes as a path (a component over 255 bytes, an unknown ~user).
    pytest.param("m" * 300, REFUSED, id="name-too-long"),
    pytest.param("~no-such-user-h7/bert", REFUSED, id="unknown-home"),
]


def resolve(name: str, folders: dict[str, str]) -> str:
    return folders[name[1:]] if name.startswith("@") else name


@pytest.fixture
def folder_root(monkeypatch, folders) -> str:
    """The test folders' parent named as the one root model folders may be loaded from."""
    root = str(Path(folders["tiny-bert"]).parent)
    monkeypatch.setenv("BERT_EXPLORER_MODEL_DIRS", root)
    return root


@pytest.mark.parametrize(("name", "message"), MODEL_CASES)
@pytest.mark.parametrize("page", ROUTER_PAGES, ids=page_id)
def test_bad_model(closed_hub, folder_root, folders, page, name, message):
    name = resolve(name, folders)
    start = time.monotonic()
    at = open_app(page, model=name, a=GOOD)
    elapsed = time.monotonic() - start
    assert_clean(at)
    errors = values(at, "error")
    assert len(errors) == 1 and re.search(message, errors[0]), errors
    assert f"Staying on {DEFAULT_MODEL}" in errors[0]
    assert model_in_use(at) == DEFAULT_MODEL
    assert elapsed < LOAD_DEADLINE_S, f"{elapsed:.1f} s to refuse {name!r}"
    # The page itself is drawn in full on the model that was in use.
    assert signature(at, drop=("error",)) == reference(page).signature
    assert_no_markup(at)
    # Picking the default model again clears the message and leaves a normal page.
    at.sidebar.selectbox(key="model").set_value(DEFAULT_MODEL).run()
    assert_clean(at)
    assert not values(at, "error")
    assert signature(at) == reference(page).signature


@pytest.mark.parametrize("page", ROUTER_PAGES, ids=page_id)
def test_unreachable_model_picked_in_the_sidebar(closed_hub, page):
    """A teacher picks bert-base-uncased offline: a clear message within 10 s, page stays up."""
    at = set_inputs(open_app(page), GOOD)
    start = time.monotonic()
    at.sidebar.selectbox(key="model").set_value("bert-base-uncased").run()
    elapsed = time.monotonic() - start
    assert_clean(at)
    assert elapsed < LOAD_DEADLINE_S, f"{elapsed:.1f} s"
    assert any("bert-base-uncased" in e and "cannot be reached" in e for e in values(at, "error"))
    assert model_in_use(at) == DEFAULT_MODEL
    assert signature(at, drop=("error",)) == reference(page).signature
    # Still usable: a new sentence is analysed on the default model.
    set_inputs(at, "A second sentence after the failure.")
    assert_clean(at)
    assert model_in_use(at) == DEFAULT_MODEL


MARKDOWN_NAME = "![pwn](http://127.0.0.1:9/pwn.png) [click](http://127.0.0.1:9/phish) **bold**"


def test_markdown_in_model_name_is_escaped(closed_hub):
    """A model name from a shared link reaches the error box as text, not as images or links."""
    at = open_app(HOME.path, model=MARKDOWN_NAME, a=GOOD)
    assert_clean(at)
    errors = [e.proto.body for e in at.error]  # the markdown source, before rendering
    assert len(errors) == 1 and REFUSED in as_read(errors[0])
    assert MARKDOWN_NAME in as_read(errors[0])  # shown verbatim, as the user typed it
    outside_code = CODE_SPAN.sub("", errors[0])  # a code span shows its content verbatim
    for markup in ("![pwn](", "[click](", "**bold**", "http://"):
        assert markup not in outside_code, f"{markup} reaches the markdown renderer as markup"


def test_empty_model_param_is_the_default(closed_hub):
    at = open_app(HOME.path, model="", a=GOOD)
    assert_clean(at)
    assert not values(at, "error") and model_in_use(at) == DEFAULT_MODEL


def test_folder_model_loads_under_a_configured_root(closed_hub, folder_root, folders):
    """Positive control: a folder under the root loads, so the refusals above are about content;
    and the folder is offered in the picker."""
    at = open_app(HOME.path, model=folders["tiny-bert"], a=GOOD)
    assert_clean(at)
    assert not values(at, "error")
    # Named relative to its allowed root, on screen and in the picker: no server path.
    label = f"{Path(folder_root).name}/tiny-bert"
    assert model_in_use(at) == label
    assert label in at.sidebar.selectbox(key="model").options
    assert folders["tiny-bert"] not in at.sidebar.selectbox(key="model").options[:-1]


def test_default_install_refuses_every_folder_alike(closed_hub, folders, tmp_path):
    """No root configured: an existing model folder, a missing one, a system folder and a
    traversal get one and the same message (the name as typed, the fallback), and no server path
    appears in it."""
    names = [folders["tiny-bert"], str(tmp_path / "missing"), "/proc/self", ".", "../../etc",
             "~", "/etc/passwd"]
    seen = set()
    for name in names:
        at = open_app(HOME.path, model=name, a=GOOD)
        assert_clean(at)
        errors = values(at, "error")
        assert len(errors) == 1 and REFUSED in errors[0], (name, errors)
        rest = errors[0].replace(f"“{name}”", "“NAME”")
        seen.add(rest)
        assert model_in_use(at) == DEFAULT_MODEL
        for leak in ("/proc/", str(ROOT), str(Path.home()) + "/"):
            assert leak not in rest, (name, errors[0])
    assert len(seen) == 1, seen


def test_folder_spellings_load_once(closed_hub, folder_root, folders, monkeypatch):
    """Twenty spellings of one folder are one model: the resolved path is the name and the key,
    so the folder loads once (counted on the real loader) and the default model stays cached."""
    from components import cache

    folder = Path(folders["tiny-bert"])
    spellings = [str(folder), f"{folder}/", f"{folder}/.", f"{folder.parent}/./{folder.name}",
                 *(f"{folder}/{'x/../' * k}" for k in range(1, 17))]
    (folder / "x").mkdir(exist_ok=True)
    loads: list[str] = []
    real_load = cache.load_model
    monkeypatch.setattr(cache, "load_model", lambda name: loads.append(name) or real_load(name))
    cache._other_model.clear()
    for name in spellings:
        at = open_app(HOME.path, model=name, a=GOOD)
        assert_clean(at)
        assert not values(at, "error"), name
        assert model_in_use(at) == f"{folder.parent.name}/{folder.name}", name
    assert loads == [str(folder)]
    at = open_app(HOME.path, a=GOOD)   # the default model was never pushed out of its cache
    assert loads == [str(folder)] and model_in_use(at) == DEFAULT_MODEL


# ---------------------------------------------------------------- the allowlist


def test_allowlist_refuses_folders_and_unlisted_names(closed_hub, folders, monkeypatch):
    monkeypatch.setenv("BERT_EXPLORER_ALLOWED_MODELS", " bert-base-uncased , ,bert-base-chinese ")
    at = open_app(HOME.path, model=folders["tiny-bert"], a=GOOD)
    assert_clean(at)
    assert any(REFUSED in e for e in values(at, "error"))
    assert model_in_use(at) == DEFAULT_MODEL
    offered = at.sidebar.selectbox(key="model").options
    # The picker offers the listed names (the refused name is shown only because it was asked).
    assert offered[:3] == [DEFAULT_MODEL, "bert-base-uncased", "bert-base-chinese"]
    assert "bert-large-uncased" not in offered

    for refused in ("bert-large-uncased", "../../etc", folders["gpt2"]):
        at = open_app(HOME.path, model=refused, a=GOOD)
        assert_clean(at)
        assert any(REFUSED in e for e in values(at, "error")), refused
    # A listed name is allowed, and then fails only because this machine cannot reach the hub.
    at = open_app(HOME.path, model="bert-base-chinese", a=GOOD)
    assert_clean(at)
    assert any("cannot be reached" in e for e in values(at, "error"))
    assert model_in_use(at) == DEFAULT_MODEL


def test_allowlist_set_but_empty_allows_only_the_default(closed_hub, monkeypatch):
    monkeypatch.setenv("BERT_EXPLORER_ALLOWED_MODELS", "")
    at = open_app(HOME.path, model="bert-base-uncased", a=GOOD)
    assert_clean(at)
    assert any(REFUSED in e for e in values(at, "error"))
    assert at.sidebar.selectbox(key="model").options[:1] == [DEFAULT_MODEL]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("someone/some-bert", "cannot be reached", id="repo-id"),  # the hub is away
        pytest.param("m" * 300, "neither a model name", id="name-too-long"),  # core refuses it
    ],
)
def test_allowlist_star_allows_any_name(closed_hub, monkeypatch, name, message):
    """With "*" any name passes the allowlist, so what stops a bad one is core.load_model."""
    monkeypatch.setenv("BERT_EXPLORER_ALLOWED_MODELS", "*")
    at = open_app(HOME.path, model=name, a=GOOD)
    assert_clean(at)
    errors = values(at, "error")
    assert len(errors) == 1 and message in errors[0], errors
    assert model_in_use(at) == DEFAULT_MODEL


# ---------------------------------------------------------------- garbage in the query string

QUERY_CASES = [
    pytest.param({"a": ""}, "notice", "Type a sentence", id="a-empty"),
    pytest.param({"a": "", "b": "My name is BERT."}, "notice", "Sentence B needs a sentence A",
                 id="b-without-a"),
    pytest.param({"model": ""}, None, None, id="model-empty"),
    pytest.param({"foo": "bar", "page": "nowhere", "embed_options": "x", "zzz": ""},
                 None, None, id="unknown-params"),
    pytest.param({"max_length": "abc", "truncation": "maybe", "padding": "-5"},
                 None, None, id="tokens-keys-elsewhere"),
    pytest.param({"a": "y " * 15_000}, "notice", "characters over", id="long-a"),
    pytest.param({"a": "ok", "b": "z " * 15_000}, "notice", "characters over", id="long-b"),
    pytest.param({"a": ["first sentence", "second sentence"]}, None, None, id="duplicate-a"),
    # A repeated key: the last value wins, as in the browser.
    pytest.param({"model": [DEFAULT_MODEL, "no-such-model"]}, "error", REFUSED,
                 id="duplicate-model"),
    pytest.param({"a": "\x00"}, "notice", "zero-width", id="nul-a"),
    pytest.param({"a": "%00%ZZ%", "b": "%%"}, None, None, id="percent-garbage"),
    pytest.param({"a": IMG, "b": SCRIPT}, None, None, id="html-a-b"),
    pytest.param({"model": "m" * 5000}, "error", REFUSED, id="long-model"),
]


@pytest.mark.parametrize(("query", "kind", "message"), QUERY_CASES)
@pytest.mark.parametrize("page", ROUTER_PAGES, ids=page_id)
def test_query_garbage(closed_hub, page, query, kind, message):
    at = open_with_query(page, query)
    assert_clean(at)
    found = notices(at) if kind == "notice" else values(at, kind) if kind else []
    if kind:
        assert any(re.search(message, v) for v in found), found
    if kind != "error":
        assert not values(at, "error"), values(at, "error")
    assert_no_markup(at)
    assert_bounded_widgets(at)
    if kind == "error":  # the bad model name stays picked until the user picks another
        at.sidebar.selectbox(key="model").set_value(DEFAULT_MODEL).run()
    assert_recovers(at, page)


# Numbers a link can carry that no number box takes: each must fall back, never raise.
URL_NUMBERS = ["inf", "-inf", "1e309", "9" * 400, "nan", "-1e309", "0x10", "1_000"]
GARBAGE = ["abc", "-5", "999999", "", "NaN", "x" * 3000, IMG, *URL_NUMBERS]


# Pages whose own widgets are bound to the URL (Home binds none), read from the page files.
KEYED_PAGES = [page for page in PAGES if source_bound_keys(page)]


@pytest.mark.parametrize("value", GARBAGE, ids=lambda v: v[:12] or "empty")
@pytest.mark.parametrize("page", KEYED_PAGES, ids=page_id)
def test_page_keys_with_garbage(page, value):
    """Each page's own URL-bound widgets, all given the same garbage at once."""
    keys = reference(page).bound_keys
    assert keys, f"{page} draws none of the URL-bound widgets its file names"
    at = open_app(page, **dict.fromkeys(keys, value))
    assert_clean(at)
    assert values(at, "title"), "the page did not draw"
    assert_no_markup(at)
    assert_bounded_widgets(at)
    set_inputs(at, GOOD)
    assert_clean(at)
    assert values(at, "title")


SECTION_GARBAGE = ["abc", "-5", "", IMG, *URL_NUMBERS[:4]]


@pytest.mark.parametrize("page", SECTION_PAGES, ids=page_id)
def test_section_keys_with_garbage(page):
    """Garbage in a section's widgets with that section open; garbage as the section itself."""
    ref = reference(page)
    assert ref.sections, f"{page} draws no section tabs"
    for value in [*SECTION_GARBAGE, "x" * 3000]:   # as a tab name: the default tab opens
        at = open_app(page, **{ref.sections.key: value})
        assert_clean(at)
        assert signature(set_inputs(at, GOOD)) == ref.signature, value
    for label in ref.sections.labels[1:]:
        for value in SECTION_GARBAGE:
            at = open_app(page, **dict.fromkeys(ref.bound_keys, value), **{ref.sections.key: label})
            assert_clean(at)
            assert values(at, "title"), (label, value)
            assert_no_markup(at)
            assert_bounded_widgets(at)
            set_inputs(at, GOOD)
            assert_clean(at)
            assert values(at, "title"), (label, value)


def test_similarity_picks_follow_a_new_text(bundle):
    """Texts that leave one token to pick ("Hi", zero-width only) must not pin both token pickers
    of the Similarity page to one token for the texts typed after them: each new text gets its own
    default pair."""
    page = "pages/similarity/page.py"
    at = open_app(page, sim_section="Word in context")
    for text in ("Hi", "\u200b\u200d", GOOD, "\x07", "Hi", "The dog saw the dog."):
        set_inputs(at, text)
        assert_clean(at)
        want = list(default_tokens(encode(bundle, text)))
        assert [at.selectbox(key=k).value for k in ("sim_i", "sim_j")] == want, repr(text)
    assert want[0] != want[1]
    assert not any("same token" in n for n in notices(at))
