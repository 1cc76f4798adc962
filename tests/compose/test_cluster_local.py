"""compose/cluster.yml's Sluice services as local processes, from exactly its files.

ZooKeeper (the test fixture) stands in for the ``zookeeper`` service; ``broker-1..3`` and
``worker-1`` and two replicas of ``worker`` run the command lines of cluster.yml with the files it
mounts. What Docker
gives a container differently is mapped, and only that: service host names and the port every
broker or worker has to itself (9092, 8083) become 127.0.0.1 and free ports, and container
paths become temp directories (one for the workers' shared data volume). The connectors are
created by compose/init-connectors.sh through worker-1 (twice: the second run must leave them
alone), the log lines come from compose/log-producer.sh, and health is judged by
compose/healthcheck.py, as in the containers. The connectors and tasks must be spread over the
three workers. A broker leading the log topic is killed; every line must still reach the
file sink (at-least-once: duplicates allowed, gaps not), and the broker, started again, must
rejoin the ISR. Then the worker running the file sink's task is killed (-9): the task must
move to another worker and the lines written after it still arrive.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.compose._compose import COMPOSE_DIR, load, services
from tests.compose._local import (
    LocalService,
    Mapping,
    connector_files,
    health,
    init_connectors,
    localize,
    produce,
)
from tests.fixtures.broker import wait_until
from tests.fixtures.hub import free_port
from tests.fixtures.zookeeper import ZooKeeperServer

BROKERS = ("broker-1", "broker-2", "broker-3")
# worker-1 and two replicas of the scaled `worker` service (cluster.yml's default)
WORKERS = ("worker-1", "worker#1", "worker#2")
PIPELINE = ("app-logs", "app-logs-to-file")  # the connectors that need no other system

# ZooKeeper, three brokers and three workers start, fail over and stop:
# minutes on a busy machine, more than the suite's default 2.
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(
    params=[
        "cluster.yml",
        # The TLS variant runs the same scenario (~2 min): `-m slow` runs it; the default run
        # checks its files (tests/compose/test_compose_files.py) to keep the suite in budget.
        pytest.param("cluster.yml+cluster-secure.yml", marks=pytest.mark.slow),
    ]
)
def cluster_services(
    request: pytest.FixtureRequest, zookeeper: ZooKeeperServer, zk_chroot: str, tmp_path: Path
) -> Iterator[tuple[dict[str, LocalService], Path, Mapping]]:
    """The plain cluster, and the TLS one (certificates from compose/gen-certs.sh, clients on
    the SSL listeners, replication on the INTERNAL ones)."""
    secure = "+" in request.param
    all_services = services(load(request.param))
    ports = {name: free_port() for name in BROKERS}
    tls_ports = {name: free_port() for name in BROKERS}
    metrics_ports = {name: free_port() for name in BROKERS}
    if secure:
        secrets = tmp_path / "secrets"
        subprocess.run(["sh", str(COMPOSE_DIR / "gen-certs.sh"), str(secrets)], check=True,
                       capture_output=True)  # fmt: skip
    common = {
        "/etc/sluice/secrets": str(tmp_path / "secrets"),
        **{f"{name}.internal:9092": f"127.0.0.1:{port}" for name, port in ports.items()},
        **{f"{name}:9093": f"127.0.0.1:{port}" for name, port in tls_ports.items()},
        # the test's own chroot on the shared server, in place of the files' /sluice
        "zookeeper:2181/sluice": zk_chroot,
        "zookeeper:2181": zookeeper.connect,
        **{f"{name}:9092": f"127.0.0.1:{port}" for name, port in ports.items()},
        "/var/log/app": str(tmp_path / "app-logs"),
        "0.0.0.0": "127.0.0.1",
    }
    (tmp_path / "app-logs").mkdir()
    running: dict[str, LocalService] = {}
    try:
        for name in BROKERS:
            own = Mapping({
                **common, "0.0.0.0:9092": f"127.0.0.1:{ports[name]}",
                "0.0.0.0:9093": f"127.0.0.1:{tls_ports[name]}",
                "metrics.port=9404": f"metrics.port={metrics_ports[name]}",
                "/var/lib/sluice": str(tmp_path / name),
            })  # fmt: skip
            args = localize(all_services[name], own, tmp_path)
            # as each variant's health check: ApiVersions on 9092, or the metrics port's /ready
            probe = ["broker", f"127.0.0.1:{ports[name]}"]
            if secure:
                probe = ["http", f"http://127.0.0.1:{metrics_ports[name]}/ready"]
            running[name] = LocalService(name, args, tmp_path / f"{name}.log", probe)
            running[name].metrics_port = metrics_ports[name]
            running[name].start()
        for name in BROKERS:
            wait_until(running[name].healthy, 60, f"{name} healthy")
        # One data directory for the three: the shared worker-data volume.
        worker_map = Mapping({**common, "/var/lib/sluice": str(tmp_path / "worker-data")})
        for name in WORKERS:
            rest_port = free_port()
            service = all_services[name.split("#")[0]]
            # worker-1 advertises its service name; a replica advertises its bound address
            names = {name: "127.0.0.1"} if "hostname" in service.spec else {}
            own = Mapping({**common, "/var/lib/sluice": str(tmp_path / "worker-data"), **names})
            args = [*localize(service, own, tmp_path), "--rest-port", str(rest_port)]
            probe = ["http", f"http://127.0.0.1:{rest_port}/health"]
            running[name] = LocalService(name, args, tmp_path / f"{name}.log", probe)
            running[name].environment = service.environment()
            running[name].rest_port = rest_port
        # As the depends_on says: worker-1 first (it generates the shared token), then the rest.
        running["worker-1"].start()
        wait_until(running["worker-1"].healthy, 90, "worker-1 healthy")
        for name in WORKERS[1:]:
            running[name].start()
        for name in WORKERS[1:]:
            wait_until(running[name].healthy, 90, f"{name} healthy")
        yield running, tmp_path, worker_map
    finally:
        # The workers stop cleanly; the brokers are killed: a clean stop of the last broker
        # waits request.timeout.ms for a controlled shutdown nobody can take over.
        for name in WORKERS:
            if name in running and running[name].running:
                running[name].stop()
        for name in BROKERS:
            if name in running and running[name].running:
                running[name].kill()


def _partition_state(zk: KazooClient, chroot: str, topic: str, partition: int) -> dict[str, Any]:
    raw, _ = zk.get(f"{chroot}/brokers/topics/{topic}/partitions/{partition}/state")
    return dict(json.loads(raw))


def _placements(rest_port: int, token: str) -> dict[str, tuple[str, str]]:
    """Where each connector and task runs, from the status API: unit -> (worker_id, state)."""
    out: dict[str, tuple[str, str]] = {}
    for name in PIPELINE:
        request = urllib.request.Request(
            f"http://127.0.0.1:{rest_port}/connectors/{name}/status",
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            status = json.loads(answer.read())
        out[name] = (status["connector"]["worker_id"], status["connector"]["state"])
        for task in status["tasks"]:
            out[f"{name}-{task['id']}"] = (task["worker_id"], task["state"])
    return out


def test_the_clusters_services_run_a_file_pipeline_through_a_worker_and_a_broker_kill(
    cluster_services: tuple[dict[str, LocalService], Path, Mapping], zookeeper: ZooKeeperServer
) -> None:
    running, root, worker_map = cluster_services
    init = services(load("cluster.yml"))["connectors-init"]
    rest_port = running["worker-1"].rest_port
    files = connector_files(init)
    bodies = {name: json.loads(worker_map(files[name].read_text())) for name in PIPELINE}
    first = init_connectors(init, bodies, worker_map, root, rest_port)
    assert "created connector app-logs" in first and "created connector app-logs-to-file" in first
    again = init_connectors(init, bodies, worker_map, root, rest_port)
    assert "connector app-logs exists; left as it is" in again

    expected = produce(root / "app-logs" / "shop.log", 300)
    sink_file = Path(worker_map("/var/lib/sluice/app-logs.txt"))

    def sunk() -> set[str]:
        return set(sink_file.read_text().splitlines()) if sink_file.exists() else set()

    wait_until(lambda: sunk() >= set(expected), 90, "the first lines in the file sink")

    # The group spread the two connectors and their tasks over the workers (balanced: no
    # worker runs more than two of the four).
    token = (root / "worker-data" / "hub.token").read_text().strip()
    by_port = {f"127.0.0.1:{running[n].rest_port}": n for n in WORKERS}

    def settled(port: int) -> dict[str, tuple[str, str]] | None:
        """The placements once all four run (None while a rebalance is under way)."""
        try:
            placed = _placements(port, token)
        except (OSError, KeyError):  # 409 or a status not written yet
            return None
        ok = len(placed) == 4 and all(state == "RUNNING" for _, state in placed.values())
        return placed if ok else None

    placed = wait_until(lambda: settled(rest_port), 60, "every connector and task running")
    assert isinstance(placed, dict)
    owners = [by_port[worker_id] for worker_id, _ in placed.values()]
    assert len(set(owners)) >= 2 and max(owners.count(n) for n in WORKERS) <= 2, placed
    environment = running["worker-1"].environment
    if "SLUICE_COMMAND_CONFIG" in environment:  # the secure variant: a Kafka tool in the worker
        client = root / "client.properties"
        client.write_text(
            worker_map(Path(worker_map(environment["SLUICE_COMMAND_CONFIG"])).read_text())
        )
        consumed = subprocess.run(
            [sys.executable, "-m", "sluice", "consume", "app-logs", "-n", "5",
             "-b", worker_map("broker-1:9093")],
            env={**os.environ, "SLUICE_COMMAND_CONFIG": str(client)},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert consumed.returncode == 0, consumed.stderr[-2000:]
        assert len(set(consumed.stdout.splitlines()) & set(expected)) == 5

    # Each broker serves what compose/prometheus/prometheus.yml scrapes on its metrics.port.
    for name in BROKERS:
        ready = f"http://127.0.0.1:{running[name].metrics_port}/ready"
        assert health.check("http", ready)[0], name
        with urllib.request.urlopen(ready.replace("/ready", "/metrics"), timeout=10) as scrape:
            assert b"kafka_server_replicamanager_partitioncount" in scrape.read()

    # The topic got what server-N.properties promise: three replicas, all in sync.
    server = (COMPOSE_DIR / "config" / "server-1.properties").read_text()
    connect = worker_map(server.split("zookeeper.connect=")[1].split()[0])
    chroot = "/" + connect.split("/", 1)[1]
    zk = KazooClient(hosts=zookeeper.connect)
    zk.start(timeout=30)
    try:
        states = [_partition_state(zk, chroot, "app-logs", p) for p in range(3)]
        assert all(len(s["isr"]) == 3 for s in states), states
        leader = f"broker-{states[0]['leader']}"
        running[leader].kill()
        assert not health.check(*running[leader].probe)[0]  # the probe sees the dead broker
        wait_until(
            lambda: _partition_state(zk, chroot, "app-logs", 0)["leader"] != states[0]["leader"],
            60, "a new leader for app-logs-0",
        )  # fmt: skip
        expected += produce(root / "app-logs" / "checkout.log", 300)
        wait_until(lambda: sunk() >= set(expected), 120, "every line after the broker kill")
        # Started again from the same files, the broker catches up and rejoins every ISR.
        running[leader].start()
        wait_until(running[leader].healthy, 60, f"{leader} healthy again")
        wait_until(
            lambda: all(len(_partition_state(zk, chroot, "app-logs", p)["isr"]) == 3
                        for p in range(3)),
            60, f"{leader} back in the ISR of app-logs",
        )  # fmt: skip
    finally:
        zk.stop()
        zk.close()

    # kill -9 the worker running the sink's task (now: the broker kill may have rebalanced
    # the group): another worker takes it over.
    placed = wait_until(lambda: settled(rest_port), 60, "every connector and task running")
    assert isinstance(placed, dict)
    victim = by_port[placed["app-logs-to-file-0"][0]]
    running[victim].kill()
    alive = next(n for n in WORKERS if n != victim)

    def moved() -> bool:
        now = settled(running[alive].rest_port)
        return now is not None and by_port[now["app-logs-to-file-0"][0]] != victim

    wait_until(moved, 60, f"the sink task moved off {victim}")
    expected += produce(root / "app-logs" / "cart.log", 100)
    wait_until(lambda: sunk() >= set(expected), 90, f"every line after {victim} was killed")
    shutil.rmtree(root / "etc", ignore_errors=True)
