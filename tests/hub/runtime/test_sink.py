"""Sink tasks: delivery, committing only what pre_commit confirmed, pause/resume, offsets."""

from __future__ import annotations

import json
from collections.abc import Callable

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from hub.api import TopicPartition
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.sample_plugins import STATE


def produce(
    hub_broker: EmbeddedBroker, topic: str, values: list[object], partitions: int = 0
) -> None:
    """Produces JSON (or raw bytes) values round-robin; ``partitions`` > 0 creates the topic."""
    if partitions:
        admin = AdminClient({"bootstrap.servers": hub_broker.bootstrap})
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)
    partitions = partitions or 1
    producer = Producer({"bootstrap.servers": hub_broker.bootstrap})
    for i, value in enumerate(values):
        data = value if isinstance(value, bytes) else json.dumps(value).encode()
        producer.produce(topic, value=data, partition=i % partitions)
    assert producer.flush(10) == 0


def received(name: str) -> list[object]:
    with STATE.lock:
        return [r.value for r in STATE.received[name]]


def committed(herder: Herder, name: str) -> dict[tuple[str, int], int]:
    return {
        (o["partition"]["kafka_topic"], o["partition"]["kafka_partition"]): o["offset"][
            "kafka_offset"
        ]
        for o in herder.connector_offsets(name)["offsets"]
    }


def test_sink_receives_everything_and_commits(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": i} for i in range(300)], partitions=3)
    herder = herder_factory()
    herder.create_connector(name, {"connector.class": "recording", "topics": topic_name})
    wait_until(lambda: len(received(name)) >= 300, 20, "all records")
    assert sorted(v["i"] for v in received(name)) == list(range(300))
    wait_until(
        lambda: committed(herder, name) == {(topic_name, p): 100 for p in range(3)}, 10, "commits"
    )
    assert herder.connector_topics(name) == [topic_name]


def test_sink_commits_only_flushed_offsets(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": i} for i in range(20)], 1)
    herder = herder_factory()
    config = {"connector.class": "recording", "topics": topic_name, "flush_upto": "5"}
    herder.create_connector(name, config)
    wait_until(lambda: len(received(name)) >= 20, 20, "all records")
    wait_until(lambda: committed(herder, name) == {(topic_name, 0): 5}, 10, "commit of 5")
    herder.stop_connector(name)  # the final commit also honours pre_commit
    assert committed(herder, name) == {(topic_name, 0): 5}
    herder.resume_connector(name)  # a restarted task gets everything not confirmed again
    wait_until(lambda: len(received(name)) >= 35, 20, "redelivery from offset 5")
    assert [v["i"] for v in received(name)[20:]] == list(range(5, 20))


def test_pause_resume_and_stop(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": i} for i in range(10)], 1)
    herder = herder_factory()
    herder.create_connector(name, {"connector.class": "recording", "topics": topic_name})
    wait_until(lambda: len(received(name)) >= 10, 20, "first records")

    herder.pause_connector(name)
    status = herder.connector_status(name)
    assert status["connector"]["state"] == "PAUSED"
    wait_until(lambda: herder.task_status(name, 0)["state"] == "PAUSED", 5, "task paused")
    produce(hub_broker, topic_name, [{"i": i} for i in range(10, 20)])
    # the paused consumer still holds its assignment; nothing arrives until resume
    assert len(received(name)) == 10

    herder.resume_connector(name)
    assert herder.connector_status(name)["connector"]["state"] == "RUNNING"
    wait_until(lambda: len(received(name)) >= 20, 20, "records after resume")

    herder.stop_connector(name)
    status = herder.connector_status(name)
    assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
    assert herder.connector_info(name)["tasks"] == []
    herder.resume_connector(name)
    wait_until(
        lambda: [t["state"] for t in herder.connector_status(name)["tasks"]] == ["RUNNING"],
        10,
        "task running after resume from STOPPED",
    )


def test_sink_offsets_alter_and_reset_when_stopped(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    import pytest

    from hub.runtime.errors import ConflictError

    produce(hub_broker, topic_name, [{"i": i} for i in range(10)], 1)
    herder = herder_factory()
    herder.create_connector(name, {"connector.class": "recording", "topics": topic_name})
    wait_until(lambda: committed(herder, name) == {(topic_name, 0): 10}, 20, "commit of 10")
    alter = [{"partition": {"kafka_topic": topic_name, "kafka_partition": 0},
              "offset": {"kafka_offset": 7}}]  # fmt: skip
    with pytest.raises(ConflictError):
        herder.alter_connector_offsets(name, alter)
    herder.stop_connector(name)
    assert "altered" in herder.alter_connector_offsets(name, alter)
    assert committed(herder, name) == {(topic_name, 0): 7}
    herder.resume_connector(name)
    wait_until(lambda: len(received(name)) >= 13, 20, "redelivery from 7")
    assert [v["i"] for v in received(name)[10:]] == [7, 8, 9]

    herder.stop_connector(name)
    assert "reset" in herder.reset_connector_offsets(name)
    assert committed(herder, name) == {}
    herder.resume_connector(name)
    wait_until(lambda: len(received(name)) >= 23, 20, "redelivery from the start")


def test_retriable_put_redelivers_the_same_batch(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": i} for i in range(50)], 1)
    herder = herder_factory()
    config = {"connector.class": "recording", "topics": topic_name, "retriable_puts": "2"}
    herder.create_connector(name, config)
    wait_until(lambda: len(received(name)) >= 50, 20, "all records after retries")
    assert [v["i"] for v in received(name)] == list(range(50))
    assert STATE.retries[name] >= 3
    assert herder.task_status(name, 0)["state"] == "RUNNING"


def test_context_offset_rewinds_on_open(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": i} for i in range(10)], 1)
    herder = herder_factory()
    config = {"connector.class": "recording", "topics": topic_name, "rewind_to": "7"}
    herder.create_connector(name, config)
    wait_until(lambda: len(received(name)) >= 3, 20, "records from offset 7")
    assert [v["i"] for v in received(name)] == [7, 8, 9]
    assert STATE.opened[name] == [TopicPartition(topic_name, 0)]


def test_idle_polls_call_put_with_an_empty_batch(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    """As in Kafka Connect: time-based sinks get a chance to flush a quiet partition."""
    produce(hub_broker, topic_name, [{"i": 0}], partitions=1)
    herder = herder_factory()
    herder.create_connector(name, {"connector.class": "recording", "topics": topic_name})
    wait_until(lambda: received(name) == [{"i": 0}], 20, "the record")
    with STATE.lock:
        before = STATE.empty_puts[name]
    wait_until(lambda: STATE.empty_puts[name] >= before + 3, 5, "empty puts while idle")
