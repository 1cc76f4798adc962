"""Reading, altering and resetting a connector's offsets (``/connectors/{name}/offsets``).

Source connectors' offsets are records in the offsets topic (via the ``OffsetStore``); sink
connectors' offsets are their consumer group's (``connect-<name>``) committed offsets, changed
through the admin API. Changes are only allowed while the connector is STOPPED (the herder
checks), so no running task can overwrite them and the sink group has no members.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from hub.runtime.errors import BadRequestError
from hub.runtime.worker_sink_task import group_id

ALTERED = "The offsets for this connector have been altered successfully"
RESET = (
    "The Connect framework-managed offsets for this connector have been reset successfully. "
    "However, if this connector manages offsets externally, they will need to be manually "
    "reset in the system that the connector uses."
)
TIMEOUT = 15.0


def source_offsets(store: Any, name: str) -> dict[str, Any]:
    return {"offsets": [{"partition": p, "offset": o} for p, o in store.connector_offsets(name)]}


def alter_source_offsets(store: Any, name: str, offsets: list[dict[str, Any]]) -> str:
    items = []
    for entry in offsets:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, dict) or not (offset is None or isinstance(offset, dict)):
            raise BadRequestError("each entry needs a 'partition' object and an 'offset' object")
        items.append((partition, offset))
    store.put(name, items)
    return ALTERED


def reset_source_offsets(store: Any, name: str) -> str:
    store.put(name, [(p, None) for p, _ in store.connector_offsets(name)])
    return RESET


def sink_offsets(admin: AdminClient, name: str) -> dict[str, Any]:
    request = ConsumerGroupTopicPartitions(group_id(name))
    future = admin.list_consumer_group_offsets([request])[group_id(name)]
    try:
        result = future.result(timeout=TIMEOUT)
    except KafkaException as exc:
        if _code(exc) in (KafkaError.GROUP_ID_NOT_FOUND,):
            return {"offsets": []}
        raise
    entries = sorted(
        (tp for tp in result.topic_partitions or [] if tp.offset >= 0),
        key=lambda tp: (tp.topic, tp.partition),
    )
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                "offset": {"kafka_offset": tp.offset},
            }
            for tp in entries
        ]
    }


def alter_sink_offsets(admin: AdminClient, name: str, offsets: list[dict[str, Any]]) -> str:
    tps = []
    for entry in offsets:
        partition, offset = entry.get("partition") or {}, entry.get("offset")
        try:
            topic = str(partition["kafka_topic"])
            number = int(partition["kafka_partition"])
        except (KeyError, TypeError, ValueError):
            raise BadRequestError(
                "sink offsets need partition {'kafka_topic', 'kafka_partition'}"
            ) from None
        if offset is None:
            raise BadRequestError(
                "resetting single sink partitions is not supported; use DELETE to reset all"
            )
        try:
            value = int(offset["kafka_offset"])
        except (KeyError, TypeError, ValueError):
            raise BadRequestError("sink offsets need offset {'kafka_offset': n}") from None
        if value < 0:
            raise BadRequestError(f"kafka_offset must be >= 0, got {value}")
        tps.append(KafkaTopicPartition(topic, number, value))
    if tps:
        request = ConsumerGroupTopicPartitions(group_id(name), tps)
        admin.alter_consumer_group_offsets([request])[group_id(name)].result(timeout=TIMEOUT)
    return ALTERED


def reset_sink_offsets(admin: AdminClient, name: str) -> str:
    future = admin.delete_consumer_groups([group_id(name)], request_timeout=TIMEOUT)[group_id(name)]
    try:
        future.result(timeout=TIMEOUT)
    except KafkaException as exc:
        if _code(exc) != KafkaError.GROUP_ID_NOT_FOUND:
            raise
    return RESET


def _code(exc: KafkaException) -> int | None:
    err = exc.args[0] if exc.args else None
    return err.code() if isinstance(err, KafkaError) else None
