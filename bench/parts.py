"""The benchmark's table, written part by part: a part that fails loses only its own rows.

A full run takes about half an hour. Each part's rows go into the table as that part ends, and
the table is written to its file at once (``--out``, else bench/results/benchmark.md), so a part
that raises, or a run that is stopped, keeps every row measured before it. A part that fails gets
one row instead of its own: which part, and the error; the parts after it still run, and a part
that needs what a failed one measures says so instead of running.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from bench.report import Row

T = TypeVar("T")
ERROR_CHARS = 300   # a message longer than this is cut: the traceback is on stderr


@dataclass(frozen=True)
class Slot:
    """A place in the table, in the order the table shows them (not the order they run in)."""

    key: str
    part: str    # the table's "part" column, as the rows measured there say it
    title: str   # what the part measures, for the row that says it failed


def error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first if len(first) <= ERROR_CHARS else first[:ERROR_CHARS - 1] + "…"


@dataclass
class Table:
    """The rows measured so far, in their slots, and the file they are written to."""

    slots: Sequence[Slot]
    header: Callable[[], list[str]]      # lines above the table (the machine), read on each write
    footer: Callable[[], list[str]] = lambda: []
    out: Path | None = None
    rows: dict[str, list[Row]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)   # slot key -> what went wrong
    running: str | None = None
    stopped: str | None = None   # the part the run was stopped in (Ctrl+C, SIGTERM)

    def __post_init__(self) -> None:
        self._slots = {s.key: s for s in self.slots}

    def measure(self, keys: str | Sequence[str], run: Callable[[], T],
                rows: Callable[[T], dict[str, list[Row]] | list[Row]]) -> T | None:
        """Run one part; its rows (``rows(result)``: a list for one slot, or slot -> list) go
        into the table, which is written at once. Returns the part's result, or None if it
        failed: then its first slot says so and its other slots stay empty."""
        keys = [keys] if isinstance(keys, str) else list(keys)
        self.running = keys[0]
        try:
            result = run()
            made = rows(result)
        except Exception as exc:  # noqa: BLE001 - the run goes on; the table says what failed
            print(f"[bench] part {self._slots[keys[0]].title!r} failed:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            self.failed[keys[0]] = error_text(exc)
            self.rows.update({key: [] for key in keys[1:]})
            self.running = None
            self.write()
            return None
        except BaseException:   # stopped: what is measured stays written, and says where
            self.stop(keys[0])
            raise
        made = made if isinstance(made, dict) else {keys[0]: made}
        unknown = set(made) - set(keys)
        if unknown:
            raise ValueError(f"rows for slots the part did not name: {sorted(unknown)}")
        self.rows.update(made)
        self.running = None
        self.write()
        return result

    def stop(self, key: str | None = None) -> None:
        """The run is stopped in part ``key`` (None: the first part without rows yet): the
        table is written as it stands, and says where it stopped."""
        done = set(self.rows) | set(self.failed)
        pending = [s.key for s in self.slots if s.key not in done]
        self.stopped = key if key is not None else (pending[0] if pending else None)
        self.running = None
        self.write()

    def skip(self, key: str, needs: str) -> None:
        """A part that cannot run because ``needs`` (a slot key) failed."""
        self.failed[key] = f"not run: it needs {self._slots[needs].title}, which failed"
        self.write()

    def table_rows(self) -> list[Row]:
        from bench.report import Row  # the report's module loads torch: only when written

        out: list[Row] = []
        for slot in self.slots:
            if slot.key in self.failed:
                out.append(Row(slot.part, f"{slot.title}: failed", self.failed[slot.key],
                               "runs to its end", False))
            out += self.rows.get(slot.key, [])
        return out

    def status(self) -> list[str]:
        if self.stopped is not None:
            return [f"The run was stopped during {self._slots[self.stopped].title}: the parts "
                    "from there on have no rows.", ""]
        done = set(self.rows) | set(self.failed)
        if self.running is None and all(s.key in done for s in self.slots):
            failed = [self._slots[k].title for k in self.failed]
            return [f"Parts that failed (their rows say why): {'; '.join(failed)}.", ""] \
                if failed else []
        to_come = [s.title for s in self.slots if s.key not in done]
        return [f"Still running: {'; '.join(to_come)}.", ""]

    def text(self) -> str:
        from bench.report import markdown

        return "\n".join([*self.header(), "", *self.status(), markdown(self.table_rows()), "",
                          *self.footer()])

    def write(self) -> None:
        if self.out is not None:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.out.write_text(self.text())

    @property
    def ok(self) -> bool:
        return not self.failed and self.stopped is None
