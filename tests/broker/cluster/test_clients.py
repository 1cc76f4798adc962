"""kafka-python, aiokafka and kcat each produce to and consume from the three-broker cluster."""

from __future__ import annotations

import asyncio
import shutil
import subprocess

from tests.broker.cluster.cluster import Cluster


def test_kafka_python(shared_cluster: Cluster, topic_name: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    shared_cluster.create_topic(topic_name, partitions=2, rf=3)
    producer = KafkaProducer(bootstrap_servers=shared_cluster.bootstrap, acks="all")
    for i in range(50):
        producer.send(topic_name, key=str(i).encode(), value=f"kp-{i}".encode())
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(
        topic_name, bootstrap_servers=shared_cluster.bootstrap, auto_offset_reset="earliest",
        consumer_timeout_ms=20_000, enable_auto_commit=False,
    )  # fmt: skip
    got = set()
    for msg in consumer:
        got.add(msg.value.decode())
        if len(got) == 50:
            break
    consumer.close()
    assert got == {f"kp-{i}" for i in range(50)}


def test_aiokafka(shared_cluster: Cluster, topic_name: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    shared_cluster.create_topic(topic_name, partitions=1, rf=3)

    async def main() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=shared_cluster.bootstrap, acks="all")
        await producer.start()
        try:
            for i in range(30):
                await producer.send_and_wait(topic_name, f"ak-{i}".encode(), partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=shared_cluster.bootstrap)
        await consumer.start()
        try:
            tp = TopicPartition(topic_name, 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            values: list[bytes] = []
            while len(values) < 30:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                values.extend(m.value for msgs in batch.values() for m in msgs)
            return values
        finally:
            await consumer.stop()

    assert asyncio.run(main()) == [f"ak-{i}".encode() for i in range(30)]


def test_kcat(shared_cluster: Cluster, topic_name: str) -> None:
    kcat = shutil.which("kcat")
    assert kcat, "kcat is not installed (./dev test installs it)"
    shared_cluster.create_topic(topic_name, partitions=1, rf=3)
    lines = "".join(f"kc-{i}\n" for i in range(20))
    subprocess.run(
        [kcat, "-b", shared_cluster.bootstrap, "-P", "-t", topic_name, "-p", "0",
         "-X", "acks=all"],
        input=lines.encode(), check=True, timeout=60,
    )  # fmt: skip
    out = subprocess.run(
        [kcat, "-b", shared_cluster.bootstrap, "-C", "-t", topic_name, "-p", "0", "-o",
         "beginning", "-c", "20", "-e"],
        capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.decode().split() == [f"kc-{i}" for i in range(20)]
