"""Sink connectors and tasks: receive SinkRecords from topics, write an external system.

The worker consumes in a group named ``connect-<connector name>`` and calls ``put`` with
batches of records. Periodically (``offset.flush.interval.ms``) it calls ``pre_commit`` with
the offsets of everything delivered to ``put``; the offsets returned (by default after
``flush`` succeeds) are committed to the group. A task that buffers should return only what it
has durably written, so a restart redelivers the rest: at-least-once, or exactly-once when the
sink writes idempotently (e.g. deterministic object names, upserts by key).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from hub.api.connector import Connector
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
        """Write or buffer records. Raise RetriableError to get the same batch again later."""

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
