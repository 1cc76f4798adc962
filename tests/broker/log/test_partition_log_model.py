"""Property test: PartitionLog behaves like a list of batches, through every operation."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from broker.errors import OffsetOutOfRangeError
from broker.log import batch
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog

from .helpers import make_batch

CONFIG = LogConfig(
    segment_bytes=600,
    index_interval_bytes=150,
    segment_index_bytes=48,  # 6 entries: index-full rolls happen too
    retention_ms=-1,
)


@dataclass
class ModelBatch:
    base: int
    last: int
    max_ts: int
    data: bytes  # as stored: base offset rewritten


class PartitionLogModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp())
        self.plog = PartitionLog.open(self.tmp / "m-0", "m", 0, CONFIG)
        self.batches: list[ModelBatch] = []
        self.start = 0
        self.end = 0

    def teardown(self) -> None:
        self.plog.close()
        shutil.rmtree(self.tmp)

    # ------------------------------------------------------------ operations

    @rule(
        sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3),
        value_len=st.integers(0, 120),
        ts=st.integers(0, 10_000),
    )
    def append(self, sizes: list[int], value_len: int, ts: int) -> None:
        raw = [make_batch([b"v" * value_len] * n, timestamp=ts + i) for i, n in enumerate(sizes)]
        info = self.plog.append(b"".join(raw))
        assert info.first_offset == self.end
        for i, data in enumerate(raw):
            stored = bytearray(data)
            batch.set_base_offset(stored, 0, self.end)
            last = self.end + sizes[i] - 1
            self.batches.append(ModelBatch(self.end, last, ts + i, bytes(stored)))
            self.end = last + 1
        assert info.last_offset == self.end - 1

    @rule(data=st.data(), max_bytes=st.integers(1, 2000))
    def read(self, data: st.DataObject, max_bytes: int) -> None:
        offset = data.draw(st.integers(self.start, self.end))
        upper = data.draw(st.none() | st.integers(offset, self.end))
        got = b"".join(
            bytes(c) for c in self.plog.read(offset, max_bytes, upper_bound=upper).chunks
        )
        expected = [
            b for b in self.batches if b.last >= offset and (upper is None or b.last < upper)
        ]
        if not expected:
            assert got == b""
            return
        # starts with the batch containing offset; whole batches; within max_bytes unless one
        n = 0
        pos = 0
        while pos < len(got):
            assert got[pos : pos + len(expected[n].data)] == expected[n].data
            pos += len(expected[n].data)
            n += 1
        assert n >= 1
        assert pos <= max_bytes or n == 1

    @rule(data=st.data())
    def read_out_of_range(self, data: st.DataObject) -> None:
        offset = data.draw(st.sampled_from([self.end + 1, self.start - 1]))
        if offset < 0:
            return
        try:
            self.plog.read(offset, 100)
        except OffsetOutOfRangeError:
            return
        raise AssertionError(f"read({offset}) outside [{self.start}, {self.end}] did not raise")

    @rule()
    def roll(self) -> None:
        self.plog.roll()

    @rule(data=st.data())
    def delete_records(self, data: st.DataObject) -> None:
        offset = data.draw(st.integers(self.start, self.end))
        assert self.plog.delete_records_before(offset) == max(self.start, offset)
        self.start = max(self.start, offset)
        self._drop_below_start()

    @rule(limit=st.integers(0, 2000))
    def retention_bytes(self, limit: int) -> None:
        self.plog.update_config(LogConfig(**{**CONFIG.__dict__, "retention_bytes": limit}))
        self.plog.delete_old_segments()
        self.plog.update_config(CONFIG)
        assert self.plog.log_start_offset >= self.start
        segments = self.plog.segments()
        # Kafka's rule: delete the oldest while the rest would still be >= the limit
        assert len(segments) == 1 or self.plog.size_bytes() - segments[0].size < limit
        self.start = self.plog.log_start_offset
        self._drop_below_start()

    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        offset = data.draw(st.integers(self.start, self.end))
        self.plog.truncate_to(offset)
        victims = [b for b in self.batches if b.last >= offset]
        if victims:  # the batch containing offset goes whole: the end moves to its base
            self.end = victims[0].base
            self.batches = self.batches[: len(self.batches) - len(victims)]
        self.start = min(self.start, self.end)

    @rule()
    def reopen(self) -> None:
        self.plog.close()
        self.plog = PartitionLog.open(self.tmp / "m-0", "m", 0, CONFIG)

    @precondition(lambda self: self.batches)
    @rule(ts=st.integers(0, 10_010))
    def offset_for_timestamp(self, ts: int) -> None:
        live = [b for b in self.batches if b.last >= self.start]
        hit = next((b for b in live if b.max_ts >= ts), None)
        expected = None if hit is None else (max(hit.base, self.start), hit.max_ts)
        assert self.plog.offset_for_timestamp(ts) == expected

    def _drop_below_start(self) -> None:
        # batches wholly below the start may linger in a segment but are never served
        self.batches = [b for b in self.batches if b.last >= self.start]

    # ------------------------------------------------------------ invariants

    @invariant()
    def offsets_match(self) -> None:
        assert self.plog.log_end_offset == self.end
        assert self.plog.log_start_offset == self.start
        assert self.plog.high_watermark == self.end

    @invariant()
    def content_matches(self) -> None:
        got, offset = [], self.start
        while offset < self.end:
            chunk = b"".join(bytes(c) for c in self.plog.read(offset, 1 << 20).chunks)
            assert chunk, f"empty read at {offset} < end {self.end}"
            for pos, header in batch.iter_batches(chunk):
                got.append(chunk[pos : pos + header.size])
                offset = header.last_offset + 1
        assert got == [b.data for b in self.batches]


PartitionLogModel.TestCase.settings = settings(
    max_examples=int(os.environ.get("SLUICE_MODEL_EXAMPLES", "40")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestPartitionLogModel = PartitionLogModel.TestCase
