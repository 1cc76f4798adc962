"""Committed offsets and live groups across broker restarts (clean and SIGKILL), and static
members restarting without a rebalance. Real confluent-kafka clients, broker subprocesses."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.broker.coordinator.group_clients import (
    confluent_consumer,
    create_topic,
    poll_until,
    produce,
)
from tests.fixtures.broker import BrokerProcess


@pytest.mark.parametrize("kill", [False, True], ids=["clean", "sigkill"])
def test_committed_offsets_survive_restart(
    fresh_broker: BrokerProcess, topic_name: str, kill: bool
) -> None:
    bootstrap = fresh_broker.bootstrap
    create_topic(bootstrap, topic_name, 2)
    produce(bootstrap, topic_name, [f"old{i}" for i in range(40)], 2)
    group = f"{topic_name}-g"
    seen: list[str] = []
    consumer = confluent_consumer(bootstrap, group)
    consumer.subscribe([topic_name])
    poll_until([consumer], lambda: len(seen) == 40, lambda *m: seen.append(m[4]), what="40")
    consumer.commit(asynchronous=False)
    consumer.close()

    fresh_broker.restart(kill=kill)
    produce(bootstrap, topic_name, [f"new{i}" for i in range(10)], 2)
    resumed = confluent_consumer(bootstrap, group)
    partitions = [TopicPartition(topic_name, p) for p in (0, 1)]
    assert [tp.offset for tp in resumed.committed(partitions, timeout=10)] == [20, 20]
    after: list[str] = []
    resumed.subscribe([topic_name])
    poll_until([resumed], lambda: len(after) >= 10, lambda *m: after.append(m[4]), what="new")
    # nothing old comes back: poll a little longer for stragglers that must not exist
    poll_until([resumed], lambda: resumed.position(partitions)[0].offset == 25, what="pos")
    resumed.close()
    assert sorted(after) == sorted(f"new{i}" for i in range(10))


def test_live_member_keeps_its_group_across_a_crash(
    fresh_broker: BrokerProcess, topic_name: str
) -> None:
    bootstrap = fresh_broker.bootstrap
    create_topic(bootstrap, topic_name, 2)
    group = f"{topic_name}-g"
    seen: list[str] = []
    consumer = confluent_consumer(bootstrap, group)
    consumer.subscribe([topic_name])
    produce(bootstrap, topic_name, [f"a{i}" for i in range(10)], 2)
    poll_until([consumer], lambda: len(seen) == 10, lambda *m: seen.append(m[4]), what="a")
    consumer.commit(asynchronous=False)
    member_id = consumer.memberid()

    fresh_broker.restart(kill=True)
    produce(bootstrap, topic_name, [f"b{i}" for i in range(10)], 2)
    poll_until([consumer], lambda: len(seen) == 20, lambda *m: seen.append(m[4]), what="b")
    consumer.commit(asynchronous=False)  # the restored generation still accepts commits
    partitions = [TopicPartition(topic_name, p) for p in (0, 1)]
    assert [tp.offset for tp in consumer.committed(partitions, timeout=10)] == [10, 10]
    assert consumer.memberid() == member_id, "the member was never asked to rejoin"
    consumer.close()
    assert sorted(seen) == sorted([f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)])


def test_static_member_restart_keeps_assignment_without_rebalance(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker.bootstrap, topic_name, 4)
    group = f"{topic_name}-g"
    revoked: list[str] = []

    def static(instance: str, on_revoke: bool = False) -> Consumer:
        consumer = confluent_consumer(broker.bootstrap, group, **{"group.instance.id": instance})
        if on_revoke:
            consumer.subscribe([topic_name], on_revoke=lambda c, ps: revoked.append(instance))
        else:
            consumer.subscribe([topic_name])
        return consumer

    def parts(consumer: Consumer) -> set[int]:
        return {tp.partition for tp in consumer.assignment()}

    stays, restarts = static("stays", on_revoke=True), static("restarts")
    poll_until(
        [stays, restarts],
        lambda: len(parts(stays)) == len(parts(restarts)) == 2,
        what="an even split",
    )
    before = parts(restarts)
    revoked.clear()
    restarts.close()  # a static member does not send LeaveGroup when it closes
    again = static("restarts")
    poll_until([stays, again], lambda: parts(again) == before, what="same partitions back")
    assert revoked == [], "the other member was never asked to give up its partitions"
    assert len(parts(stays)) == 2
    again.close()
    stays.close()
