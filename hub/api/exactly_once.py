"""Exactly-once source support (Kafka Connect's KIP-618): what a connector declares and what a
task may do about transaction boundaries.

With the worker's ``exactly.once.source.support=enabled`` every source task writes its records
*and* its source offsets in one Kafka transaction, so after any crash the offsets a task
restarts from describe exactly the records that are visible to ``read_committed`` consumers:
nothing is lost and nothing appears twice. Whether that holds end to end depends on the
connector: its offsets must pin positions exactly (re-reading from a committed offset must give
the same records), which it says through ``SourceConnector.exactly_once_support``. A connector
configured with ``exactly.once.support=required`` is refused unless it answers SUPPORTED.

``transaction.boundary`` chooses when a transaction commits: after every non-empty ``poll``
(``poll``, the default), every ``transaction.boundary.interval.ms`` (``interval``), or when the
task says so through the ``TransactionContext`` (``connector``; the connector must answer
SUPPORTED to ``can_define_transaction_boundaries``).
"""

from __future__ import annotations

import enum
from typing import Protocol

from hub.api.record import SourceRecord


class ExactlyOnceSupport(enum.Enum):
    """A source connector's answer for one configuration (Kafka's ``ExactlyOnceSupport``)."""

    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"


class ConnectorTransactionBoundaries(enum.Enum):
    """Whether a connector can define its own transaction boundaries for one configuration."""

    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"


class TransactionContext(Protocol):
    """Offered to source tasks (``context.transaction_context``) when the connector defines
    the transaction boundaries (``transaction.boundary=connector``); None otherwise.

    Requests take effect on the task's thread once the current ``poll`` result is sent: a
    record-based request after that record (later records of the same result go to the next
    transaction), the others after the whole result; a record-based request wins over a
    batch-wide one for the same result. An abort discards the transaction's records, but its
    source offsets are still committed, so the records are not read again (Kafka's rule): a
    task that wants them re-read must not move its own position past them."""

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit after the next ``poll`` result, or right after ``record``."""

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort after the next ``poll`` result, or right after ``record``."""
