"""aiokafka against the broker: produce, consume (assign), seek, offsets, a large message."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

TIMEOUT = 20.0


async def _consume(broker, topic: str, count: int, seek: int | None = None) -> list:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=2 << 20,
    )
    await consumer.start()
    tp = TopicPartition(topic, 0)
    out: list = []
    try:
        consumer.assign([tp])
        if seek is not None:
            consumer.seek(tp, seek)

        async def drain() -> None:
            while len(out) < count:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    out.extend(records)

        await asyncio.wait_for(drain(), TIMEOUT)
    finally:
        await consumer.stop()
    return out


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_produce_consume(broker, topic_name, codec):
    async def run() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=broker.bootstrap, compression_type=codec, acks="all"
        )
        await producer.start()
        try:
            for i in range(200):
                await producer.send(topic_name, key=b"k", value=f"{i}".encode(),
                                    headers=[("i", str(i).encode())])  # fmt: skip
            await producer.flush()
        finally:
            await producer.stop()
        got = await _consume(broker, topic_name, 200)
        assert [r.value for r in got] == [str(i).encode() for i in range(200)]
        assert [r.offset for r in got] == list(range(200))
        assert all(dict(r.headers)["i"] == r.value for r in got)

    asyncio.run(run())


def test_idempotent_producer_seek_and_offsets_for_times(broker, topic_name):
    base = 1_700_000_000_000

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=True)
        await producer.start()
        try:
            for i in range(20):
                meta = await producer.send_and_wait(
                    topic_name, value=str(i).encode(), timestamp_ms=base + i * 10
                )
                assert meta.offset == i
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
        await consumer.start()
        tp = TopicPartition(topic_name, 0)
        try:
            found = await consumer.offsets_for_times({tp: base + 55})
            assert found[tp].offset == 6
            assert (await consumer.end_offsets([tp]))[tp] == 20
            assert (await consumer.beginning_offsets([tp]))[tp] == 0
        finally:
            await consumer.stop()
        got = await _consume(broker, topic_name, 5, seek=15)
        assert [r.value for r in got] == [str(i).encode() for i in range(15, 20)]
        assert [r.timestamp for r in got] == [base + i * 10 for i in range(15, 20)]

    asyncio.run(run())


def test_one_megabyte_message(broker, topic_name):
    value = b"\x01\x02" * 500_000

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=2 << 20)
        await producer.start()
        try:
            await producer.send_and_wait(topic_name, value=value)
        finally:
            await producer.stop()
        (record,) = await _consume(broker, topic_name, 1)
        assert record.value == value

    asyncio.run(run())
