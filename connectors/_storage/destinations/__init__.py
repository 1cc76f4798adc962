"""File bytes -> a store: the storage axis (``s3``, ``hdfs``).

The writer hands a destination one ``Batch`` at a time: every file holding a contiguous range of
offsets ``[start, next_offset)`` of one Kafka partition (one file per encoded partition). A
destination must make the batch durable *and* leave a commit marker from which ``recover`` can
later tell the offset to resume from. The invariant both implementations keep:

- ``recover`` returns ``R`` such that every record below ``R`` is in a complete, committed batch,
  and every file left over from an incomplete batch has a name that re-writing from ``R``
  reproduces (its start offset is the first offset >= ``R`` of its encoded partition), so the
  re-write overwrites it. That is why a crash anywhere yields no duplicate and no gap.

How each keeps it: S3 uploads the batch's first file (the one named ``start``) last and stores
``start``/``next`` in every object's metadata; HDFS writes each file under a temporary name,
renames it into place, then writes a marker file under ``logs.dir``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Batch:
    """Files of one Kafka partition covering ``[start, next_offset)``; ``files[0]`` starts at
    ``start``."""

    topic: str
    partition: int
    start: int
    next_offset: int
    files: list[tuple[str, bytes]] = field(default_factory=list)


class Destination(Protocol):
    def check(self) -> None:
        """Fails fast with a ConnectError telling the user what to fix (unreachable endpoint,
        missing bucket/directory, wrong credentials)."""

    def write_batch(self, batch: Batch) -> None:
        """Writes every file of ``batch`` durably, then its commit marker. RetriableError on a
        transient failure (the writer keeps the batch and tries again); ConnectError otherwise."""

    def recover(
        self, topic: str, partition: int, prefix: str, names: re.Pattern[str]
    ) -> int | None:
        """The offset to resume ``topic``/``partition`` from (see the module docstring), or None
        if nothing was ever committed. ``prefix`` is where its files live, ``names`` matches a
        file's base name and captures the start offset."""

    def close(self) -> None: ...


def file_name_pattern(topic: str, partition: int) -> re.Pattern[str]:
    """Matches ``<topic>+<partition>+<digits>.<ext>`` and captures the digits."""
    return re.compile(rf"^{re.escape(topic)}\+{partition}\+(\d+)\.")
