"""Source connectors and tasks: read an external system, emit SourceRecords.

The worker calls ``poll()`` in a loop on the task's own thread. Returned records go through
transforms and converters to one idempotent producer (acks=all). Only after the broker
acknowledged a record is its ``source_offset`` committed for its ``source_partition``, so a
restart resumes from ``context.offsets(...)`` with nothing lost: delivery is at-least-once, and
exactly-once where the task's offsets describe positions exactly (a task should emit records
of one source partition in order).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from hub.api.connector import Connector
from hub.api.record import SourceRecord


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


class SourceConnector(Connector):
    """A connector whose tasks are SourceTasks."""


class SourceTask(ABC):
    """Does the reading. ``poll`` may block briefly (<= ~1 s) so ``stop`` is honoured quickly."""

    def __init__(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, config: Mapping[str, Any]) -> None:
        """Called once with this task's config (one entry of ``task_configs``)."""

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """Records read since the last call; None or [] when there are none right now."""

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
        returned; keep it short. Not called for a batch with a failed delivery (the task then
        fails). Use it to acknowledge a queue or answer a waiting client per batch."""

    @abstractmethod
    def stop(self) -> None:
        """Stop polling; called from another thread, so only set flags and wake ``poll``."""
