"""Names of everything the log keeps on disk; the only module that builds or parses them.

Layout of a data directory::

    <data_dir>/topics.json                      topic names, ids, partition counts, overrides
    <data_dir>/<topic>-<partition>/             one directory per partition
        00000000000000000000.log                record batches, base offset in the name
        00000000000000000000.index              sparse offset -> position
        00000000000000000000.timeindex          sparse max timestamp -> offset
        00000000000000000000.txnindex           aborted transactions (only once one aborts)
        log-start-offset                        persisted log start (DeleteRecords, retention)
        recovery-point                          log end offset at the last fsync (see recovery)
        producer-state.json                     idempotent producer snapshot (see producer_state)
        cleaner-checkpoint.json                 offset compacted up to (see cleaner)
        cleaning/                               a compacted segment being built; deleted on open
        *.cleaned / *.swap                      cleaner output mid-swap (see recovery)

Segment names are the base offset zero-padded to 20 digits, as in Kafka, so a plain ``ls``
sorts segments in offset order and tools that know Kafka's layout read ours.
"""

from __future__ import annotations

from pathlib import Path

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
TEMP_SUFFIX = ".tmp"  # a metadata file being replaced (see _atomic); deleted on recovery
DELETED_SUFFIX = ".deleted"  # a partition directory being deleted; finished on load
CLEANED_SUFFIX = ".cleaned"  # cleaner output being written; deleted on recovery
SWAP_SUFFIX = ".swap"  # complete cleaner output about to replace a segment; finished on recovery

TOPICS_FILE = "topics.json"
LOG_START_FILE = "log-start-offset"
RECOVERY_POINT_FILE = "recovery-point"
PRODUCER_STATE_FILE = "producer-state.json"
CLEANER_CHECKPOINT_FILE = "cleaner-checkpoint.json"
CLEANER_BUILD_DIR = "cleaning"  # the cleaner writes new segments here before swapping them in


def filename_prefix(base_offset: int) -> str:
    """``42`` -> ``"00000000000000000042"``."""
    if base_offset < 0:
        raise ValueError(f"negative base offset {base_offset}")
    return f"{base_offset:020d}"


def log_file(directory: Path, base_offset: int) -> Path:
    return directory / (filename_prefix(base_offset) + LOG_SUFFIX)


def index_file(directory: Path, base_offset: int) -> Path:
    return directory / (filename_prefix(base_offset) + INDEX_SUFFIX)


def time_index_file(directory: Path, base_offset: int) -> Path:
    return directory / (filename_prefix(base_offset) + TIME_INDEX_SUFFIX)


def txn_index_file(directory: Path, base_offset: int) -> Path:
    return directory / (filename_prefix(base_offset) + TXN_INDEX_SUFFIX)


def segment_files(directory: Path, base_offset: int) -> tuple[Path, Path, Path]:
    """The ``.log``, ``.index`` and ``.timeindex`` paths of one segment."""
    return (
        log_file(directory, base_offset),
        index_file(directory, base_offset),
        time_index_file(directory, base_offset),
    )


def with_suffix(path: Path, suffix: str) -> Path:
    """``0…0.log`` + ``.swap`` -> ``0…0.log.swap``."""
    return path.with_name(path.name + suffix)


def temp_file(path: Path) -> Path:
    return with_suffix(path, TEMP_SUFFIX)


def deleted_dir(directory: Path, unique: str) -> Path:
    """Where a partition directory goes before removal: ``orders-0.<unique>.deleted``."""
    return directory.with_name(f"{directory.name}.{unique}{DELETED_SUFFIX}")


def base_offset_of(path: Path) -> int | None:
    """The base offset encoded in a segment file name, or None if it is not one."""
    stem = path.name.split(".", 1)[0]
    if len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem)


def segment_base_offsets(directory: Path) -> list[int]:
    """Base offsets of every ``.log`` file in a partition directory, ascending."""
    bases = []
    for path in directory.iterdir():
        if path.name.endswith(LOG_SUFFIX):
            base = base_offset_of(path)
            if base is not None:
                bases.append(base)
    return sorted(bases)


def partition_dir(data_dir: Path, topic: str, partition: int) -> Path:
    return data_dir / f"{topic}-{partition}"


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """``"orders-3"`` -> ``("orders", 3)``; topic names may themselves contain ``-``."""
    topic, sep, num = name.rpartition("-")
    if not sep or not topic or not num.isdigit():
        return None
    return topic, int(num)
