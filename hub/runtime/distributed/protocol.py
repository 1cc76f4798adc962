"""What workers of one group tell each other through JoinGroup/SyncGroup, and the assignor.

Protocol type ``connect``, protocol name ``sluice-eager``. Member metadata and assignments are
JSON (they never leave Sluice workers; Kafka's group coordinator treats both as opaque bytes):

    metadata    {"version": 1, "url": "http://host:port", "config_offset": 17}
    assignment  {"version": 1, "error": 0, "leader": "<member id>", "leader_url": "...",
                 "config_offset": 17, "connectors": ["a"], "tasks": [["a", 0], ["b", 1]]}

``config_offset`` is how far a worker has read the config topic. The leader assigns from a
config view at least as new as every member's (``error`` 1 = the leader could not catch up:
members rejoin), and each member reads the config topic up to the assignment's offset before
it starts anything, so no one starts a task from a configuration older than the assignment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PROTOCOL_TYPE = "connect"
PROTOCOL_NAME = "sluice-eager"
VERSION = 1
CONFIG_MISMATCH = 1  # the leader could not read the config topic as far as a member had


@dataclass(frozen=True)
class MemberMetadata:
    url: str
    config_offset: int

    def encode(self) -> bytes:
        return json.dumps(
            {"version": VERSION, "url": self.url, "config_offset": self.config_offset}
        ).encode()

    @classmethod
    def decode(cls, raw: bytes) -> MemberMetadata:
        data = json.loads(bytes(raw))
        return cls(str(data["url"]), int(data["config_offset"]))


@dataclass(frozen=True)
class Assignment:
    leader: str
    leader_url: str
    config_offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[tuple[str, int], ...] = ()
    error: int = 0
    members: dict[str, list[str]] = field(default_factory=dict)
    """URL -> the ``connector`` and ``connector-task`` units it runs (for the console)."""

    def encode(self) -> bytes:
        return json.dumps(
            {
                "version": VERSION,
                "error": self.error,
                "leader": self.leader,
                "leader_url": self.leader_url,
                "config_offset": self.config_offset,
                "connectors": list(self.connectors),
                "tasks": [list(t) for t in self.tasks],
                "members": self.members,
            }
        ).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Assignment:
        data: dict[str, Any] = json.loads(bytes(raw))
        return cls(
            leader=str(data["leader"]),
            leader_url=str(data["leader_url"]),
            config_offset=int(data["config_offset"]),
            connectors=tuple(data.get("connectors", [])),
            tasks=tuple((str(c), int(i)) for c, i in data.get("tasks", [])),
            error=int(data.get("error", 0)),
            members={str(k): list(v) for k, v in data.get("members", {}).items()},
        )


def assign(
    members: dict[str, MemberMetadata], task_counts: dict[str, int]
) -> dict[str, tuple[list[str], list[tuple[str, int]]]]:
    """Member id -> (connectors, tasks), balanced: every member gets within one unit of every
    other, connectors and tasks dealt round-robin as one sequence so connectors do not all land
    on the first member. Members are ordered by URL then id, so the same group and configs give
    the same assignment whoever leads."""
    order = sorted(members, key=lambda m: (members[m].url, m))
    out: dict[str, tuple[list[str], list[tuple[str, int]]]] = {m: ([], []) for m in order}
    if not order:
        return out
    turn = 0
    for name in sorted(task_counts):
        out[order[turn % len(order)]][0].append(name)
        turn += 1
        for index in range(task_counts[name]):
            out[order[turn % len(order)]][1].append((name, index))
            turn += 1
    return out
