"""README "Adding a page", followed step by step on a copy of the tree: the page it makes passes
the suite's page checks (its shape, its catalog, every bad input, an AppTest run of each tab)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

from tests.conftest import ROOT

NAME, TITLE = "demo", "Demo"
SKIP = shutil.ignore_patterns(".git", "artifacts", "__pycache__", "*.pyc", ".pytest_cache",
                              "results")


def run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def step_1_copy_the_template(tree: Path) -> None:
    shutil.copytree(tree / "docs" / "new_page", tree / "pages" / NAME)
    for path in (tree / "pages" / NAME).glob("*.py"):
        text = path.read_text().replace("new_page", NAME).replace("New page", TITLE)
        path.write_text(text)


def step_4_register(tree: Path) -> None:
    page_list = tree / "frame" / "page_list.py"
    text = page_list.read_text()
    text, n = re.subn(r"(\nPAGES = \((?:\n    .*)+?\n)\)",
                      rf'\1    PageSpec("{NAME}", N_("{TITLE}"), "{NAME}", ":material/science:", '
                      r"MODEL),\n)", text, count=1)
    assert n == 1, "PAGES in frame/page_list.py"
    page_list.write_text(text)
    blurbs = tree / "pages" / "home" / "figures.py"
    text, n = re.subn(r"(PAGE_BLURBS = \{\n)", rf'\1    "{NAME}": N_("A page made from the '
                      r'template."),\n', blurbs.read_text(), count=1)
    assert n == 1, "PAGE_BLURBS in pages/home/figures.py"
    blurbs.write_text(text)


def step_5_translate(tree: Path) -> None:
    update = run(["locales/catalog.py", "update", NAME, "app", "home"], tree)
    assert update.returncode == 0, update.stderr
    for domain in (NAME, "app", "home"):
        path = tree / "locales" / "zh" / "LC_MESSAGES" / f"{domain}.po"
        with path.open("rb") as f:
            catalog = read_po(f, locale="zh")
        for message in catalog:
            if message.id and not message.string:   # "write the Chinese": a stand-in here
                message.string = f"【示例】{message.id}"
        with path.open("wb") as f:
            write_po(f, catalog, width=100)
    check = run(["locales/catalog.py", "check"], tree)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_page_added_by_the_readme_steps_passes_the_page_checks(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=SKIP)
    step_1_copy_the_template(tree)
    step_4_register(tree)
    step_5_translate(tree)
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", f"pages/{NAME}"], cwd=tree,
                          capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout
    checks = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_page_shape.py",
                  "tests/test_catalog.py", "tests/test_bad_inputs_text.py",
                  "tests/test_bad_inputs_url.py", "-k",
                  f"{NAME} or catalog"], tree, timeout=900)
    assert checks.returncode == 0, checks.stdout[-3000:]
    passed = re.search(r"(\d+) passed", checks.stdout)
    assert passed and int(passed.group(1)) >= 10, checks.stdout[-500:]
    assert "failed" not in checks.stdout
