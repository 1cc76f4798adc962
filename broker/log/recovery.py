"""Bringing a partition directory back to a consistent state when it is opened.

What a crash can leave behind, and what happens to it here:

- A torn or corrupt tail in a ``.log`` (process killed mid-``write``, power loss before the
  page cache reached the disk): every segment's batches from its last offset-index entry to the
  end are re-read and CRC-checked, and so is everything after the partition's *recovery
  point* (the log end offset at the last successful ``flush``, kept in ``recovery-point``),
  because after a power cut unflushed pages may be missing anywhere. The file is truncated at
  the first batch that is cut short, fails its CRC, is not magic v2, or whose base offset goes
  backwards; later segments are then deleted too, so the log stays a prefix (Kafka's rule).
  Flushed batches before the last index entry were CRC-checked when appended and are not
  re-read, so a cleanly closed log (recovery point = log end) opens in one index interval per
  segment.
- A missing, malformed or stale index (the index is written lazily, see ``_index``): entries
  past the end of the log are dropped, an index whose last entry does not name the batch at
  its position is rebuilt from a scan of the ``.log``, and the file is rewritten.
- Cleaner leftovers: the ``cleaning/`` build directory and ``*.cleaned`` files are
  incomplete and deleted; a ``<base>.log.swap`` is a
  complete compacted segment and replaces ``<base>.log`` (its offset and time indexes are
  rebuilt, its ``.txnindex.swap`` replaces the transaction index). Index or temp files
  without a ``.log`` are deleted.
"""

from __future__ import annotations

import logging
import os
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

from broker.errors import BrokerError
from broker.log import batch, files
from broker.log._index import IndexCorruptError
from broker.log.segment import Segment

log = logging.getLogger(__name__)

_BASE = struct.Struct(">q")
_CHUNK = 1 << 20


def recover_directory(directory: Path, ident: str) -> None:
    """Finishes or discards interrupted cleaner swaps and removes stray files."""
    build_dir = directory / files.CLEANER_BUILD_DIR
    if build_dir.is_dir():
        shutil.rmtree(build_dir)
    for path in sorted(directory.iterdir()):
        name = path.name
        if name.endswith((files.CLEANED_SUFFIX, files.TEMP_SUFFIX)):
            log.info("%s deleting incomplete file %s", ident, name)
            path.unlink()
        elif name.endswith(files.LOG_SUFFIX + files.SWAP_SUFFIX):
            target = path.with_name(name[: -len(files.SWAP_SUFFIX)])
            base = files.base_offset_of(path)
            log.warning("%s completing interrupted compaction swap of %s", ident, target.name)
            os.replace(path, target)
            if base is not None:
                files.index_file(directory, base).unlink(missing_ok=True)
                files.time_index_file(directory, base).unlink(missing_ok=True)
                _finish_txn_index_swap(directory, base)
    for path in sorted(directory.iterdir()):  # second pass: index swaps and orphans
        name = path.name
        if name.endswith(files.SWAP_SUFFIX):
            path.unlink()  # an index .swap: the .log swap above forces a rebuild anyway
        elif name.endswith((files.INDEX_SUFFIX, files.TIME_INDEX_SUFFIX, files.TXN_INDEX_SUFFIX)):
            base = files.base_offset_of(path)
            if base is None or not files.log_file(directory, base).exists():
                log.info("%s deleting orphan index %s", ident, name)
                path.unlink()


def _finish_txn_index_swap(directory: Path, base: int) -> None:
    """The cleaner's ``.txnindex.swap`` belongs to the ``.log.swap`` just completed: it is the
    only index matching that log (an old entry whose marker the cleaner dropped would hide a
    producer's later transactions), so it replaces the old one; an empty one means none."""
    final = files.txn_index_file(directory, base)
    swap = files.with_suffix(final, files.SWAP_SUFFIX)
    if not swap.exists():
        return
    if swap.stat().st_size:
        os.replace(swap, final)
    else:
        final.unlink(missing_ok=True)
        swap.unlink()


def recover_segments(
    directory: Path, ident: str, new_segment: Callable[[int], Segment], recovery_point: int
) -> list[Segment]:
    """Opens and recovers every segment, oldest first (see the module docstring).

    Segments holding data past ``recovery_point`` are CRC-checked from it. If a segment is
    truncated inside, the later ones are deleted: the log must stay a prefix of what was
    written, as in Kafka.
    """
    bases = files.segment_base_offsets(directory)
    segments: list[Segment] = []
    for i, base in enumerate(bases):
        segment = new_segment(base)
        unflushed = i + 1 == len(bases) or bases[i + 1] > recovery_point
        dropped = recover_segment(segment, ident, recovery_point if unflushed else None)
        segments.append(segment)
        if dropped and i + 1 < len(bases):
            log.error(
                "%s corrupt data inside %s: deleting %d later segment(s) to keep a prefix",
                ident, segment.path.name, len(bases) - i - 1,
            )  # fmt: skip
            for later in bases[i + 1 :]:
                for path in files.segment_files(directory, later):
                    path.unlink(missing_ok=True)
            break
    return segments


def recover_segment(segment: Segment, ident: str, recovery_point: int | None = None) -> int:
    """Makes one segment consistent; returns the number of bytes truncated from its tail.

    Batches are CRC-checked from the last offset-index entry, or from ``recovery_point`` (the
    offset up to which the log was fsynced) if that is earlier: data past it may have been
    lost or zero-filled anywhere, not only at the tail, by a power cut.
    """
    rebuild = False
    try:
        segment.load_indexes()
    except IndexCorruptError as exc:
        log.warning("%s rebuilding index of %s: %s", ident, segment.path.name, exc)
        rebuild = True
    if not segment.offset_index.path.exists() or not segment.time_index.path.exists():
        if segment.size:
            log.warning("%s rebuilding missing index of %s", ident, segment.path.name)
        rebuild = True
    if not rebuild:
        segment.offset_index.truncate_to_position(segment.size)
        rebuild = not _last_entry_matches(segment)
        if rebuild:
            log.warning("%s rebuilding stale index of %s", ident, segment.path.name)
    if rebuild:
        segment.offset_index.truncate_entries(0)
        segment.time_index.truncate_entries(0)
    _, start = segment.offset_index.lookup(2**63 - 1)
    if recovery_point is not None:
        start = min(start, segment.offset_index.lookup(recovery_point)[1])
    last_indexed = segment.time_index.max_entry()
    segment.max_timestamp, segment.offset_of_max_timestamp = last_indexed or (
        -1,
        segment.base_offset,
    )
    segment.bytes_since_index = 0
    end = _validate_from(segment, start)
    dropped = segment.size - end
    if dropped:
        log.warning(
            "%s truncating %d bytes of torn or corrupt data at position %d of %s",
            ident, dropped, end, segment.path.name,
        )  # fmt: skip
        segment.truncate_file(end)
        segment.offset_index.truncate_to_position(end)
    segment.time_index.truncate_to_offset(segment.next_offset)
    if rebuild:
        segment.offset_index.rewrite()
        segment.time_index.rewrite()
    segment.reload_tail()
    return dropped


def _last_entry_matches(segment: Segment) -> bool:
    last = segment.offset_index.last()
    if last is None:
        return True
    rel, position = last
    head = segment.pread(8, position)
    return len(head) == 8 and _BASE.unpack(head)[0] == rel + segment.base_offset


def _validate_from(segment: Segment, position: int) -> int:
    """CRC-checks batches from ``position``, indexing them; returns the end of the valid run."""
    size = segment.size
    expected = segment.base_offset
    window, wstart = b"", position
    while position < size:
        off = position - wstart
        need = batch.peek_size(window, off) if off + batch.LOG_OVERHEAD <= len(window) else None
        if need is None or off + need > len(window):
            want = max(_CHUNK, need or 0)
            window, wstart, off = segment.pread(min(want, size - position), position), position, 0
        try:
            header = batch.validate(window, off)
        except BrokerError:
            return position
        if header.base_offset < expected or header.record_count <= 0:
            return position
        segment._index_batch(
            header.base_offset, header.last_offset, position, header.size, header.max_timestamp
        )
        expected = header.last_offset + 1
        position += header.size
    return position
