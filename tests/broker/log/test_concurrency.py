"""Readers never see a torn or corrupt batch while appends, rolls, retention and compaction run."""

from __future__ import annotations

import threading
from pathlib import Path

from broker.errors import OffsetOutOfRangeError
from broker.log import batch
from broker.log.cleaner import LogCleaner
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog

from .helpers import make_batch


def test_concurrent_reads_during_writes_and_maintenance(tmp_path: Path) -> None:
    config = LogConfig(
        segment_bytes=2_000,
        retention_bytes=20_000,
        retention_ms=-1,
        cleanup_policy="compact,delete",
    )
    plog = PartitionLog.open(tmp_path / "x-0", "x", 0, config)
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                start, end = plog.log_start_offset, plog.high_watermark
                for offset in (start, (start + end) // 2, max(start, end - 1)):
                    try:
                        result = plog.read(offset, 4096)
                    except OffsetOutOfRangeError:
                        continue  # retention moved the start meanwhile
                    data = b"".join(bytes(c) for c in result.chunks)
                    headers = [h for _, h in batch.iter_batches(data)]  # whole, CRC-valid
                    if headers:  # starts at the batch holding offset (or the next after a gap)
                        assert headers[0].last_offset >= offset
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    cleaner = LogCleaner()
    try:
        for i in range(600):
            plog.append(make_batch([b"v%d" % i] * 3, keys=[b"k%d" % (i % 7)] * 3))
            if i % 50 == 0:
                plog.delete_old_segments()
                cleaner.clean(plog, force=True)
                plog.flush()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert plog.log_end_offset == 1800
    plog.close()
