"""Clients speaking the versions Kafka 4 dropped: kafka-python pinned to old ``api_version``s,
and librdkafka with ``api.version.request=false`` and an old ``broker.version.fallback``.

kafka-python picks its request versions from the broker version it is told (no ApiVersions
before 0.10), so ``api_version=(0, 8, 2)`` really sends Produce v0, Fetch v0, ListOffsets v0,
Metadata v0, OffsetCommit v1 and OffsetFetch v1; a proxy in front of the broker records what
went over the wire and each test asserts it. Data crosses formats both ways and is compared
with a modern client (confluent-kafka: Produce v7+/Fetch v11+, message format v2):

- written by an old producer (message format v0/v1, compressed or not), read by a modern one,
  byte for byte, offsets and timestamps included;
- written by a modern producer (compressed v2 batches, headers), read by an old consumer after
  down-conversion;
- offsets committed by an old group consumer (OffsetCommit v0-v2), read back with OffsetFetch
  v0/v1 and by a modern client of the same group; ListOffsets v0 for lag.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkPartition
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

TIMEOUT = 20.0
PRODUCE, FETCH, LIST_OFFSETS, METADATA, COMMIT, OFFSET_FETCH = 0, 1, 2, 3, 8, 9
BASE_TS = 1_700_000_000_000


def _messages(n: int) -> list[tuple[bytes | None, bytes]]:
    # compressible values (codecs really compress), a null key, an empty value, binary bytes
    out: list[tuple[bytes | None, bytes]] = []
    for i in range(n):
        key = None if i % 7 == 3 else f"key-{i % 5}".encode()
        value = b"" if i % 11 == 5 else bytes([i % 256, 0, 255]) + b"payload " * (i % 9 + 1)
        out.append((key, value))
    return out


def _modern_read(bootstrap: str, topic: str, count: int) -> list:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{topic}",
        "enable.auto.commit": False, "auto.offset.reset": "earliest",
    })  # fmt: skip
    consumer.assign([CkPartition(topic, 0, 0)])
    got: list = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(msg)
    finally:
        consumer.close()
    assert len(got) == count, f"read {len(got)} of {count}"
    return got


def _old_read(bootstrap: str, topic: str, count: int, api_version: tuple[int, ...]) -> list:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, api_version=api_version, enable_auto_commit=False
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    got: list = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(got) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(records)
    finally:
        consumer.close()
    assert len(got) == count, f"read {len(got)} of {count}"
    return got


@pytest.mark.parametrize(
    ("api_version", "codec", "produce_version", "magic"),
    [
        ((0, 8, 2), None, 0, 0),
        ((0, 9), "gzip", 1, 0),
        ((0, 9), "lz4", 1, 0),  # magic 0 lz4: the pre-KIP-57 framing
        ((0, 10, 0), "snappy", 2, 1),
        ((0, 10, 0), "lz4", 2, 1),
    ],
)
def test_old_producer_is_read_byte_correct_by_a_modern_client(
    wire_recorder, topic_name, api_version, codec, produce_version, magic
):
    wire = wire_recorder
    bootstrap = wire.bootstrap
    wire.clear()
    messages = _messages(60)
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, api_version=api_version, compression_type=codec,
        acks=1, linger_ms=20,
    )  # fmt: skip
    futures = [
        producer.send(topic_name, key=k, value=v, timestamp_ms=BASE_TS + i)
        for i, (k, v) in enumerate(messages)
    ]
    producer.flush(TIMEOUT)
    offsets = [f.get(TIMEOUT).offset for f in futures]
    producer.close()
    assert offsets == list(range(60))
    assert (PRODUCE, produce_version) in wire.seen()
    assert (METADATA, 0 if api_version < (0, 10) else 1) in wire.seen()

    got = _modern_read(bootstrap, topic_name, 60)
    assert [(m.key(), m.value()) for m in got] == messages
    assert [m.offset() for m in got] == offsets
    expected_ts = [BASE_TS + i for i in range(60)] if magic == 1 else [-1] * 60
    assert [m.timestamp()[1] for m in got] == expected_ts


@pytest.mark.parametrize(
    ("api_version", "codec", "fetch_version", "magic"),
    [
        ((0, 8, 2), "gzip", 0, 0),
        ((0, 8, 2), "lz4", 0, 0),
        ((0, 9), None, 1, 0),
        ((0, 10, 0), "snappy", 2, 1),
        ((0, 10, 1), "lz4", 3, 1),
    ],
)
def test_modern_compressed_batches_are_read_by_an_old_consumer(
    wire_recorder, topic_name, api_version, codec, fetch_version, magic
):
    wire = wire_recorder
    bootstrap = wire.bootstrap
    messages = _messages(300)
    producer = Producer({
        "bootstrap.servers": bootstrap, "compression.type": codec or "none", "linger.ms": 50,
        "batch.num.messages": 100,
    })  # fmt: skip
    for i, (key, value) in enumerate(messages):
        producer.produce(
            topic_name, key=key, value=value, timestamp=BASE_TS + i, headers=[("h", b"dropped")]
        )
    assert producer.flush(TIMEOUT) == 0
    wire.clear()

    got = _old_read(bootstrap, topic_name, 300, api_version)
    assert (FETCH, fetch_version) in wire.seen()
    assert not [v for k, v in wire.seen() if k == FETCH and v >= 4]
    assert [(r.key, r.value) for r in got] == messages
    assert [r.offset for r in got] == list(range(300))
    if magic == 1:
        assert [r.timestamp for r in got] == [BASE_TS + i for i in range(300)]
    assert all(not r.headers for r in got)  # message formats v0/v1 have no headers


@pytest.mark.parametrize(
    ("api_version", "commit_version", "fetch_version", "grouped"),
    [
        ((0, 8, 1), 0, 0, False),  # offsets kept by the broker, no group membership
        ((0, 8, 2), 1, 1, False),  # a simple consumer committing with generation -1
        ((0, 9), 2, 1, True),  # group membership (JoinGroup v0), commits per generation
        ((0, 10, 0), 2, 1, True),
    ],
)
def test_old_group_consumer_commits_and_sees_lag(
    wire_recorder, topic_name, api_version, commit_version, fetch_version, grouped
):
    wire = wire_recorder
    bootstrap = wire.bootstrap
    group = f"old-{topic_name}"
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(40):
        producer.produce(topic_name, value=b"m%d" % i)
    assert producer.flush(TIMEOUT) == 0
    wire.clear()

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, api_version=api_version, group_id=group,
        enable_auto_commit=False, auto_offset_reset="earliest", max_poll_records=25,
    )  # fmt: skip
    tp = TopicPartition(topic_name, 0)
    if grouped:
        consumer.subscribe([topic_name])
    else:
        consumer.assign([tp])
    got: list = []
    deadline = time.monotonic() + TIMEOUT
    while len(got) < 25 and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500, max_records=25 - len(got)).values():
            got.extend(records)
    assert [r.value for r in got] == [b"m%d" % i for i in range(25)]
    consumer.commit({tp: OffsetAndMetadata(25, "old", -1)})
    assert consumer.committed(tp) == 25
    # lag as a monitor computes it: end offset - committed offset
    assert consumer.end_offsets([tp]) == {tp: 40}
    assert consumer.beginning_offsets([tp]) == {tp: 0}
    consumer.close()
    seen = wire.seen()
    assert (COMMIT, commit_version) in seen and (OFFSET_FETCH, fetch_version) in seen
    assert (LIST_OFFSETS, 0) in seen

    modern = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (committed,) = modern.committed([CkPartition(topic_name, 0)], timeout=TIMEOUT)
    finally:
        modern.close()
    assert committed.offset == 25


@pytest.mark.parametrize(
    ("fallback", "produce_version", "fetch_version", "commit_version"),
    [("0.8.2", 0, 0, 1), ("0.9.0", 1, 1, 2)],
)
def test_librdkafka_without_api_versions_uses_old_versions(
    wire_recorder, topic_name, fallback, produce_version, fetch_version, commit_version
):
    # librdkafka told not to ask for ApiVersions falls back to a pinned broker version's
    # requests, as clients configured for old clusters do.
    wire = wire_recorder
    conf = {
        "bootstrap.servers": wire.bootstrap, "api.version.request": False,
        "broker.version.fallback": fallback,
    }  # fmt: skip
    wire.clear()
    producer = Producer({**conf, "compression.type": "snappy", "linger.ms": 20})
    messages = _messages(50)
    for key, value in messages:
        producer.produce(topic_name, key=key, value=value)
    assert producer.flush(TIMEOUT) == 0
    consumer = Consumer({**conf, "group.id": f"rdk-{topic_name}", "enable.auto.commit": False})
    consumer.assign([CkPartition(topic_name, 0, 0)])
    got: list = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(got) < 50 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(msg)
        consumer.commit(offsets=[CkPartition(topic_name, 0, 50)], asynchronous=False)
        (committed,) = consumer.committed([CkPartition(topic_name, 0)], timeout=TIMEOUT)
    finally:
        consumer.close()
    assert [(m.key(), m.value()) for m in got] == messages
    assert [m.offset() for m in got] == list(range(50))
    assert committed.offset == 50
    seen = wire.seen()
    assert {(PRODUCE, produce_version), (FETCH, fetch_version), (COMMIT, commit_version)} <= seen
    assert not [key for key, _ in seen if key == 18]  # no ApiVersions at all
