"""Consumer groups with confluent-kafka (librdkafka) against a real broker subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter

import pytest
from confluent_kafka import ConsumerGroupState, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.broker.coordinator.group_clients import (
    FAST_GROUP,
    confluent_consumer,
    create_topic,
    poll_until,
    produce,
)
from tests.fixtures.broker import BrokerProcess


def assigned(consumer: object) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}  # type: ignore[attr-defined]


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_rebalance_as_members_join_and_leave(
    broker: BrokerProcess, topic_name: str, assignor: str
) -> None:
    create_topic(broker.bootstrap, topic_name, 6)
    group = f"{topic_name}-g"
    strategy = {"partition.assignment.strategy": assignor}
    first = confluent_consumer(broker.bootstrap, group, **strategy)
    first.subscribe([topic_name])
    poll_until([first], lambda: assigned(first) == set(range(6)), what="first gets all 6")

    second = confluent_consumer(broker.bootstrap, group, **strategy)
    second.subscribe([topic_name])
    members = [first, second]

    def split_evenly() -> bool:
        a, b = assigned(first), assigned(second)
        assert not a & b, f"partitions {a & b} owned by two members at once"
        return len(a) == len(b) == 3 and a | b == set(range(6))

    poll_until(members, split_evenly, what="partitions split across two members")
    second.close()
    poll_until([first], lambda: assigned(first) == set(range(6)), what="first takes all back")
    first.close()


def test_commit_then_resume_without_loss_or_duplicates(
    broker: BrokerProcess, topic_name: str
) -> None:
    create_topic(broker.bootstrap, topic_name, 3)
    values = [f"m{i}" for i in range(90)]
    produce(broker.bootstrap, topic_name, values, 3)
    group = f"{topic_name}-g"
    seen: list[str] = []

    first = confluent_consumer(broker.bootstrap, group)
    first.subscribe([topic_name])
    poll_until([first], lambda: len(seen) >= 40, lambda *m: seen.append(m[4]), what="40 msgs")
    first.commit(asynchronous=False)  # commits the position after everything returned so far
    first.close()

    second = confluent_consumer(broker.bootstrap, group)
    second.subscribe([topic_name])
    poll_until([second], lambda: len(seen) >= 90, lambda *m: seen.append(m[4]), what="the rest")
    second.commit(asynchronous=False)
    committed = second.committed([TopicPartition(topic_name, p) for p in range(3)], timeout=10)
    second.close()
    assert Counter(seen) == Counter(values), "every message exactly once"
    assert sorted(tp.offset for tp in committed) == [30, 30, 30]


def test_admin_lists_describes_and_deletes_groups(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker.bootstrap, topic_name, 2)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    live, idle = f"{topic_name}-live", f"{topic_name}-idle"
    member = confluent_consumer(broker.bootstrap, live, **{"client.id": "describer"})
    member.subscribe([topic_name])
    poll_until([member], lambda: assigned(member) == {0, 1}, what="assignment")
    # a group that only stores offsets (no members), as an admin tool would create it
    offsets_only = confluent_consumer(broker.bootstrap, idle)
    offsets_only.commit(offsets=[TopicPartition(topic_name, 0, 7)], asynchronous=False)
    offsets_only.close()

    listed = {g.group_id: g.state for g in admin.list_consumer_groups().result(10).valid}
    assert listed[live] == ConsumerGroupState.STABLE
    assert listed[idle] == ConsumerGroupState.EMPTY
    stable_only = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(10)
    assert live in {g.group_id for g in stable_only.valid}
    assert idle not in {g.group_id for g in stable_only.valid}

    description = admin.describe_consumer_groups([live])[live].result(10)
    assert description.state == ConsumerGroupState.STABLE
    assert description.partition_assignor == "range"
    (desc_member,) = description.members
    assert desc_member.client_id == "describer"
    assert {tp.partition for tp in desc_member.assignment.topic_partitions} == {0, 1}

    futures = admin.delete_consumer_groups([live, idle])
    futures[idle].result(10)
    with pytest.raises(KafkaException, match="NON_EMPTY_GROUP"):
        futures[live].result(10)
    member.close()
    assert idle not in {g.group_id for g in admin.list_consumer_groups().result(10).valid}
    admin.delete_consumer_groups([live])[live].result(10)


_MEMBER_SCRIPT = """
import json, sys
from confluent_kafka import Consumer
bootstrap, group, topic, settings = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, **settings})
consumer.subscribe([topic])
announced = False
while True:
    consumer.poll(0.05)
    if consumer.assignment() and not announced:
        print("assigned", flush=True)
        announced = True
"""


def test_crashed_member_is_expired_after_its_session_timeout(
    broker: BrokerProcess, topic_name: str
) -> None:
    """A member that dies without LeaveGroup loses its partitions when its session expires."""
    create_topic(broker.bootstrap, topic_name, 4)
    group = f"{topic_name}-g"
    survivor = confluent_consumer(broker.bootstrap, group)
    survivor.subscribe([topic_name])
    poll_until([survivor], lambda: assigned(survivor) == set(range(4)), what="all 4")
    args = [broker.bootstrap, group, topic_name, json.dumps(FAST_GROUP)]
    crasher = subprocess.Popen(
        [sys.executable, "-c", _MEMBER_SCRIPT, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        poll_until([survivor], lambda: len(assigned(survivor)) == 2, what="a split")
        assert crasher.stdout is not None and crasher.stdout.readline() == "assigned\n"
    finally:
        crasher.kill()
        crasher.wait()
    started = time.monotonic()
    poll_until([survivor], lambda: assigned(survivor) == set(range(4)), what="takeover")
    elapsed = time.monotonic() - started
    survivor.close()
    assert 4 < elapsed < 20, f"takeover after {elapsed:.1f}s; the session timeout is 6 s"
