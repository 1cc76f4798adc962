"""Fakes for coordinator tests: a fake clock, a recording group store, an in-memory log.

The fakes keep the state-machine tests free of sleeps and of the storage layer: time moves only
when a test advances the clock, and ``tick()`` is called by hand where the broker's background
task would call it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from broker.coordinator.group import Group
from broker.coordinator.group_manager import JoinRequest


class FakeClock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@dataclass
class RecordingStore:
    stored: list[tuple[str, int, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def store(self, group: Group) -> None:
        self.stored.append((group.group_id, group.generation, group.state.value))

    def delete(self, group_id: str) -> None:
        self.deleted.append(group_id)


def join_request(
    member_id: str = "",
    *,
    group: str = "g",
    protocols: list[tuple[str, bytes]] | None = None,
    session_ms: int = 1_000,
    rebalance_ms: int = 5_000,
    instance: str | None = None,
    client_id: str = "client",
    version4: bool = True,
    **extra: Any,
) -> JoinRequest:
    return JoinRequest(
        group_id=group,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type=extra.get("protocol_type", "consumer"),
        protocols=protocols
        if protocols is not None
        else [("range", b"meta-" + client_id.encode())],
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms,
        client_id=client_id,
        client_host="/127.0.0.1",
        require_known_member_id=version4,
    )
