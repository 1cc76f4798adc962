"""Producing a test record from the console: one record, acknowledged by all in-sync replicas.

Browsing and searching live in ``kafka_admin.browse``; the shape of a shown record in
``kafka_admin.records``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka import Producer

from kafka_admin.client import KafkaAdmin


def produce(
    admin: KafkaAdmin,
    topic: str,
    *,
    value: str | None,
    key: str | None = None,
    headers: Mapping[str, str] | None = None,
    partition: int | None = None,
) -> dict[str, Any]:
    """Writes one record (``value=None``: a tombstone) and waits for the broker's
    acknowledgement; returns where it landed."""
    if topic not in admin.metadata().topics:
        raise LookupError(f"Topic {topic} not found")
    producer = Producer({**admin.client_config, "acks": "all", "enable.idempotence": False})
    delivered: dict[str, Any] = {}

    def on_delivery(err: Any, msg: Any) -> None:
        delivered.update(error=err, partition=msg.partition(), offset=msg.offset())

    kwargs: dict[str, Any] = {"on_delivery": on_delivery}
    if partition is not None:
        kwargs["partition"] = partition
    producer.produce(
        topic,
        value=None if value is None else value.encode("utf-8"),
        key=None if key in (None, "") else str(key).encode("utf-8"),
        headers=[(k, v.encode("utf-8")) for k, v in (headers or {}).items()],
        **kwargs,
    )
    producer.flush(admin.timeout)
    if not delivered:
        raise TimeoutError(f"The broker did not acknowledge the record within {admin.timeout:.0f}s")
    if delivered["error"] is not None:
        raise RuntimeError(str(delivered["error"]))
    return {"topic": topic, "partition": delivered["partition"], "offset": delivered["offset"]}
