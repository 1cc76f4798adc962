"""Source connectors and tasks: read an external system, emit SourceRecords.

The worker calls ``poll()`` in a loop on the task's own thread. Returned records go through
transforms and converters to one idempotent producer (acks=all). Only after the broker
acknowledged a record is its ``source_offset`` committed for its ``source_partition``, so a
restart resumes from ``context.offsets(...)`` with nothing lost: delivery is at-least-once, and
exactly-once where the task's offsets describe positions exactly (a task should emit records
of one source partition in order).

``poll()`` may also return ``SourceRecordBatch`` objects (alone or inside its list): many records
of one topic and source partition held as columns, which the worker can produce without building
a ``SourceRecord`` per record (see ``SourceRecordBatch``; a Sluice extension).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any, Protocol, overload

from hub.api._slots import slot_setters
from hub.api.connector import Connector
from hub.api.exactly_once import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    TransactionContext,
)
from hub.api.record import Header, SourceRecord
from hub.api.schema import STRING_SCHEMA, Schema


class OffsetReader(Protocol):
    def offset(self, partition: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The last committed offset for one source partition, or None."""

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> dict[tuple[tuple[str, Any], ...], Mapping[str, Any]]:
        """Committed offsets for many partitions, keyed by ``tuple(sorted(partition.items()))``."""


class SourceTaskContext(Protocol):
    @property
    def offset_reader(self) -> OffsetReader: ...

    @property
    def config(self) -> Mapping[str, Any]: ...

    @property
    def transaction_context(self) -> TransactionContext | None:
        """The task's say over transaction boundaries (``transaction.boundary=connector``
        with exactly-once support enabled); None otherwise."""


_RECORD_FIELDS = ("topic", "partition", "key", "value", "key_schema", "value_schema",
                  "timestamp", "headers", "source_partition", "source_offset")  # fmt: skip
_RECORD_SETTERS = slot_setters(SourceRecord, _RECORD_FIELDS)
_HEADER_SETTERS = slot_setters(Header, ("key", "value", "schema"))


class SourceRecordBatch(Sequence[SourceRecord]):
    """Many records of one topic and one source partition, held as columns.

    A Sluice extension beside Kafka Connect's API. Why: a source emitting hundreds of thousands
    of small records per second (log lines) spends most of its time building a ``SourceRecord``,
    its ``Header`` objects and a source-offset dict per record, and the worker as much again
    taking them apart. Most of that is the same for every record of a poll: the topic, the
    source partition, a few headers, most of the offset. A batch states the shared parts once
    and the varying parts as sequences, and the worker produces straight from them when it can
    do so exactly (no transforms, no per-record hooks, a converter for which the raw values
    already are the converted bytes). Otherwise it calls ``records()`` and takes the ordinary
    path, so a batch always means exactly the records ``records()`` returns.

    Record ``i`` has:

    - ``topic``, ``partition`` (None: the producer's partitioner chooses) and
      ``source_partition`` of the batch;
    - ``value``: ``values[i]``; with ``encoding`` set, bytes values are text in that encoding and
      the record's value is ``values[i].decode(encoding, "replace")`` (schema ``value_schema``,
      default ``STRING_SCHEMA``). Hold text read as bytes this way: the worker can then send the
      bytes without decoding and re-encoding them (after checking once per batch that they are
      valid in ``encoding``);
    - ``key``: ``keys[i]`` (None without ``keys``), schema ``key_schema``;
    - ``timestamp``: ``timestamps[i]`` (None without ``timestamps``);
    - ``headers``: ``headers`` (the same for every record), then one schemaless header per
      ``header_columns`` entry ``(key, column)`` with value ``column[i]``, in that order;
    - ``source_offset``: ``{**offset, **{name: column[i] for name, column in offset_columns}}``.
      The worker commits only the last record's offset (once every record of the batch was
      acknowledged), so the per-record offsets are built only when records are materialised.

    Columns are sequences of the batch's length (a ``range`` makes a cheap counter column).
    Treat a batch as immutable once returned from ``poll()``. A batch is itself a sequence of
    its records (``len``, indexing, iteration build them, once), so code that reads a poll
    result as records keeps working.
    """

    __slots__ = ("_records", "encoding", "header_columns", "headers", "key_schema", "keys",
                 "offset", "offset_columns", "partition", "source_partition", "timestamps",
                 "topic", "value_schema", "values")  # fmt: skip

    def __init__(
        self,
        topic: str,
        source_partition: Mapping[str, Any],
        values: Sequence[Any],
        *,
        encoding: str | None = None,
        value_schema: Schema | None = None,
        keys: Sequence[Any] | None = None,
        key_schema: Schema | None = None,
        headers: Sequence[Header] = (),
        header_columns: Sequence[tuple[str, Sequence[Any]]] = (),
        offset: Mapping[str, Any] | None = None,
        offset_columns: Mapping[str, Sequence[Any]] | None = None,
        partition: int | None = None,
        timestamps: Sequence[int | None] | None = None,
    ) -> None:
        n = len(values)
        columns = [c for _, c in header_columns]
        columns += list((offset_columns or {}).values())
        columns += [c for c in (keys, timestamps) if c is not None]
        if any(len(c) != n for c in columns):
            raise ValueError(f"every column of a SourceRecordBatch needs {n} entries")
        self.topic = topic
        self.source_partition = source_partition
        self.values = values
        self.encoding = encoding
        self.value_schema = (
            STRING_SCHEMA if value_schema is None and encoding is not None else value_schema
        )
        self.keys = keys
        self.key_schema = key_schema
        self.headers = tuple(headers)
        self.header_columns = tuple((str(k), c) for k, c in header_columns)
        self.offset: Mapping[str, Any] = offset or {}
        self.offset_columns: Mapping[str, Sequence[Any]] = offset_columns or {}
        self.partition = partition
        self.timestamps = timestamps
        self._records: list[SourceRecord] | None = None

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> SourceRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[SourceRecord]: ...
    def __getitem__(self, index: int | slice) -> SourceRecord | list[SourceRecord]:
        return self.records()[index]

    def __iter__(self) -> Iterator[SourceRecord]:
        return iter(self.records())

    def __repr__(self) -> str:
        return (f"SourceRecordBatch(topic={self.topic!r}, source_partition="
                f"{self.source_partition!r}, records={len(self)})")  # fmt: skip

    def source_offset(self, i: int) -> dict[str, Any]:
        """Record ``i``'s source offset (``last_offset()`` is the one the worker commits)."""
        return {**self.offset, **{k: c[i] for k, c in self.offset_columns.items()}}

    def last_offset(self) -> dict[str, Any]:
        return self.source_offset(len(self) - 1) if len(self) else dict(self.offset)

    def texts(self) -> list[Any]:
        """The records' values: bytes decoded when the batch has an ``encoding``."""
        enc, values = self.encoding, self.values
        if enc is None:
            return list(values)
        if set(map(type, values)) == {bytes}:
            return list(map(bytes.decode, values, repeat(enc), repeat("replace")))
        return [v.decode(enc, "replace") if type(v) is bytes else v for v in values]

    def records(self) -> list[SourceRecord]:
        """The batch as ordinary ``SourceRecord``s (equal to constructing each one); built on
        the first call, the same list after."""
        if self._records is None:
            self._records = self._build()
        return self._records

    def _build(self) -> list[SourceRecord]:
        """Builds the records column by column: each step is one pass of C (``map`` over a
        slot setter), so materialising costs little more than the objects themselves."""
        n = len(self)
        values = self.texts()
        keys: Iterable[Any] = self.keys if self.keys is not None else repeat(None)
        stamps: Iterable[Any] = self.timestamps if self.timestamps is not None else repeat(None)
        header_rows: Iterable[tuple[Header, ...]] = repeat(self.headers)
        if self.header_columns:
            columns = [_headers(k, c) for k, c in self.header_columns]
            header_rows = map(tuple.__add__, repeat(self.headers), zip(*columns, strict=True))
        offsets = list(map(dict, repeat(self.offset, n)))  # {**offset, name: column[i], ...}
        for name, column in self.offset_columns.items():
            _each(map(dict.__setitem__, offsets, repeat(name), column))
        fields: tuple[Iterable[Any], ...] = (
            repeat(self.topic), repeat(self.partition), keys, values, repeat(self.key_schema),
            repeat(self.value_schema), stamps, header_rows, repeat(self.source_partition), offsets,
        )  # fmt: skip
        if _RECORD_SETTERS is None:
            names = _RECORD_FIELDS
            rows = zip(*fields, strict=False)  # the repeat()s are endless; values is not
            return [SourceRecord(**dict(zip(names, row, strict=True))) for row in rows]
        records = list(map(object.__new__, repeat(SourceRecord, n)))
        for setter, field_values in zip(_RECORD_SETTERS, fields, strict=True):
            _each(map(setter, records, field_values))
        return records


def _each(calls: Iterable[Any]) -> None:
    """Runs a lazy ``map`` of calls to the end (in C, keeping nothing)."""
    deque(calls, 0)


def _headers(key: str, column: Sequence[Any]) -> list[Header]:
    """Schemaless Headers ``key: column[i]``, built through the slot setters when possible."""
    if _HEADER_SETTERS is None:
        return [Header(key, v) for v in column]
    headers = list(map(object.__new__, repeat(Header, len(column))))
    set_key, set_value, set_schema = _HEADER_SETTERS
    _each(map(set_key, headers, repeat(key)))
    _each(map(set_value, headers, column))
    _each(map(set_schema, headers, repeat(None)))
    return headers


# What ``poll()`` returns: a list (any sequence) of records and batches, one batch, or None.
PollResult = Sequence[SourceRecord | SourceRecordBatch] | SourceRecordBatch | None


def as_records(
    result: Sequence[SourceRecord | SourceRecordBatch] | SourceRecordBatch,
) -> list[SourceRecord]:
    """A poll result as plain records: batches replaced by their ``records()``."""
    if isinstance(result, SourceRecordBatch):
        return result.records()
    out: list[SourceRecord] = []
    for item in result:
        if isinstance(item, SourceRecordBatch):
            out += item.records()
        else:
            out.append(item)
    return out


class SourceConnector(Connector):
    """A connector whose tasks are SourceTasks."""

    @classmethod
    def exactly_once_support(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """Whether this configuration can deliver exactly once (KIP-618): SUPPORTED when
        re-reading from a committed source offset yields the same records. None (the
        default) means unknown, which ``exactly.once.support=required`` refuses."""
        return None

    @classmethod
    def can_define_transaction_boundaries(
        cls, config: Mapping[str, Any]
    ) -> ConnectorTransactionBoundaries:
        """SUPPORTED if its tasks use ``context.transaction_context`` with this configuration
        (needed for ``transaction.boundary=connector``); UNSUPPORTED by default."""
        return ConnectorTransactionBoundaries.UNSUPPORTED


class SourceTask(ABC):
    """Does the reading. ``poll`` may block briefly (<= ~1 s) so ``stop`` is honoured quickly."""

    def __init__(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, config: Mapping[str, Any]) -> None:
        """Called once with this task's config (one entry of ``task_configs``)."""

    @abstractmethod
    def poll(self) -> PollResult:
        """Records read since the last call; None or [] when there are none right now.

        The list may hold ``SourceRecordBatch`` items beside ``SourceRecord`` ones (or ``poll``
        may return one batch): they are sent in list order, as if expanded in place."""

    def commit(self) -> None:  # noqa: B027 - optional hook
        """Offsets up to the last acknowledged record were committed (e.g. ack a queue)."""

    def commit_record(self, record: SourceRecord, offset: int | None) -> None:  # noqa: B027
        """One record was acknowledged at Kafka ``offset`` (None if a transform dropped it).

        Called per record on the producer's callback thread, which costs throughput: a task
        that only needs to know *that* its records are safe should use ``commit_records``."""

    def commit_records(self, records: list[SourceRecord]) -> None:  # noqa: B027
        """Every record of one ``poll()`` result is safe: acknowledged by the broker (acks=all),
        or dropped by a transform, or skipped under ``errors.tolerance=all``.

        A Sluice extension (Kafka Connect has only ``commit_record``): called once per poll
        result, in poll order, on the producer's callback thread, with the very list ``poll``
        returned (a result holding ``SourceRecordBatch`` items arrives as a new list with
        each batch expanded into its ``records()``); keep it short. Not called for a batch with
        a failed delivery (the task then fails). Use it to acknowledge a queue or answer a
        waiting client per batch."""

    def commit_batch(self, batch: SourceRecordBatch, offsets: Sequence[int | None]) -> None:  # noqa: B027
        """Every record of ``batch`` (one ``SourceRecordBatch`` of a poll result) is safe;
        ``offsets[i]`` is the Kafka offset record ``i`` was written at, or None if it was not
        written (dropped by a transform, or skipped under ``errors.tolerance=all``).

        A Sluice extension: ``commit_record``'s columnar counterpart, for a task that must
        know where each record landed (MirrorMaker's offset syncs) without giving up the
        columnar fast path. Called once per batch, after all of it was acknowledged, on the
        producer's callback thread or on the task's own thread; calls for batches sent to the
        same topic partition come in poll order, calls for different partitions may overlap,
        and a call may come after ``stop``. Not called for a batch with a failed delivery (the
        task then fails). Records outside batches still go to ``commit_record``."""

    @abstractmethod
    def stop(self) -> None:
        """Stop polling; called from another thread, so only set flags and wake ``poll``."""

    def metrics(self) -> Mapping[str, float]:
        """Connector-specific gauges, read when Prometheus scrapes the hub, on another thread:
        keep it cheap and non-blocking (attributes, an ``fstat``). Each ``name`` (lower snake
        case) is exported as ``sluice_connector_task_<name>{connector, task}``; the default
        reports none."""
        return {}
