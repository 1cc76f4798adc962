"""Consumer groups with kafka-python and aiokafka against a real broker subprocess."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as AioTopicPartition
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, MemberToRemove
from kafka.errors import GroupSubscribedToTopicError, NoError
from kafka.structs import MemberState, OffsetAndMetadata

from tests.broker.coordinator.group_clients import create_topic, produce
from tests.fixtures.broker import BrokerProcess

GROUP_SETTINGS = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 200,
    "request_timeout_ms": 30000,
    "max_poll_interval_ms": 10000,
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
}


def kafka_python_consumer(bootstrap: str, group: str, topic: str) -> KafkaConsumer:
    return KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, **GROUP_SETTINGS)


def drain(consumers: list[KafkaConsumer], want: int, timeout: float = 30.0) -> dict[int, list[str]]:
    """Polls each consumer until together they returned ``want`` messages."""
    got: dict[int, list[str]] = {i: [] for i in range(len(consumers))}
    deadline = time.monotonic() + timeout
    while sum(map(len, got.values())) < want:
        assert time.monotonic() < deadline, f"only {sum(map(len, got.values()))} of {want}"
        for i, consumer in enumerate(consumers):
            for records in consumer.poll(timeout_ms=50).values():
                got[i] += [r.value.decode() for r in records]
    return got


def test_kafka_python_two_groups_each_receive_everything(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker.bootstrap, topic_name, 3)
    values = [f"v{i}" for i in range(60)]
    produce(broker.bootstrap, topic_name, values, 3)
    consumers = [
        kafka_python_consumer(broker.bootstrap, f"{topic_name}-{name}", topic_name)
        for name in ("a", "b")
    ]
    try:
        got = drain(consumers, 120)
        assert Counter(got[0]) == Counter(values) == Counter(got[1])
    finally:
        for consumer in consumers:
            consumer.close()


def settle(consumers: list[KafkaConsumer], settled: Callable[[], bool], timeout: float) -> None:
    """Polls every consumer from its own thread until ``settled()`` holds (or the deadline).

    kafka-python 3.0 only applies a JoinGroup/SyncGroup result that arrives while the
    consumer is inside ``poll()``: if the join task completes between two polls, the next
    poll sees a finished task and sends a fresh JoinGroup, discarding the result. A leader
    doing that starts yet another rebalance (Kafka rebalances whenever the leader rejoins);
    a follower gets the current generation back but can lose that race again. Polling two
    consumers in turn from one thread leaves each outside ``poll()`` half of the time, so on
    a loaded machine the group churned for the whole 30 s deadline, or the follower never
    applied an assignment (2 partitions / none). One thread per consumer, always polling, is
    how the client is meant to be driven and keeps each consumer inside ``poll()``.
    """
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(consumer: KafkaConsumer) -> None:
        try:
            while not stop.is_set():
                consumer.poll(timeout_ms=100, max_records=1)
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in consumers]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not settled() and not errors:
            assert time.monotonic() < deadline, "group never settled: " + ", ".join(
                f"{c.group_metadata()} {sorted(tp.partition for tp in c.assignment())}"
                for c in consumers
            )
            stop.wait(0.02)  # a polling interval for the condition, not synchronisation
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)


def test_kafka_python_rebalance_and_resume(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker.bootstrap, topic_name, 4)
    values = [f"v{i}" for i in range(80)]
    produce(broker.bootstrap, topic_name, values, 4)
    group = f"{topic_name}-g"
    first = kafka_python_consumer(broker.bootstrap, group, topic_name)
    second = kafka_python_consumer(broker.bootstrap, group, topic_name)

    def even_split() -> bool:
        """Both members applied the same generation's assignment: no rebalance is pending.

        Two partitions each is not enough on its own: a member keeps its old partitions
        while it rejoins (eager protocol), so the split can be seen mid-rebalance, and a
        rebalance finishing during the drain below would replay records. For the same
        reason the two views may overlap while the members rebalance, but not once settled.
        """
        a, b = first.group_metadata(), second.group_metadata()
        return (
            a.state == b.state == MemberState.STABLE
            and a.generation_id == b.generation_id
            and len(first.assignment()) == len(second.assignment()) == 2
        )

    # generous: settling takes well under a second when the machine is idle
    settle([first, second], even_split, timeout=60)
    assert even_split(), "a rebalance started after the group settled"
    assert not first.assignment() & second.assignment(), "a partition assigned to both"
    # consume everything between them, committing as we go, then leave one by one
    first.seek_to_beginning()
    second.seek_to_beginning()
    got = drain([first, second], 80)
    first.commit()
    second.commit()
    assert Counter(got[0] + got[1]) == Counter(values)
    assert not set(got[0]) & set(got[1])
    second.close()
    deadline = time.monotonic() + 30
    while len(first.assignment()) != 4:
        assert time.monotonic() < deadline, "first never took over all partitions"
        assert not first.poll(timeout_ms=50), "committed messages were delivered again"
    first.close()

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        offsets = admin.list_group_offsets({group: None})[group]
        assert {tp: meta.offset for tp, meta in offsets.items()} == {
            TopicPartition(topic_name, p): 20 for p in range(4)
        }
    finally:
        admin.close()


def test_aiokafka_group_members_share_and_commit(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker.bootstrap, topic_name, 2)
    values = [f"v{i}" for i in range(50)]
    produce(broker.bootstrap, topic_name, values, 2)
    group = f"{topic_name}-g"

    def consumer() -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            topic_name, bootstrap_servers=broker.bootstrap, group_id=group, **GROUP_SETTINGS
        )

    async def scenario() -> None:
        first, second = consumer(), consumer()
        await first.start()
        await second.start()
        try:
            deadline = time.monotonic() + 30
            seen: list[str] = []
            while len(seen) < 50 or len(first.assignment()) != 1 or len(second.assignment()) != 1:
                assert time.monotonic() < deadline, "members never split the partitions"
                assert not first.assignment() & second.assignment()
                for member in (first, second):
                    batches = await member.getmany(timeout_ms=50)
                    seen += [r.value.decode() for rs in batches.values() for r in rs]
                    if batches:
                        await member.commit()
            assert Counter(seen) == Counter(values)
        finally:
            await second.stop()
        deadline = time.monotonic() + 30
        while len(first.assignment()) != 2:
            assert time.monotonic() < deadline, "first never took over both partitions"
            assert not await first.getmany(timeout_ms=50), "committed messages came back"
        committed = [await first.committed(AioTopicPartition(topic_name, p)) for p in (0, 1)]
        await first.stop()
        assert committed == [25, 25]

    asyncio.run(scenario())


def test_kafka_python_admin_manages_groups(broker: BrokerProcess, topic_name: str) -> None:
    """Describe, remove members (LeaveGroup v3+), alter and delete offsets, delete the group."""
    create_topic(broker.bootstrap, topic_name, 2)
    group = f"{topic_name}-g"
    consumer = kafka_python_consumer(broker.bootstrap, group, topic_name)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    tp0, tp1 = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
    try:
        deadline = time.monotonic() + 30
        while len(consumer.assignment()) != 2:
            assert time.monotonic() < deadline, "consumer never got its partitions"
            consumer.poll(timeout_ms=50)
        consumer.commit({tp0: OffsetAndMetadata(3, "", -1)})

        assert {"group_id": group, "protocol_type": "consumer", "group_state": "Stable",
                "group_type": "classic"} in admin.list_groups(states_filter=["Stable"])  # fmt: skip
        described = admin.describe_groups([group])[group]
        (member,) = described["members"]
        assert described["protocol_data"] == "range"
        assert member["member_metadata"]["topics"] == [topic_name]
        assert member["member_assignment"]["assigned_partitions"] == [
            {"topic": topic_name, "partitions": [0, 1]}
        ]
        refused = admin.delete_group_offsets(group, [tp0])
        assert refused == {tp0: GroupSubscribedToTopicError}

        removed = admin.remove_group_members(group, [MemberToRemove(member_id=member["member_id"])])
        assert list(removed.values()) == [NoError]
        consumer.close(autocommit=False)
        assert admin.describe_groups([group])[group]["group_state"] == "Empty"

        assert admin.alter_group_offsets(group, {tp1: OffsetAndMetadata(5, "x", -1)}) == {
            tp1: NoError
        }
        assert admin.delete_group_offsets(group, [tp0]) == {tp0: NoError}
        assert admin.list_group_offsets({group: None})[group] == {
            tp1: OffsetAndMetadata(5, "x", -1)
        }
        assert admin.delete_groups([group]) == {group: "OK"}
        assert group not in {g["group_id"] for g in admin.list_groups()}
    finally:
        consumer.close(autocommit=False)
        admin.close()
