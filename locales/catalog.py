"""Extract, update and check the translation catalogs (Babel), for maintainers and for CI.

    python3 locales/catalog.py update [DOMAIN ...]   # add new messages, drop removed ones
                                                     # (every domain, or only those named)
    python3 locales/catalog.py check      # what CI checks: every message translated, none stale,
                                          # the same {placeholders} in both languages, every
                                          # count through ngettext with its plural forms

One domain per page folder (``pages/<name>/`` -> ``<name>.po``) and ``app.po`` for the frame,
``components/``, ``serving/`` and ``core/`` (whose errors mark their templates with ``N_``).

A message with a count ("Skipped {n} lines") is a plural entry: ``ngettext(singular, plural, n)``
or ``N_plural(singular, plural)`` in the code, ``msgid`` / ``msgid_plural`` / ``msgstr[0]`` in the
catalog (Chinese has one form: ``Plural-Forms: nplurals=1; plural=0;``). A plain message that
reads as a count (a placeholder before a counted noun, ``COUNT``) is reported unless
``NOT_COUNTS`` says why its number is never 1.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"
TARGETS = ("zh",)
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "N_plural": (1, 2)}
SOURCES = ("app.py", "components", "core", "frame", "pages", "serving")
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}")
PLURAL_FORMS = {"zh": "nplurals=1; plural=0;"}
# A count in a message: a placeholder, then (maybe one word, then) a counted noun.
COUNT = re.compile(
    r"\{(\w+)(?:[:!][^{}]*)?\} (?:(?:more|new|distinct|word|corpus|filled|class|encoder|"
    r"Chinese|random) )?(?:lines|tokens|sentences|pairs|words|rows|characters|heads|columns|"
    r"items|fields|tags|examples|points|positions|components|steps|folds|classes|students|"
    r"seconds|minutes|hours|layers|parameters|dimensions|dims|entries|letters|cells|tensors|"
    r"labels|inputs|draws|times|scores|texts|files|models)\b")
# Placeholders whose number is a size or a limit, never 1 where a message shows it (a model's
# layers and heads, a vocabulary, a cap): "{limit} tokens" needs no singular.
NOT_COUNTS = frozenset({
    "limit", "max", "vocab", "hidden", "heads", "layers", "dims", "d", "params", "minutes",
    "hours", "seconds", "few", "least", "chars", "size", "length", "side", "cells", "minimum",
    "rounds", "times", "value", "loaded", "custom", "all", "part", "tokens", "sentences",
    "folds", "train", "inputs", "plain", "examples", "labels", "mask", "steps", "amount",
    "total", "h", "i", "rel", "ratio", "rate", "token", "pairs_limit",
})
Message = str | tuple[str, str]   # a plain message, or a count's (singular, plural)
# Messages with a count that is never 1 where they are shown (a model's size, a limit, a
# built-in corpus or example set, a count a message is shown only above 1), by their start.
NEVER_ONE = {
    "“{name}” has {count} parameters": "a BERT model's parameters",
    "The text has {count} tokens but the limit is": "more tokens than a limit",
    "Only {rows} rows for vectors of {dims} numbers": "the map refuses fewer than 2 rows",
    "Load the example set ({n} pairs)": "a built-in example set",
    "mean over {n} words": "the built-in corpus's words of a language",
    "Pick a token of sentence A (in the sidebar) and a layer": "a constant number of neighbours",
    "Corpus: {n} sentences, {t} tokens at {layers} layers": "the built-in corpus",
    "On {model}, the senses of “{word}”": "the built-in corpus's words of a language",
    "The first {k} of {n} columns are drawn": "shown only when more columns than drawn",
    "corpus of {n} sentences": "a published reference corpus",
    "These figures are for another model, {ref}": "a model's layers",
    "{p} heads put over {t:.0%} on the previous token": "a published reference's figures",
    "first {k} dimensions · {model}": "a constant number of dimensions",
    "Linear CKA of {model} against the same model with random weights": "the built-in corpus",
    "At most {pairs} pairs and {mb} MB.": "a limit",
    ", at most {n} tokens": "a limit",
    "{model}: {count} parameters": "a model's parameters",
    "{name}: {count} parameters, {share} of the model": "a part of a model: many parameters",
    "PCA needs at least {n} positions": "a constant minimum",
    "Windows wider than {n} positions": "a constant window",
    "The {n} positions are drawn one in every {stride}": "shown only for wide windows",
    "{n} parameters": "a head's parameters",
    "{n} class scores": "a head's outputs (2 or a vocabulary)",
    "{model}: {what} {cosine}<br>= sum over {n} dims": "a model's hidden size",
    "The input has {n} tokens; {w} are drawn at a time.": "shown only when more than drawn",
    "At {stage}, one dimension holds more than {limit}": "an input's tokens ([CLS], [SEP], ...)",
    "SentenceTransformer(model).encode([A, B]) then the cosine": "a limit",
    "Sentence {name} alone has {full} tokens": "shown only above a limit",
    "The mean cosine between tokens of two different sentences": "the built-in corpus",
    "segment {segment} ({count} tokens)": "one token has its own message",
    "{n} distinct rows": "one and two rows have their own messages",
    "Only the {shown} columns that hold a 1 are drawn": "an input's distinct ids ([CLS], [SEP])",
}
# Counts not yet in plural forms (issue 59): core's errors of fine-tuning and probes (to take
# core.errors.N_plural with how_many=), and messages with several counts, which need rewording.
# Remove an entry when its message is converted; one that matches no message is reported.
NOT_YET = {
}


def domain_of(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    return parts[1] if parts[0] == "pages" and len(parts) > 2 else "app"


def source_files() -> list[Path]:
    files = []
    for source in SOURCES:
        path = ROOT / source
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def extracted() -> dict[str, dict[Message, list[str]]]:
    """Domain -> message -> the places (file:line) that use it; a count's message is its
    (singular, plural)."""
    found: dict[str, dict[Message, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in source_files():
        for line, message, _comments, _context in extract_from_file(
            "python", str(path), keywords=KEYWORDS
        ):
            key: Message | None = None
            if isinstance(message, tuple) and len(message) == 2 and all(message):
                key = (str(message[0]), str(message[1]))
            elif isinstance(message, str) and message:
                key = message
            if key is not None:
                found[domain_of(path)][key].append(f"{path.relative_to(ROOT)}:{line}")
    return found


def unchecked_counts(message: str) -> list[str]:
    """The count placeholders of a plain ``message`` that are not sizes or limits: each means
    the message needs its plural forms (none for a message in NEVER_ONE or NOT_YET)."""
    if message.startswith(tuple(NEVER_ONE)) or message.startswith(tuple(NOT_YET)):
        return []
    return [name for name in COUNT.findall(message) if name not in NOT_COUNTS]


def stale_exceptions(messages: list[Message]) -> list[str]:
    """Entries of NEVER_ONE and NOT_YET that start no message with a count (converted, or
    reworded): each is to be dropped from its list."""
    counts = [m for m in messages if isinstance(m, str) and COUNT.search(m)]
    return [f"{name}: {start!r} starts no count message: drop it"
            for name, table in (("NEVER_ONE", NEVER_ONE), ("NOT_YET", NOT_YET))
            for start in table if not any(m.startswith(start) for m in counts)]


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
            for message, places in sorted(messages.items(), key=lambda m: str(m[0])):
                previous = old.get(message[0] if isinstance(message, tuple) else message)
                string: Any = previous.string if previous else ""
                if isinstance(message, tuple) and not isinstance(string, tuple):
                    string = (string,)
                new.add(message, string,
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
            path = po_path(code, domain)
            if path.is_file() and f"Plural-Forms: {PLURAL_FORMS[code]}" not in path.read_text(
                    encoding="utf-8"):
                out.append(f"{code}/{domain}: header lacks Plural-Forms: {PLURAL_FORMS[code]}")
            catalog = read_catalog(path, code)
            have: dict[Message, Any] = {
                (m.id if isinstance(m.id, str) else (m.id[0], m.id[1])): m.string
                for m in catalog if m.id}
            wanted = found.get(domain, {})
            for message, places in wanted.items():
                out += _entry_problems(f"{code}/{domain}", message, have.get(message), places[0])
            for message in have.keys() - wanted.keys():
                out.append(f"{code}/{domain}: stale (no longer in the code): {message!r:.70}")
    return out + stale_exceptions([m for messages in found.values() for m in messages])


def _entry_problems(where: str, message: Message, string: str | tuple[str, ...] | None,
                    place: str) -> list[str]:
    """What is wrong with one message's catalog entry (``string``: its translation(s), None
    when the catalog has no entry for it)."""
    if isinstance(message, str):
        if counts := unchecked_counts(message):
            return [f"{where}: a count without plural forms ({place}; ngettext or N_plural, "
                    f"{', '.join(counts)}): {message[:70]!r}"]
        if not string:
            return [f"{where}: untranslated ({place}): {message[:70]!r}"]
        if isinstance(string, tuple) or sorted(PLACEHOLDER.findall(message)) != sorted(
                PLACEHOLDER.findall(string)):
            return [f"{where}: placeholders differ: {message[:70]!r}"]
        return []
    singular, plural = message
    if not isinstance(string, tuple) or not string or not all(string):
        return [f"{where}: plural forms untranslated ({place}): {singular[:70]!r}"]
    wanted = sorted(PLACEHOLDER.findall(plural))
    if sorted(PLACEHOLDER.findall(singular)) != wanted or any(
            sorted(PLACEHOLDER.findall(form)) != wanted for form in string):
        return [f"{where}: placeholders differ: {singular[:70]!r}"]
    return []


if __name__ == "__main__":
    if sys.argv[1:2] == ["update"]:
        update(sys.argv[2:] or None)
    found = problems()
    print("\n".join(found) or "catalogs complete")
    sys.exit(1 if found and sys.argv[1:] == ["check"] else 0)
