"""Sink connectors and tasks: receive SinkRecords from topics, write an external system.

The worker consumes in a group named ``connect-<connector name>`` and calls ``put`` with
batches of records. Periodically (``offset.flush.interval.ms``) it calls ``pre_commit`` with
the offsets of everything delivered to ``put``; the offsets returned (by default after
``flush`` succeeds) are committed to the group. A task that buffers should return only what it
has durably written, so a restart redelivers the rest: at-least-once, or exactly-once when the
sink writes idempotently (e.g. deterministic object names, upserts by key).
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, overload

from hub.api.connector import Connector
from hub.api.converter import OBJECTS, RawForm
from hub.api.exactly_once import ExactlyOnceSupport
from hub.api.record import SinkRecord, TopicPartition


class SinkTaskContext(Protocol):
    @property
    def config(self) -> Mapping[str, Any]: ...

    def assignment(self) -> set[TopicPartition]:
        """Partitions currently assigned to this task."""

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop delivering records of these partitions until ``resume`` (backpressure)."""

    def resume(self, *partitions: TopicPartition) -> None: ...

    def offset(self, partition: TopicPartition, offset: int) -> None:
        """Rewind/skip: the next record delivered for ``partition`` is at ``offset``."""

    def request_commit(self) -> None:
        """Ask for a ``pre_commit``/offset commit as soon as possible."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """Where to send a record the task cannot write (Kafka Connect's KIP-610).

        The hub runtime always returns a reporter: a reported record goes through the
        connector's ``errors.tolerance`` / ``errors.log.*`` / dead-letter-queue settings like a
        record whose conversion failed (stage ``TASK_PUT``). With ``errors.tolerance=none``
        ``report`` raises, failing the task with the error. None means the runtime (e.g. a
        test harness) offers no reporter: the task should then raise the error itself.
        Call it once, in ``start``; use the reporter from the task's thread only.
        """


class ErrantRecordReporter(Protocol):
    def report(self, record: SinkRecord, error: Exception) -> None:
        """Hand over a record the task skips; returns once it was reported (or raises)."""


class SinkConnector(Connector):
    """A connector whose tasks are SinkTasks; ``topics`` or ``topics.regex`` choose input."""

    @classmethod
    def exactly_once_delivery(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """Whether this configuration writes exactly once: records the worker delivers again
        after a crash (from the last committed offset) leave no duplicate in the target,
        because writes are idempotent (deterministic object names, upserts) or the sink
        tracks its own progress. A Sluice extension (Kafka Connect has no sink-side
        declaration); with exactly-once sources and ``read_committed`` input it makes a
        pipeline exactly once end to end. None (the default) = not claimed."""
        return None


class SinkTask(ABC):
    def __init__(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, config: Mapping[str, Any]) -> None:
        """Called once with this task's config."""

    def open(self, partitions: Sequence[TopicPartition]) -> None:  # noqa: B027
        """Partitions were assigned (after a rebalance); set up writers for them."""

    @abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write or buffer records. Raise RetriableError to get the same batch again later.

        The runtime may pass a ``SinkRecordBatch``: a sequence of records like any other,
        which also offers the consumed bytes as columns for a sink that can write them as
        they are (see its docstring)."""

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:  # noqa: B027
        """Make everything up to ``offsets`` (next offset to read) durable."""

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """Offsets safe to commit; default: flush everything, then commit it all."""
        self.flush(offsets)
        return offsets

    def close(self, partitions: Sequence[TopicPartition]) -> None:  # noqa: B027
        """Partitions were revoked; drop their writers (after a final pre_commit)."""

    @abstractmethod
    def stop(self) -> None:
        """The task is stopping; release resources."""

    def metrics(self) -> Mapping[str, float]:
        """Connector-specific gauges, read when Prometheus scrapes the hub, on another thread:
        keep it cheap and non-blocking (attributes, an ``fstat``). Each ``name`` (lower snake
        case) is exported as ``sluice_connector_task_<name>{connector, task}``; the default
        reports none."""
        return {}


# -- the columnar batch handed to put -----------------------------------------------------------


RawConversion = RawForm
"""The converter's raw form as ``SinkRecordBatch`` reports it (the name sinks have used)."""
OTHER_CONVERSION = OBJECTS

# Codecs that decode each byte independently of its neighbours, or (UTF-8) restart at any
# ASCII byte: values joined with b"\n" decode iff every value does, so one decode checks them all.
_JOINABLE_CODECS = frozenset({"utf-8", "ascii", "iso8859-1"})


def decodes(values: Sequence[bytes | None], encoding: str) -> bool:
    """True if every non-None value decodes in ``encoding``: one decode of the batch for UTF-8,
    ASCII and Latin-1, one per value otherwise."""
    name = codecs.lookup(encoding).name
    try:
        if name in _JOINABLE_CODECS:
            b"\n".join(filter(None, values)).decode(name)
        else:
            for value in values:
                if value is not None:
                    value.decode(name)
    except UnicodeDecodeError:
        return False
    return True


class SinkRecordBatch(Sequence[SinkRecord]):
    """One consume's records for ``SinkTask.put``: a ``Sequence[SinkRecord]`` with raw columns.

    Why: building a ``SinkRecord`` (decode key and value, convert every header, fill ten
    fields) costs a few microseconds per message, more than many sinks spend writing it. A
    sink that writes what it consumed (a file of lines, an object of bytes) can use the
    consumed bytes directly, as columns with one entry per message, and skip the records.

    As a sequence it is exactly what ``put`` always received: indexing, iterating or ``len``
    builds the records once (cached) through the configured converters and the connector's
    error policy (``errors.tolerance``, log, dead-letter queue), so a message whose
    conversion fails is missing from the records (tolerated) or fails the task (raises from
    the access, as ``put`` would have seen before). Sinks that ignore the columns need no
    change. (Truth value and ``len`` build the records too; ``message_count`` does not.)

    Columns (one entry per consumed message, in consume order; lists, do not modify them):
    ``topics``, ``partitions``, ``offsets``, ``keys`` / ``values`` (bytes as consumed, or
    None), ``headers`` (the consumed ``[(key, bytes | None), ...]`` or None) and
    ``timestamps`` (``(type, epoch ms)``: type 0 none, 1 create time, 2 log-append time).
    ``key_conversion`` / ``value_conversion`` say what the converters make of the bytes
    (their ``raw_form()``, a ``RawForm``); ``headers_exact`` is true when the header
    converter's raw form is ``text`` (a pure function of key and bytes that does not fail)
    and ``convert_header`` gives the value a record's header would hold.

    Using the columns, a sink takes over the converters' job and must give the same result:

    1. check that the conversions are ones it can reproduce (e.g. ``value_conversion.is_text
       ("utf-8")`` when it writes UTF-8 text; ``headers_exact`` when it reads headers);
    2. call ``converts_cleanly()``: true when every message converts without error, so the
       records would be exactly one per message. It costs one decode of the batch. When it is
       false, use the records (iterate the batch): they apply the error policy;
    3. only then write from the columns.

    After ``put`` returns, the runtime calls ``settle()``: if the sink neither built the
    records nor got ``converts_cleanly()`` true, the records are built then, so conversion
    failures are still reported (or fail the task) for a sink that never looked.

    The runtime hands a batch only when no transform is configured (a transform works on
    records; with one, ``put`` gets a plain list) and for a non-empty poll (an idle poll
    still calls ``put([])``). Use it from the task's thread, within ``put``.
    """

    __slots__ = ("_build", "_clean", "_columns", "_convert_header", "_error", "_messages",
                 "_records", "_type", "headers_exact", "key_conversion", "offsets",
                 "partitions", "topics", "value_conversion")  # fmt: skip

    def __init__(
        self,
        messages: Sequence[Any],
        topics: list[str],
        partitions: list[int],
        offsets: list[int],
        *,
        build: Callable[[], list[SinkRecord]],
        key_conversion: RawForm = OBJECTS,
        value_conversion: RawForm = OBJECTS,
        convert_header: Callable[[str, str, bytes | None], Any] | None = None,
    ) -> None:
        """``messages``: the consumed messages, objects of one class with confluent-kafka's
        ``Message`` accessors (``key()``, ``value()``, ``headers()``, ``timestamp()``); the
        other columns are read from them on first use. ``build`` makes the records (with
        the error policy); ``convert_header(topic, key, bytes)`` converts one header value
        and is given only for an exact header converter."""
        self._messages = messages
        self._type = type(messages[0]) if messages else object
        self.topics = topics
        self.partitions = partitions
        self.offsets = offsets
        self._build = build
        self.key_conversion = key_conversion
        self.value_conversion = value_conversion
        self._convert_header = convert_header
        self.headers_exact = convert_header is not None
        self._columns: dict[str, list[Any]] = {}
        self._records: list[SinkRecord] | None = None
        self._clean: bool | None = None
        self._error: BaseException | None = None

    def _column(self, accessor: str) -> list[Any]:
        column = self._columns.get(accessor)
        if column is None:
            # the unbound C method mapped over the messages: no Python frame per message
            messages = self._messages
            column = list(map(getattr(self._type, accessor), messages)) if messages else []
            self._columns[accessor] = column
        return column

    @property
    def keys(self) -> list[bytes | None]:
        return self._column("key")

    @property
    def values(self) -> list[bytes | None]:
        return self._column("value")

    @property
    def headers(self) -> list[list[tuple[str, bytes | None]] | None]:
        return self._column("headers")

    @property
    def timestamps(self) -> list[tuple[int, int]]:
        return self._column("timestamp")

    @property
    def message_count(self) -> int:
        """Entries per column (consumed messages), which ``len`` (records) may not equal."""
        return len(self.offsets)

    def convert_header(self, topic: str, key: str, data: bytes | None) -> Any:
        """The value a record's header ``key`` with these bytes would hold (``headers_exact``
        only; raises ``TypeError`` otherwise)."""
        if self._convert_header is None:
            raise TypeError("the header converter is not exact: use the records' headers")
        return self._convert_header(topic, key, data)

    def converts_cleanly(self) -> bool:
        """True if every message converts (key, value, headers) without error, so the records
        are one per message and equal to what the conversions describe. Cached."""
        if self._clean is None:
            self._clean = self.headers_exact and all(
                self._converts(conversion, self._column(accessor))
                for conversion, accessor in (
                    (self.key_conversion, "key"),
                    (self.value_conversion, "value"),
                )
            )
        return self._clean

    @staticmethod
    def _converts(conversion: RawForm, column: list[bytes | None]) -> bool:
        if conversion.kind == "bytes":
            return True
        if conversion.null_safe and column.count(None) == len(column):
            return True  # e.g. the null keys of a file source's records, whatever the converter
        return conversion.kind == "text" and decodes(column, conversion.encoding)

    @property
    def materialised(self) -> bool:
        """Whether the records were built (by an access or ``settle``)."""
        return self._records is not None

    def records(self) -> list[SinkRecord]:
        """The records (built on first call, with the error policy; cached)."""
        if self._records is None:
            if self._error is not None:
                raise self._error
            try:
                self._records = self._build()
            except BaseException as exc:
                self._error = exc  # a sink that swallowed it still fails in settle()
                raise
        return self._records

    @property
    def failure(self) -> BaseException | None:
        """The error building the records raised (e.g. a conversion failure the error policy
        does not tolerate), if it did; it fails the task even if ``put`` caught it."""
        return self._error

    def settle(self) -> None:
        """For the runtime, after ``put`` returned: apply the error policy to what the sink
        did not check itself (see the class docstring); re-raise a failure ``put`` caught."""
        if self._error is not None:
            raise self._error
        if self._records is None and not self.converts_cleanly():
            self.records()

    def __len__(self) -> int:
        return len(self.records())

    @overload
    def __getitem__(self, index: int) -> SinkRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[SinkRecord]: ...

    def __getitem__(self, index: int | slice) -> SinkRecord | Sequence[SinkRecord]:
        return self.records()[index]

    def __iter__(self) -> Iterator[SinkRecord]:
        return iter(self.records())

    def __repr__(self) -> str:
        state = "records built" if self._records is not None else "raw"
        return f"<SinkRecordBatch of {self.message_count} messages, {state}>"
