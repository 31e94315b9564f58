"""The shape every page has (README, "Adding a page"), checked on every page the menu lists."""

from __future__ import annotations

import ast
import importlib
import inspect
import tomllib

import pytest

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


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.folder)
def test_cached_functions_take_the_input_key_or_a_model(spec):
    """A page's cached functions are named get_<what they return> and take the InputKey first,
    or a model name (per-model tables), or plain settings, never the texts one by one; ``warm``
    takes the model name."""
    if source_tree(spec, "cache") is None:
        return
    cache = importlib.import_module(f"pages.{spec.folder}.cache")
    for name, function in inspect.getmembers(cache, callable):
        if getattr(function, "__module__", None) != cache.__name__ or name.startswith("_"):
            continue
        if name == "warm":
            assert list(inspect.signature(function).parameters) == ["model_name"]
        if not hasattr(function, "clear"):   # a plain helper, not a cache
            continue
        assert name.startswith("get_"), f"{name}: a cached function is named get_<what>"
        parameters = list(inspect.signature(function).parameters)
        assert not {"text_a", "text_b", "a", "b", "max_length", "truncation"} & set(
            parameters), f"{name} takes the texts one by one: take the InputKey"
