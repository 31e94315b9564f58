"""Streamlit's and huggingface_hub's private names: each used only in its library's one adapter
(serving/streamlit_private.py, serving/hub_private.py), and still there in the installed library;
transformers' private names used nowhere outside such an adapter (serving/*_private.py, none today:
core reaches transformers through its public API only, e.g. ``set_attn_implementation``).

(a) Every name an adapter lists exists in the installed version; when an upgrade removes one, the
    test names it and the version the adapter was written for.
(b) A scan of every module's syntax tree (app.py, core/, serving/, components/, pages/, frame/,
    bench/): outside the two adapters, no import of a private module or name of either library
    (a path part or a name with a leading underscore, or the undocumented modules and functions
    the adapters wrap), no private attribute on a name imported from them, and none of the
    adapters' private attributes or parameters by name. For transformers, whose private names sit
    on objects the app gets from it (a model's config, a tokenizer), every private attribute of
    its config, model and tokenizer classes and instances in the installed version, and the
    private keywords its ``from_pretrained`` reads, are looked for by name (on anything but
    ``self`` and ``cls``, whose private names are the app's own).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from serving import hub_private, streamlit_private
from tests.conftest import ROOT

LIBRARIES = ("streamlit", "huggingface_hub", "transformers")
# serving/ holds one adapter module per library whose private names the app needs.
ADAPTERS = {p.relative_to(ROOT).as_posix() for p in (ROOT / "serving").glob("*_private.py")}
SCANNED = ("app.py", "core", "serving", "components", "pages", "frame", "bench")
# Modules and functions without an underscore that are still not the libraries' documented API:
# used only through the adapters.
UNDOCUMENTED = {"streamlit.runtime.pages_manager", "huggingface_hub.file_download.http_get"}
# Attribute and parameter names the adapters touch, looked for by name anywhere (``_lock`` is
# too common a name for that: it is caught on names imported from the libraries only).
LISTED = ({a for _m, _c, a in streamlit_private.PRIVATE_NAMES}
          | {p or a for _m, a, p in hub_private.PRIVATE_NAMES}) - {"_lock", "tqdm_class",
                                                                     "list_sessions", "http_get"}


def _transformers_private_names() -> frozenset[str]:
    """The private attributes of transformers' config, model and tokenizer (classes and built
    instances) in the installed version, but not torch's (nn.Module's own), and the private
    keywords its loading code pops from ``**kwargs``."""
    import re

    import torch
    import transformers
    from transformers import (
        BertConfig,
        BertForPreTraining,
        BertModel,
        BertTokenizerFast,
        PretrainedConfig,
        PreTrainedModel,
        PreTrainedTokenizerBase,
    )

    config = BertConfig(vocab_size=8, hidden_size=4, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=4)
    owners = (PretrainedConfig, BertConfig, config, PreTrainedModel, BertModel, BertModel(config),
              BertForPreTraining, PreTrainedTokenizerBase, BertTokenizerFast)
    def private(n: str) -> bool:
        return n.startswith("_") and not n.startswith("__")

    names = {n for o in owners for n in {*dir(o), *vars(o)} if private(n)}
    names -= {n for n in {*dir(torch.nn.Module), *vars(torch.nn.Linear(1, 1))} if private(n)}
    package = Path(transformers.__file__).parent
    for source in ("modeling_utils.py", "configuration_utils.py", "tokenization_utils_base.py"):
        text = (package / source).read_text(encoding="utf-8")
        names |= set(re.findall(r'kwargs\.(?:pop|get)\("(_[a-z]\w*)"', text))
    return frozenset(names)


TRANSFORMERS_PRIVATE = _transformers_private_names()


# ---------------------------------------------------------------- (a) the names are there


def _has_streamlit_name(module: str, cls: str, attr: str) -> bool:
    owner = getattr(importlib.import_module(module), cls)
    if hasattr(owner, attr):
        return True
    # An attribute set per instance: look for it where the class sets it.
    return f"self.{attr} =" in inspect.getsource(owner.__init__) or f"self.{attr}:" in (
        inspect.getsource(owner.__init__))


@pytest.mark.parametrize("module,cls,attr", streamlit_private.PRIVATE_NAMES,
                         ids=[f"{c}.{a}" for _m, c, a in streamlit_private.PRIVATE_NAMES])
def test_streamlit_still_has_what_the_adapter_uses(module, cls, attr):
    import streamlit

    try:
        found = _has_streamlit_name(module, cls, attr)
    except (ImportError, AttributeError):
        found = False
    assert found, (f"Streamlit {streamlit.__version__} has no {module}.{cls}.{attr}, which "
                   f"serving/streamlit_private.py uses (written for {streamlit_private.PINNED}): "
                   "find what replaced it there, or a public API that does the job")


@pytest.mark.parametrize("module,name,parameter", hub_private.PRIVATE_NAMES,
                         ids=[f"{n}{'(' + p + ')' if p else ''}"
                              for _m, n, p in hub_private.PRIVATE_NAMES])
def test_huggingface_hub_still_has_what_the_adapter_uses(module, name, parameter):
    import huggingface_hub

    try:
        owner = getattr(importlib.import_module(module), name)
        found = not parameter or parameter in inspect.signature(owner).parameters
    except (ImportError, AttributeError):
        found = False
    what = f"{module}.{name}" + (f"'s parameter {parameter}" if parameter else "")
    assert found, (f"huggingface_hub {huggingface_hub.__version__} has no {what}, which "
                   f"serving/hub_private.py uses (written for {hub_private.PINNED}): find what "
                   "replaced it there, or a public API that does the job")


def test_the_adapters_work_on_the_installed_versions():
    """What the adapters return, read for real: the client factory in use is huggingface_hub's
    default here, and outside a server there are no sessions to read."""
    from huggingface_hub import set_client_factory

    assert callable(hub_private.client_factory_in_use())
    mine = hub_private.client_factory_in_use()
    set_client_factory(mine)   # what hub_settings puts back: the same factory
    assert hub_private.client_factory_in_use() is mine
    assert streamlit_private.session_ids() is None
    assert streamlit_private.media_session_ids() == set()


# ---------------------------------------------------------------- (b) only the adapters use them


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_uses(source: str) -> list[str]:
    """Where ``source`` touches a private name of Streamlit, huggingface_hub or transformers:
    lines to show."""
    tree = ast.parse(source)
    found: list[str] = []
    library_names: set[str] = set()   # local names bound to the libraries or their members

    def library(module: str) -> bool:
        return module.split(".", maxsplit=1)[0] in LIBRARIES

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if library(alias.name):
                    library_names.add((alias.asname or alias.name).split(".")[0])
                    if any(_private(p) for p in alias.name.split(".")) or (
                            alias.name in UNDOCUMENTED):
                        found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and library(node.module):
            parts = node.module.split(".")
            for alias in node.names:
                library_names.add(alias.asname or alias.name)
                full = f"{node.module}.{alias.name}"
                if (any(_private(p) for p in parts) or _private(alias.name)
                        or node.module in UNDOCUMENTED or full in UNDOCUMENTED):
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            root: ast.expr = node
            chain = []
            while isinstance(root, ast.Attribute):
                chain.append(root.attr)
                root = root.value
            if isinstance(root, ast.Name) and root.id in library_names and any(
                    _private(a) for a in chain):
                found.append(f"line {node.lineno}: {root.id}.{'.'.join(reversed(chain))}")
            elif node.attr in LISTED:
                found.append(f"line {node.lineno}: .{node.attr}")
            elif node.attr in TRANSFORMERS_PRIVATE and not (
                    isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in LISTED | TRANSFORMERS_PRIVATE:
            found.append(f"line {node.value.lineno}: {node.arg}=")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in LISTED | TRANSFORMERS_PRIVATE):
            found.append(f"line {node.lineno}: {node.value!r}")
    return sorted(set(found))


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for item in SCANNED:
        path = ROOT / item
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [p for p in files if "__pycache__" not in p.parts]


def test_no_private_name_outside_the_adapters():
    wrong = []
    for path in scanned_files():
        name = path.relative_to(ROOT).as_posix()
        if name in ADAPTERS:
            continue
        wrong += [f"{name} {use}" for use in private_uses(path.read_text(encoding="utf-8"))]
    assert not wrong, ("private names of Streamlit, huggingface_hub or transformers outside "
                       f"the adapters ({', '.join(sorted(ADAPTERS))}):\n" + "\n".join(wrong))


def test_the_adapters_are_where_the_names_are():
    """The scan sees the adapters' own uses (so it would see them anywhere else)."""
    for adapter in ADAPTERS:
        assert private_uses((ROOT / adapter).read_text(encoding="utf-8")), adapter


def test_the_scan_sees_what_it_must():
    sample = """
import streamlit as st
from huggingface_hub.utils import _http
from huggingface_hub.file_download import http_get
from streamlit.runtime.pages_manager import PagesManager
from huggingface_hub import constants

def f(rt, media):
    st.runtime._private_thing
    rt._session_mgr.list_sessions()
    getattr(media, "_files_by_session_and_coord")
    http_get("u", None, _nb_retries=0)
    constants._secret = 1
    rt.media_file_mgr.clear_session_refs("x")   # public: fine
    self._lock = None                             # not a library's name: fine
"""
    uses = "\n".join(private_uses(sample))
    for expected in ("import _http", "import http_get", "import PagesManager",
                     "st.runtime._private_thing", "._session_mgr",
                     "'_files_by_session_and_coord'", "_nb_retries=", "constants._secret"):
        assert expected in uses, (expected, uses)
    assert "clear_session_refs" not in uses and "_lock" not in uses


def test_the_scan_sees_transformers_private_names():
    """transformers' private names reached through the objects it returns (a model's config),
    by getattr, as a keyword or imported; the app's own ``self._tokenizer`` is not one."""
    sample = """
from transformers import BertModel
from transformers.modeling_utils import _init_weights
import transformers.models.bert.modeling_bert as mb

def f(bundle, model):
    if bundle.config._attn_implementation != "eager":
        model.config._attn_implementation_internal = "eager"
    getattr(bundle.model.config, "_attn_implementation")
    BertModel.from_pretrained("x", _from_auto=True)
    mb._private_helper
    model.set_attn_implementation("eager")      # public: fine
    self._tokenizer = None                       # the app's own attribute: fine
"""
    uses = "\n".join(private_uses(sample))
    for expected in ("line 7: ._attn_implementation", "._attn_implementation_internal",
                     "'_attn_implementation'", "_from_auto=", "import _init_weights",
                     "mb._private_helper"):
        assert expected in uses, (expected, uses)
    assert "set_attn_implementation" not in uses and "_tokenizer" not in uses
    assert {"_attn_implementation", "_from_auto"} <= TRANSFORMERS_PRIVATE
