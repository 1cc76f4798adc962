"""Child process for test_crash.py: appends and flushes batches forever, reporting each one.

Usage: python crash_writer.py <partition dir> <first index>. Prints ``<index> <first offset>``
after each batch is flushed (fsync'd), then keeps going until it is SIGKILLed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.log.records import Record, build_batch

CONFIG = LogConfig(segment_bytes=4 << 20, index_interval_bytes=4096, retention_ms=-1)


def batch_for(i: int) -> bytes:
    """Deterministic batch number ``i``: sizes vary from 100 bytes to ~400 KiB."""
    count = 1 + (i * 37) % 4000
    records = [Record(n, 1_000 + i, b"k%d" % n, b"%08d" % i * 12) for n in range(count)]
    return build_batch(records, base_offset=0)


def main() -> None:
    directory, start = Path(sys.argv[1]), int(sys.argv[2])
    plog = PartitionLog.open(directory, "crash", 0, CONFIG)
    i = start
    while True:
        info = plog.append(batch_for(i))
        plog.flush()
        sys.stdout.write(f"{i} {info.first_offset}\n")
        sys.stdout.flush()
        i += 1


if __name__ == "__main__":
    main()
