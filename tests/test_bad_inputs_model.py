"""Model names a link or the picker gives (DESIGN.md, "Bad input"), in AppTest: names this
server does not offer, folders that are not a BERT, names no file system takes, the allowlist.

For each one: no uncaught exception, one clear error that names what was asked for (as text) and
the model the page stays on, within the load deadline, and the page drawn in full on that model.
The router handles the model before any page runs, so each case runs on three pages of different
shapes (tests/bad_inputs.py, ROUTER_PAGES).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from core import DEFAULT_MODEL
from tests.bad_inputs import (
    CODE_SPAN,
    GOOD,
    HOME,
    IMG,
    ROOT,
    ROUTER_PAGES,
    as_read,
    assert_no_markup,
    model_in_use,
    page_id,
    reference,
    set_inputs,
    signature,
    values,
)
from tests.conftest import LOAD_DEADLINE_S, assert_clean, open_app
from tests.model_folders import (
    make_bin_only_folder,
    make_huge_config_folder,
    make_not_bert_folder,
    make_tiny_bert_folder,
)

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
