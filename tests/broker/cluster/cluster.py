"""A three-broker Sluice cluster on 127.0.0.1 for the cluster tests: one ZooKeeper chroot, and
each broker its own ``sluice broker --zookeeper ...`` subprocess with its own data dir and free
port, so a test can kill -9, SIGSTOP or restart any of them.

Settings are Kafka's test-harness values: a 6 s ZooKeeper session (failover within seconds),
``replica.lag.time.max.ms`` 3 s, 3 partitions of ``__consumer_offsets``.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.fixtures.broker import BrokerProcess, wait_until

SESSION_TIMEOUT_MS = 6000


class ClusterBroker(BrokerProcess):
    def __init__(self, data_dir: Path, broker_id: int, zk: str, *extra: str) -> None:
        super().__init__(
            data_dir,
            "--broker-id", str(broker_id), "--zookeeper", zk,
            "-o", f"zookeeper.session.timeout.ms={SESSION_TIMEOUT_MS}",
            "-o", "replica.lag.time.max.ms=3000",
            "-o", "offsets.topic.num.partitions=3",
            "-o", "leader.imbalance.check.interval.seconds=3600",
            *extra,
        )  # fmt: skip
        self.broker_id = broker_id

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)


class Cluster:
    def __init__(self, root: Path, zk: str, size: int = 3, *extra: str) -> None:
        self.zk_connect = zk
        self.brokers = {
            i: ClusterBroker(root / f"broker{i}", i, zk, *extra) for i in range(1, size + 1)
        }
        hosts, _, chroot = zk.partition("/")
        self._zk = KazooClient(hosts=hosts + "/" + chroot)

    def start(self) -> None:
        for b in self.brokers.values():
            b.start()
        self._zk.start(timeout=30)
        wait_until(lambda: len(self.live_ids()) == len(self.brokers), 30, "all brokers registered")

    def stop(self) -> None:
        for b in self.brokers.values():
            if b.running:
                b.resume()
                b.stop()
        self._zk.stop()
        self._zk.close()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.running)

    def live_ids(self) -> set[int]:
        return {int(c) for c in self._zk.get_children("/brokers/ids")}

    def state(self, topic: str, partition: int) -> dict:
        raw, _ = self._zk.get(f"/brokers/topics/{topic}/partitions/{partition}/state")
        return json.loads(raw)

    def leader(self, topic: str, partition: int) -> int:
        return int(self.state(topic, partition)["leader"])

    def isr(self, topic: str, partition: int) -> list[int]:
        return list(self.state(topic, partition)["isr"])

    def admin(self) -> AdminClient:
        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, name: str, partitions: int = 1, rf: int = 3, **configs: str) -> None:
        admin = self.admin()  # the handle must outlive its futures
        futures = admin.create_topics(
            [NewTopic(name, partitions, rf, config=configs)], operation_timeout=20
        )
        futures[name].result(30)
        for p in range(partitions):
            wait_until(lambda p=p: self._has_state(name, p), 20, f"{name}-{p} has a leader")

    def _has_state(self, topic: str, partition: int) -> bool:
        try:
            return self.leader(topic, partition) >= 0
        except Exception:
            return False

    def wait(self, predicate: Callable[[], object], what: str, timeout: float = 30) -> object:
        return wait_until(predicate, timeout, what)
