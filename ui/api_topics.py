"""``/console/api/topics``: topics, partitions, configs, messages (browse, search, produce),
the groups consuming a topic, adding partitions and purging records (DeleteRecords)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from hub.rest.errors import RestError
from kafka_admin import browse as browse_api
from kafka_admin import cluster as cluster_api
from kafka_admin import groups as groups_api
from kafka_admin import messages as messages_api
from kafka_admin.filters import RecordFilter
from ui import schemas as schemas_api
from ui.console_state import ConsoleDep, translated

router = APIRouter(prefix="/topics")


@router.get("")
def list_topics(console: ConsoleDep) -> list[dict[str, Any]]:
    with translated():
        rows = console.admin.topics()
    per_topic = console.rates.topic_rates()
    return [{**row, "messages_per_sec": per_topic.get(row["name"])} for row in rows]


@router.post("", status_code=201)
def create_topic(console: ConsoleDep, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    name = str(body.get("name") or "").strip()
    if not name:
        raise RestError(400, "A topic name is required", {"name": ["required"]})
    with translated():
        configs = {str(k): str(v) for k, v in (body.get("configs") or {}).items()}
        console.admin.create_topic(
            name,
            int(body.get("partitions") or 1),
            int(body.get("replication_factor") or 1),
            configs,
        )
        return console.admin.topic(name)


@router.get("/{topic}")
def get_topic(console: ConsoleDep, topic: str) -> dict[str, Any]:
    with translated():
        return console.admin.topic(topic)


@router.get("/{topic}/partitions")
def get_partitions(console: ConsoleDep, topic: str) -> list[dict[str, Any]]:
    with translated():
        partitions: list[dict[str, Any]] = console.admin.topic(topic)["partitions"]
        return partitions


@router.post("/{topic}/partitions")
def add_partitions(
    console: ConsoleDep, topic: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{"count": N}``: grows the topic to N partitions (never fewer than it has)."""
    with translated():
        count = int(body.get("count") or 0)
        have = len(console.admin.topic(topic)["partitions"])
        if count <= have:
            raise ValueError(f"Topic {topic} has {have} partitions: ask for more than {have}")
        console.admin.create_partitions(topic, count)
        return console.admin.topic(topic)


@router.post("/{topic}/delete-records")
def delete_records(
    console: ConsoleDep, topic: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{"partitions": {"0": offset, ...}}`` (-1: everything) or ``{"all": true}`` (every
    partition up to its end): DeleteRecords. Answers the new log start per partition."""
    with translated():
        ids = [p["partition"] for p in console.admin.topic(topic)["partitions"]]
        if body.get("all"):
            before = dict.fromkeys(ids, -1)
        else:
            given = body.get("partitions") or {}
            if not isinstance(given, dict) or not given:
                raise ValueError('Say which records to delete: {"partitions": {"0": 100}}')
            before = {int(p): int(o) for p, o in given.items()}
            unknown = sorted(set(before) - set(ids))
            if unknown:
                raise LookupError(f"Topic {topic} has no partition {unknown[0]}")
        low = console.admin.delete_records(topic, before)
        return {"topic": topic, "log_start": {str(p): o for p, o in sorted(low.items())}}


@router.get("/{topic}/cluster")
def topic_replicas(console: ConsoleDep, topic: str) -> list[dict[str, Any]]:
    with translated():
        return cluster_api.partitions(console.admin, topic)


@router.get("/{topic}/consumers")
def topic_consumers(console: ConsoleDep, topic: str) -> list[dict[str, Any]]:
    with translated():
        return groups_api.topic_consumers(console.admin, topic)


@router.delete("/{topic}", status_code=204)
def delete_topic(console: ConsoleDep, topic: str) -> Response:
    with translated():
        console.admin.delete_topic(topic)
    return Response(status_code=204)


@router.patch("/{topic}/configs")
def alter_configs(
    console: ConsoleDep, topic: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{key: value}`` sets keys; a ``null`` value returns the key to its default."""
    with translated():
        set_ = {str(k): str(v) for k, v in body.items() if v is not None}
        console.admin.alter_topic_configs(topic, set_, [k for k, v in body.items() if v is None])
        return console.admin.topic(topic)


@router.get("/{topic}/messages")
def browse(
    console: ConsoleDep,
    topic: str,
    start: str = "latest",
    partition: int | None = None,
    offset: int | None = None,
    timestamp: int | None = None,
    positions: Annotated[str, Query(description="p:o,p:o — continue a live tail")] = "",
    limit: int = 50,
    q: str = "",
    key: str = "",
    value: str = "",
    header: str = "",
    json_path: str = "",
    scan: int = browse_api.SCAN_DEFAULT,
    cursor: str = "",
) -> dict[str, Any]:
    registry = console.registry

    def decode(records: list[dict[str, Any]]) -> None:
        if registry is not None:  # registry-framed Avro/Protobuf/JSON Schema -> JSON
            schemas_api.decode_records(registry, records)

    with translated():
        given = {
            int(p): int(o) for p, o in (pair.split(":") for pair in positions.split(",") if pair)
        }
        flt = RecordFilter(text=q, key=key, value=value, header=header, json_path=json_path)
        return browse_api.browse(
            console.admin, topic, start=start, partition=partition, offset=offset,
            timestamp_ms=timestamp, positions=given, limit=limit, filters=flt, scan=scan,
            cursor=cursor or None, transform=decode,
        )  # fmt: skip


@router.post("/{topic}/messages", status_code=201)
def produce(
    console: ConsoleDep, topic: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{"key", "value", "headers": {}, "partition"}``; ``"value": null`` writes a tombstone."""
    headers = body.get("headers") or {}
    if not isinstance(headers, dict):
        raise RestError(400, "headers must be an object of name: value", {"headers": ["object"]})
    partition = body.get("partition")
    value = body.get("value")
    with translated():
        return messages_api.produce(
            console.admin, topic, value=None if value is None else str(value),
            key=body.get("key"), headers={str(k): str(v) for k, v in headers.items()},
            partition=None if partition in (None, "") else int(partition),
        )  # fmt: skip
