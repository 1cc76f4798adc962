"""Every version of every group API, in process: request entity in, encodable response out.

Real clients each use one version per API; this walks all of them, so a field that is
required in some version and missing from a handler's ``build`` call fails here, not in a
client's log. Requests are built from one spec per API; fields a version lacks are dropped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import typing
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from kio.index import load_request_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_writer

import broker.protocol.handlers  # noqa: F401 - registers every handler
from broker.config import BrokerConfig
from broker.coordinator import GroupCoordinator
from broker.log.log_manager import LogManager
from broker.protocol.registry import RequestContext, lookup

OK = ErrorCode.none
TOPIC_ID = uuid.UUID(int=7)


class FakeBroker:
    """The attributes of ``broker.app.Broker`` the group handlers use."""

    def __init__(self, logs: LogManager, coordinator: GroupCoordinator) -> None:
        self.config = BrokerConfig(node_id=3)
        self.address = ("broker.test", 9999)
        self.logs = logs
        self.coordinator = coordinator
        self.cluster = None  # single node
        self.authorizer = None  # every request allowed (no authorizer.class.name)
        self.quotas = None

    def advertised(self, listener: str) -> tuple[str, int]:
        return self.address

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return "t" if topic_id == TOPIC_ID else None


def make(cls: Any, spec: dict[str, Any]) -> Any:
    """``cls`` from ``spec``: unknown keys dropped, lists of dicts become nested entities."""
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in spec:
            continue
        value = spec[f.name]
        if isinstance(value, list) and value and isinstance(value[0], dict):
            nested = next(
                b
                for a in typing.get_args(hints[f.name])
                for b in (typing.get_args(a) or (a,))
                if dataclasses.is_dataclass(b)
            )
            value = tuple(make(nested, v) for v in value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)


async def call(fake: FakeBroker, api_key: int, version: int, spec: dict[str, Any]) -> Any:
    registration = lookup(api_key)
    assert registration is not None
    assert registration.min_version <= version <= registration.max_version
    request = make(load_request_schema(api_key, version), spec)
    ctx = RequestContext(fake, api_key, version, 1, "client-1", "/127.0.0.1")  # type: ignore[arg-type]
    response = await registration.handler(ctx, request)
    entity_writer(type(response))(io.BytesIO(), response)  # must encode in this version
    return response


def errors(entity: Any) -> set[ErrorCode]:
    """Every error_code anywhere in a response."""
    found: set[ErrorCode] = set()
    if dataclasses.is_dataclass(entity):
        for f in dataclasses.fields(entity):
            value = getattr(entity, f.name)
            if f.name == "error_code":
                found.add(value)
            for item in value if isinstance(value, tuple) else (value,):
                found |= errors(item)
    return found


def commit_spec(group: str, generation: int, member: str) -> dict[str, Any]:
    partition = {"partition_index": 0, "committed_offset": 5, "committed_metadata": "md"}
    return {
        "group_id": group,
        "generation_id_or_member_epoch": generation,
        "member_id": member,
        "topics": [{"name": "t", "topic_id": TOPIC_ID, "partitions": [partition]}],
    }


def fetch_spec(group: str) -> dict[str, Any]:
    topics = [{"name": "t", "topic_id": TOPIC_ID, "partition_indexes": [0, 1]}]
    return {"group_id": group, "topics": topics, "groups": [{"group_id": group, "topics": topics}]}


@pytest.mark.parametrize("version", range(10))
def test_every_version_of_the_group_apis(tmp_path: Path, version: int) -> None:
    async def scenario() -> None:
        logs = LogManager(tmp_path)
        logs.load()
        config = BrokerConfig(
            offsets_topic_num_partitions=1,
            group_initial_rebalance_delay_ms=0,
            group_min_session_timeout_ms=10,
        )
        coordinator = GroupCoordinator(logs, config)
        await coordinator.start()
        fake = FakeBroker(logs, coordinator)
        group = f"g{version}"
        try:
            await exercise(fake, group, version)
        finally:
            await coordinator.stop()
            logs.close()

    asyncio.run(scenario())


async def exercise(fake: FakeBroker, group: str, v: int) -> None:
    found = await call(fake, 10, min(v, 6), {"key": group, "coordinator_keys": [group]})
    entry = found.coordinators[0] if min(v, 6) >= 4 else found
    assert (entry.node_id, entry.host, entry.port, entry.error_code) == (3, "broker.test", 9999, OK)

    join = {
        "group_id": group,
        "session_timeout": timedelta(seconds=10),
        "rebalance_timeout": timedelta(seconds=10),
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"sub"}],
    }
    joined = await call(fake, 11, v, join)
    if v >= 4:
        assert joined.error_code is ErrorCode.member_id_required
        joined = await call(fake, 11, v, {**join, "member_id": joined.member_id})
    assert joined.error_code is OK and joined.generation_id == 1
    member, gen = joined.member_id, joined.generation_id
    assert [m.member_id for m in joined.members] == [member]

    sync = {"group_id": group, "generation_id": gen, "member_id": member}
    assigned = [{"member_id": member, "assignment": b"asg"}]
    synced = await call(fake, 14, min(v, 5), {**sync, "assignments": assigned})
    assert synced.error_code is OK and synced.assignment == b"asg"
    assert (await call(fake, 12, min(v, 4), sync)).error_code is OK

    commit_v = min(max(v, 2) + (v >= 9), 10)  # 2..10
    committed = await call(fake, 8, commit_v, commit_spec(group, gen, member))
    assert errors(committed) == {OK}, committed
    fetched = await call(fake, 9, min(max(v, 1) + (v >= 9), 10), fetch_spec(group))
    assert errors(fetched) <= {OK}
    topics = fetched.groups[0].topics if hasattr(fetched, "groups") else fetched.topics
    offsets = {p.partition_index: p.committed_offset for t in topics for p in t.partitions}
    assert offsets == {0: 5, 1: -1}
    if v >= 9:  # OffsetFetch v10: a topic id the broker does not know
        spec = fetch_spec(group)
        spec["groups"][0]["topics"][0]["topic_id"] = uuid.UUID(int=99)
        unknown = await call(fake, 9, 10, spec)
        assert errors(unknown) == {OK, ErrorCode.unknown_topic_id}

    listed = await call(fake, 16, min(v, 5), {"states_filter": ["Stable"]})
    assert [g.group_id for g in listed.groups] == [group]
    described = await call(
        fake, 15, min(v, 6), {"groups": [group, "nope"], "include_authorized_operations": False}
    )
    live, missing = described.groups
    assert live.group_state == "Stable" and live.members[0].member_assignment == b"asg"
    assert missing.error_code is (ErrorCode.group_id_not_found if min(v, 6) >= 6 else OK)

    deleted = await call(fake, 42, min(v, 2), {"groups_names": [group]})
    assert deleted.results[0].error_code is ErrorCode.non_empty_group
    leave = {"group_id": group, "member_id": member, "members": [{"member_id": member}]}
    assert errors(await call(fake, 13, min(v, 5), leave)) == {OK}
    pruned = await call(
        fake,
        47,
        0,
        {"group_id": group, "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]},
    )
    assert errors(pruned) == {OK}
    deleted = await call(fake, 42, min(v, 2), {"groups_names": [group]})
    assert deleted.results[0].error_code is OK
