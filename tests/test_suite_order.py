"""The suite's own order: every file named in LONGEST_FIRST exists (a renamed file would quietly
go back to the end of the queue)."""

from __future__ import annotations

from tests.conftest import LONGEST_FIRST, ROOT


def test_every_file_handed_out_first_exists():
    missing = [name for name in LONGEST_FIRST if not (ROOT / "tests" / name).is_file()]
    assert not missing, missing
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
