"""Producer-id allocation that never hands out the same id twice, across restarts and crashes.

An idempotent producer's (producer id, epoch, sequence) triple is what lets a partition log drop
a retried batch. If a restarted broker reissued an id, a new producer could collide with the
sequence state of an old one and get its first batches rejected or, worse, dropped as
duplicates. So ids come from blocks reserved on disk *before* any id of the block is used:
the file ``producer_ids`` in the data dir holds the first id not yet reserved, written to a
temporary file, fsynced and renamed. A crash loses at most the unused rest of a block (ids are
64-bit; gaps are free), never reuses one.

Thread-safety: called from the event loop only; the fsync happens once per ``BLOCK_SIZE`` ids.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

BLOCK_SIZE = 1000
MAX_EPOCH = 32767
FILE_NAME = "producer_ids"


class ProducerIdAllocator:
    """Hands out fresh producer ids from disk-reserved blocks."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / FILE_NAME
        self._next = self._load()
        self._reserved_end = self._next  # nothing of the new range is reserved yet

    def _load(self) -> int:
        try:
            text = self._path.read_text().strip()
        except FileNotFoundError:
            return 0
        try:
            return int(text)
        except ValueError:
            # A corrupt file must not make us restart from 0: refuse to start instead.
            raise RuntimeError(f"{self._path}: cannot parse producer id block {text!r}") from None

    def _reserve(self, end: int) -> None:
        tmp = self._path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(f"{end}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path)
        dir_fd = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        self._reserved_end = end
        log.info("reserved producer id block", extra={"first": self._next, "end": end})

    def allocate(self) -> int:
        """A producer id no earlier call, in this or any previous run, has returned."""
        if self._next >= self._reserved_end:
            self._reserve(self._next + BLOCK_SIZE)
        pid = self._next
        self._next += 1
        return pid
