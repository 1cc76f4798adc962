"""Client quotas end to end: a producer limited to 1 MB/s is held to it, one without a quota
keeps its speed, on a real broker with real confluent-kafka producers running side by side;
a consumer limited to 1 MB/s reads a backlog at 1 MB/s.

Rates are measured from delivery reports after a warm-up (the first windows allow a burst, as
in Kafka), over a fixed span; the only waiting is the producers' own produce/flush loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from kio.schema.alter_client_quotas.v1.request import (
    AlterClientQuotasRequest,
    EntityData,
    EntryData,
    OpData,
)
from kio.schema.describe_client_quotas.v1.request import (
    ComponentData,
    DescribeClientQuotasRequest,
)
from kio.schema.errors import ErrorCode

from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import BrokerProcess

QUOTA = 1_000_000  # bytes/s
VALUE = b"x" * 10_000
WARM_UP_S, MEASURE_S = 3.0, 5.0


@pytest.fixture
def quota_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(tmp_path / "data", "--override", "quota.window.num=2")
    proc.start()
    yield proc
    proc.stop()
    assert "handler failed" not in proc.log(), proc.log()[-4000:]


def _set_quota(broker: BrokerProcess, client_id: str, rate: float) -> None:
    request = AlterClientQuotasRequest(
        entries=(EntryData(entity=(EntityData(entity_type="client-id", entity_name=client_id),),
                           ops=(OpData(key="producer_byte_rate", value=rate, remove=False),)),),
        validate_only=False,
    )  # fmt: skip
    with WireClient(broker.host, broker.port) as client:
        answer = client.call(request)
        assert [e.error_code for e in answer.entries] == [ErrorCode.none]
        described = client.call(DescribeClientQuotasRequest(
            components=(ComponentData(entity_type="client-id", match_type=0, match=client_id),),
            strict=True,
        ))  # fmt: skip
    assert [(v.key, v.value) for v in described.entries[0].values] == [("producer_byte_rate",
                                                                        rate)]  # fmt: skip


def _produce_for(
    bootstrap: str, client_id: str, topic: str, pace: float, out: dict[str, float]
) -> None:
    """Produces at up to ``pace`` bytes/s until warm-up + measure span has passed; records the
    acknowledged bytes per second over the measured span. Small batches (50 KB) keep each
    request a small part of a quota window, so the windowed rate is measured finely."""
    acked: list[tuple[float, int]] = []
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "acks": "1",
                         "linger.ms": 5, "batch.size": 50_000,
                         "queue.buffering.max.kbytes": 2048,
                         "compression.type": "none"})  # fmt: skip

    def on_delivery(err: object, msg: object) -> None:
        if err is None:
            acked.append((time.monotonic(), len(VALUE)))

    start = time.monotonic()
    sent = 0
    while (elapsed := time.monotonic() - start) < WARM_UP_S + MEASURE_S:
        if sent > elapsed * pace:  # ahead of the pace: serve delivery reports meanwhile
            producer.poll(0.005)
            continue
        try:
            producer.produce(topic, VALUE, on_delivery=on_delivery)
            sent += len(VALUE)
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    producer.purge()  # what the quota held back is not needed: the span is over
    producer.flush(10)
    lo, hi = start + WARM_UP_S, start + WARM_UP_S + MEASURE_S
    out[client_id] = sum(n for t, n in acked if lo <= t < hi) / MEASURE_S


def test_a_limited_producer_is_held_to_its_quota(quota_broker: BrokerProcess) -> None:
    """ "limited" offers 5 MB/s against a 1 MB/s quota and gets 1 MB/s; "free" offers the same
    5 MB/s without a quota and gets all of it."""
    _set_quota(quota_broker, "limited", QUOTA)
    offered = 5 * QUOTA
    rates: dict[str, float] = {}
    threads = [
        threading.Thread(target=_produce_for,
                         args=(quota_broker.bootstrap, cid, f"t-{cid}", offered, rates))
        for cid in ("limited", "free")
    ]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert 0.9 * QUOTA <= rates["limited"] <= 1.1 * QUOTA, rates
    assert rates["free"] >= 0.8 * offered, rates  # lenient: a busy shared machine


def test_a_limited_consumer_is_held_to_its_quota(quota_broker: BrokerProcess) -> None:
    """A consumer with a 1 MB/s consumer_byte_rate reads a 12 MB backlog at 1 MB/s."""
    from confluent_kafka import Consumer, TopicPartition
    from kio.schema.alter_client_quotas.v1.request import OpData as Op

    # Stored batches of ~50 KB, so each fetch (at most 100 KB) is a small part of a window.
    producer = Producer({"bootstrap.servers": quota_broker.bootstrap, "linger.ms": 5,
                         "batch.size": 50_000, "compression.type": "none"})  # fmt: skip
    for _ in range(1200):
        producer.produce("backlog", VALUE)
        producer.poll(0)
    assert producer.flush(30) == 0
    request = AlterClientQuotasRequest(
        entries=(EntryData(entity=(EntityData(entity_type="client-id", entity_name="reader"),),
                           ops=(Op(key="consumer_byte_rate", value=QUOTA, remove=False),)),),
        validate_only=False,
    )  # fmt: skip
    with WireClient(quota_broker.host, quota_broker.port) as client:
        assert [e.error_code for e in client.call(request).entries] == [ErrorCode.none]
    consumer = Consumer({"bootstrap.servers": quota_broker.bootstrap, "client.id": "reader",
                         "group.id": "unused", "enable.auto.commit": False,
                         "fetch.max.bytes": 100_000, "message.max.bytes": 100_000,
                         "max.partition.fetch.bytes": 100_000})  # fmt: skip
    consumer.assign([TopicPartition("backlog", 0, 0)])
    got: list[tuple[float, int]] = []
    start = time.monotonic()
    try:
        while time.monotonic() - start < WARM_UP_S + MEASURE_S:
            msg = consumer.poll(0.1)
            if msg is not None and msg.error() is None:
                got.append((time.monotonic(), len(msg.value() or b"")))
    finally:
        consumer.close()
    lo, hi = start + WARM_UP_S, start + WARM_UP_S + MEASURE_S
    rate = sum(n for t, n in got if lo <= t < hi) / MEASURE_S
    assert 0.9 * QUOTA <= rate <= 1.1 * QUOTA, rate
