"""Replacing a small metadata file so a crash leaves either the old or the new version.

Write ``<name>.tmp``, optionally fsync it, rename it over ``<name>`` (rename is atomic on
POSIX file systems), optionally fsync the directory so the rename itself is durable. Used for
``topics.json``, ``log-start-offset``, ``recovery-point``, the producer-state snapshot and the
cleaner checkpoint. Leftover ``.tmp`` files are deleted by recovery.
"""

from __future__ import annotations

import os
from pathlib import Path

from broker.log import files


def write_atomically(path: Path, data: bytes, *, sync: bool = True, sync_dir: bool = False) -> None:
    tmp = files.temp_file(path)
    with open(tmp, "wb") as fh:
        fh.write(data)
        if sync:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if sync_dir:
        fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Makes renames and unlinks in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
