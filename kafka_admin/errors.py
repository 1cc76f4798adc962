"""Errors of the admin layer (beyond confluent-kafka's own ``KafkaException``).

Tree::

    AdminError                      an admin operation cannot be done as asked
    ├── GroupBusyError              the consumer group still has members: its offsets cannot
    │                               be reset or deleted (a live member would overwrite them)
    ├── OffsetCommitRefusedError    the broker refused some partitions of an offset commit;
    │                               ``partitions`` names them with the reasons
    └── NotFoundError               no such topic, partition or group (also a ``LookupError``)

Input mistakes (an unknown reset target, a missing offset) are ``ValueError``.
"""

from __future__ import annotations


class AdminError(Exception):
    """Root of the admin layer's errors."""


class GroupBusyError(AdminError):
    """A reset or delete was asked for a group that still has members."""


class OffsetCommitRefusedError(AdminError):
    """Some partitions of an admin offset commit were refused."""

    def __init__(self, message: str, partitions: list[tuple[str, int, str]]) -> None:
        super().__init__(message)
        self.partitions = partitions


class NotFoundError(AdminError, LookupError):
    """No such topic, partition or group."""
