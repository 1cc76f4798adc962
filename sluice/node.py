"""The composition root: builds and supervises everything one ``sluice`` process runs.

``sluice up`` (broker + hub), ``sluice connect`` (hub against any cluster) and ``sluice
broker`` (broker only) all come here with a ``NodeConfig`` made from their flags; nothing
below reads the environment for its settings. What a hub node is made of, in start order:

1. the broker (``up`` only): a child process by default (``BrokerProcess``), a thread of this
   process (``EmbeddedBroker``, ``--broker-thread``), or ZooKeeper and N brokers as children
   (``LocalCluster``, ``--brokers N``);
2. the schema registry (``--schema-registry-port``, 0 = none), before the herder so the
   converters of resumed connectors find it; its URL goes into the worker config
   (``schema.registry.url``, unless set) for the console;
3. the herder (and through it the worker): internal topics created and read to their end,
   connectors resumed in their target states;
4. the scheduler (one apscheduler ``BackgroundScheduler`` for the process) and the pipelines
   service that schedules on it, over ``<data dir>/pipelines`` (or ``--pipelines-dir``) and
   Spark's template catalogue;
5. the REST app (``sluice.web``: Kafka Connect's API, the console, ``/pipelines``), served by
   uvicorn on the main thread. ``hub listening address=...`` is logged once it accepts
   connections, which is what scripts and the test fixture wait for.

Ctrl-C and SIGTERM (uvicorn's handlers) stop in the reverse order: the API first so no request
sees a half-stopped herder, then the scheduler and pipelines service, then every task (source
offsets committed after waiting for outstanding acknowledgements, sink offsets committed after
``pre_commit``), then the schema registry, then the broker, which flushes its logs. Any part
that fails to start stops the parts already started and makes ``run`` return 1.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sluice.errors import ClusterUnreachable

log = logging.getLogger(__name__)

CLUSTER_PROBE_S = 5.0  # how long ``sluice connect`` looks for a broker before saying so


@dataclass(frozen=True)
class BrokerSettings:
    """The embedded broker of ``sluice up`` (or the only one of ``sluice broker``)."""

    config: Any  # broker.config.BrokerConfig
    in_thread: bool = False  # a thread of this process instead of a child process
    cluster_size: int = 1  # > 1: ZooKeeper and this many brokers (``sluice.local_cluster``)
    zookeeper_port: int = 2181
    allow_insecure_network: bool = False  # ``sluice broker --allow-insecure-network`` only
    hub_login: Any = None
    """``sluice.hub_login.HubLogin``: the hub's clients use the broker's ``HUB`` SASL listener
    as this user (``sluice up`` without ``--broker-config``); None: the first listener."""


@dataclass(frozen=True)
class NodeConfig:
    """Everything one process runs; built by the CLI from its flags and files."""

    worker: Any = None  # hub.runtime.config.WorkerConfig; None: no hub (``sluice broker``)
    broker: BrokerSettings | None = None  # None: the hub uses worker's bootstrap.servers
    pipelines_dir: Path | None = None  # None: ``<data.dir of the worker>/pipelines``
    schema_registry_port: int = 0  # 0: no embedded schema registry
    log_level: str | None = None
    allow_unauthenticated: bool | None = None
    distributed: bool = False
    """``sluice connect``: a distributed worker of the worker config's ``group.id``; else one
    standalone worker that holds the group as its lock (``hub.runtime.distributed``)."""


class Node:
    """Starts, serves and stops the parts a ``NodeConfig`` names (see the module docstring)."""

    def __init__(self, config: NodeConfig) -> None:
        self.config = config
        self.broker: Any = None
        self.herder: Any = None
        self.scheduler: Any = None
        self.pipelines: Any = None
        self.registry: Any = None
        self.lock: Any = None  # a standalone worker's hold on its group.id
        self.worker_config: Any = config.worker
        self._rest_socket: Any = None  # bound by ``run`` before anything starts
        self.starting = ""  # the part being started, for the error message

    # -- start / stop ----------------------------------------------------------------------------
    def start(self) -> None:
        """Starts every part in order; on a failure stops what started and re-raises."""
        try:
            if self.config.broker is not None:
                self.starting = "broker"
                self._start_broker(self.config.broker)
            elif self.config.worker is not None:
                self.starting = "cluster"  # ``sluice connect``: is anyone there?
                reach_cluster(self.config.worker)
            if self.config.worker is not None:
                self.starting = "internal topic ACLs"
                self._protect_internal_topics()
                self.starting = "schema registry"
                self._start_registry()
                self.starting = "hub"
                self._start_hub()
        except BaseException:
            self.stop()
            raise
        self.starting = ""

    def _start_broker(self, settings: BrokerSettings) -> None:
        from sluice.broker_process import BrokerProcess
        from sluice.embedded_broker import EmbeddedBroker

        if settings.cluster_size > 1:
            self.broker = self._local_cluster(settings)
        elif settings.in_thread:
            self.broker = EmbeddedBroker(settings.config)
        else:
            self.broker = BrokerProcess(settings.config, self.config.log_level)
        login = settings.hub_login
        if login is not None and self.worker_config is not None and settings.cluster_size == 1:
            from sluice.hub_login import reserve_topics  # a cluster's: in ZooKeeper

            reserve_topics(
                settings.config.data_dir, self._internal_topics(), self.worker_config.group_id
            )
        self.broker.start()
        if self.worker_config is not None:
            # the hub uses the brokers it started, whatever ports they got
            raw = {**self.worker_config.raw(), "bootstrap.servers": self.broker.bootstrap}
            if settings.hub_login is not None:  # its own login on its own listener
                from sluice.hub_login import HUB_LISTENER

                raw["bootstrap.servers"] = self.broker.listener_bootstrap(HUB_LISTENER)
                raw.setdefault("console.bootstrap.servers", self.broker.bootstrap)
                raw.update(settings.hub_login.client_settings())
            if settings.cluster_size > 1:
                raw["replication.factor"] = self.broker.replication_factor
            self.worker_config = type(self.worker_config).from_mapping(raw)

    def _local_cluster(self, settings: BrokerSettings) -> Any:
        """``--brokers N``; with the hub's login, secured by ``hub_login.cluster_setup``."""
        from sluice import hub_login
        from sluice.local_cluster import LocalCluster

        c, login, worker = settings.config, settings.hub_login, self.worker_config
        secure: dict[str, Any] = {}
        if login is not None:
            reserved = []
            if worker is not None:
                reserved = hub_login.reserved_acls(self._internal_topics(), worker.group_id)
            secure = hub_login.cluster_setup(c, login, reserved)
        return LocalCluster(
            c.data_dir, c.host, c.port, settings.cluster_size, settings.zookeeper_port,
            self.config.log_level, **secure,
        )  # fmt: skip

    def _protect_internal_topics(self) -> None:
        """With an authorizer on the cluster, only the hub's principal may use its config,
        offset and status topics (and ``_schemas`` when it serves the registry)."""
        from hub.runtime.internal_acls import protect_internal_topics

        worker = self.worker_config
        protect_internal_topics(worker.client_config("admin"), self._internal_topics(),
                                worker.group_id)  # fmt: skip

    def _internal_topics(self) -> list[str]:
        """The config, offset and status topics, and ``_schemas`` when it serves the registry."""
        from schema_registry.server import TOPIC

        worker = self.worker_config
        topics = [worker.config_storage_topic, worker.offset_storage_topic,
                  worker.status_storage_topic]  # fmt: skip
        if self.config.schema_registry_port:
            topics.append(str(worker.raw().get("schema.registry.topic", TOPIC)))
        return topics

    def _start_registry(self) -> None:
        from schema_registry import embed

        self.registry = embed.start(self.worker_config, self.config.schema_registry_port)
        self.worker_config = embed.with_url(self.worker_config, self.registry)

    def _start_hub(self) -> None:
        from hub.runtime.distributed.herder import DistributedHerder
        from hub.runtime.distributed.ownership import StandaloneLock
        from hub.runtime.herder import Herder

        _tune_gc()
        if self.config.distributed:
            self.herder = DistributedHerder(self.worker_config)
        else:
            self.lock = StandaloneLock(self.worker_config)
            self.lock.acquire()
            self.herder = Herder(self.worker_config)
        self.herder.start()
        self.start_pipelines()

    def start_pipelines(self) -> None:
        """The process's scheduler and the pipelines service on it; saved schedules resume
        now, without waiting for a request."""
        from apscheduler.schedulers.background import BackgroundScheduler

        import spark_pipelines.templates as catalogue
        from hub.api.paths import allowed_roots
        from hub.pipelines import PipelinesService

        self.scheduler = BackgroundScheduler(timezone="UTC")
        self.pipelines = PipelinesService(
            self.pipelines_home(), catalogue, self.scheduler,
            allowed_paths=allowed_roots(),  # the worker's file.allowed.paths, set by the herder
        )  # fmt: skip
        self.scheduler.start()

    def pipelines_home(self) -> Path:
        """Where pipeline definitions and runs live: ``--pipelines-dir``, else ``pipelines``
        under the worker's data directory (``--data-dir``/``data.dir``), never the working
        directory of whoever started the process."""
        if self.config.pipelines_dir is not None:
            return self.config.pipelines_dir
        data_dir = getattr(self.worker_config, "data_dir", None) or "./data"
        return Path(data_dir) / "pipelines"

    def stop(self) -> None:
        """Stops whatever runs, in reverse start order; safe to call more than once."""
        if self.pipelines is not None:
            self.pipelines.close()
            self.pipelines = None
        if self.scheduler is not None:
            if self.scheduler.running:
                self.scheduler.shutdown(wait=False)
            self.scheduler = None
        if self.herder is not None:
            log.info("hub stopping")
            self.herder.stop()
            log.info("hub stopped")
            self.herder = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        if self.registry is not None:
            self.registry.stop()
            self.registry = None
        if self.broker is not None:
            self.broker.stop()
            self.broker = None

    # -- serving ---------------------------------------------------------------------------------
    def app(self) -> Any:
        from sluice.web import build_app

        return build_app(
            self.herder,
            self.worker_config,
            pipelines=self.pipelines,
            allow_unauthenticated=self.config.allow_unauthenticated,
        )

    def run(self) -> int:
        """Starts, serves until a signal, stops; the process's exit status."""
        from sluice.logs import setup_logging

        setup_logging("INFO", self.config.log_level)
        refusal = self._secure()
        if refusal:
            log.error(refusal)
            return 1
        if self.config.worker is None:
            return _run_broker_in_foreground(self.config)
        from hub.rest.server import bind_socket

        worker = self.config.worker
        try:  # a taken port is refused in one line before anything starts
            self._rest_socket = bind_socket(worker.rest_host_name, worker.rest_port)
        except OSError as exc:
            log.error(exc.strerror or str(exc))
            return 1
        try:
            self.start()
        except ClusterUnreachable as exc:
            log.error(str(exc))
            return 1
        except Exception as exc:
            from hub.runtime.errors import TopicsOwnedError, WorkerConfigError

            if isinstance(exc, TopicsOwnedError | WorkerConfigError):  # a refusal: one line
                reasons = getattr(exc, "errors", {})
                log.error(str(exc), extra={k: "; ".join(v) for k, v in reasons.items()})
                self._rest_socket.close()
                return 1
            hub = self.starting == "hub"
            log.error(f"{self.starting} failed to start", extra={"error": str(exc)}, exc_info=hub)
            self._rest_socket.close()
            return 1
        try:
            self._serve()
        finally:
            self.stop()
        return 0

    def _secure(self) -> str:
        """Before anything starts (docs/security.md): the broker must listen on loopback
        (``broker.listen_policy``), and the hub needs a REST credential: the generated token
        (``hub.rest.token_file``) unless it has one or opted out on loopback. The reason it
        refuses, in one line, or "" to go on."""
        from broker.listen_policy import InsecureListenerError, check_listeners

        broker = self.config.broker
        if broker is not None:
            try:
                open_hosts = check_listeners(
                    broker.config,
                    allow_insecure_network=broker.allow_insecure_network,
                    flag="--allow-insecure-network" if self.config.worker is None else "",
                )
            except InsecureListenerError as exc:
                return str(exc)
            if open_hosts:
                log.warning(
                    "broker listens beyond loopback without authentication "
                    "(--allow-insecure-network)",
                    extra={"address": ",".join(open_hosts)},
                )
        if self.worker_config is not None:
            from hub.rest.auth import InsecureBindError, check_credentials
            from hub.rest.token_file import TokenFileError, with_default_token

            try:
                self.worker_config = with_default_token(self.worker_config)
                check_credentials(self.worker_config, self.config.allow_unauthenticated, warn=False)
            except (InsecureBindError, TokenFileError, ValueError) as exc:
                return str(exc)
        return ""

    def _serve(self) -> None:
        """Serves the REST API on this thread until a signal."""
        import uvicorn

        from hub.rest.client_errors import throttle_client_errors

        throttle_client_errors()  # one summary line a minute for malformed requests
        worker = self.worker_config
        app = self.app()
        # Everything start-up built (REST app, scheduler, pipelines service) joins the frozen
        # heap, so the cyclic collector never rescans it (see ``_tune_gc``).
        gc.freeze()
        sock = self._rest_socket
        host, port = worker.rest_host_name, sock.getsockname()[1]
        # log_config=None: uvicorn's lines go through Sluice's log format, not its own.
        # ``listeners=https://...``: TLS with the worker's PEM keystore (docs/security.md).
        tls = worker.rest_tls() or {}
        server = uvicorn.Server(
            uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off", **tls)
        )
        announce = (server, host, port, worker.rest_scheme)
        threading.Thread(target=_announce, args=announce, daemon=True).start()
        # uvicorn handles SIGINT/SIGTERM while serving, then restores the previous handlers and
        # re-raises the signal; with the default handlers that would kill the process before the
        # herder commits offsets, so the handlers it restores only log.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _late_signal)
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()


def reach_cluster(worker_config: Any, timeout: float = CLUSTER_PROBE_S) -> None:
    """Raises ClusterUnreachable unless a broker of the worker's cluster answers in ``timeout``.

    The hub's own clients would retry for their whole request timeouts and librdkafka would log
    every refused connection meanwhile; this probe is silent (``log_level`` 0) and the caller
    reports its one line. It uses the admin client's settings, security ones included.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    config = {**worker_config.client_config("admin"), "log_level": 0}
    config.pop("logger", None)
    try:
        AdminClient(config).list_topics(timeout=timeout)
    except KafkaException as exc:
        reason = exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)
        raise ClusterUnreachable(
            f"cannot reach the Kafka cluster at {worker_config.bootstrap_servers} within "
            f"{timeout:.0f} s ({reason}); check bootstrap.servers and that its brokers are up"
        ) from None


def _tune_gc() -> None:
    """Once, at hub start, before any task runs.

    Tasks allocate many short-lived, acyclic objects per record (records, headers, offsets);
    with the default threshold (700) the cyclic collector ran every few hundred records and
    took ~40% of a source task's CPU, scanning long-lived objects each time. Freezing what
    startup allocated (modules, plugin classes, configs) moves it out of every collection,
    and a 50,000 threshold makes the young collections rare; reference counting still frees
    almost everything at once. The broker's own loop is unaffected in behaviour.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


_late_signals = 0


def _late_signal(signum: int, _frame: Any) -> None:
    """The first signal (re-raised by uvicorn) lets shutdown finish; a second one forces exit."""
    global _late_signals
    _late_signals += 1
    name = signal.Signals(signum).name
    if _late_signals == 1:
        log.info("signal received; finishing shutdown", extra={"signal": name})
        return
    log.warning("second signal: exiting without a clean shutdown", extra={"signal": name})
    os._exit(1)


def _announce(server: Any, host: str, port: int, scheme: str = "http") -> None:
    """Logs ``hub listening`` once uvicorn has bound its socket."""
    deadline = threading.Event()
    while not server.started and not server.should_exit:
        deadline.wait(0.02)
    if server.started:
        log.info("hub listening", extra={"address": f"{host}:{port}", "scheme": scheme})


def _run_broker_in_foreground(config: NodeConfig) -> int:
    """``sluice broker``: the broker's event loop on the main thread until SIGINT/SIGTERM.

    Both signals trigger the same clean shutdown (stop accepting, close connections, flush and
    close every partition log), so a supervisor's SIGTERM loses nothing. The one INFO line
    ``broker listening address=...`` is what scripts and the test fixture wait for."""
    import asyncio

    assert config.broker is not None
    runner: Any = asyncio.run
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # uvloop is not built for every platform (Windows)
        pass
    return 0 if runner(_serve_broker(config.broker.config)) else 1


async def _serve_broker(broker_config: Any) -> bool:
    import asyncio

    from broker.app import Broker, BrokerStartError

    broker = Broker(broker_config)
    try:
        await broker.start()
    except BrokerStartError as exc:
        log.error("broker failed to start", extra={"error": str(exc)})
        return False
    from broker.gc_tuning import freeze_startup_heap

    freeze_startup_heap()  # `sluice broker`: this process only serves the broker
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        log.info("shutting down")
    finally:
        await broker.stop()
        _exit_soon_after_stop(STOPPED_EXIT_GRACE_S)
    return True


STOPPED_EXIT_GRACE_S = 5.0


def _exit_soon_after_stop(grace_s: float) -> None:
    """Once the broker has stopped (every log flushed and closed), the process ends within
    ``grace_s`` even if a helper thread is still blocked (a ZooKeeper call, a peer socket, an
    executor job): without this, interpreter shutdown joins such threads and a supervisor's
    SIGTERM could leave a stopped broker running. The threads still alive are named."""
    import os
    import threading

    def force() -> None:
        alive = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
        log.warning("broker stopped but threads are still running; exiting",
                    extra={"threads": ",".join(alive)})  # fmt: skip
        logging.shutdown()
        os._exit(0)

    timer = threading.Timer(grace_s, force)
    timer.daemon = True
    timer.start()
