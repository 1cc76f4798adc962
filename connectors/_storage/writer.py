"""Per topic-partition rolling files with deterministic names: the exactly-once core.

For each assigned Kafka partition a ``PartitionWriter`` keeps one open *batch*: the files (one
per encoded partition) holding the records of a contiguous offset range ``[start, next)``. A
batch commits as a whole — handed to the background uploader (``_upload``), which calls
``destination.write_batch`` — when any rotation rule fires:

- ``flush.size`` records are in it (counted over the Kafka partition, as Confluent does);
- ``rotate.interval.ms``: a record's timestamp (``timestamp.extractor``) is that far past the
  batch's first record's (checked as records arrive: record time);
- ``rotate.schedule.interval.ms``: the wall clock passed the next boundary of that interval
  (aligned in ``timezone``) since the batch opened; checked on each record and in
  ``pre_commit``, which the worker calls every ``offset.flush.interval.ms`` even when a
  partition is quiet;
- a record's value schema differs from its file's in a way ``schema.compatibility`` says
  rolls (``compatibility.decide``; with NONE, any change); a record of an older (BACKWARD,
  FULL) or newer (FORWARD) schema version is projected onto the file's schema instead.

Names: ``<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start>.<ext>`` with the
start offset of the *file* zero-padded to ``filename.offset.zero.pad.width``. Given the same
records from the same offset, the partitioner and the rules (except the wall-clock one) give the
same names, and the destinations' recovery argument (``destinations/__init__``) covers the rest.

Offsets: ``pre_commit`` returns the start of a partition's oldest batch that is uploading or
open (everything before it is in the store), else what the worker delivered. On ``open`` the
destination is asked where committed data ends; redelivered records below that are skipped, so
a crash between upload and offset commit never duplicates (the committed consumer offset may
lag; that is fine).

Not thread-safe: the worker calls put/pre_commit/open/close from the task's thread; the only
other thread is the uploader's, which touches nothing here but the buffers handed to it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from datetime import datetime
from operator import attrgetter
from typing import Any
from zoneinfo import ZoneInfo

from connectors._storage._upload import Job, Uploader
from connectors._storage.compatibility import decide, project_record
from connectors._storage.destinations import Destination, file_name_pattern
from connectors._storage.formats import FileBuffer, RecordFormat
from connectors._storage.partitioner import DefaultPartitioner, Partitioner
from hub.api import ConnectError, RetriableError, Schema, SinkRecord, TopicPartition

log = logging.getLogger(__name__)

_VALUE_SCHEMA = attrgetter("value_schema")
_PARTITION = attrgetter("partition")
_TOPIC = attrgetter("topic")


class _File:
    __slots__ = ("buffer", "schema", "start")

    def __init__(self, start: int, schema: Schema | None, buffer: FileBuffer) -> None:
        self.start, self.schema, self.buffer = start, schema, buffer


class PartitionWriter:
    """The open batch of one Kafka partition."""

    def __init__(self, owner: RollingWriter, tp: TopicPartition, resume: int) -> None:
        self.owner = owner
        self.tp = tp
        self.files: dict[str, _File] = {}
        self.start: int | None = None  # first offset of the open batch
        self.next = resume  # offsets below are buffered or committed: skipped when redelivered
        self.count = 0
        self.base_ts: int | None = None
        self.deadline: int | None = None
        self.encoding = f"partition={tp.partition}"  # DefaultPartitioner's, for add_run
        self.inflight: tuple[Future[None], int] | None = None  # (upload, its batch start)
        self.rewind_to: int | None = None  # after a failed upload: ignore all but this offset

    def add(self, record: SinkRecord) -> None:
        owner = self.owner
        offset = record.offset
        if offset < self.next or (self.rewind_to is not None and not self._rewound(offset)):
            return
        if self.count >= owner.flush_size:  # a commit that failed earlier: try it first
            self.commit()
        ts = owner.partitioner.timestamp(record) if owner.needs_ts else None
        if self.start is not None and (
            (owner.rotate_ms > 0 and ts is not None and self.base_ts is not None
             and ts - self.base_ts >= owner.rotate_ms)
            or (self.deadline is not None and owner.clock() >= self.deadline)
        ):  # fmt: skip
            self.commit()
        encoded = owner.partitioner.encode(record)
        file = self.files.get(encoded)
        schema = record.value_schema
        if file is not None and schema is not file.schema and schema != file.schema:
            action = decide(owner.compatibility, file.schema, schema)
            if action == "project":
                assert file.schema is not None
                record = project_record(record, file.schema)
            elif action == "roll":
                log.info("[%s] %s-%d: schema changed at offset %d, rolling", owner.name,
                         self.tp.topic, self.tp.partition, offset)  # fmt: skip
                self.commit()
                file = None
        if file is None:
            buffer = owner.format.new_file()
            buffer.add(record)  # may raise DataError: nothing changed yet
            self.files[encoded] = _File(offset, schema, buffer)
        else:
            file.buffer.add(record)
        if self.start is None:
            self.start, self.base_ts = offset, ts
            self.deadline = owner.schedule_deadline()
        self.count += 1
        self.next = offset + 1
        if self.count >= owner.flush_size:
            self.commit()

    def add_run(self, records: Sequence[SinkRecord]) -> None:
        """Records of this partition, in offset order. Fast path when only ``flush.size`` and
        the schedule can rotate and the encoded partition is constant (DefaultPartitioner):
        whole slices go to the file at once; otherwise record by record."""
        owner = self.owner
        if not owner.fast or self.rewind_to is not None:
            for record in records:
                self.add(record)
            return
        i, n = 0, len(records)
        while i < n and records[i].offset < self.next:
            i += 1  # redelivered: already buffered or committed
        if i < n and self.deadline is not None and owner.clock() >= self.deadline:
            self.commit()
        flush_size = owner.flush_size
        # One C pass instead of a Python loop per record: is the whole run one schema? (==
        # is enough: an equal schema does not roll the file, see add())
        schemas = list(map(_VALUE_SCHEMA, records))
        uniform = schemas.count(schemas[-1]) == n
        while i < n:
            if self.count >= flush_size:
                self.commit()
            first = records[i]
            file = self.files.get(self.encoding)
            schema = first.value_schema
            if file is not None and schema is not file.schema and schema != file.schema:
                self.add(first)  # rolls on the schema change
                i += 1
                continue
            if file is None:
                self.add(first)
                i += 1
                continue
            stop = min(n, i + flush_size - self.count)
            if uniform:
                j = stop
            else:
                j = i + 1
                while j < stop and schemas[j] is schema:
                    j += 1
            chunk = records[i:j]
            before = file.buffer.count
            try:
                file.buffer.add_many(chunk)
            finally:
                added = file.buffer.count - before
                if added:
                    self.count += added
                    self.next = chunk[added - 1].offset + 1
            i = j
        if self.count >= flush_size:
            self.commit()

    def due(self) -> bool:
        return self.deadline is not None and self.owner.clock() >= self.deadline

    def _rewound(self, offset: int) -> bool:
        """While rewinding, only the rewind offset (the seek took effect) reopens the gate.
        Deliberately strict: reopening on any other offset could leave a gap. (Should that
        record vanish meanwhile — compaction — the partition stalls with growing lag until the
        task restarts, which recovers from the store.)"""
        if offset != self.rewind_to:
            return False
        self.rewind_to = None
        return True

    def commit(self) -> None:
        """Hands the open batch to the uploader (after the previous one of this partition
        finished: batches land in offset order)."""
        if self.start is None:
            return
        self.settle(wait=True, raise_errors=True)
        if self.start is None:  # the previous upload failed and rewound the partition
            return
        owner, tp = self.owner, self.tp
        files = sorted(self.files.items(), key=lambda item: item[1].start)
        job = Job(tp.topic, tp.partition, self.start, self.next,
                  [(owner.path(tp, enc, f.start), f.buffer) for enc, f in files])  # fmt: skip
        self.inflight = (owner.uploader.submit(job), self.start)
        self.files = {}
        self.start = self.base_ts = self.deadline = None
        self.count = 0

    def settle(self, wait: bool, raise_errors: bool) -> None:
        """Collects the in-flight upload if done (or waits); on failure rewinds (module doc of
        ``_upload``) and re-raises if ``raise_errors``."""
        if self.inflight is None:
            return
        future, start = self.inflight
        if not (wait or future.done()):
            return
        self.inflight = None
        try:
            future.result()
        except ConnectError as exc:
            tp = self.tp
            log.warning("[%s] %s-%d: upload of batch at %d failed, rewinding: %s",
                        self.owner.name, tp.topic, tp.partition, start, exc)  # fmt: skip
            self.files = {}
            self.start = self.base_ts = self.deadline = None
            self.count = 0
            self.next = self.rewind_to = start
            self.owner.rewind(tp, start)
            if raise_errors:
                raise

    def durable(self, delivered: int) -> int:
        """The offset to commit: nothing at or past an in-flight, open or rewound batch."""
        if self.rewind_to is not None:
            return self.rewind_to
        if self.inflight is not None:
            return self.inflight[1]
        return self.start if self.start is not None else delivered


class RollingWriter:
    """All partitions of one task. ``clock`` is the wall clock in ms (injected by tests)."""

    def __init__(
        self,
        cfg: Any,
        fmt: RecordFormat,
        partitioner: Partitioner,
        destination: Destination,
        clock: Callable[[], int],
        name: str,
        rewind: Callable[[TopicPartition, int], None] = lambda tp, offset: None,
        background: bool = True,
    ) -> None:
        self.name = name
        self.rewind = rewind
        self.uploader = Uploader(destination, name, background)
        self.format = fmt
        self.partitioner = partitioner
        self.destination = destination
        self.clock = clock
        self.flush_size: int = cfg.flush_size
        self.rotate_ms: int = cfg.rotate_interval_ms
        self.schedule_ms: int = cfg.rotate_schedule_interval_ms
        self.zone = ZoneInfo(cfg.timezone or "UTC")
        self.topics_dir = cfg.topics_dir.strip("/")
        self.pad: int = cfg.zero_pad_width
        self.needs_ts = self.rotate_ms > 0
        self.compatibility: str = getattr(cfg, "schema_compatibility", "NONE")
        # Fast path (PartitionWriter.add_run): constant directory, count/schedule rotation only,
        # and a schema change always rolls (no projection).
        self.fast = (
            isinstance(partitioner, DefaultPartitioner)
            and not self.needs_ts
            and self.compatibility == "NONE"
        )
        self.writers: dict[TopicPartition, PartitionWriter] = {}

    def path(self, tp: TopicPartition, encoded: str, start: int) -> str:
        name = f"{tp.topic}+{tp.partition}+{start:0{self.pad}d}{self.format.extension}"
        return "/".join(p for p in (self.topics_dir, tp.topic, encoded, name) if p)

    def schedule_deadline(self) -> int | None:
        """The next multiple of ``rotate.schedule.interval.ms`` in local time, after now."""
        if self.schedule_ms <= 0:
            return None
        now = self.clock()
        offset = datetime.fromtimestamp(now / 1000, self.zone).utcoffset()
        off_ms = int(offset.total_seconds() * 1000) if offset else 0
        return ((now + off_ms) // self.schedule_ms + 1) * self.schedule_ms - off_ms

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            prefix = "/".join(p for p in (self.topics_dir, tp.topic) if p) + "/"
            if isinstance(self.partitioner, DefaultPartitioner):
                prefix += f"partition={tp.partition}/"
            resume = self.destination.recover(
                tp.topic, tp.partition, prefix, file_name_pattern(tp.topic, tp.partition)
            )
            self.writers[tp] = PartitionWriter(self, tp, resume or 0)

    def writer(self, tp: TopicPartition) -> PartitionWriter:
        w = self.writers.get(tp)
        if w is None:  # put() before open(): tolerated, with no recovery
            w = self.writers[tp] = PartitionWriter(self, tp, 0)
        return w

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Splits ``records`` into runs of one partition (the worker's batches are mostly
        long runs) and hands each run to its partition's writer.

        The worker calls ``put([])`` when a poll found nothing: that is when a quiet partition
        whose ``rotate.schedule.interval.ms`` boundary passed gets its file committed, instead of
        waiting for the next offset commit."""
        if not records:
            for tp, w in self.writers.items():
                self._commit_if_due(tp, w)
            return
        n = len(records)
        first = records[0]
        # The common case, one topic-partition per put, checked in C rather than per record.
        if list(map(_PARTITION, records)).count(first.partition) == n and \
                list(map(_TOPIC, records)).count(first.topic) == n:  # fmt: skip
            tp = TopicPartition(first.topic, first.partition or 0)
            (self.writers.get(tp) or self.writer(tp)).add_run(records)
            return
        i = 0
        while i < n:
            first = records[i]
            topic, partition = first.topic, first.partition
            j = i + 1
            while j < n and records[j].partition == partition and records[j].topic == topic:
                j += 1
            tp = TopicPartition(topic, partition or 0)
            w = self.writers.get(tp) or self.writer(tp)
            w.add_run(records[i:j] if (i, j) != (0, n) else records)
            i = j

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        out: dict[TopicPartition, int] = {}
        for tp, delivered in offsets.items():
            w = self.writers.get(tp)
            if w is None:
                out[tp] = delivered
                continue
            self._commit_if_due(tp, w)
            out[tp] = w.durable(delivered)
        return out

    def _commit_if_due(self, tp: TopicPartition, w: PartitionWriter) -> None:
        """Commits ``w``'s open batch if its scheduled rotation is due; a retriable failure is
        logged and retried at the next chance (the offsets stay where they were)."""
        w.settle(wait=False, raise_errors=False)
        if w.start is not None and w.due():
            try:
                w.commit()
            except RetriableError as exc:
                log.warning("[%s] %s-%d: scheduled commit failed, will retry: %s",
                            self.name, tp.topic, tp.partition, exc)  # fmt: skip
            w.settle(wait=False, raise_errors=False)

    def commit_all(self) -> None:
        """Commits every open batch now and waits for the uploads (tests, benchmarks)."""
        for w in self.writers.values():
            w.commit()
            w.settle(wait=True, raise_errors=True)

    def drain(self) -> None:
        """Waits for every in-flight upload; raises the first failure (after rewinding)."""
        for w in self.writers.values():
            w.settle(wait=True, raise_errors=True)

    def stop(self) -> None:
        """Waits for in-flight uploads to finish, then ends the upload thread."""
        self.uploader.close()

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        """Drops open batches: their offsets were not committed, so they are redelivered to
        whichever task gets the partition next, which rewrites them under the same names."""
        for tp in partitions:
            w = self.writers.pop(tp, None)
            if w is not None:
                # The next owner must not race this task's upload to the same names.
                w.settle(wait=True, raise_errors=False)
            if w is not None and w.start is not None:
                log.info("[%s] %s-%d: dropping %d uncommitted records from %d on close",
                         self.name, tp.topic, tp.partition, w.count, w.start)  # fmt: skip
