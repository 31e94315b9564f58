"""Where a process's resident memory lives, by kind of mapping (Linux ``/proc/PID/smaps``).

RSS alone cannot say whether memory that stays after a class is the allocator's heaps, Python's
own arenas, thread stacks, or library code paged in for the first time. The kernel's map can:
each mapping's ``Rss`` summed by what the mapping is.

- ``code and data files``: file-backed (shared libraries, the model's safetensors, fonts): pages
  the kernel can drop and read again.
- ``main heap``: glibc's main arena (``[heap]``, grown with brk).
- ``other arenas``: glibc's other arenas, anonymous mappings reserved 64 MB at a time.
- ``small anonymous``: anonymous mappings under 4 MB: Python's object arenas (1 MB each in
  3.11), large allocations glibc served with their own mmap, torch's and MKL's own buffers.
- ``large anonymous``: the other anonymous mappings (large arrays and tensors, thread stacks'
  reservations of 8 MB).
- ``stacks``: ``[stack]`` (the main thread's).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ARENA_RESERVE = 64 * 1024 * 1024   # glibc's HEAP_MAX_SIZE on 64-bit: a non-main arena's mapping
SMALL = 4 * 1024 * 1024
_HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$")


def _kind(size: int, name: str) -> str:
    if name.startswith("/"):
        return "code and data files"
    if name == "[heap]":
        return "main heap"
    if name.startswith("[stack"):
        return "stacks"
    if name.startswith("["):
        return "other"
    if size == ARENA_RESERVE:
        return "other arenas"
    return "small anonymous" if size < SMALL else "large anonymous"


def rss_by_kind(pid: int) -> Counter[str]:
    """Resident bytes of process ``pid`` by kind of mapping; empty if it cannot be read."""
    kinds: Counter[str] = Counter()
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return kinds
    kind = "other"
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            start, end, name = int(header[1], 16), int(header[2], 16), header[3].strip()
            kind = _kind(end - start, name)
        elif line.startswith("Rss:"):
            kinds[kind] += int(line.split()[1]) * 1024
    return kinds


def growth(before: Counter[str], after: Counter[str]) -> dict[str, int]:
    """What each kind gained (or lost) from ``before`` to ``after``, in bytes, largest first."""
    kinds = set(before) | set(after)
    change = {k: after.get(k, 0) - before.get(k, 0) for k in kinds}
    return dict(sorted(change.items(), key=lambda kv: -abs(kv[1])))
