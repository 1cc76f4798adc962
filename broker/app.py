"""The single-node broker: wires config, storage, group coordinator, producer ids and server.

Start order is storage first (recovering every partition), then the group coordinator (which
reads ``__consumer_offsets`` from storage) and the transaction coordinator (which reads
``__transaction_state`` and resumes unfinished commits), then the listener, so no client can
reach a half-loaded broker. Stop is the reverse: stop accepting and drop connections, stop the
coordinators, then flush and close the logs, so every acknowledged record is in the files
when ``stop()`` returns.

The data dir holds ``meta.properties`` (cluster id and node id, as in Kafka), ``producer_ids``
(see ``producer_ids.py``), a ``.lock`` file held with ``flock`` so two brokers never share one
directory, and the partition directories managed by the ``LogManager``.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import fcntl
import logging
import os
import uuid
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from broker._limits import raise_open_files_limit
from broker.config import BrokerConfig
from broker.coordinator import GroupCoordinator
from broker.log.log_manager import LogManager
from broker.metrics.stats import BrokerStats
from broker.producer_ids import ProducerIdAllocator
from broker.protocol.notifier import AppendNotifier
from broker.protocol.server import Server
from broker.security import listener_security
from broker.security.acl_store import FileAclStore
from broker.security.acl_store_zk import ZkAclStore
from broker.security.authorizer import AclAuthorizer
from broker.security.inter_broker import PLAINTEXT, PeerSecurity, build_peer_security
from broker.security.quota import FILE_NAME as QUOTAS_FILE
from broker.security.quota import ClientQuotas
from broker.security.quota_manager import QuotaManager
from broker.security.quota_store_zk import ZkQuotaStore
from broker.security.scram import FileScramStore
from broker.transaction import cluster_coordinator, local_coordinator

if TYPE_CHECKING:
    from broker.cluster.producer_ids import ZkProducerIdAllocator
    from broker.metrics.server import MetricsServer

log = logging.getLogger(__name__)


class BrokerStartError(RuntimeError):
    """The broker cannot start (data dir locked or unreadable, address in use...)."""


class Broker:
    """One broker process's state, shared by every request handler as ``ctx.broker``."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.logs: Any = None  # broker.log.log_manager.LogManager once started
        self.coordinator: Any = None  # broker.coordinator.GroupCoordinator once started
        self.transactions: Any = None  # broker.transaction.TransactionCoordinator once started
        self._marker_sender: Any = None  # cluster mode: WriteTxnMarkers connections
        self.cluster: Any = None  # broker.cluster.node.ClusterNode in cluster mode, else None
        self.producer_ids: ProducerIdAllocator | ZkProducerIdAllocator | None = None
        self.quotas: QuotaManager | None = None
        self.quota_store: ZkQuotaStore | None = None  # cluster mode only
        """Client quotas (``quotas.json`` in the data dir), set at start."""
        self.authorizer: AclAuthorizer | None = None
        self.acl_store: FileAclStore | ZkAclStore | None = None
        """Where ACL changes are persisted: ``acls.json``, or ZooKeeper in cluster mode."""
        """Set when ``authorizer.class.name`` is; None = every request is allowed (Kafka)."""
        self.notifier = AppendNotifier()
        self.cluster_id = ""
        self._servers: list[Server] = []
        self.scram: Any = None  # broker.security.scram.ScramStore: file, or ZooKeeper (cluster)
        self.stats = BrokerStats() if config.metrics_port else None
        """The request path's counters when ``metrics.port`` is set; None: nothing counted."""
        self._metrics: MetricsServer | None = None
        self._serving = False
        self._lock_file: IO[str] | None = None
        self._topic_ids: dict[uuid.UUID, str] = {}
        self._peer_security: PeerSecurity = PLAINTEXT

    async def start(self) -> None:
        raise_open_files_limit()  # before any segment is opened: sizes the segment file cache
        try:  # TLS keys and SASL users first: a bad setting fails before anything is opened
            securities = [
                listener_security.build(item, self.config.security, None)
                for item in self.config.effective_listeners()
            ]
        except ValueError as exc:
            raise BrokerStartError(str(exc)) from None
        self._check_inter_broker()
        data_dir = self.config.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_data_dir(data_dir)
        self.cluster_id = self._load_meta(data_dir)
        self.producer_ids = ProducerIdAllocator(data_dir)
        self.authorizer = self._open_authorizer(data_dir)
        try:  # cluster mode: from ZooKeeper once joined (_load_cluster_security)
            quotas = ClientQuotas(None if self.config.clustered else data_dir / QUOTAS_FILE)
        except ValueError as exc:
            raise BrokerStartError(str(exc)) from exc
        self.quotas = QuotaManager(
            quotas, self.config.quota_window_num, self.config.quota_window_size_seconds
        )
        self.logs = self._open_logs()
        if self.config.clustered:
            await self._join_cluster()
        else:
            self.coordinator = await self._start_coordinator()
            self.transactions = local_coordinator(self)
            await self.transactions.start()
            self.scram = FileScramStore(data_dir)
        for security in securities:
            security.scram = self.scram
            security.reauth_ms = self.config.connections_max_reauth_ms
        await self._listen(securities)
        host, port = self.config.host, self.config.port
        adv_host, adv_port = self.config.inter_broker_listener.advertised
        if self.cluster is not None:
            endpoints = tuple(
                (item.name, item.protocol, *item.advertised)
                for item in self.config.effective_listeners()
            )
            try:
                await self.cluster.register(adv_host, adv_port, endpoints)
            except Exception as exc:
                await self.stop()
                raise BrokerStartError(f"cannot join the cluster: {exc}") from exc
        if self.config.metrics_port:
            await self._start_metrics()
        self._serving = True
        log.info(
            "broker listening",
            extra={
                "address": f"{host}:{port}",
                "advertised": f"{adv_host}:{adv_port}",
                "listeners": ",".join(item.url() for item in self.config.effective_listeners()),
                "node_id": self.config.node_id,
                "data_dir": str(data_dir),
            },
        )

    async def _start_metrics(self) -> None:
        from prometheus_client import CollectorRegistry

        from broker.metrics.collector import BrokerCollector
        from broker.metrics.server import MetricsServer

        registry = CollectorRegistry(auto_describe=False)
        registry.register(BrokerCollector(self))
        server = MetricsServer(
            registry, lambda: self._serving, self.config.host, self.config.metrics_port
        )
        try:
            host, port = await server.start()
        except OSError as exc:
            await self.stop()
            raise BrokerStartError(
                f"cannot serve metrics on {self.config.host}:{self.config.metrics_port}: {exc}"
            ) from exc
        self._metrics = server
        log.info("broker metrics listening", extra={"address": f"{host}:{port}"})

    async def stop(self) -> None:
        self._serving = False  # /ready answers 503 from here on
        if self.cluster is not None and self._servers:
            await self.cluster.controlled_shutdown(self.config.request_timeout_ms / 1000)
        for server in self._servers:
            await server.stop()
        self._servers = []
        self.notifier.notify_all()
        if self.transactions is not None:
            await self.transactions.stop()
            self.transactions = None
        if self._marker_sender is not None:
            self._marker_sender.close()
            self._marker_sender = None
        if self.coordinator is not None:
            try:
                await self.coordinator.stop()
            except Exception:
                log.exception("group coordinator failed to stop cleanly")
            self.coordinator = None
        if self.cluster is not None:
            await self.cluster.stop()
            self.cluster = None
        if self.logs is not None:
            self.logs.close()
            self.logs = None
        if self._metrics is not None:
            await self._metrics.stop()
            self._metrics = None
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None
        log.info("broker stopped", extra={"data_dir": str(self.config.data_dir)})

    @property
    def server(self) -> Server | None:
        """The first listener's server while it runs (the request-byte pool, which every
        listener shares)."""
        return self._servers[0] if self._servers else None

    @property
    def servers(self) -> list[Server]:
        """One server per listener while they run (``Server.security.listener.name``)."""
        return list(self._servers)

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) clients of the first listener are told to use."""
        return self.config.advertised_address

    def advertised(self, listener: str) -> tuple[str, int]:
        """The (host, port) told to clients that connected to ``listener``."""
        return self.config.listener(listener).advertised

    def _check_inter_broker(self) -> None:
        """Replication and transaction markers connect to peers through the inter-broker
        listener's protocol: its client side (truststore, SASL login) is resolved here, so a
        missing key fails the start instead of every replica fetch."""
        if not self.config.clustered:
            return
        try:
            self._peer_security = build_peer_security(
                self.config.inter_broker_listener, self.config.security
            )
        except ValueError as exc:
            raise BrokerStartError(str(exc)) from None

    async def _listen(self, securities: list[Any]) -> None:
        """Binds every listener (the first one's limits shared by all) and records the bound
        ports, so port 0 advertises the port actually chosen."""
        bound = []
        for security in securities:
            item = security.listener
            server = Server(
                self, item.host, item.port, security=security,
                limits_from=self._servers[0] if self._servers else None,
            )  # fmt: skip
            try:
                _, port = await server.start()
            except OSError as exc:
                await self.stop()
                raise BrokerStartError(f"cannot listen on {item.url()}: {exc}") from exc
            self._servers.append(server)
            bound.append(dataclasses.replace(item, port=port))
            security.listener = bound[-1]
        changes: dict[str, Any] = {"port": bound[0].port}
        if self.config.listeners:
            changes["listeners"] = tuple(bound)
        self.config = dataclasses.replace(self.config, **changes)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """Name of the topic with this id (Fetch/Produce v13+ address topics by id)."""
        if self.cluster is not None:
            return self.cluster.cache.topic_id_to_name(topic_id)  # type: ignore[no-any-return]
        name = self._topic_ids.get(topic_id)
        topics = self.logs.topics() if self.logs is not None else {}
        info = topics.get(name) if name is not None else None
        if info is not None and info.topic_id == topic_id:
            return name
        self._topic_ids = {t.topic_id: t.name for t in topics.values()}
        return self._topic_ids.get(topic_id)

    def _lock_data_dir(self, data_dir: Path) -> None:
        lock = open(data_dir / ".lock", "a")  # noqa: SIM115 - held open for the broker's lifetime
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise BrokerStartError(f"{data_dir} is in use by another broker") from None
        self._lock_file = lock

    def _load_meta(self, data_dir: Path) -> str:
        """Reads or creates ``meta.properties``; the cluster id never changes once written."""
        path = data_dir / "meta.properties"
        props: dict[str, str] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                key, sep, value = line.partition("=")
                if sep and not line.startswith("#"):
                    props[key.strip()] = value.strip()
        if "cluster.id" not in props:
            raw = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            self._write_meta(data_dir, raw)
            return raw
        return props["cluster.id"]

    def _write_meta(self, data_dir: Path, cluster_id: str) -> None:
        path = data_dir / "meta.properties"
        props = {"version": "1", "cluster.id": cluster_id, "node.id": str(self.config.node_id)}
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        os.replace(tmp, path)

    def _open_authorizer(self, data_dir: Path) -> AclAuthorizer | None:
        settings = self.config.authorizer
        if settings is None:
            return None
        if self.config.clustered:  # ACLs come from ZooKeeper once the cluster is joined
            return AclAuthorizer(settings)
        store = FileAclStore(data_dir)
        try:
            acls = store.load()
        except ValueError as exc:
            raise BrokerStartError(str(exc)) from exc
        self.acl_store = store
        return AclAuthorizer(settings, acls)

    async def _load_cluster_security(self, node: Any) -> None:
        """Cluster mode: ACLs and client quotas live in ZooKeeper; loaded before the listener
        opens, then followed through the change notifications every broker watches."""
        assert self.quotas is not None
        quotas = ZkQuotaStore(node.zk)
        acls = ZkAclStore(node.zk)
        try:
            self.quotas.quotas.replace_all(await quotas.load())
            await quotas.watch(self.quotas.quotas.replace_all)
            if self.authorizer is not None:
                self.authorizer.replace_all(await acls.load())
                await acls.watch(self.authorizer.replace_all)
        except Exception as exc:
            await self.stop()
            raise BrokerStartError(f"cannot read ACLs and quotas from ZooKeeper: {exc!r}") from exc
        self.quota_store = quotas
        if self.authorizer is not None:
            self.acl_store = acls

    def _open_logs(self) -> LogManager:
        logs = LogManager(
            self.config.data_dir,
            self.config.log_config(),
            cleaner_backoff_ms=self.config.log_cleaner_backoff_ms,
        )
        logs.load()
        logs.start()
        return logs

    async def _join_cluster(self) -> None:
        from broker.cluster.groups import ClusterOffsets
        from broker.cluster.node import ClusterNode

        node = ClusterNode(
            self.config, self.logs, self.notifier, self.cluster_id, self._peer_security
        )
        offsets = ClusterOffsets(node)
        self.coordinator = offsets.coordinator = GroupCoordinator(
            self.logs, self.config, replicated=offsets
        )
        await self.coordinator.start()
        self.transactions, txn_log, self._marker_sender = cluster_coordinator(self, node)
        await self.transactions.start()

        def on_leadership(tp: tuple[str, int], leading: bool) -> None:
            offsets.on_leadership(tp, leading)
            txn_log.on_leadership(tp, leading)

        node.replicas.leadership_listener = on_leadership
        try:
            await node.start()
        except Exception as exc:
            await node.stop()
            await self.stop()
            raise BrokerStartError(
                f"cannot reach ZooKeeper at {self.config.zookeeper_connect}: {exc!r}"
            ) from exc
        self.cluster = node
        from broker.security.scram_zk import ZkScramStore

        self.scram = ZkScramStore(node.zk)
        await self.scram.start()
        await self._load_cluster_security(node)
        if node.cluster_id != self.cluster_id:  # a fresh data dir joins an existing cluster
            self._write_meta(self.config.data_dir, node.cluster_id)
        self.cluster_id = node.cluster_id
        self.producer_ids = node.producer_ids

    async def _start_coordinator(self) -> GroupCoordinator:
        coordinator = GroupCoordinator(self.logs, self.config)
        await coordinator.start()
        return coordinator


@contextlib.asynccontextmanager
async def running_broker(config: BrokerConfig) -> Any:
    """``async with running_broker(cfg) as broker:`` for in-process use (tests, benchmarks)."""
    broker = Broker(config)
    await broker.start()
    try:
        yield broker
    finally:
        await broker.stop()
