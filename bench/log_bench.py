"""Partition log benchmark: append/read throughput against the raw file system, and flatness.

Run: ``.venv/bin/python bench/log_bench.py [--blocks 24] [--large-gb 2] [--dir PATH]``

1. Throughput, for batches of ~16 KiB and ~1 MiB of 100-byte records (real v2 batches):
   - raw sequential write of the same bytes (``os.write`` on an O_APPEND fd), without and with
     an fsync per block; ``PartitionLog.append`` of the same batches, without and with
     ``flush()`` per block;
   - raw page-cache read of that data in 1 MiB ``pread``s; ``PartitionLog.read`` with
     ``max_bytes`` = 1 MiB (Kafka's default ``max.partition.fetch.bytes``).
2. Flatness: append (16 KiB batches) and random-offset read (1 MiB fetches) on a 100 MB log
   and on a large one (``--large-gb``; the full run is 10 GB, the default 2 GB finishes in
   about a minute on 2 cores), each beside the same operation on a plain file as large as
   the log's active segment. Everything sits in the page cache when RAM allows.

Method: every figure is the *median* over ``--blocks`` short blocks (4 MiB written or 64 MiB
read), and the log and its baseline run block by block in turn. On a shared machine that
keeps neighbours' load from favouring one side; each block starts after ``os.sync()`` so no
block pays for an earlier one's writeback.

Targets: append >= 70 % of raw write for 1 MiB batches, read >= 70 % of raw read, small vs
large log within 10 %.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.log.records import Record, build_batch

MiB = 1 << 20
FETCH = MiB
RECORD_VALUE = 100
WRITE_BLOCK = 4 * MiB
READ_BLOCK = 64 * MiB

Task = Callable[[], int]  # does one block of work, returns the bytes it moved


def make_batch(target: int) -> tuple[bytes, int]:
    """A v2 batch of 100-byte-value records of at most ``target`` bytes, and its count."""

    def build(count: int) -> bytes:
        value = lambda: os.urandom(RECORD_VALUE // 2).hex().encode()  # noqa: E731
        return build_batch([Record(i, 1_700_000_000_000, None, value()) for i in range(count)])

    count = max(1, target // (RECORD_VALUE + 10))
    data = build(count)
    while len(data) > target and count > 1:
        count = max(1, count * target // len(data) - 1)
        data = build(count)
    return data, count


def interleaved(tasks: dict[str, Task], blocks: int) -> dict[str, float]:
    """Median MiB/s of each task over ``blocks`` rounds, the tasks taking turns per block."""
    samples: dict[str, list[float]] = {name: [] for name in tasks}
    for _ in range(blocks):
        for name, task in tasks.items():
            os.sync()
            start = time.perf_counter()
            moved = task()
            samples[name].append(moved / (time.perf_counter() - start) / MiB)
    return {name: statistics.median(values) for name, values in samples.items()}


def open_log(root: Path, name: str) -> PartitionLog:
    shutil.rmtree(root / name, ignore_errors=True)
    config = LogConfig(retention_ms=-1, max_message_bytes=2 * MiB)
    return PartitionLog.open(root / name, "bench", 0, config)


class RawFile:
    """The baseline: the same bytes through a plain O_APPEND fd and pread."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
        self.read_pos = 0

    def append(self, data: bytes, count: int, fsync: bool = False) -> int:
        for _ in range(count):
            os.write(self.fd, data)
        if fsync:
            os.fsync(self.fd)
        return len(data) * count

    def read_sequential(self, nbytes: int) -> int:
        """Reads the next ``nbytes`` in 1 MiB preads, wrapping at the end of the file."""
        size, got = os.fstat(self.fd).st_size, 0
        while got < nbytes:
            if self.read_pos >= size:
                self.read_pos = 0
            chunk = len(os.pread(self.fd, FETCH, self.read_pos))
            self.read_pos += chunk
            got += chunk
        return got

    def read_random(self, positions: list[int]) -> int:
        return sum(len(os.pread(self.fd, FETCH, pos)) for pos in positions)

    def close(self) -> None:
        os.close(self.fd)


class LogReader:
    """A consumer's sequential fetch loop over a PartitionLog, wrapping at the end."""

    def __init__(self, plog: PartitionLog) -> None:
        self.plog = plog
        self.offset = plog.log_start_offset

    def read_sequential(self, nbytes: int) -> int:
        got = 0
        while got < nbytes:
            if self.offset >= self.plog.log_end_offset:
                self.offset = self.plog.log_start_offset
            result = self.plog.read(self.offset, FETCH)
            chunk = result.chunks[-1]
            s = _last_batch_start(chunk)  # next offset from the last header, as a consumer does
            base = int.from_bytes(chunk[s : s + 8], "big")
            self.offset = base + int.from_bytes(chunk[s + 23 : s + 27], "big") + 1
            got += result.size
        return got


def _last_batch_start(chunk: bytes | memoryview) -> int:
    pos, start = 0, 0
    while pos < len(chunk):
        start = pos
        pos += int.from_bytes(chunk[pos + 8 : pos + 12], "big") + 12
    return start


def log_append(plog: PartitionLog, data: bytes, count: int, flush: bool = False) -> int:
    for _ in range(count):
        plog.append(data)
    if flush:
        plog.flush()
    return len(data) * count


def throughput(root: Path, blocks: int) -> list[tuple[str, ...]]:
    rows = []
    for label, target in (("16 KiB", 16 * 1024), ("1 MiB", MiB)):
        data, _ = make_batch(target)
        per_block = max(1, WRITE_BLOCK // len(data))
        raw, raw_sync = RawFile(root / "raw.bin"), RawFile(root / "raw-sync.bin")
        plog, plog_sync = open_log(root, "log-0"), open_log(root, "log-sync-0")
        reader = LogReader(plog)
        writes: dict[str, Task] = {
            "raw write": partial(raw.append, data, per_block),
            "append": partial(log_append, plog, data, per_block),
            "raw write+fsync": partial(raw_sync.append, data, per_block, fsync=True),
            "append+flush": partial(log_append, plog_sync, data, per_block, flush=True),
        }
        got = interleaved(writes, blocks)
        reads: dict[str, Task] = {
            "raw pread": partial(raw.read_sequential, READ_BLOCK),
            "read": partial(reader.read_sequential, READ_BLOCK),
        }
        got |= interleaved(reads, blocks)
        for f in (raw, raw_sync):
            f.close()
        for log in (plog, plog_sync):
            log.close()
            shutil.rmtree(log.directory)
        for base, ours in (
            ("raw write", "append"),
            ("raw write+fsync", "append+flush"),
            ("raw pread", "read"),
        ):
            rows.append(
                (
                    f"{ours} {label}",
                    f"{got[ours]:,.0f}",
                    f"{got[base]:,.0f} {base}",
                    f"{got[ours] / got[base]:.0%}",
                )
            )
    return rows


def flatness(root: Path, sizes: list[int], blocks: int, seed: int = 1) -> list[dict[str, float]]:
    """Per log size: median MiB/s of log/raw appends and random reads (see module doc).

    Appends are 16 KiB batches; reads are 1 MiB fetches at uniformly random offsets of the
    built region (same batch sizes in every log), exercising the segment bisect and the offset
    index at every depth. The raw baseline appends to and preads from a plain file as large as
    the log's active segment, so an effect of the file system itself shows as such.
    """
    big, _ = make_batch(MiB)
    small, _ = make_batch(16 * 1024)
    per_block = WRITE_BLOCK // len(small)
    reads = READ_BLOCK // FETCH
    rng = random.Random(seed)
    tasks: dict[str, Task] = {}
    cleanup: list[Callable[[], None]] = []
    for i, size in enumerate(sizes):
        plog = open_log(root, f"flat{i}-0")
        while plog.size_bytes() < size:
            plog.append(big)
        plog.flush()
        raw = RawFile(root / f"flat{i}.raw")
        raw.append(big, plog.segments()[-1].size // len(big) + 1, fsync=True)
        raw_size, built_end = os.fstat(raw.fd).st_size, plog.log_end_offset
        for pos in range(0, raw_size, FETCH):  # page cache warm: time the log, not the disk
            os.pread(raw.fd, FETCH, pos)

        def log_reads(plog: PartitionLog = plog, end: int = built_end) -> int:
            return sum(plog.read(rng.randrange(0, end), FETCH).size for _ in range(reads))

        def raw_reads(raw: RawFile = raw, size: int = raw_size) -> int:
            return raw.read_random([rng.randrange(0, size - FETCH) for _ in range(reads)])

        tasks |= {
            f"{i} append": lambda plog=plog: log_append(plog, small, per_block),
            f"{i} raw append": lambda raw=raw: raw.append(small, per_block),
            f"{i} read": log_reads,
            f"{i} raw read": raw_reads,
        }
        cleanup += [plog.close, raw.close]
    got = interleaved(tasks, blocks)
    for done in cleanup:
        done()
    return [
        {k.split(" ", 1)[1]: v for k, v in got.items() if k.startswith(f"{i} ")}
        for i in range(len(sizes))
    ]


def machine(root: Path) -> list[tuple[str, str]]:
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
    except OSError:
        pass
    usage = shutil.disk_usage(root)
    return [
        ("cores", str(os.cpu_count())),
        ("RAM", mem),
        (
            "disk free",
            f"{usage.free / (1 << 30):.0f} GiB of {usage.total / (1 << 30):.0f} GiB at {root}",
        ),
        ("python", platform.python_version()),
        ("kernel", platform.release()),
    ]


def show(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain fallback
        print(f"\n{title}")
        print(" | ".join(header))
        for row in rows:
            print(" | ".join(row))
        return
    table = Table(title=title)
    for col in header:
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--blocks", type=int, default=24, help="blocks per figure (median)")
    parser.add_argument("--large-gb", type=float, default=2.0, help="large log size (full run: 10)")
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: temp dir)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sluice-bench-", dir=args.dir))
    try:
        show("machine", ("limit", "value"), machine(root))
        rows = throughput(root, args.blocks)
        show(
            f"throughput, MiB/s (median of {args.blocks} interleaved blocks)",
            ("operation", "log", "baseline", "log/baseline"),
            rows,
        )
        size = f"{args.large_gb:g} GB"
        small, large = flatness(root, [100 * 10**6, int(args.large_gb * 10**9)], args.blocks)
        names = {
            "append": "append 16 KiB",
            "raw append": "raw append 16 KiB",
            "read": "random read 1 MiB",
            "raw read": "raw random pread 1 MiB",
        }
        flat_rows = [
            (label, f"{small[k]:,.0f}", f"{large[k]:,.0f}", f"{large[k] / small[k] - 1:+.1%}")
            for k, label in names.items()
        ]
        show(
            f"flatness, MiB/s: 100 MB vs {size} log (median of {args.blocks} blocks)",
            ("operation", "100 MB", size, "change"),
            flat_rows,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
