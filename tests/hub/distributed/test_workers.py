"""Three ``sluice connect`` workers of one group against one broker, as separate processes.

What a Kafka Connect cluster promises: connectors created through any worker run spread over
all of them; writes through a non-leader reach the leader; a killed worker's tasks move within
the session timeout plus a rebalance, and a file pipeline through the move loses no line; a
worker frozen past its session writes nothing once it wakes; tasks.max changes and deletes
made while the group rebalances land exactly once.
"""

from __future__ import annotations

import collections
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from tests.fixtures.broker import wait_until
from tests.fixtures.workers import SESSION_TIMEOUT_MS, TOKEN, WorkerProcess

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def _source(name: str, path: Path, topic: str) -> dict[str, Any]:
    config = {"connector.class": SOURCE, "tasks.max": "1", "file": str(path), "topic": topic}
    return {"name": name, "config": {**config, **STRINGS}}


def _sink(name: str, path: Path, topic: str, tasks: int = 1) -> dict[str, Any]:
    config = {"connector.class": SINK, "tasks.max": str(tasks), "file": str(path), "topics": topic}
    return {"name": name, "config": {**config, **STRINGS}}


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _topic_values(bootstrap: str, topic: str) -> list[str]:
    """Every value in partition 0 of ``topic``, read up to its end offset."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    try:
        tp = TopicPartition(topic, 0)
        try:
            _low, high = consumer.get_watermark_offsets(tp, timeout=10)
        except Exception:
            return []
        tp.offset = 0
        consumer.assign([tp])
        values: list[str] = []
        deadline = time.monotonic() + 30
        position = 0
        while position < high and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.5):
                if msg.error() is None:
                    values.append((msg.value() or b"").decode())
                    position = msg.offset() + 1
        return values
    finally:
        consumer.close()


def _end_offset(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])
    finally:
        consumer.close()


def _rebalance_metrics(worker: WorkerProcess) -> dict[str, Any]:
    """The worker's ``kafka_connect_connect_worker_rebalance_metrics_*`` samples, by name
    (``leader_name`` by its ``leader`` label), as a Prometheus scrape reads them."""
    import urllib.request

    request = urllib.request.Request(worker.url + "/metrics")
    request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=30) as resp:
        text = resp.read().decode()
    prefix = "kafka_connect_connect_worker_rebalance_metrics_"
    found: dict[str, Any] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith(prefix):
                name = sample.name[len(prefix) :]
                found[name] = sample.labels["leader"] if name == "leader_name" else sample.value
    return found


def _task_owner(via: WorkerProcess, name: str, task: int = 0) -> str | None:
    """The worker id a RUNNING task reports, else None."""
    status, body = via.request("GET", f"/connectors/{name}/status")
    if status != 200:
        return None
    tasks = [t for t in body["tasks"] if t["id"] == task and t["state"] == "RUNNING"]
    return str(tasks[0]["worker_id"]) if tasks else None


def test_connectors_spread_and_any_worker_takes_writes(group_of: Any, tmp_path: Path) -> None:
    group = group_of(3)
    via = group.non_leader()  # every write below is forwarded to the leader
    for i in range(6):
        source = tmp_path / f"in{i}.txt"
        source.write_text(f"line-{i}\n")
        via.call("POST", "/connectors", _source(f"src{i}", source, f"t{i}"))

    def all_running() -> dict[str, Any] | None:
        status, body = via.request("GET", "/connectors?expand=status")
        if status != 200 or len(body) != 6:
            return None
        states = [t["state"] for c in body.values() for t in c["status"]["tasks"]]
        return body if states == ["RUNNING"] * 6 else None

    wait_until(all_running, 90, "six connectors running")
    view = group.wait_stable(3)
    units = [u for units in view["members"].values() for u in units]
    assert sorted(units) == sorted([f"src{i}" for i in range(6)] + [f"src{i}-0" for i in range(6)])
    assert all(len(u) == 4 for u in view["members"].values())  # 12 units, balanced
    # Connect's rebalance metrics: every worker completed one and agrees on leader and epoch.
    scraped = [_rebalance_metrics(w) for w in group.workers]
    assert {m["leader_name"] for m in scraped} == {view["leader_url"]}
    assert len({m["epoch"] for m in scraped}) == 1 and scraped[0]["epoch"] >= 1
    for m in scraped:
        assert m["completed_rebalances_total"] >= 1 and m["rebalancing"] == 0
        assert 0 <= m["rebalance_avg_time_ms"] <= m["rebalance_max_time_ms"]
        assert m["time_since_last_rebalance_ms"] >= 0
    # Each task reports the worker the assignment gave it (the advertised id, host:port).
    for i in range(6):
        owner = group.owner(f"src{i}-0")
        wait_until(lambda i=i, o=owner: _task_owner(via, f"src{i}") == o.worker_id, 30,
                   f"src{i}-0 status from its owner")  # fmt: skip

    # Reconfigure and pause through the non-leader; every worker's view follows.
    moved = _source("src0", tmp_path / "in0.txt", "moved")["config"]
    via.call("PUT", "/connectors/src0/config", moved)
    for worker in group.workers:
        wait_until(lambda w=worker: w.request("GET", "/connectors/src0/config")[1].get("topic")
                   == "moved", 30, "the new config everywhere")  # fmt: skip
    via.call("PUT", "/connectors/src1/pause")
    wait_until(
        lambda: via.request("GET", "/connectors/src1/status")[1]["tasks"][0]["state"] == "PAUSED",
        30, "src1 paused by its owner",
    )  # fmt: skip
    # The standalone-only internal endpoint refuses unauthenticated callers like every other.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        group.leader().url + "/connectors/src0/tasks", data=b"[]", method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    try:
        urllib.request.urlopen(request, timeout=10)
        raise AssertionError("an unauthenticated task-config write was accepted")
    except urllib.error.HTTPError as exc:
        assert exc.code == 401


def test_kill9_moves_tasks_and_the_file_pipeline_loses_nothing(
    group_of: Any, tmp_path: Path
) -> None:
    group = group_of(3)
    via = group.workers[0]
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    total = 4000
    source.write_text("".join(f"line-{i}\n" for i in range(total // 2)))
    via.call("POST", "/connectors", _source("src", source, "lines"))
    via.call("POST", "/connectors", _sink("snk", sink, "lines"))
    wait_until(lambda: len(_lines(sink)) > 0, 60, "first lines in the sink")
    victim = group.owner("src-0")
    survivors = [w for w in group.workers if w is not victim]
    killed_at = time.monotonic()
    victim.kill()
    with open(source, "a") as f:  # the second half flows only after the kill
        f.write("".join(f"line-{i}\n" for i in range(total // 2, total)))
    ids = {w.worker_id for w in survivors}
    wait_until(lambda: _task_owner(survivors[0], "src") in ids, 60, "src-0 on a survivor")
    moved_after = time.monotonic() - killed_at
    # session timeout, then one rebalance (and a second one for the task configs at most)
    assert moved_after < SESSION_TIMEOUT_MS / 1000 + 20, moved_after
    expected = {f"line-{i}" for i in range(total)}
    wait_until(lambda: set(_lines(sink)) >= expected, 120, "every line after kill -9")


def test_a_frozen_worker_writes_nothing_after_waking(group_of: Any, tmp_path: Path) -> None:
    group = group_of(3)
    via = group.workers[0]
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(100)))
    via.call("POST", "/connectors", _source("src", source, "zombie"))
    bootstrap = group.broker.bootstrap
    wait_until(lambda: len(set(_topic_values(bootstrap, "zombie"))) >= 100, 60, "100 lines")
    zombie = group.owner("src-0")
    survivors = [w for w in group.workers if w is not zombie]
    zombie.freeze()  # SIGSTOP: every thread stops, heartbeats too; the session expires
    with open(source, "a") as f:
        f.write("".join(f"line-{i}\n" for i in range(100, 200)))
    ids = {w.worker_id for w in survivors}
    wait_until(lambda: _task_owner(survivors[0], "src") in ids, 60, "src-0 on a survivor")
    expected = {f"line-{i}" for i in range(200)}
    wait_until(lambda: set(_topic_values(bootstrap, "zombie")) >= expected, 60, "200 lines")
    end = _end_offset(bootstrap, "zombie")
    mark = len(zombie.log())
    zombie.thaw()  # its task wakes with a file position before line 100
    wait_until(lambda: "assignment applied" in zombie.log()[mark:], 60, "the zombie rejoined")
    group.wait_stable(3)
    wait_until(lambda: _task_owner(via, "src") is not None, 60, "src-0 running again")
    assert _end_offset(bootstrap, "zombie") == end, zombie.log()[mark:][-3000:]
    counts = collections.Counter(_topic_values(bootstrap, "zombie"))
    assert set(counts) == expected


def test_tasks_max_and_deletes_during_rebalances(group_of: Any, tmp_path: Path) -> None:
    group = group_of(3)
    via = group.non_leader()
    (tmp_path / "gone.txt").write_text("x\n")
    for i in range(3):
        (tmp_path / f"part-{i}.log").write_text(f"p{i}\n")
    scaled = _source("scaled", tmp_path / "part-*.log", "s")  # a glob: one task per tasks.max
    via.call("POST", "/connectors", scaled)
    via.call("POST", "/connectors", _source("gone", tmp_path / "gone.txt", "g"))
    wait_until(lambda: _task_owner(via, "scaled") and _task_owner(via, "gone"), 60, "running")
    # A worker dies (kill -9: the group rebalances once its session expires) while the
    # connectors change; writes answered 409 meanwhile are retried, as Connect clients do.
    group.owner("scaled-0").kill()
    rest = group.running()
    via = rest[0]
    config = {**scaled["config"], "tasks.max": "3"}
    via.call("PUT", "/connectors/scaled/config", config)
    via.call("DELETE", "/connectors/gone")

    def running_tasks() -> int:
        status, body = via.request("GET", "/connectors/scaled/status")
        states = [t["state"] for t in body["tasks"]] if status == 200 else []
        return len(states) if set(states) == {"RUNNING"} else 0

    wait_until(lambda: running_tasks() == 3, 90, "three tasks of scaled running")
    for worker in rest:
        assert worker.request("GET", "/connectors/gone/status")[0] == 404
        assert worker.request("GET", "/connectors")[1] == ["scaled"]
    view = group.wait_stable(2)
    units = [u for units in view["members"].values() for u in units]
    assert sorted(units) == ["scaled", "scaled-0", "scaled-1", "scaled-2"]  # each exactly once
    # Scale down again through the other worker.
    rest[1].call("PUT", "/connectors/scaled/config", {**config, "tasks.max": "2"})
    wait_until(lambda: running_tasks() == 2, 60, "two tasks")
    view = group.wait_stable(2)
    units = [u for units in view["members"].values() for u in units]
    assert sorted(units) == ["scaled", "scaled-0", "scaled-1"]
