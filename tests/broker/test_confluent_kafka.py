"""confluent-kafka (librdkafka) against the broker: produce, consume, admin.

Consumers use ``assign()`` (no group rebalancing: that is the coordinator's suite) with
auto-commit off, so these tests exercise Metadata, Produce, Fetch, ListOffsets and the admin
APIs only.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
)

TIMEOUT = 20.0


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _create(broker, name: str, partitions: int = 1, config: dict | None = None) -> None:
    admin = _admin(broker)  # must outlive the future: destroying it cancels the request
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])
    futures[name].result(TIMEOUT)


def _produce(broker, topic: str, messages: list[dict], **conf) -> list:
    """Produces and waits for every delivery report; returns the delivered messages."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, **conf})
    delivered, errors = [], []

    def on_delivery(err, msg):
        (errors if err else delivered).append(err or msg)

    for m in messages:
        producer.produce(topic, on_delivery=on_delivery, **m)
        producer.poll(0)
    assert producer.flush(TIMEOUT) == 0
    assert not errors, errors
    return delivered


def _consume(broker, partitions: list[TopicPartition], count: int, **conf) -> list:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "unused-assign-only",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            **conf,
        }
    )
    consumer.assign(partitions)
    out = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(out) < count and time.monotonic() < deadline:
            for msg in consumer.consume(count - len(out), timeout=0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                out.append(msg)
    finally:
        consumer.close()
    assert len(out) == count, f"got {len(out)} of {count}"
    return out


def test_per_partition_order_and_keyed_partitioning(broker, topic_name):
    _create(broker, topic_name, partitions=3)
    messages = [{"key": f"k{i % 10}".encode(), "value": f"v{i}".encode()} for i in range(300)]
    delivered = _produce(broker, topic_name, messages, acks="all")
    partition_of_key = defaultdict(set)
    for msg in delivered:
        partition_of_key[msg.key()].add(msg.partition())
    assert all(len(parts) == 1 for parts in partition_of_key.values())
    assert len({p for parts in partition_of_key.values() for p in parts}) > 1

    got = _consume(broker, [TopicPartition(topic_name, p, OFFSET_BEGINNING) for p in range(3)], 300)
    by_partition = defaultdict(list)
    for msg in got:
        by_partition[msg.partition()].append(msg)
    for p, msgs in by_partition.items():
        assert [m.offset() for m in msgs] == list(range(len(msgs))), f"partition {p}"
        sent = [m.value() for m in delivered if m.partition() == p]
        assert [m.value() for m in msgs] == sent


def test_headers_and_timestamps(broker, topic_name):
    ts = 1_700_000_000_123
    headers = [("trace", b"abc"), ("empty", b""), ("dup", b"1"), ("dup", b"2")]
    _produce(broker, topic_name, [{"value": b"x", "headers": headers, "timestamp": ts}])
    (msg,) = _consume(broker, [TopicPartition(topic_name, 0, OFFSET_BEGINNING)], 1)
    assert msg.timestamp() == (TIMESTAMP_CREATE_TIME, ts)
    assert msg.headers() == headers


def test_log_append_time_topic(broker, topic_name):
    _create(broker, topic_name, config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    (delivered,) = _produce(broker, topic_name, [{"value": b"x", "timestamp": 1_000}])
    after = int(time.time() * 1000)
    kind, stamp = delivered.timestamp()  # from the Produce response's log_append_time
    assert kind == TIMESTAMP_LOG_APPEND_TIME and before <= stamp <= after
    (msg,) = _consume(broker, [TopicPartition(topic_name, 0, OFFSET_BEGINNING)], 1)
    assert msg.timestamp() == (TIMESTAMP_LOG_APPEND_TIME, stamp)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compression(broker, topic_name, codec):
    values = [f"{codec}-{i}-".encode() * 20 for i in range(500)]
    _produce(broker, topic_name, [{"value": v} for v in values], **{"compression.type": codec})
    got = _consume(broker, [TopicPartition(topic_name, 0, OFFSET_BEGINNING)], len(values))
    assert [m.value() for m in got] == values
    assert [m.offset() for m in got] == list(range(len(values)))


def test_idempotent_producer(broker, topic_name):
    values = [str(i).encode() for i in range(2000)]
    _produce(
        broker, topic_name, [{"value": v} for v in values],
        **{"enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": 5},
    )  # fmt: skip
    got = _consume(broker, [TopicPartition(topic_name, 0, OFFSET_BEGINNING)], len(values))
    assert [m.value() for m in got] == values


def test_seek_offsets_for_times_and_watermarks(broker, topic_name):
    base = 1_700_000_000_000
    _produce(
        broker, topic_name,
        [{"value": str(i).encode(), "timestamp": base + i * 1000} for i in range(10)],
        **{"linger.ms": 0, "batch.num.messages": 1},
    )  # fmt: skip
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic_name, 0), TIMEOUT) == (0, 10)
        (found,) = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 4500)], TIMEOUT)
        assert found.offset == 5
        (missing,) = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 99_000)])
        assert missing.offset == -1  # past the newest record: "end"
    finally:
        consumer.close()
    got = _consume(broker, [TopicPartition(topic_name, 0, 7)], 3)
    assert [m.value() for m in got] == [b"7", b"8", b"9"]


def test_one_megabyte_message(broker, topic_name):
    value = bytes(range(256)) * 4000  # 1,024,000 bytes
    _produce(broker, topic_name, [{"value": value}], **{"message.max.bytes": 2_000_000})
    (msg,) = _consume(broker, [TopicPartition(topic_name, 0, OFFSET_BEGINNING)], 1)
    assert msg.value() == value


def test_admin_create_describe_alter_delete(broker, topic_name):
    admin = _admin(broker)
    _create(broker, topic_name, partitions=2, config={"retention.ms": "3600000"})
    metadata = admin.list_topics(topic_name, timeout=TIMEOUT)
    assert len(metadata.topics[topic_name].partitions) == 2

    resource = ConfigResource("topic", topic_name)
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert configs["retention.ms"].value == "3600000"
    assert configs["retention.ms"].source == 1  # DYNAMIC_TOPIC_CONFIG
    assert configs["cleanup.policy"].value == "delete"
    assert configs["cleanup.policy"].is_default

    change = ConfigResource(
        "topic", topic_name,
        incremental_configs=[ConfigEntry("cleanup.policy", "compact",
                                         incremental_operation=AlterConfigOpType.SET)],
    )  # fmt: skip
    admin.incremental_alter_configs([change])[change].result(TIMEOUT)
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].value == "3600000"  # incremental: others kept

    bad = ConfigResource(
        "topic", topic_name,
        incremental_configs=[ConfigEntry("retention.ms", "soon",
                                         incremental_operation=AlterConfigOpType.SET)],
    )  # fmt: skip
    with pytest.raises(KafkaException):
        admin.incremental_alter_configs([bad])[bad].result(TIMEOUT)

    admin.create_partitions([NewPartitions(topic_name, 4)])[topic_name].result(TIMEOUT)
    assert len(admin.list_topics(topic_name, timeout=TIMEOUT).topics[topic_name].partitions) == 4

    with pytest.raises(KafkaException):  # already exists
        _create(broker, topic_name)
    with pytest.raises(KafkaException):  # replication factor 3 on one broker
        admin.create_topics([NewTopic(topic_name + "-rf3", 1, 3)])[topic_name + "-rf3"].result(
            TIMEOUT
        )

    admin.delete_topics([topic_name])[topic_name].result(TIMEOUT)
    assert topic_name not in admin.list_topics(timeout=TIMEOUT).topics


def test_admin_validate_only_creates_nothing(broker, topic_name):
    admin = _admin(broker)
    futures = admin.create_topics([NewTopic(topic_name, 3, 1)], validate_only=True)
    futures[topic_name].result(TIMEOUT)
    assert topic_name not in admin.list_topics(timeout=TIMEOUT).topics


def test_describe_cluster(broker):
    admin = _admin(broker)
    cluster = admin.describe_cluster().result(TIMEOUT)
    assert cluster.cluster_id
    assert [(n.host, n.port) for n in cluster.nodes] == [(broker.host, broker.port)]
    assert cluster.controller.id == cluster.nodes[0].id
