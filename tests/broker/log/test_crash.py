"""Kill a writer with SIGKILL mid-write; everything it reported as flushed must read back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from broker.log import batch
from broker.log.partition_log import PartitionLog

from .crash_writer import CONFIG, batch_for

REPO = Path(__file__).resolve().parents[3]


def run_writer_until(directory: Path, start: int, reports: int) -> list[tuple[int, int]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("crash_writer.py")),
            str(directory),
            str(start),
        ],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    got = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            index, offset = map(int, line.split())
            got.append((index, offset))
            if len(got) >= reports:
                break
    finally:
        proc.send_signal(signal.SIGKILL)  # mid-write: it never stops writing
        proc.wait()
    assert len(got) == reports, "writer died early"
    return got


def all_batches(plog: PartitionLog) -> list[bytes]:
    out, offset = [], plog.log_start_offset
    while offset < plog.log_end_offset:
        data = b"".join(bytes(c) for c in plog.read(offset, 1 << 22).chunks)
        assert data, f"no data at {offset} below log end {plog.log_end_offset}"
        for pos, header in batch.iter_batches(data):  # validates every CRC: nothing corrupt
            out.append(data[pos : pos + header.size])
            offset = header.last_offset + 1
    return out


def test_sigkill_mid_write_loses_nothing_flushed(tmp_path: Path) -> None:
    directory = tmp_path / "crash-0"
    flushed: dict[int, int] = {}
    start = 0
    for _round in range(3):
        reports = run_writer_until(directory, start, 40)
        flushed.update(dict(reports))
        plog = PartitionLog.open(directory, "crash", 0, CONFIG)
        batches = all_batches(plog)
        assert sum(map(len, batches)) == plog.size_bytes()  # no torn bytes left in any file
        stored = {batch.read_header(b).base_offset: b for b in batches}
        for index, offset in flushed.items():
            expected = bytearray(batch_for(index))
            batch.set_base_offset(expected, 0, offset)
            assert stored[offset] == bytes(expected), f"batch {index} at {offset} differs"
        start = (_round + 1) * 100_000  # fresh batch numbers for the next writer
        plog.close()


def test_recovery_truncates_garbage_and_rebuilds_deleted_index(tmp_path: Path) -> None:
    directory = tmp_path / "crash-0"
    plog = PartitionLog.open(directory, "crash", 0, CONFIG)
    for i in range(30):
        plog.append(batch_for(i))
    expected = all_batches(plog)
    end = plog.log_end_offset
    plog.close()
    log_path = directory / "00000000000000000000.log"
    with open(log_path, "ab") as fh:
        fh.write(expected[-1][: len(expected[-1]) // 2])  # a torn copy of a real batch
        fh.write(os.urandom(1000))
    (directory / "00000000000000000000.index").unlink()
    (directory / "00000000000000000000.timeindex").unlink()
    plog = PartitionLog.open(directory, "crash", 0, CONFIG)
    assert plog.log_end_offset == end
    assert all_batches(plog) == expected
    assert len(plog.segments()[0].offset_index) > 0
    assert (directory / "00000000000000000000.index").stat().st_size > 0
    assert plog.append(batch_for(99)).first_offset == end
