"""Broker restarts: clean (SIGTERM) and crash (SIGKILL) keep every acknowledged record.

The durability rule under test (docs/broker.md): an acks=all response is sent after the batch
was written to the segment file, so it is in the OS page cache and survives the death of the
broker process, SIGKILL included. (Power loss is out of scope unless ``flush.messages=1``.)
"""

from __future__ import annotations

import time
from datetime import timedelta

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from kio.schema.init_producer_id.v4.request import InitProducerIdRequest

from tests.broker.protocol.wire import WireClient

TIMEOUT = 20.0


def _produce_acked(bootstrap: str, topic: str, values: list[bytes], **conf) -> list[int]:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2, **conf})
    offsets: list[int] = []
    errors: list = []

    def on_delivery(err, msg):
        errors.append(err) if err else offsets.append(msg.offset())

    for v in values:
        producer.produce(topic, v, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(TIMEOUT) == 0
    assert not errors
    return offsets


def _read_all(bootstrap: str, topic: str, partitions: int = 1) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False}
    )
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    ends = {tp.partition: consumer.get_watermark_offsets(tp, TIMEOUT)[1] for tp in tps}
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(out) < sum(ends.values()) and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                out.append(msg.value())
    finally:
        consumer.close()
    return out


def _create(bootstrap: str, topic: str, partitions: int, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})])[topic].result(
        TIMEOUT
    )


def test_clean_restart_keeps_records_topics_and_configs(fresh_broker):
    _create(fresh_broker.bootstrap, "kept", 2, {"retention.ms": "123456789"})
    values = [f"v{i}".encode() for i in range(1000)]
    _produce_acked(fresh_broker.bootstrap, "kept", values)

    assert fresh_broker.stop() == 0
    fresh_broker.start()

    assert sorted(_read_all(fresh_broker.bootstrap, "kept", 2)) == sorted(values)
    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    resource = ConfigResource("topic", "kept")
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert configs["retention.ms"].value == "123456789"
    # new records continue after the old ones, without overwriting any
    _produce_acked(fresh_broker.bootstrap, "kept", [b"after"])
    assert sorted(_read_all(fresh_broker.bootstrap, "kept", 2)) == sorted([*values, b"after"])


def test_sigkill_keeps_every_acks_all_record(fresh_broker):
    _create(fresh_broker.bootstrap, "crash", 3)
    acked: list[bytes] = []
    for round_ in range(3):
        values = [f"r{round_}-{i}".encode() for i in range(2000)]
        _produce_acked(fresh_broker.bootstrap, "crash", values, **{"enable.idempotence": True})
        acked.extend(values)
        fresh_broker.restart(kill=True)
        got = _read_all(fresh_broker.bootstrap, "crash", 3)
        assert sorted(got) == sorted(acked), f"after SIGKILL {round_ + 1}"


def test_producer_ids_never_repeat_across_restarts(fresh_broker):
    def allocate(n: int) -> list[int]:
        with WireClient(fresh_broker.host, fresh_broker.port) as client:
            request = InitProducerIdRequest(
                transactional_id=None,
                transaction_timeout=timedelta(minutes=1),
                producer_id=-1,
                producer_epoch=-1,
            )
            return [client.call(request).producer_id for _ in range(n)]

    seen = allocate(5)
    fresh_broker.restart()
    seen += allocate(5)
    fresh_broker.restart(kill=True)
    seen += allocate(5)
    assert len(set(seen)) == len(seen)
    assert seen == sorted(seen)
