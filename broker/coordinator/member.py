"""A group member as the coordinator sees it, and the answers parked requests receive.

A member waiting in JoinGroup or SyncGroup is represented by an ``asyncio.Future`` on the
member (``join_waiter`` / ``sync_waiter``); the rebalance completes it with a ``JoinResult``
or ``SyncResult``. A future whose request was cancelled (client gone) is simply skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode


@dataclass
class JoinResult:
    """What a JoinGroup response carries; ``members`` is filled for the leader only."""

    error: ErrorCode
    member_id: str = ""
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)
    skip_assignment: bool = False


@dataclass
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass
class Member:
    """A member as the coordinator sees it: identity, timeouts, protocols and its assignment.

    ``heartbeat_deadline`` is the wall-clock ms after which the member counts as dead; it is
    not checked while the member is parked in JoinGroup or SyncGroup (the request itself
    proves liveness, and the rebalance timeout bounds that wait instead).
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    heartbeat_deadline: int = 0
    join_waiter: asyncio.Future[JoinResult] | None = None
    sync_waiter: asyncio.Future[SyncResult] | None = None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""

    def matches(self, protocols: Sequence[tuple[str, bytes]]) -> bool:
        """Same protocols, same order, same metadata: rejoining changes nothing."""
        return list(protocols) == self.protocols

    @property
    def is_awaiting(self) -> bool:
        return self.join_waiter is not None or self.sync_waiter is not None

    def complete_join(self, result: JoinResult) -> None:
        waiter, self.join_waiter = self.join_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(result)

    def complete_sync(self, result: SyncResult) -> None:
        waiter, self.sync_waiter = self.sync_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(result)
