"""The published figures in a terminal: core.checks' rows as plain text, and an exit status.

    python3 -m serving.checks              # the table; exit 1 if a check that ran did not hold
    python3 -m serving.checks --sts FILE   # and the STS benchmark's test split, from FILE

The checks themselves (what is compared with what, and the verdicts) are core.checks, which the
/checks page draws too; this module only reads the file named on the command line and prints.
Texts are core's English templates, printed as they are (the page translates them). Nothing is
downloaded: a check whose model is not on this machine says the command that prepares it.
Exit status: 0 when every check that ran held, 1 when one did not, 2 when FILE cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from core.checks import (
    GROUP_LABELS,
    STS_EXPECTED,
    CheckRow,
    Group,
    Verdict,
    published_checks,
    sts_check,
    tolerance_text,
    verdict_text,
)
from core.errors import N_, InputError
from core.models import ModelBundle, load_model
from core.settings import DEFAULT_MODEL
from core.similarity import pair_lists

COMMAND = "python3 -m serving.checks"


def table_lines(rows: Sequence[CheckRow]) -> list[str]:
    """The table as plain text, two or three lines a check."""
    width = max(len(verdict_text(r)) for r in rows) + 2
    lines = []
    for group in Group:
        members = [r for r in rows if r.group == group]
        if not members:
            continue
        lines += ["", GROUP_LABELS[group]]
        for row in members:
            pad = " " * width
            lines.append(f"{verdict_text(row):<{width}}{row.model} · {row.text(row.what)}")
            ours = row.ours if row.ours is not None else "not run here"
            lines.append(f"{pad}published {row.published} · source: {row.source}")
            lines.append(f"{pad}ours {ours} · tolerance {tolerance_text(row)}")
            if row.note:
                lines.append(f"{pad}{row.text(row.note)}")
            if row.command:
                lines.append(f"{pad}to run it: {row.command}")
    return lines


def summary(rows: Sequence[CheckRow]) -> str:
    count = {v: sum(1 for r in rows if r.verdict == v) for v in Verdict}
    return (f"{count[Verdict.HELD]} held, {count[Verdict.EXPLAINED]} explained, "
            f"{count[Verdict.OFF]} off; not run here: {count[Verdict.NEEDS_MODEL]} (a model "
            f"not on this machine), {count[Verdict.NEEDS_FILE]} (a file to give).")


def read_sts(bundle: ModelBundle, path: Path) -> CheckRow:
    """The STS row from the file at ``path``. OSError when it cannot be read, InputError when no
    pair can be read from it (or ``sts_check`` refuses its pairs)."""
    parsed = pair_lists.read_file(path.read_bytes())
    if parsed.refused or not parsed.pairs:
        raise InputError(N_("No pair could be read from this file. Give {expected}."),
                         expected=STS_EXPECTED)
    return sts_check(bundle, parsed.pairs, parsed.scores)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Published figures reproduced live; exit status 1 when a check that could "
                    "run did not hold.")
    parser.add_argument("--sts", type=Path, metavar="FILE",
                        help="the STS benchmark's test split as CSV or TSV (sentence 1, "
                             "sentence 2, score): its cosine Spearman against MTEB's")
    args = parser.parse_args(argv)
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()   # this process's terminal only
    bundle = load_model(DEFAULT_MODEL)
    sts = None
    if args.sts is not None:
        try:
            sts = read_sts(bundle, args.sts)
        except (OSError, InputError) as exc:
            print(f"{args.sts}: {exc}", file=sys.stderr)
            return 2
    rows = published_checks(bundle, sts)
    print(f"Published figures, reproduced live by {COMMAND} "
          f"({DEFAULT_MODEL} is the embedded model)")
    print("\n".join(table_lines(rows)))
    print()
    print(summary(rows))
    return 0 if all(r.held for r in rows if r.ran) else 1


if __name__ == "__main__":
    sys.exit(main())
