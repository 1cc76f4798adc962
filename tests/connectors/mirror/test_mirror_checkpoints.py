"""Consumer group failover: offset syncs -> checkpoints -> the group's offsets on the target.

A group consuming on A fails over to B: it resumes from the offsets the checkpoint connector
committed for it on B (``sync.group.offsets.enabled``; the group is not active on B), skips
nothing, and re-reads at most what it consumed after its last checkpointed commit plus the
translation's granularity (offset.lag.max + 1). At a position the mirror has synced (a quiet
partition's end) the translation is exact.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from connectors.mirror.remote import translate_offsets
from hub.runtime.herder import Herder
from tests.connectors.mirror.conftest import (
    CHECKPOINT,
    Names,
    create_topic,
    mirror_config,
    produce,
    wait_for_counts,
)
from tests.fixtures.broker import BrokerProcess, wait_until

LAG = 10


def commit(cluster: BrokerProcess, group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group,
                         "enable.auto.commit": False})  # fmt: skip
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()],
                        asynchronous=False)  # fmt: skip
    finally:
        consumer.close()


def group_offsets(cluster: BrokerProcess, group: str, topic: str, partitions: int) -> dict:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group,
                         "enable.auto.commit": False})  # fmt: skip
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 10)
        return {tp.partition: tp.offset for tp in found if tp.offset >= 0}
    finally:
        consumer.close()


def resume(cluster: BrokerProcess, group: str, topic: str, partitions: int) -> dict[int, int]:
    """A consumer of ``group`` subscribing on ``cluster``: the first source index it reads per
    partition (records carry ``p:i`` in their value)."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "latest"})  # fmt: skip
    first: dict[int, int] = {}
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(first) < partitions:
            assert time.monotonic() < deadline, f"resumed only {first}"
            for m in consumer.consume(100, 0.2):
                if m.error() is None and m.partition() not in first:
                    first[m.partition()] = int(m.value().split(b":")[1])
    finally:
        consumer.close()
    return first


def test_group_fails_over_to_the_target(
    cluster_a: BrokerProcess,
    cluster_b: BrokerProcess,
    herder_on: Callable[..., Herder],
    names: Names,
) -> None:
    topic, remote = f"{names.prefix}-events", names.remote(f"{names.prefix}-events")
    create_topic(cluster_a, topic, 2)
    produce(cluster_a, topic, 2, 0, 300)
    quiet, live = f"{names.prefix}-quiet", f"{names.prefix}-live"
    commit(cluster_a, quiet, topic, {0: 300, 1: 120})  # end of p0, middle of p1
    commit(cluster_a, live, topic, {0: 0, 1: 0})
    herder = herder_on(cluster_b, f"state-{names.prefix}")
    # The offset syncs live on the target here (the source test covers the default).
    common = {"offset.lag.max": LAG, "offset-syncs.topic.location": "target"}
    herder.create_connector("source", mirror_config(names, cluster_a, cluster_b, **common))
    herder.create_connector("checkpoint", mirror_config(
        names, cluster_a, cluster_b, CHECKPOINT, groups=f"{names.prefix}-.*",
        **{"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1",
           **common},
    ))  # fmt: skip
    wait_for_counts(cluster_b, remote, {0: 300, 1: 300})

    # Quiet: p0's end was synced when the mirror committed it, so it translates exactly; p1's
    # middle translates to at most its own offset (remote offsets equal source offsets here).
    wait_until(lambda: group_offsets(cluster_b, quiet, remote, 2).get(0) == 300, 30,
               "the quiet group's end offset on the target")  # fmt: skip
    translated = translate_offsets({"bootstrap.servers": cluster_b.bootstrap}, names.source,
                                   quiet)  # fmt: skip
    assert translated[(remote, 0)] == 300
    assert 0 <= translated[(remote, 1)] <= 120
    assert group_offsets(cluster_b, quiet, remote, 2) == {0: 300, 1: translated[(remote, 1)]}

    # Live: records keep coming; the group consumes on A, committing every 50 records, then
    # fails. It resumes on B from the offsets the checkpoint connector committed there.
    stop = threading.Event()
    produced = [300]  # the next source index

    def keep_producing() -> None:
        while not stop.is_set():
            produce(cluster_a, topic, 2, produced[0], produced[0] + 20)
            produced[0] += 20
            stop.wait(0.02)

    producer = threading.Thread(target=keep_producing)
    producer.start()
    try:
        commits_at = consume_and_fail(cluster_a, live, topic, upto=600)
    finally:
        stop.set()  # the source goes quiet soon after the group failed
        producer.join()
    # A tail the failed group never read: had it caught up with the producer, its exact
    # translation would be the remote end and the resumed consumer would have nothing to read.
    produce(cluster_a, topic, 2, produced[0], produced[0] + 20)
    # The mirror catches up and the checkpoints settle (a checkpoint is written only when it
    # moves the group forward on B, so the last commit may translate as an earlier one did);
    # the group's offsets on B follow them. Steady for 3 s: three checkpoint intervals.
    expected = steady(lambda: _settled(cluster_b, names.source, live, remote), 3.0, 60)
    assert max(_upstream(cluster_b, names.source, live, remote).values()) > 300
    first = resume(cluster_b, live, remote, 2)
    for p in (0, 1):
        # Remote offsets equal source offsets here (a fresh topic, no duplicates) and a
        # record's index is its source offset, so both sides compare directly.
        assert first[p] == expected[p] <= commits_at[p], "skipped records"
        # Re-read: the syncs' granularity (a sync is due every offset.lag.max + 1 records, and
        # the latest pair is synced at each offset flush, every 200 ms, while ~1,000 records a
        # second arrive per partition).
        assert commits_at[p] - first[p] <= LAG + 1 + 200, (p, first[p], commits_at[p])


def consume_and_fail(cluster: BrokerProcess, group: str, topic: str, upto: int) -> dict:
    """Consumes ``topic`` in ``group`` on ``cluster`` past ``upto`` per partition, committing
    after each batch, then leaves (the group is empty there now); returns the last commit."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group,
                         "enable.auto.commit": False})  # fmt: skip
    consumer.subscribe([topic])
    consumed: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 60
        while len(consumed) < 2 or min(consumed.values()) < upto:
            assert time.monotonic() < deadline, f"consumed only {consumed}"
            for m in consumer.consume(50, 0.2):
                if m.error() is None:
                    consumed[m.partition()] = m.offset() + 1
            if consumed:
                offsets = [TopicPartition(topic, p, o) for p, o in consumed.items()]
                consumer.commit(offsets=offsets, asynchronous=False)
    finally:
        consumer.close()
    return consumed


def _settled(cluster: BrokerProcess, alias: str, group: str, remote: str) -> dict | None:
    """The group's translated offsets, once the group's offsets on B equal them."""
    target = translate_offsets({"bootstrap.servers": cluster.bootstrap}, alias, group)
    want = {p: target.get((remote, p)) for p in (0, 1)}
    return want if group_offsets(cluster, group, remote, 2) == want else None


def steady(read: Callable[[], Any], for_seconds: float, timeout: float) -> Any:
    """``read()``'s value once it has been truthy and unchanged for ``for_seconds``."""
    deadline = time.monotonic() + timeout
    value, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now_value = read()
        if now_value != value:
            value, since = now_value, time.monotonic()
        elif value and time.monotonic() - since >= for_seconds:
            return value
        time.sleep(0.2)
    raise AssertionError(f"no steady value within {timeout}s (last: {value})")


def _upstream(cluster: BrokerProcess, alias: str, group: str, remote: str) -> dict[int, int]:
    from connectors.mirror.remote import read_group_checkpoints

    checkpoints = read_group_checkpoints({"bootstrap.servers": cluster.bootstrap}, alias, group)
    return {cp.partition: cp.upstream for cp in checkpoints.values() if cp.topic == remote}
