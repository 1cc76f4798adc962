"""kafka-python against the broker: produce, consume (assign), seek, offsets, admin."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import TopicAlreadyExistsError

TIMEOUT = 20.0


def _consume(broker, topic: str, count: int, partitions: int = 1, seek: int | None = None) -> list:
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_bytes=8 << 20,
    )
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    if seek is not None:
        consumer.seek(tps[0], seek)
    out: list = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(out) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                out.extend(records)
    finally:
        consumer.close()
    assert len(out) == count, f"got {len(out)} of {count}"
    return out


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_produce_consume_with_compression(broker, topic_name, codec):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=codec, acks="all")
    futures = [producer.send(topic_name, key=b"k", value=f"v{i}".encode()) for i in range(300)]
    producer.flush(TIMEOUT)
    offsets = [f.get(TIMEOUT).offset for f in futures]
    producer.close()
    assert offsets == list(range(300))
    got = _consume(broker, topic_name, 300)
    assert [r.value for r in got] == [f"v{i}".encode() for i in range(300)]
    assert [r.offset for r in got] == list(range(300))


def test_keys_headers_and_timestamps(broker, topic_name):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic(topic_name, 4, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    ts = 1_700_000_000_456
    metas = [
        producer.send(
            topic_name, key=f"key{i % 5}".encode(), value=b"x", headers=[("n", str(i).encode())],
            timestamp_ms=ts + i,
        ).get(TIMEOUT)
        for i in range(40)
    ]  # fmt: skip
    producer.close()
    partition_of = {}
    for i, meta in enumerate(metas):
        assert partition_of.setdefault(i % 5, meta.partition) == meta.partition
    got = _consume(broker, topic_name, 40, partitions=4)
    by_n = {int(dict(r.headers)["n"]): r for r in got}
    assert sorted(by_n) == list(range(40))
    for n, record in by_n.items():
        assert record.timestamp == ts + n
        assert record.key == f"key{n % 5}".encode()


def test_idempotent_producer(broker, topic_name):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=True)
    for i in range(500):
        producer.send(topic_name, value=str(i).encode())
    producer.flush(TIMEOUT)
    producer.close()
    got = _consume(broker, topic_name, 500)
    assert [r.value for r in got] == [str(i).encode() for i in range(500)]


def test_seek_and_offsets_for_times(broker, topic_name):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=0)
    base = 1_700_000_000_000
    for i in range(10):
        producer.send(topic_name, value=str(i).encode(), timestamp_ms=base + i * 1000).get(TIMEOUT)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic_name, 0)
    try:
        found = consumer.offsets_for_times({tp: base + 3500})[tp]
        assert (found.offset, found.timestamp) == (4, base + 4000)
        assert consumer.beginning_offsets([tp])[tp] == 0
        assert consumer.end_offsets([tp])[tp] == 10
    finally:
        consumer.close()
    got = _consume(broker, topic_name, 2, seek=8)
    assert [r.value for r in got] == [b"8", b"9"]


def test_one_megabyte_message(broker, topic_name):
    value = b"m" * 1_000_000
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=2_000_000)
    producer.send(topic_name, value=value).get(TIMEOUT)
    producer.close()
    (record,) = _consume(broker, topic_name, 1)
    assert record.value == value


def test_admin_create_describe_alter_delete(broker, topic_name):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic_name, 2, 1, topic_configs={"retention.ms": "60000"})])
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic(topic_name, 2, 1)])
        resource = ConfigResource(ConfigResourceType.TOPIC, topic_name)

        def describe() -> dict:
            result = admin.describe_configs([resource], config_filter="all")
            return {k: v["value"] for k, v in result["topic"][topic_name].items()}

        entries = describe()
        assert entries["retention.ms"] == "60000"
        assert entries["cleanup.policy"] == "delete"

        topic = ConfigResourceType.TOPIC
        change = ConfigResource(topic, topic_name, configs={"segment.ms": "1000"})
        admin.alter_configs([change])  # IncrementalAlterConfigs: other overrides stay
        entries = describe()
        assert (entries["segment.ms"], entries["retention.ms"]) == ("1000", "60000")
        # Legacy AlterConfigs replaces the whole set; kafka-python re-sends the other overrides.
        change = ConfigResource(topic, topic_name, configs={"segment.ms": "2000"})
        admin.alter_configs([change], incremental=False)
        entries = describe()
        assert (entries["segment.ms"], entries["retention.ms"]) == ("2000", "60000")

        admin.create_partitions({topic_name: NewPartitions(3)})
        (meta,) = admin.describe_topics([topic_name])
        assert len(meta["partitions"]) == 3

        admin.delete_topics([topic_name])
        assert topic_name not in admin.list_topics()
    finally:
        admin.close()


def test_describe_log_dirs_reports_partition_sizes(broker, topic_name):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    producer.send(topic_name, value=b"s" * 1000).get(TIMEOUT)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        result = admin.describe_log_dirs({topic_name: [0]})
    finally:
        admin.close()
    (log_dir,) = result[0]["log_dirs"]
    assert log_dir["log_dir"] == str(broker.data_dir.resolve())
    (topic,) = log_dir["topics"]
    assert topic["name"] == topic_name
    assert topic["partitions"][0]["partition_size"] > 1000
