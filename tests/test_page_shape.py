"""The shape every page has (README, "Adding a page"), checked on every page the menu lists."""

from __future__ import annotations

import ast
import importlib
import inspect
import tomllib

import pytest

from components.cache import CachedFunction
from components.input_key import InputKey
from frame.page_list import HOME, PageSpec, available_pages
from pages.home.figures import PAGE_BLURBS
from tests.conftest import ROOT

SPECS = [HOME, *available_pages()]


def source_tree(spec: PageSpec, module: str) -> ast.Module | None:
    path = ROOT / "pages" / spec.folder / f"{module}.py"
    return ast.parse(path.read_text()) if path.is_file() else None


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.folder)
def test_page_defines_title_explanation_and_main(spec):
    page = importlib.import_module(f"pages.{spec.folder}.page")
    assert isinstance(page.TITLE, str) and page.TITLE
    assert isinstance(page.EXPLANATION, str) and len(page.EXPLANATION.split(".")) >= 2
    assert callable(page.main)
    if spec is not HOME:   # Home's menu entry is "Home"; its title is the app's name
        assert spec.title == page.TITLE
        assert spec.group, "a page is listed under a menu"


@pytest.mark.parametrize("spec", available_pages(), ids=lambda s: s.folder)
def test_every_page_has_a_home_card(spec):
    assert PAGE_BLURBS.get(spec.folder)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.folder)
def test_page_makes_no_class(spec):
    """Streamlit runs page.py anew on every rerun, and a dataclass made there costs about 1 ms
    each time; records.py, imported once, holds them."""
    tree = source_tree(spec, "page")
    assert not [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def _magic_writes(tree: ast.Module) -> list[int]:
    """Lines Streamlit's magic would turn into st.write: bare expressions that are not calls,
    awaits, yields or docstrings."""
    lines = []
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(parent, field, None)
            for i, node in enumerate(body if isinstance(body, list) else []):
                if not isinstance(node, ast.Expr) or isinstance(
                        node.value, ast.Call | ast.Await | ast.Yield | ast.YieldFrom):
                    continue
                docstring = (i == 0 and field == "body" and isinstance(node.value, ast.Constant)
                             and isinstance(parent, ast.Module | ast.FunctionDef | ast.ClassDef))
                if not docstring:
                    lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.folder)
def test_page_writes_nothing_by_magic(spec):
    """.streamlit/config.toml turns magic off (a page's first run then parses no syntax tree):
    a page must say st.write where it means it."""
    assert _magic_writes(source_tree(spec, "page")) == []
    assert tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["runner"][
        "magicEnabled"] is False


def test_the_magic_check_sees_a_bare_expression():
    assert _magic_writes(ast.parse('"""doc"""\nx = 1\nx\nst.write(x)\n"text"\n')) == [3, 5]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.folder)
def test_figures_make_no_streamlit_call(spec):
    tree = source_tree(spec, "figures")
    if tree is None:
        return
    imports = (node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom))
    imported = {alias.name for node in imports for alias in node.names}
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "streamlit" not in imported and not any(
        (m or "").startswith("streamlit") for m in modules)


STREAMLIT_CACHES = {"cache_resource", "cache_data"}
FUNCTOOLS_CACHES = {"lru_cache", "cache", "cached_property"}
# The one exception: the compiled catalogs, one per language for the process's life, read on
# every _() call (hundreds a run), where a Streamlit cache would hash the argument each time.
I18N = ROOT / "components" / "i18n.py"
# Per-process constants read on every picture or string drawn, where st.cache_resource's hashing
# of the argument on each call was most of the cost (measured: 0.1 ms a call, 144 calls a run for
# the Encoder's pictures): the catalogs of components/i18n.py and heatmap_image's colour tables.
HOT_CONSTANTS = {I18N, ROOT / "components" / "heatmap_image.py"}


def _streamlit_cached(tree: ast.Module) -> set[str]:
    """Names of the module-level functions decorated with st.cache_resource or st.cache_data
    (called or bare): found by the decorator in the source, the public way to tell."""
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Attribute) and target.attr in STREAMLIT_CACHES:
                found.add(node.name)
    return found


def caches_of(module: object, tree: ast.Module) -> dict[str, object]:
    """Every cache a module defines, by what it is: a results_cache (an instance of
    components.cache.CachedFunction) or a Streamlit cache; whatever attributes it has."""
    streamlit_cached = _streamlit_cached(tree)
    return {name: value for name, value in vars(module).items()
            if isinstance(value, CachedFunction) and getattr(value, "__module__", None) ==
            module.__name__ or name in streamlit_cached}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.folder)
def test_cached_functions_take_the_input_key_or_a_model(spec):
    """A page's caches are named get_<what they return> and take the InputKey first, or a
    model name (per-model tables), or plain settings, never the texts one by one; ``warm``
    takes the model name."""
    tree = source_tree(spec, "cache")
    if tree is None:
        return
    cache = importlib.import_module(f"pages.{spec.folder}.cache")
    warm = getattr(cache, "warm", None)
    if warm is not None:
        assert list(inspect.signature(warm).parameters) == ["model_name"]
    for name, function in caches_of(cache, tree).items():
        assert name.startswith("get_"), f"{name}: a cached function is named get_<what>"
        parameters = list(inspect.signature(function).parameters)
        assert not {"text_a", "text_b", "a", "b", "max_length", "truncation"} & set(
            parameters), f"{name} takes the texts one by one: take the InputKey"
        if isinstance(function, CachedFunction):   # a per-input result: the InputKey first
            first = inspect.signature(function).parameters[parameters[0]].annotation
            assert first in ("InputKey", InputKey) or parameters[0] in (
                "model_name", "model"), f"{name}: a per-input result is keyed on the InputKey"


def _python_files(*folders: str) -> list:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _python_files("pages", "components"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_one_caching_vocabulary(path):
    """No functools cache and no ResultStore of its own in pages/ or components/: per-input
    results go through results_cache (bounded by bytes), per-process constants through
    st.cache_resource (components/cache.py is where the stores are made)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if path in HOT_CONSTANTS:
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            assert not {a.name for a in node.names} & FUNCTOOLS_CACHES, (
                f"{path.name}:{node.lineno}: a functools cache; use results_cache or "
                "st.cache_resource")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                node.value.id == "functools"):
            assert node.attr not in FUNCTOOLS_CACHES, (
                f"{path.name}:{node.lineno}: functools.{node.attr}; use results_cache or "
                "st.cache_resource")
        if path != ROOT / "components" / "cache.py" and isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", None)
            assert callee != "ResultStore", (
                f"{path.name}:{node.lineno}: a ResultStore of its own; use results_cache")


def test_the_shape_test_finds_caches_by_what_they_are():
    """A results_cache without the InputKey first, or a cache not named get_, is caught; a
    plain helper with a .clear attribute is not a cache."""
    import types

    from components.cache import results_cache

    source = "import streamlit as st\n@st.cache_resource\ndef table(model_name): ...\n"
    module = types.ModuleType("probe")
    exec(compile(source, "probe", "exec"), module.__dict__)   # noqa: S102 - a fixed string

    def helper() -> None: ...
    helper.clear = lambda: None   # type: ignore[attr-defined]  # looks like a cache, is not one
    module.helper = helper
    module.get_rows = results_cache("probe", 0.0)(lambda key: key)
    module.get_rows.__module__ = "probe"
    assert set(caches_of(module, ast.parse(source))) == {"table", "get_rows"}


def _page_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every import of a module under pages/, at the top or inside a
    function: ``from pages import x`` counts as ``pages.x``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("pages.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "pages":
                found += [(node.lineno, f"pages.{a.name}") for a in node.names]
            elif node.module.startswith("pages."):
                found.append((node.lineno, node.module))
    return found


def cross_page_imports(folder: str, tree: ast.Module) -> list[str]:
    """The imports in a file of pages/<folder>/ that reach into another page's folder."""
    return [f"{line}: {module}" for line, module in _page_imports(tree)
            if module.split(".")[1] != folder]


@pytest.mark.parametrize("path", _python_files("pages"), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_imports_another_page(path):
    """A page is no other page's library: what two pages share lives in components/ (the
    built-in corpus's pass, the neighbours' table, the pair figure, the layer map of two
    models), so a page can change without breaking another."""
    folder = path.relative_to(ROOT / "pages").parts[0]
    assert cross_page_imports(folder, ast.parse(path.read_text())) == [], (
        f"pages/{folder} imports another page: move the shared piece into components/")


def test_the_cross_page_check_sees_every_form_of_import():
    source = ("from pages.compare import cache\nimport pages.pairs.figures\n"
              "from pages import contexts\ndef f():\n    from pages.lesson.records import L\n"
              "from pages.compare.figures import x\nfrom components.cache import get_model\n")
    assert cross_page_imports("compare", ast.parse(source)) == [
        "2: pages.pairs.figures", "3: pages.contexts", "5: pages.lesson.records"]


# A file of the app over LONG_FILE lines says why at its top: its module docstring holds a
# paragraph that starts "Long because" (the reason), or it is listed here with the reason.
LONG_FILE = 500
LONG_ALLOWED = {
    "core/contexts/corpus_data.py": "data: the built-in corpus's sentences, one a line",
    "core/models.py": "model loading's one decision path (folder, cache, hub, checks) in order",
    "serving/classpoll.py": "the class poll's store and its locking, read as one piece",
    "pages/encoder/page.py": "the Encoder's six sections; to be split by section as Pairs was",
    "pages/similarity/page.py": "the Similarity page's five sections; to be split by section",
}


def _app_files() -> list:
    return _python_files("core", "components", "frame", "serving", "pages")


def long_without_reason(path, allowed=LONG_ALLOWED, root=ROOT) -> bool:
    """Whether ``path`` is over LONG_FILE lines with no reason at its top or in the list."""
    text = path.read_text()
    if text.count("\n") <= LONG_FILE or str(path.relative_to(root)) in allowed:
        return False
    doc = ast.get_docstring(ast.parse(text)) or ""
    return not any(p.lstrip().startswith("Long because") for p in doc.split("\n\n"))


@pytest.mark.parametrize("path", _app_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_app_file_is_long_without_a_reason(path):
    """Small modules named for what they hold: a file over 500 lines says why at its top."""
    assert not long_without_reason(path), (
        f"{path.relative_to(ROOT)} has over {LONG_FILE} lines: split it, or say at its top "
        "why it is long (a docstring paragraph starting 'Long because')")


def test_the_long_file_check_reads_the_reason(tmp_path):
    body = "x = 1\n" * (LONG_FILE + 1)
    (tmp_path / "bare.py").write_text('"""A module."""\n' + body)
    (tmp_path / "said.py").write_text('"""A module.\n\nLong because it is one table."""\n'
                                      + body)
    (tmp_path / "short.py").write_text('"""A module."""\nx = 1\n')
    assert long_without_reason(tmp_path / "bare.py", root=tmp_path)
    assert not long_without_reason(tmp_path / "said.py", root=tmp_path)
    assert not long_without_reason(tmp_path / "short.py", root=tmp_path)
    assert not long_without_reason(tmp_path / "bare.py", {"bare.py": "listed"}, tmp_path)
