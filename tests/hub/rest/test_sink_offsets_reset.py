"""Resetting one partition of a STOPPED sink connector: PATCH .../offsets with a null offset.

Real herder, real broker, the built-in file sink: the reset partition must be consumed again
from the beginning after a resume, the other one must not, and a group that still has members
is refused (409) without losing anything. The file sink keeps its own record of what it wrote
(the sidecar, which makes the file exactly-once); the tests delete it, as its docs say to do
to write a topic again, so that the file shows what the group's offsets make it consume.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from fastapi.testclient import TestClient

import hub.runtime.herder  # noqa: F401  (a broken import must fail the suite, not skip it)
from connectors.file.sink_task import sidecar_path
from tests.broker.coordinator.group_clients import confluent_consumer, create_topic
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.hub.rest.conftest import real_herder_client

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
STRING = "org.apache.kafka.connect.storage.StringConverter"
PER_PARTITION = 5


@pytest.fixture
def api(broker: BrokerProcess) -> Iterator[TestClient]:
    with real_herder_client(broker.bootstrap, "reset") as client:
        yield client


def produce(bootstrap: str, topic: str, by_partition: dict[int, list[str]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, values in by_partition.items():
        for value in values:
            producer.produce(topic, value=value.encode(), partition=partition)
    assert producer.flush(10) == 0


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def committed(api: TestClient, name: str) -> dict[int, int]:
    response = api.get(f"/connectors/{name}/offsets")
    assert response.status_code == 200, response.text
    return {
        o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"]
        for o in response.json()["offsets"]
    }


def entry(topic: str, partition: int, offset: int | None) -> dict[str, Any]:
    return {
        "partition": {"kafka_topic": topic, "kafka_partition": partition},
        "offset": None if offset is None else {"kafka_offset": offset},
    }


def status(api: TestClient, name: str) -> dict[str, Any]:
    body: dict[str, Any] = api.get(f"/connectors/{name}/status").json()
    return body


def run_sink_to_end(
    api: TestClient, broker: BrokerProcess, tmp_path: Path
) -> tuple[str, str, Path]:
    """A 2-partition topic fully written to a file by a sink connector, which is then STOPPED."""
    topic = f"reset-{uuid.uuid4().hex[:8]}"
    name = f"sink-{topic}"
    out = tmp_path / "out.txt"
    create_topic(broker.bootstrap, topic, 2)
    produce(
        broker.bootstrap, topic, {p: [f"p{p}-v{i}" for i in range(PER_PARTITION)] for p in (0, 1)}
    )
    config = {
        "connector.class": SINK,
        "tasks.max": "1",
        "topics": topic,
        "file": str(out),
        "key.converter": STRING,
        "value.converter": STRING,
    }
    created = api.post("/connectors", json={"name": name, "config": config})
    assert created.status_code == 201, created.text
    wait_until(
        lambda: committed(api, name) == {0: PER_PARTITION, 1: PER_PARTITION},
        30,
        "the sink to commit both partitions to the end",
    )
    assert Counter(lines(out)) == Counter(
        f"p{p}-v{i}" for p in (0, 1) for i in range(PER_PARTITION)
    )
    assert api.put(f"/connectors/{name}/stop").status_code == 204
    wait_until(
        lambda: (
            status(api, name)["connector"]["state"] == "STOPPED" and not status(api, name)["tasks"]
        ),
        30,
        "connector STOPPED with no tasks",
    )
    return topic, name, out


def test_reset_one_partition_replays_only_that_partition(
    api: TestClient, broker: BrokerProcess, tmp_path: Path
) -> None:
    topic, name, out = run_sink_to_end(api, broker, tmp_path)

    reset = api.patch(f"/connectors/{name}/offsets", json={"offsets": [entry(topic, 0, None)]})
    assert reset.status_code == 200, reset.text
    assert "altered successfully" in reset.json()["message"]
    assert committed(api, name) == {1: PER_PARTITION}

    os.remove(sidecar_path(str(out)))  # let the group's offsets decide where the sink starts
    assert api.put(f"/connectors/{name}/resume").status_code == 202
    # A record produced after the resume comes after any replay of its partition, so once
    # both markers are in the file, every record the sink was going to re-read is there too.
    produce(broker.bootstrap, topic, {0: ["p0-after"], 1: ["p1-after"]})
    wait_until(
        lambda: {"p0-after", "p1-after"} <= set(lines(out)), 30, "the records produced after resume"
    )
    seen = Counter(lines(out))
    assert {v: n for v, n in seen.items() if v.startswith("p0-v")} == {
        f"p0-v{i}": 2 for i in range(PER_PARTITION)
    }, "partition 0 was not consumed again from the beginning"
    assert {v: n for v, n in seen.items() if v.startswith("p1-")} == {
        **{f"p1-v{i}": 1 for i in range(PER_PARTITION)},
        "p1-after": 1,
    }, "partition 1 was consumed again"
    wait_until(
        lambda: committed(api, name) == {0: PER_PARTITION + 1, 1: PER_PARTITION + 1},
        30,
        "the sink to commit both partitions again",
    )


def test_reset_refused_while_the_group_has_members(
    api: TestClient, broker: BrokerProcess, tmp_path: Path
) -> None:
    topic, name, _ = run_sink_to_end(api, broker, tmp_path)
    # another consumer in the connector's group, e.g. a task on a worker that did not stop
    # (a long max.poll.interval.ms: it must stay in the group however slow the requests are)
    intruder = confluent_consumer(
        broker.bootstrap, f"connect-{name}", **{"max.poll.interval.ms": 300_000}
    )
    try:
        intruder.subscribe([topic])
        wait_until(lambda: intruder.poll(0.05) is None and intruder.assignment(), 30, "assigned")
        for body in ([entry(topic, 0, None)], [entry(topic, 0, None), entry(topic, 1, 2)]):
            refused = api.patch(f"/connectors/{name}/offsets", json={"offsets": body})
            assert refused.status_code == 409, refused.text
            assert refused.json()["error_code"] == 409
            assert "active members" in refused.json()["message"]
        assert api.delete(f"/connectors/{name}/offsets").status_code == 409
        assert committed(api, name) == {0: PER_PARTITION, 1: PER_PARTITION}
    finally:
        intruder.close()

    # empty again: a reset and a new value in one request, and a reset of a partition
    # without a committed offset, which changes nothing
    both = [entry(topic, 0, None), entry(topic, 1, 2)]
    assert api.patch(f"/connectors/{name}/offsets", json={"offsets": both}).status_code == 200
    assert committed(api, name) == {1: 2}
    again = api.patch(f"/connectors/{name}/offsets", json={"offsets": [entry(topic, 0, None)]})
    assert again.status_code == 200, again.text
    assert committed(api, name) == {1: 2}


def test_reset_keeps_the_other_partitions_metadata(
    api: TestClient, broker: BrokerProcess, tmp_path: Path
) -> None:
    """The partitions committed back keep the metadata string their committer stored."""
    topic, name, _ = run_sink_to_end(api, broker, tmp_path)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    group = f"connect-{name}"
    tagged = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 1, 4, metadata="tag")])
    admin.alter_consumer_group_offsets([tagged])[group].result(15)

    reset = api.patch(f"/connectors/{name}/offsets", json={"offsets": [entry(topic, 0, None)]})
    assert reset.status_code == 200, reset.text
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    kept = [(tp.partition, tp.offset, tp.metadata) for tp in result.result(15).topic_partitions]
    assert kept == [(1, 4, "tag")]


class JoinFirstAdmin(AdminClient):  # type: ignore[misc]
    """An AdminClient that lets a real consumer into the group just before it commits back.

    That is the race the reset cannot rule out (the group has no members between the delete
    and the commit); sequencing it here makes the real broker refuse the commit-back
    deterministically.
    """

    def __init__(self, config: dict[str, Any], topic: str, group: str) -> None:
        super().__init__(config)
        self.intruder = confluent_consumer(
            config["bootstrap.servers"], group, **{"max.poll.interval.ms": 300_000}
        )
        self.topic = topic

    def alter_consumer_group_offsets(self, *args: Any, **kwargs: Any) -> Any:
        self.intruder.subscribe([self.topic])
        wait_until(lambda: self.intruder.poll(0.05) is None and self.intruder.assignment(), 30)
        return super().alter_consumer_group_offsets(*args, **kwargs)


def test_failed_commit_back_names_every_offset_to_set_again(
    api: TestClient, broker: BrokerProcess, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    topic, name, _ = run_sink_to_end(api, broker, tmp_path)
    herder = api.app.state.herder  # type: ignore[attr-defined]
    real_admin = herder.admin.admin
    joining = JoinFirstAdmin({"bootstrap.servers": broker.bootstrap}, topic, f"connect-{name}")
    herder.admin.admin = joining
    try:
        response = api.patch(
            f"/connectors/{name}/offsets", json={"offsets": [entry(topic, 0, None)]}
        )
    finally:
        herder.admin.admin = real_admin
        joining.intruder.close()
    assert response.status_code == 500, response.text
    message = response.json()["message"]
    assert "partly reset" in message and f"{topic}-1={PER_PARTITION}" in message
    assert f"{topic}-1={PER_PARTITION}" in caplog.text  # the log has them too
    # as the message says: set them again (the group is empty once the consumer left)
    again = api.patch(
        f"/connectors/{name}/offsets", json={"offsets": [entry(topic, 1, PER_PARTITION)]}
    )
    assert again.status_code == 200, again.text
    assert committed(api, name) == {1: PER_PARTITION}
