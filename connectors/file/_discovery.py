"""Which paths a source task follows: globs expanded, then split across tasks by a hash.

Each task expands every pattern itself and keeps the paths with
``crc32(path) % task.count == task.index``. The split is deterministic (the same path always
belongs to the same task, across restarts and on every worker) and needs no coordination
when a glob later matches a new file: exactly one task adopts it, without a task
reconfiguration. Paths are kept as the user wrote them (relative paths stay relative) because
the path is the source partition, ``{"filename": path}``, as in Kafka Connect — offsets it
committed for ``test.txt`` are found again.
"""

from __future__ import annotations

import glob
import os
import zlib
from collections.abc import Iterable

from connectors.file.config import has_glob


def owner(path: str, task_count: int) -> int:
    """The index of the task that follows ``path``."""
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % task_count


def expand(patterns: Iterable[str], task_index: int, task_count: int) -> list[str]:
    """Paths this task follows now, sorted. Literal paths are included even when missing
    (they are waited for); globs contribute the regular files they match."""
    found: set[str] = set()
    for pattern in patterns:
        matches: Iterable[str] = (pattern,)
        if has_glob(pattern):
            matches = (p for p in glob.iglob(pattern, recursive=True) if os.path.isfile(p))
        found.update(p for p in matches if owner(p, task_count) == task_index)
    return sorted(found)
