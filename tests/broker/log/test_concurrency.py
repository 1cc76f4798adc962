"""Readers never see a torn or corrupt batch while appends, rolls, retention and compaction run."""

from __future__ import annotations

import threading
import time
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
    batches_read = [0, 0]  # per reader: batches checked while the writer ran

    def reader(n: int) -> None:
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
                    batches_read[n] += len(headers)
                # Gives the GIL up between rounds of reads. Two readers that only ever spin
                # starve the appending thread: each of its many syscalls (writes, fsyncs,
                # renames) gives the GIL up and waits a switch interval or more to get it
                # back, which took this test from seconds to over 120 s on a quiet 2-core
                # machine. Reads still overlap every append, roll and clean.
                time.sleep(0)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(2)]
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
    assert min(batches_read) > 100, batches_read  # the readers really ran alongside
    assert plog.log_end_offset == 1800
    plog.close()
