"""ClusterNode: one broker's membership in a ZooKeeper-coordinated cluster (``broker.cluster``).

Owns the ZooKeeper session, the metadata cache, the controller candidate and the replica
manager, and keeps the local storage in step with the cluster's topics:

start (before the listener): connect, create the persistent paths, adopt the cluster id from
``/cluster/id``, mirror every topic of ``/brokers/topics`` into the LogManager (same topic id,
same partition count, same config overrides; local topics ZooKeeper no longer has are
deleted), then arm the watches. register (after the listener is bound, so the advertised port
is known): create the ephemeral ``/brokers/ids/<id>`` — retrying while a previous session of
the same id (a kill -9 a moment ago) still holds it — and stand for controller.

controlled_shutdown (SIGTERM): announce ``/sluice/controlled_shutdown/<id>``; the controller
moves every leadership that another in-sync replica can take and drops this broker from the
ISRs; wait (bounded) until the cache shows it, then stop. Clients keep being answered
meanwhile and follow the new leaders.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from kazoo.exceptions import NodeExistsError
from kazoo.protocol.states import ZnodeStat

from broker.cluster import admin, znodes
from broker.cluster.controller import Controller
from broker.cluster.metadata_cache import MetadataCache
from broker.cluster.node_zk import ephemeral_owner, init_paths, read_brokers, read_topics
from broker.cluster.producer_ids import ZkProducerIdAllocator
from broker.cluster.replica_manager import ReplicaManager
from broker.cluster.zk_client import ZkClient
from broker.cluster.znodes import BrokerInfo, PartitionState, TopicAssignment
from broker.security.inter_broker import PLAINTEXT, PeerSecurity

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.protocol.notifier import AppendNotifier

log = logging.getLogger(__name__)

REGISTER_RETRY_S = 0.5


class ClusterNode:
    def __init__(
        self,
        config: BrokerConfig,
        logs: Any,
        notifier: AppendNotifier,
        local_cluster_id: str = "",
        peer_security: PeerSecurity = PLAINTEXT,
    ) -> None:
        assert config.zookeeper_connect is not None
        self.local_cluster_id = local_cluster_id
        self.config = config
        self.broker_id = config.node_id
        self.logs = logs
        self.notifier = notifier
        self.cache = MetadataCache()
        self.cluster_id = ""
        loop = asyncio.get_running_loop()
        self.zk = ZkClient(
            config.zookeeper_connect,
            config.zookeeper_session_timeout_ms,
            loop,
            config.zookeeper_connection_timeout_ms,
            config.zookeeper_digest,
        )
        self.zk.on_new_session = self._on_new_session
        self.zk.on_disconnect = self._on_session_lost
        self.controller = Controller(config, self.zk)
        self.peer_security = peer_security
        """How this broker connects to its peers' inter-broker listener (TLS, SASL login)."""
        self.replicas = ReplicaManager(config, self.cache, logs, self.zk, notifier, peer_security)
        self.producer_ids = ZkProducerIdAllocator(self.zk, self.broker_id)
        self._watched_topics: set[str] = set()
        self._watched_states: set[tuple[str, int]] = set()
        self._address: tuple[str, int] | None = None
        self._endpoints: tuple[tuple[str, str, str, int], ...] = ()
        self._stopping = False
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.zk.start()
        self.cluster_id, created = await self.zk.run(init_paths, self.local_cluster_id)
        if created and self.logs.topics():
            raise RuntimeError(
                f"{self.config.data_dir} holds topics of a single-node broker; a new cluster "
                "cannot adopt them (their replicas and ids are unknown to ZooKeeper): start "
                "cluster brokers on empty data dirs"
            )
        if self.cluster_id != self.local_cluster_id and self.logs.topics():
            # Kafka's InconsistentClusterIdException: never mirror (and so delete) the topics
            # of a data dir that belongs to another cluster.
            raise RuntimeError(
                f"{self.config.data_dir} holds data of cluster {self.local_cluster_id}, but "
                f"ZooKeeper at {self.config.zookeeper_connect} is cluster {self.cluster_id}; "
                "point zookeeper.connect (chroot included) at its cluster or use an empty "
                "data dir"
            )
        topics, configs = await self.zk.run(read_topics)
        self._mirror_all(topics, configs)
        await self.zk.watch_children(znodes.BROKER_IDS, self._on_broker_ids)
        await self.zk.watch_children(znodes.TOPICS, self._on_topics)
        await self.zk.watch_children(znodes.DELETE_TOPICS, self._on_admin_change)
        await self.zk.watch_children(znodes.CONTROLLED_SHUTDOWN, self._on_shutting_down)
        await self.zk.watch_data(znodes.PREFERRED_ELECTION, self._on_preferred)
        self.replicas.start()

    async def register(
        self, host: str, port: int, endpoints: tuple[tuple[str, str, str, int], ...] = ()
    ) -> None:
        """Registers this broker (ephemeral) and stands for controller; ``host``:``port`` is
        the inter-broker address, ``endpoints`` every listener's (name, protocol, host, port)."""
        self._address = (host, port)
        self._endpoints = endpoints
        await self._register()
        await self.zk.watch_data(znodes.CONTROLLER, self._on_controller)
        log.info(
            "joined cluster",
            extra={"broker": self.broker_id, "cluster_id": self.cluster_id,
                   "zookeeper": self.config.zookeeper_connect},
        )  # fmt: skip

    async def _register(self) -> None:
        assert self._address is not None
        info = BrokerInfo(
            self.broker_id, *self._address, rack=self.config.rack, endpoints=self._endpoints
        )
        deadline = time.monotonic() + self.config.zookeeper_session_timeout_ms / 1000 * 2 + 10
        while True:
            try:
                await self.zk.call(
                    "create", znodes.broker_path(self.broker_id), info.encode(), ephemeral=True
                )
                return
            except NodeExistsError:
                owner = await self.zk.run(ephemeral_owner, znodes.broker_path(self.broker_id))
                if owner == self.zk.kazoo.client_id[0]:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"broker id {self.broker_id} is registered by another live broker"
                    ) from None
                log.info("broker id %d still registered by an old session; waiting",
                         self.broker_id)  # fmt: skip
                await asyncio.sleep(REGISTER_RETRY_S)

    async def controlled_shutdown(self, timeout_s: float) -> None:
        """Moves leadership away before the broker stops (bounded by ``timeout_s``)."""
        if not self.config.controlled_shutdown_enable or not self.zk.connected:
            return
        others = set(self.cache.brokers) - {self.broker_id}
        if not others:
            return
        path = f"{znodes.CONTROLLED_SHUTDOWN}/{self.broker_id}"
        with contextlib.suppress(NodeExistsError):
            await self.zk.call("create", path, b"", ephemeral=True, makepath=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self._movable_leaderships():
            await asyncio.sleep(0.05)
        remaining = self._movable_leaderships()
        log.info(
            "controlled shutdown done" if not remaining else "controlled shutdown timed out",
            extra={"broker": self.broker_id, "still_leading": len(remaining)},
        )

    def _movable_leaderships(self) -> list[tuple[str, int]]:
        alive = set(self.cache.brokers)
        return [
            tp
            for tp, s in self.cache.states.items()
            if s.leader == self.broker_id and any(r != self.broker_id and r in alive for r in s.isr)
        ]

    async def stop(self) -> None:
        self._stopping = True
        await self.controller.stop()
        await self.replicas.stop()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await self.zk.stop()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ session events

    def _on_session_lost(self) -> None:
        self.controller.resign()

    def _on_new_session(self) -> None:
        if self._stopping or self._address is None:
            return

        async def again() -> None:
            await self._register()
            await self.controller.try_elect()

        self._spawn(again())

    # ------------------------------------------------------------------ watches

    def _on_controller(self, data: bytes | None, stat: ZnodeStat | None) -> None:
        self.cache.controller_id = znodes.decode_controller(data)
        if self.cache.controller_id != self.broker_id:
            self.controller.resign()
        if data is None and not self._stopping:
            self._spawn(self.controller.try_elect())

    def _on_broker_ids(self, children: list[str]) -> None:
        ids = {int(c) for c in children}

        async def refresh() -> None:
            infos = await self.zk.run(read_brokers, sorted(ids))
            self.cache.brokers = infos
            self.controller.request("broker change")

        self._spawn(refresh())

    def _on_shutting_down(self, children: list[str]) -> None:
        self.cache.shutting_down = {int(c) for c in children}
        self.controller.request("controlled shutdown")

    def _on_admin_change(self, children: list[str]) -> None:
        if children:
            self.controller.request("topic deletion")

    def _on_preferred(self, data: bytes | None, stat: ZnodeStat | None) -> None:
        if data is not None:
            self.controller.request("preferred leader election")

    def _on_topics(self, children: list[str]) -> None:
        for topic in children:
            if topic not in self._watched_topics:
                self._watched_topics.add(topic)
                self._spawn(self._watch_topic(topic))
        self.controller.request("topic change")

    async def _watch_topic(self, topic: str) -> None:
        await self.zk.watch_data(
            znodes.topic_config_path(topic), lambda d, s: self._on_topic_config(topic, d)
        )
        await self.zk.watch_data(
            znodes.topic_path(topic), lambda d, s: self._on_assignment(topic, d)
        )

    def _on_topic_config(self, topic: str, data: bytes | None) -> None:
        if data is None:
            return
        config = znodes.decode_topic_config(data)
        if self.cache.topic_configs.get(topic) == config:
            return
        self.cache.topic_configs[topic] = config
        local = self.logs.topics().get(topic)
        if local is not None and local.configs != config:
            self.logs.alter_configs(topic, config, replace=True)

    def _on_assignment(self, topic: str, data: bytes | None) -> None:
        if data is None:
            if topic in self.cache.topics:
                self._drop_topic(topic)
            return
        assignment = TopicAssignment.decode(data)
        self.cache.topics[topic] = assignment
        self._mirror(topic, assignment, self.cache.topic_configs.get(topic, {}))
        for p in assignment.partitions:
            tp = (topic, p)
            if tp not in self._watched_states:
                self._watched_states.add(tp)
                self._spawn(
                    self.zk.watch_data(
                        znodes.partition_state_path(topic, p),
                        lambda d, s, tp=tp: self._on_state(tp, d, s),  # type: ignore[misc]
                    )
                )
            else:
                self.replicas.on_state(tp, self.cache.states.get(tp))
        self.controller.request("partition change")

    def _on_state(self, tp: tuple[str, int], data: bytes | None, stat: ZnodeStat | None) -> None:
        if tp[0] not in self.cache.topics:
            return
        if data is None or stat is None:
            self.cache.states.pop(tp, None)
            state = None
        else:
            state = PartitionState.decode(data, stat.version)
            self.cache.states[tp] = state
        self.replicas.on_state(tp, state)
        topic = self.cache.topics.get(tp[0])
        if topic is not None and (tp[1] in topic.adding or tp[1] in topic.removing):
            self.controller.request("reassignment progress")

    def _drop_topic(self, topic: str) -> None:
        assignment = self.cache.topics.pop(topic, None)
        self.cache.topic_configs.pop(topic, None)
        self._watched_topics.discard(topic)
        self.zk.unwatch(znodes.topic_path(topic))
        self.zk.unwatch(znodes.topic_config_path(topic))
        for p in assignment.partitions if assignment else ():
            tp = (topic, p)
            self.cache.states.pop(tp, None)
            self._watched_states.discard(tp)
            self.zk.unwatch(znodes.partition_state_path(topic, p))
            self.replicas.forget(tp)
        if topic in self.logs.topics():
            self.logs.delete_topic(topic)
        self.notifier.notify_all()
        self.controller.request("topic deleted")

    # ------------------------------------------------------------------ local storage

    def _mirror_all(
        self, topics: dict[str, TopicAssignment], configs: dict[str, dict[str, str]]
    ) -> None:
        for name in list(self.logs.topics()):
            if name not in topics:
                log.info("deleting local topic the cluster no longer has", extra={"topic": name})
                self.logs.delete_topic(name)
        for name, assignment in topics.items():
            self.cache.topics[name] = assignment
            self.cache.topic_configs[name] = configs.get(name, {})
            self._mirror(name, assignment, configs.get(name, {}))

    def _mirror(self, name: str, assignment: TopicAssignment, config: dict[str, str]) -> None:
        """Makes the LogManager hold the topic with the cluster's id and partition count."""
        count = len(assignment.partitions)
        local = self.logs.topics().get(name)
        if local is not None and local.topic_id != assignment.topic_id:
            log.info("local topic is an older incarnation; replacing", extra={"topic": name})
            for p in range(local.partitions):
                self.replicas.forget((name, p))
            self.logs.delete_topic(name)
            local = None
        if local is None:
            self.logs.create_topic(name, count, config, topic_id=assignment.topic_id)
        elif local.partitions < count:
            self.logs.create_partitions(name, count)

    # ------------------------------------------------------------------ admin entry points

    async def create_topic(
        self, name: str, partitions: int, rf: int, configs: dict[str, str],
        assignment: dict[int, tuple[int, ...]] | None = None,
    ) -> TopicAssignment:  # fmt: skip
        if assignment is None:
            assignment = admin.assign_replicas(sorted(self.cache.brokers), partitions, rf)
        return await self.zk.run(admin.create_topic, name, assignment, configs)

    async def wait_for_leaders(self, name: str, timeout_s: float) -> bool:
        """Waits (bounded) until every partition of ``name`` has a live leader here."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            topic = self.cache.topics.get(name)
            if topic is not None and all(
                self.cache.leader_of(name, p) >= 0 for p in topic.partitions
            ):
                return True
            await asyncio.sleep(0.02)
        return False
