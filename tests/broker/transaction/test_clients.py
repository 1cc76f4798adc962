"""Transactions with real clients against one broker: commit/abort visibility per isolation
level (confluent-kafka, kafka-python, aiokafka), fencing, timeouts, offsets in transactions,
admin APIs, and a broker restart in the middle of a transaction."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from tests.broker.transaction.helpers import (
    TIMEOUT,
    create_topic,
    end_offsets,
    read_all,
    txn_broker,
    values,
)
from tests.fixtures.broker import BrokerProcess, wait_until


@pytest.fixture(scope="module")
def txb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    proc = txn_broker(tmp_path_factory.mktemp("txn") / "data")
    proc.start()
    yield proc
    assert proc.stop() == 0
    log = proc.log()
    assert "handler failed" not in log, log[-4000:]


def producer(bootstrap: str, txn_id: str, **conf: object) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                  "log_level": 0, **conf})  # fmt: skip
    p.init_transactions(TIMEOUT)
    return p


def test_confluent_kafka_commit_and_abort_across_partitions(txb, topic_name):
    create_topic(txb.bootstrap, topic_name, 3)
    p = producer(txb.bootstrap, topic_name)
    p.begin_transaction()
    for i in range(30):
        p.produce(topic_name, b"c%d" % i, partition=i % 3)
    p.commit_transaction(TIMEOUT)
    p.begin_transaction()
    for i in range(30):
        p.produce(topic_name, b"a%d" % i, partition=i % 3)
    p.flush(TIMEOUT)  # the aborted records are in the log, not just in the client
    p.abort_transaction(TIMEOUT)
    p.begin_transaction()
    p.produce(topic_name, b"last", partition=1)
    p.commit_transaction(TIMEOUT)

    committed = values(read_all(txb.bootstrap, topic_name, 3, "read_committed"))
    everything = values(read_all(txb.bootstrap, topic_name, 3, "read_uncommitted"))
    assert sorted(committed) == sorted([b"c%d" % i for i in range(30)] + [b"last"])
    assert sorted(everything) == sorted(committed + [b"a%d" % i for i in range(30)])
    lso, hw = end_offsets(txb.bootstrap, topic_name, 1)
    assert lso == hw  # nothing open: the last stable offset caught up


def test_an_open_transaction_holds_read_committed_readers_at_its_start(txb, topic_name):
    create_topic(txb.bootstrap, topic_name)
    p = producer(txb.bootstrap, topic_name)
    p.begin_transaction()
    p.produce(topic_name, b"open")
    p.flush(TIMEOUT)
    assert end_offsets(txb.bootstrap, topic_name) == (0, 1)
    assert values(read_all(txb.bootstrap, topic_name)) == []
    p.commit_transaction(TIMEOUT)
    wait_until(lambda: end_offsets(txb.bootstrap, topic_name) == (2, 2), TIMEOUT, "the LSO")
    assert values(read_all(txb.bootstrap, topic_name)) == [b"open"]


def test_kafka_python_transactions(txb, topic_name):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTP

    create_topic(txb.bootstrap, topic_name)
    p = KafkaProducer(bootstrap_servers=txb.bootstrap, transactional_id=topic_name)
    p.init_transactions()
    p.begin_transaction()
    for i in range(5):
        p.send(topic_name, b"c%d" % i)
    p.commit_transaction()
    p.begin_transaction()
    for i in range(5):
        p.send(topic_name, b"a%d" % i)
    p.flush()
    p.abort_transaction()
    p.close()
    seen = {}
    for isolation in ("read_committed", "read_uncommitted"):
        c = KafkaConsumer(bootstrap_servers=txb.bootstrap, isolation_level=isolation,
                          enable_auto_commit=False)  # fmt: skip
        tp = KTP(topic_name, 0)
        c.assign([tp])
        c.seek(tp, 0)
        got: list[bytes] = []
        end = c.end_offsets([tp])[tp]
        deadline = time.monotonic() + TIMEOUT
        while c.position(tp) < end and time.monotonic() < deadline:
            for msgs in c.poll(200).values():
                got += [m.value for m in msgs]
        c.close()
        seen[isolation] = got
    assert seen["read_committed"] == [b"c%d" % i for i in range(5)]
    assert seen["read_uncommitted"] == [b"c%d" % i for i in range(5)] + [
        b"a%d" % i for i in range(5)
    ]


def test_aiokafka_transactions(txb, topic_name):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition as ATP

    create_topic(txb.bootstrap, topic_name)

    async def scenario() -> dict[str, list[bytes]]:
        p = AIOKafkaProducer(bootstrap_servers=txb.bootstrap, transactional_id=topic_name)
        await p.start()
        try:
            async with p.transaction():
                for i in range(5):
                    await p.send(topic_name, b"c%d" % i)
            await p.begin_transaction()
            for i in range(5):
                await p.send_and_wait(topic_name, b"a%d" % i)
            await p.abort_transaction()
        finally:
            await p.stop()
        seen = {}
        for isolation in ("read_committed", "read_uncommitted"):
            c = AIOKafkaConsumer(bootstrap_servers=txb.bootstrap, isolation_level=isolation,
                                 enable_auto_commit=False)  # fmt: skip
            await c.start()
            tp = ATP(topic_name, 0)
            c.assign([tp])
            c.seek(tp, 0)
            end = (await c.end_offsets([tp]))[tp]
            got: list[bytes] = []
            deadline = time.monotonic() + TIMEOUT
            while await c.position(tp) < end and time.monotonic() < deadline:
                for msgs in (await c.getmany(timeout_ms=200)).values():
                    got += [m.value for m in msgs]
            await c.stop()
            seen[isolation] = got
        return seen

    seen = asyncio.run(scenario())
    assert seen["read_committed"] == [b"c%d" % i for i in range(5)]
    assert seen["read_uncommitted"] == [b"c%d" % i for i in range(5)] + [
        b"a%d" % i for i in range(5)
    ]


def test_a_new_instance_fences_the_zombie_and_aborts_its_transaction(txb, topic_name):
    create_topic(txb.bootstrap, topic_name)
    zombie = producer(txb.bootstrap, topic_name)
    zombie.begin_transaction()
    zombie.produce(topic_name, b"zombie")
    zombie.flush(TIMEOUT)
    fresh = producer(txb.bootstrap, topic_name)  # epoch + 1: aborts the zombie's transaction
    with pytest.raises(KafkaException) as caught:
        zombie.commit_transaction(TIMEOUT)
    assert caught.value.args[0].fatal()  # PRODUCER_FENCED is fatal for the zombie
    fresh.begin_transaction()
    fresh.produce(topic_name, b"fresh")
    fresh.commit_transaction(TIMEOUT)
    assert values(read_all(txb.bootstrap, topic_name)) == [b"fresh"]
    assert values(read_all(txb.bootstrap, topic_name, isolation="read_uncommitted")) == [
        b"zombie", b"fresh",
    ]  # fmt: skip


def test_a_transaction_open_past_its_timeout_is_aborted(txb, topic_name):
    create_topic(txb.bootstrap, topic_name)
    p = producer(txb.bootstrap, topic_name, **{"transaction.timeout.ms": 1000})
    p.begin_transaction()
    p.produce(topic_name, b"too slow")
    p.flush(TIMEOUT)
    # the coordinator aborts it (its marker moves the LSO past it) without the producer
    wait_until(lambda: end_offsets(txb.bootstrap, topic_name) == (2, 2), TIMEOUT, "the abort")
    with pytest.raises(KafkaException):
        p.commit_transaction(TIMEOUT)
    assert values(read_all(txb.bootstrap, topic_name)) == []


def test_offsets_sent_to_a_transaction_count_only_when_it_commits(txb, topic_name):
    create_topic(txb.bootstrap, topic_name)
    group = f"{topic_name}-g"
    c = Consumer({"bootstrap.servers": txb.bootstrap, "group.id": group, "log_level": 0,
                  "enable.auto.commit": False})  # fmt: skip
    tp = TopicPartition(topic_name, 0)
    p = producer(txb.bootstrap, topic_name)
    try:
        p.begin_transaction()
        p.send_offsets_to_transaction([TopicPartition(topic_name, 0, 7)],
                                      c.consumer_group_metadata(), TIMEOUT)  # fmt: skip
        p.abort_transaction(TIMEOUT)
        assert c.committed([tp], TIMEOUT)[0].offset < 0
        p.begin_transaction()
        p.send_offsets_to_transaction([TopicPartition(topic_name, 0, 9)],
                                      c.consumer_group_metadata(), TIMEOUT)  # fmt: skip
        p.commit_transaction(TIMEOUT)
        wait_until(lambda: c.committed([tp], TIMEOUT)[0].offset == 9, TIMEOUT, "the commit")
    finally:
        c.close()


def test_describe_and_list_transactions(txb, topic_name):
    from kafka import TopicPartition as KTP
    from kafka.admin import KafkaAdminClient

    create_topic(txb.bootstrap, topic_name, 2)
    p = producer(txb.bootstrap, topic_name)
    p.begin_transaction()
    p.produce(topic_name, b"x", partition=1)
    p.flush(TIMEOUT)
    admin = KafkaAdminClient(bootstrap_servers=txb.bootstrap)
    try:
        desc = admin.describe_transactions([topic_name])[topic_name]
        assert desc.state.value == "Ongoing"
        assert desc.topic_partitions == {KTP(topic_name, 1)}
        listed = {t.transactional_id: t.state.value
                  for ts in admin.list_transactions().values() for t in ts}  # fmt: skip
        assert listed[topic_name] == "Ongoing"
        producers = admin.describe_producers([KTP(topic_name, 1)])[KTP(topic_name, 1)]
        (active,) = producers.active_producers
        assert active.producer_id == desc.producer_id
        assert active.current_transaction_start_offset == 0
    finally:
        admin.close()
    cli = subprocess.run(
        [sys.executable, "-m", "sluice", "transactions", "describe", topic_name,
         "-b", txb.bootstrap],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, COLUMNS="300"),
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert "Ongoing" in cli.stdout and f"{topic_name}-1" in cli.stdout
    p.commit_transaction(TIMEOUT)
    cli = subprocess.run(
        [sys.executable, "-m", "sluice", "transactions", "list", "-b", txb.bootstrap],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, COLUMNS="300"),
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert topic_name in cli.stdout and "CompleteCommit" in cli.stdout


def test_a_clean_broker_restart_keeps_an_open_transaction(tmp_path: Path, topic_name):
    b = txn_broker(tmp_path / "data")
    b.start()
    try:
        create_topic(b.bootstrap, topic_name)
        p = producer(b.bootstrap, topic_name)
        p.begin_transaction()
        p.produce(topic_name, b"across the restart")
        p.flush(TIMEOUT)
        b.restart()
        assert end_offsets(b.bootstrap, topic_name) == (0, 1)  # still open after the restart
        p.commit_transaction(TIMEOUT)
        assert values(read_all(b.bootstrap, topic_name)) == [b"across the restart"]
    finally:
        b.stop()
