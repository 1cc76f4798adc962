"""Source tasks: exactly-once across a clean worker restart, topic creation, offsets."""

from __future__ import annotations

import collections
import json
from collections.abc import Callable

from hub.runtime.embedded_broker import EmbeddedBroker
from hub.runtime.herder import Herder
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic


def values(hub_broker: EmbeddedBroker, topic: str) -> list[tuple[int, int]]:
    return [
        (v["p"], v["n"])
        for v in (json.loads(m.value()) for m in read_topic(hub_broker.bootstrap, topic))
    ]


def counter(name: str, topic: str, **extra: object) -> dict[str, str]:
    return {"connector.class": "counter", "topic": topic, **{k: str(v) for k, v in extra.items()}}


def test_source_delivers_exactly_once_across_clean_restart(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    n, partitions = 3000, 2
    herder = herder_factory()
    herder.create_connector(
        name, counter(name, topic_name, count=n, batch=20, partitions=partitions, poll_delay_ms=5)
    )
    wait_until(lambda: len(read_topic(hub_broker.bootstrap, topic_name)) > 200, 20, "some records")
    herder.stop()
    assert len(values(hub_broker, topic_name)) < n * partitions, "stopped too late to test resuming"

    again = herder_factory()
    assert again.connector_status(name)["tasks"][0]["state"] == "RUNNING"
    wait_until(
        lambda: len(read_topic(hub_broker.bootstrap, topic_name)) >= n * partitions, 30, "all"
    )
    got = values(hub_broker, topic_name)
    dupes = [v for v, c in collections.Counter(got).items() if c > 1]
    assert not dupes, f"{len(dupes)} duplicates, e.g. {dupes[:5]}"
    assert sorted(got) == [(p, i) for p in range(partitions) for i in range(1, n + 1)]
    by_partition = collections.defaultdict(list)
    for p, i in got:
        by_partition[p].append(i)
    assert all(seq == sorted(seq) for seq in by_partition.values()), "order per source partition"
    assert again.connector_topics(name) == [topic_name]

    def committed() -> list[tuple[int, int]]:
        offsets = again.connector_offsets(name)["offsets"]
        return sorted((o["partition"]["p"], o["offset"]["n"]) for o in offsets)

    wait_until(lambda: committed() == [(p, n) for p in range(partitions)], 10, "final offsets")
