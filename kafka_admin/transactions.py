"""Transactions the coordinators know: transactional ids with their producer, state and
coordinator, and one transaction's partitions with where it starts in each.

Kafka's ListTransactions (66), DescribeTransactions (65) and DescribeProducers (61) go through
kafka-python's admin client (confluent-kafka does not expose them), so this works against
Sluice's broker and any Kafka cluster of 3.0 or later. ``list_transactions`` asks every broker
(each coordinates a slice of the ids). The first offset of an open transaction is where
read_committed consumers of that partition are held: the number to look at when they stall.
The kafka-python client is not thread-safe: each call makes and closes its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kafka_admin.client import KafkaAdmin
from sluice.client_security import to_kafka_python


@contextmanager
def kafka_python_client(admin: KafkaAdmin) -> Iterator[Any]:
    """A kafka-python admin client with ``admin``'s settings, closed on exit; an unreachable
    cluster is ``TimeoutError`` (what the callers already treat as "cannot reach")."""
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError

    try:
        client = KafkaAdminClient(
            bootstrap_servers=admin.client_config["bootstrap.servers"],
            request_timeout_ms=int(admin.timeout * 1000),
            **to_kafka_python(admin.client_config),
        )
    except (KafkaConnectionError, KafkaTimeoutError) as exc:  # the callers' "unreachable"
        raise TimeoutError(f"no broker answered: {exc}") from None
    try:
        yield client
    finally:
        client.close()


def _state(value: Any) -> str:
    return str(getattr(value, "value", value))


def list_transactions(admin: KafkaAdmin) -> list[dict[str, Any]]:
    """``[{"transactional_id", "producer_id", "state", "coordinator"}]`` sorted by id."""
    with kafka_python_client(admin) as client:
        by_broker = client.list_transactions()
    return sorted(
        (
            {"transactional_id": t.transactional_id, "producer_id": t.producer_id,
             "state": _state(t.state), "coordinator": node}
            for node, listings in by_broker.items()
            for t in listings
        ),
        key=lambda row: row["transactional_id"],
    )  # fmt: skip


def describe_transaction(admin: KafkaAdmin, transactional_id: str) -> dict[str, Any]:
    """State, producer, timeout, start and per partition the transaction's first offset;
    ``LookupError`` for an unknown id."""
    with kafka_python_client(admin) as client:
        desc = client.describe_transactions([transactional_id]).get(transactional_id)
        if desc is None:
            raise LookupError(f"Transactional id {transactional_id} not found")
        parts = sorted(desc.topic_partitions, key=lambda tp: (tp.topic, tp.partition))
        producers = client.describe_producers(parts) if parts else {}
    rows = []
    for tp in parts:
        state = producers.get(tp)
        first = next(
            (
                p.current_transaction_start_offset
                for p in (state.active_producers if state is not None else ())
                if p.producer_id == desc.producer_id
            ),
            -1,
        )
        rows.append({"topic": tp.topic, "partition": tp.partition,
                     "first_offset": first if first >= 0 else None})  # fmt: skip
    started = desc.transaction_start_time_ms
    return {
        "transactional_id": transactional_id,
        "state": _state(desc.state),
        "producer_id": desc.producer_id,
        "producer_epoch": desc.producer_epoch,
        "timeout_ms": desc.transaction_timeout_ms,
        "started_ms": started if started >= 0 else None,
        "coordinator": desc.coordinator_id,
        "partitions": rows,
    }
