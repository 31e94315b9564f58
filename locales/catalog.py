"""Extract, update and check the translation catalogs (Babel), for maintainers and for CI.

    python3 locales/catalog.py update [DOMAIN ...]   # add new messages, drop removed ones
                                                     # (every domain, or only those named)
    python3 locales/catalog.py check      # what CI checks: every message translated, none stale,
                                          # the same {placeholders} in both languages

One domain per page folder (``pages/<name>/`` -> ``<name>.po``) and ``app.po`` for the frame,
``components/``, ``serving/`` and ``core/`` (whose errors mark their templates with ``N_``).
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"
TARGETS = ("zh",)
KEYWORDS = {"_": None, "N_": None}
SOURCES = ("app.py", "components", "core", "frame", "pages", "serving")
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}")


def domain_of(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    return parts[1] if parts[0] == "pages" and len(parts) > 2 else "app"


def source_files() -> list[Path]:
    files = []
    for source in SOURCES:
        path = ROOT / source
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def extracted() -> dict[str, dict[str, list[str]]]:
    """Domain -> message -> the places (file:line) that use it."""
    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in source_files():
        for line, message, _comments, _context in extract_from_file(
            "python", str(path), keywords=KEYWORDS
        ):
            if isinstance(message, str) and message:
                found[domain_of(path)][message].append(f"{path.relative_to(ROOT)}:{line}")
    return found


def po_path(code: str, domain: str) -> Path:
    return LOCALES / code / "LC_MESSAGES" / f"{domain}.po"


def read_catalog(path: Path, code: str) -> Catalog:
    if not path.is_file():
        return Catalog(locale=code, domain=path.stem)
    with path.open("rb") as f:
        return read_po(f, locale=code)


def update(domains: list[str] | None = None) -> None:
    """Add every new message to its domain's catalog (empty translation) and drop removed ones;
    translations already written are kept."""
    for code in TARGETS:
        for domain, messages in extracted().items():
            if domains and domain not in domains:
                continue
            path = po_path(code, domain)
            old = read_catalog(path, code)
            new = Catalog(locale=code, domain=domain, project="BERT Embedding Explorer")
            for message, places in sorted(messages.items()):
                previous = old.get(message)
                new.add(message, previous.string if previous else "",
                        locations=[(p.rsplit(":", 1)[0], int(p.rsplit(":", 1)[1]))
                                   for p in places])
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as f:
                write_po(f, new, width=100, sort_output=True)


def problems() -> list[str]:
    """Everything wrong with the catalogs, one line each; empty when they are complete."""
    found = extracted()
    out = []
    for code in TARGETS:
        domains = set(found) | {p.stem for p in (LOCALES / code / "LC_MESSAGES").glob("*.po")}
        for domain in sorted(domains):
            catalog = read_catalog(po_path(code, domain), code)
            have = {m.id: m.string for m in catalog if m.id}
            wanted = found.get(domain, {})
            for message, places in wanted.items():
                if not have.get(message):
                    out.append(f"{code}/{domain}: untranslated ({places[0]}): {message[:70]!r}")
                elif sorted(PLACEHOLDER.findall(message)) != sorted(
                        PLACEHOLDER.findall(have[message])):
                    out.append(f"{code}/{domain}: placeholders differ: {message[:70]!r}")
            for message in have.keys() - wanted.keys():
                out.append(f"{code}/{domain}: stale (no longer in the code): {message[:70]!r}")
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["update"]:
        update(sys.argv[2:] or None)
    found = problems()
    print("\n".join(found) or "catalogs complete")
    sys.exit(1 if found and sys.argv[1:] == ["check"] else 0)
