"""The single-node broker: wires config, storage, group coordinator, producer ids and server.

Start order is storage first (recovering every partition), then the coordinator (which reads
``__consumer_offsets`` from storage), then the listener, so no client can reach a half-loaded
broker. Stop is the reverse: stop accepting and drop connections, stop the coordinator, then
flush and close the logs, so every acknowledged record is in the files when ``stop()`` returns.

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
from typing import IO, Any

from broker.config import BrokerConfig
from broker.producer_ids import ProducerIdAllocator
from broker.protocol.notifier import AppendNotifier
from broker.protocol.server import Server

log = logging.getLogger(__name__)


class BrokerStartError(RuntimeError):
    """The broker cannot start (data dir locked or unreadable, address in use...)."""


class Broker:
    """One broker process's state, shared by every request handler as ``ctx.broker``."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.logs: Any = None  # broker.log.log_manager.LogManager once started
        self.coordinator: Any = None  # broker.coordinator.GroupCoordinator, if available
        self.producer_ids: ProducerIdAllocator | None = None
        self.notifier = AppendNotifier()
        self.cluster_id = ""
        self._server: Server | None = None
        self._lock_file: IO[str] | None = None
        self._topic_ids: dict[uuid.UUID, str] = {}

    async def start(self) -> None:
        data_dir = self.config.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_data_dir(data_dir)
        self.cluster_id = self._load_meta(data_dir)
        self.producer_ids = ProducerIdAllocator(data_dir)
        self.logs = self._open_logs()
        self.coordinator = await self._start_coordinator()
        self._server = Server(self, self.config.host, self.config.port)
        try:
            host, port = await self._server.start()
        except OSError as exc:
            await self.stop()
            raise BrokerStartError(
                f"cannot listen on {self.config.host}:{self.config.port}: {exc}"
            ) from exc
        if self.config.port == 0:
            self.config = dataclasses.replace(self.config, port=port)
        adv_host, adv_port = self.config.advertised_address
        log.info(
            "broker listening",
            extra={
                "address": f"{host}:{port}",
                "advertised": f"{adv_host}:{adv_port}",
                "node_id": self.config.node_id,
                "data_dir": str(data_dir),
            },
        )

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop()
            self._server = None
        self.notifier.notify_all()
        if self.coordinator is not None:
            try:
                await self.coordinator.stop()
            except Exception:
                log.exception("group coordinator failed to stop cleanly")
            self.coordinator = None
        if self.logs is not None:
            self.logs.close()
            self.logs = None
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None
        log.info("broker stopped", extra={"data_dir": str(self.config.data_dir)})

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) clients are told to use."""
        return self.config.advertised_address

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """Name of the topic with this id (Fetch/Produce v13+ address topics by id)."""
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
            props = {"version": "1", "cluster.id": raw, "node.id": str(self.config.node_id)}
            tmp = path.with_suffix(".tmp")
            tmp.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
            os.replace(tmp, path)
        return props["cluster.id"]

    def _open_logs(self) -> Any:
        try:
            from broker.log.log_manager import LogManager
        except ImportError:
            log.warning("storage (broker.log.log_manager) unavailable; serving without topics")
            return None
        logs = LogManager(self.config.data_dir, self.config.log_config())
        logs.load()
        logs.start()
        return logs

    async def _start_coordinator(self) -> Any:
        try:
            from broker.coordinator import GroupCoordinator
        except ImportError:
            log.warning("group coordinator unavailable; consumer-group APIs are disabled")
            return None
        if self.logs is None:
            return None
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
