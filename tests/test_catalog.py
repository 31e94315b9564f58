"""The Chinese catalogs are complete: every message the code marks is translated, none is stale,
and each translation keeps the message's {placeholders} (a missing one would raise on screen);
every count goes through ngettext with its plural forms (Chinese: one), and the check fails a
count written without them."""

from __future__ import annotations

from components.i18n import _, set_language, translations
from locales.catalog import extracted, problems


def test_every_message_translated_none_stale_placeholders_kept():
    found = problems()
    assert not found, "\n".join(found[:40]) + f"\n({len(found)} in all)"


def test_catalogs_compile_and_translate():
    set_language("zh")
    try:
        messages = [m for domain in extracted().values() for m in domain]
        assert messages
        translated = [m for m in messages if translations("zh").gettext(m) != m]
        # Code spans and names may read the same in both languages; sentences may not.
        assert len(translated) >= 0.9 * len(messages)
        assert _("Sentence A") != "Sentence A"
    finally:
        set_language("en")
    assert _("Sentence A") == "Sentence A"


def test_counts_in_plural_forms_through_ngettext():
    """Every plural entry of the code is a Chinese plural entry with its one form; ngettext
    gives English its two forms and Chinese that one, placeholders kept."""
    from babel.messages.pofile import read_po

    from components.i18n import ngettext
    from locales.catalog import LOCALES

    plurals = [m for domain in extracted().values() for m in domain if isinstance(m, tuple)]
    assert len(plurals) >= 30
    entries = {}
    for po in sorted((LOCALES / "zh" / "LC_MESSAGES").glob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f, locale="zh")
        assert catalog.num_plurals == 1, po.name
        entries.update({m.id: m.string for m in catalog if m.pluralizable})
    for singular, plural in plurals:
        assert ngettext(singular, plural, 1) == singular
        assert ngettext(singular, plural, 0) == ngettext(singular, plural, 2) == plural
        (form,) = entries[(singular, plural)]
        set_language("zh")
        try:
            assert ngettext(singular, plural, 1) == ngettext(singular, plural, 7) == form
        finally:
            set_language("en")


def test_the_check_sees_a_count_without_plural_forms():
    """A count message written with _() fails the check, and so does a plural entry without its
    Chinese form or with a placeholder lost; a size (never 1) and a plural entry pass."""
    from locales.catalog import _entry_problems, unchecked_counts

    assert unchecked_counts("Skipped {n} lines: {lines}.") == ["n"]
    assert unchecked_counts("{k} of the {n} tokens are [UNK]") == ["n"]
    assert unchecked_counts("vocabulary {vocab} tokens, at most {limit} tokens") == []
    assert unchecked_counts("Load the example set ({n} pairs)") == []       # NEVER_ONE
    found = _entry_problems("zh/x", "Skipped {n} lines: {lines}.", "跳过了 {n} 行：{lines}。", "p")
    assert found and "a count without plural forms" in found[0]
    message = ("Skipped {n} line: {lines}.", "Skipped {n} lines: {lines}.")
    assert _entry_problems("zh/x", message, ("跳过了 {n} 行：{lines}。",), "p") == []
    assert "untranslated" in _entry_problems("zh/x", message, ("",), "p")[0]
    assert "untranslated" in _entry_problems("zh/x", message, None, "p")[0]
    assert "untranslated" in _entry_problems("zh/x", message, "跳过了 {n} 行", "p")[0]
    assert "placeholders" in _entry_problems("zh/x", message, ("跳过了 {n} 行。",), "p")[0]


def test_every_chinese_catalog_has_one_plural_form():
    from locales.catalog import LOCALES, PLURAL_FORMS

    for po in sorted((LOCALES / "zh" / "LC_MESSAGES").glob("*.po")):
        assert f"Plural-Forms: {PLURAL_FORMS['zh']}" in po.read_text(encoding="utf-8"), po.name


def test_the_exception_lists_name_messages_that_exist():
    """NEVER_ONE and NOT_YET shrink with the code: an entry naming no count message is reported
    by the check (here, one made up)."""
    from locales import catalog

    messages = [m for domain in extracted().values() for m in domain]
    assert catalog.stale_exceptions(messages) == []
    with_made_up = {**catalog.NOT_YET, "{n} unicorns were counted": "made up"}
    original = catalog.NOT_YET
    catalog.NOT_YET = with_made_up
    try:
        assert any("unicorns" in line for line in catalog.stale_exceptions(messages))
    finally:
        catalog.NOT_YET = original


def test_a_core_error_with_a_count_keeps_the_form_for_its_count():
    """core.errors.N_plural with how_many=: English picks the form for the count (str(error)
    too), and _() translates either form of the plural entry."""
    from core.errors import InputError, N_plural

    message = next(m for domain in extracted().values() for m in domain
                   if isinstance(m, tuple) and "is read as {count_a} word by" in m[0])
    values = {"number": 2, "text": "x", "model_a": "A", "count_b": 4, "model_b": "B"}
    one = InputError(N_plural(*message), how_many=1, count_a=1, **values)
    three = InputError(N_plural(*message), how_many=3, count_a=3, **values)
    assert (one.template, three.template) == message
    assert "read as 1 word by A" in str(one) and "read as 3 words by A" in str(three)
    assert _(one.template) == one.template
    set_language("zh")
    try:
        assert _(one.template) == _(three.template) == translations("zh").ngettext(*message, 1)
        assert _(one.template) != one.template
    finally:
        set_language("en")
