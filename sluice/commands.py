"""``sluice up``, ``sluice connect`` and ``sluice broker``: flags -> ``NodeConfig`` -> ``Node``.

The flags and files are read here, at the edge, and passed down as configuration objects; the
composition root (``sluice.node``) and everything below it read no environment variables for
their settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

PIPELINES_HELP = (
    "Where pipeline definitions and runs are kept (default: pipelines/ in the data directory; "
    "env SLUICE_PIPELINES_DIR)."
)


def register(app: typer.Typer) -> None:
    """Adds ``up``, ``connect`` and ``broker`` to the top-level ``sluice`` app."""

    @app.command()
    def up(
        data_dir: Path = typer.Option(Path("./data"), help="Where the broker keeps its data."),
        broker_port: int | None = typer.Option(
            None, help="Kafka port of the embedded broker (default 9092; 0 = any)."
        ),
        rest_port: int | None = typer.Option(
            None, help="Port of the REST API (default 8083, or the worker's listeners)."
        ),
        host: str | None = typer.Option(
            None, help="Address the REST API listens on (default 127.0.0.1)."
        ),
        broker_host: str | None = typer.Option(
            None,
            help="Address of the embedded broker (default 127.0.0.1); loopback only unless "
            "its clients must authenticate (--broker-config).",
        ),
        broker_config_file: Path | None = typer.Option(
            None,
            "--broker-config",
            help="The embedded broker's Kafka server.properties (listeners, TLS, SASL, "
            "authorizer; docs/security.md); --broker-host/--broker-port move its first listener.",
        ),
        config: Path | None = typer.Option(
            None, help="Worker settings (.properties or .json); flags override them."
        ),
        log_level: str | None = typer.Option(None, help="DEBUG, INFO, WARNING..."),
        broker_thread: bool = typer.Option(
            False,
            "--broker-thread",
            help="Run the broker on a thread of this process instead of a child process "
            "(one process, less memory, lower throughput).",
        ),
        pipelines_dir: Path | None = typer.Option(
            None, envvar="SLUICE_PIPELINES_DIR", help=PIPELINES_HELP
        ),
        schema_registry_port: int = typer.Option(
            8081, help="Port of the Confluent-compatible schema registry (0 = don't serve it)."
        ),
        brokers: int = typer.Option(
            1, help="Run ZooKeeper and this many brokers (a local cluster; docs/cluster.md)."
        ),
        zookeeper_port: int = typer.Option(2181, help="ZooKeeper port with --brokers > 1."),
        broker_metrics_port: int = typer.Option(
            0,
            help="Serve the embedded broker's Prometheus /metrics and /ready on --broker-host at "
            "this port (0 = off; single broker only; docs/metrics.md).",
        ),
    ) -> None:
        """Run a broker, a hub worker and the REST API with one command (Ctrl-C stops cleanly).

        The broker runs in a child process by default, so it and the worker don't share one
        GIL; it stops with the hub, and dies with it if the hub is killed."""
        from broker.cli.serve import build_config
        from sluice import hub_login
        from sluice.node import BrokerSettings, Node, NodeConfig
        from sluice.terminal import fail

        if broker_metrics_port and brokers > 1:
            fail("--broker-metrics-port serves one broker; run `sluice broker` per node", code=2)
        if broker_config_file is not None and brokers > 1:
            fail("--broker-config configures one broker; run `sluice broker` per node", code=2)
        # One machine, one hub: no reason to wait 3 s for more group members to show up.
        flags: dict[str, object] = {
            "data_dir": data_dir, "host": broker_host, "port": broker_port,
            "group_initial_rebalance_delay_ms": 0, "metrics_port": broker_metrics_port,
        }  # fmt: skip
        # No --broker-config: the hub logs in on a listener of its own and reserves its
        # internal topics (sluice.hub_login); --broker-config replaces all of this. A local
        # cluster's brokers also replicate over that listener, as the hub.
        secure_default = broker_config_file is None
        cluster = brokers > 1
        try:
            overrides = hub_login.broker_overrides(broker_host, cluster) if secure_default else []
            broker_config: Any = build_config(broker_config_file, overrides, flags)
        except (ValueError, OSError) as exc:
            fail(str(exc), code=2)
        worker = _worker_config(
            config, "", rest_port, host, data_dir, _console_metrics(broker_config)
        )
        try:  # only once every setting is valid: writes the hub's credential
            login = None
            if secure_default:  # a cluster's stores are in ZooKeeper, filled once it runs
                prepare = hub_login.cluster_login if cluster else hub_login.prepare
                login = prepare(data_dir)
        except (ValueError, OSError) as exc:
            fail(str(exc), code=2)
        node = Node(
            NodeConfig(
                worker=worker,
                broker=BrokerSettings(
                    broker_config,
                    in_thread=broker_thread,
                    cluster_size=brokers,
                    zookeeper_port=zookeeper_port,
                    hub_login=login,
                ),
                pipelines_dir=pipelines_dir,
                schema_registry_port=schema_registry_port,
                log_level=log_level,
            )
        )
        _exit(node.run())

    @app.command()
    def connect(
        bootstrap: str = typer.Option(..., help="HOST:PORT of any Kafka-compatible cluster."),
        rest_port: int | None = typer.Option(
            None, help="Port of the REST API (default 8083, or the worker's listeners)."
        ),
        host: str | None = typer.Option(
            None, help="Address the REST API listens on (default 127.0.0.1)."
        ),
        config: Path | None = typer.Option(
            None, help="Worker settings (.properties or .json); flags override them."
        ),
        log_level: str | None = typer.Option(None, help="DEBUG, INFO, WARNING..."),
        pipelines_dir: Path | None = typer.Option(
            None, envvar="SLUICE_PIPELINES_DIR", help=PIPELINES_HELP
        ),
        schema_registry_port: int = typer.Option(
            0,
            help="Also serve the schema registry on this port (0 = don't; one writer per "
            "cluster: docs/schema-registry.md).",
        ),
        data_dir: Path | None = typer.Option(
            None, help="The hub's state (hub.token); worker setting data.dir, default ./data."
        ),
        override: list[str] = typer.Option(
            [], "--override", "-o", help="KEY=VALUE worker setting; repeatable; beats --config."
        ),
    ) -> None:
        """Run a distributed hub worker and its REST API against an existing cluster.

        Workers with the same group.id and internal topics share connectors and tasks
        (docs/distributed.md); any worker's REST API manages them all."""
        from sluice.node import Node, NodeConfig

        # One file for every worker of a group, each naming itself on the command line
        # (rest.advertised.host.name), as compose/cluster.yml does.
        extra = _key_values(override, "--override")
        worker = _worker_config(config, bootstrap, rest_port, host, data_dir, extra)
        node = Node(
            NodeConfig(
                worker=worker,
                distributed=True,
                pipelines_dir=pipelines_dir,
                schema_registry_port=schema_registry_port,
                log_level=log_level,
            )
        )
        _exit(node.run())

    @app.command()
    def broker(
        config_file: Path | None = typer.Option(
            None, "--config", help="A Kafka server.properties file (see docs/cluster.md)."
        ),
        override: list[str] = typer.Option(
            [], "--override", "-o", help="KEY=VALUE broker property; repeatable; beats --config."
        ),
        data_dir: Path | None = typer.Option(None, help="Where partitions live (log.dirs)."),
        host: str | None = typer.Option(
            None, help="Address to listen on (default 127.0.0.1; loopback only unless opted in)."
        ),
        allow_insecure_network: bool = typer.Option(
            False,
            "--allow-insecure-network",
            help="Listen on a non-loopback address without authentication: every machine that "
            "can reach the port can read and write every topic. Only on a trusted network.",
        ),
        port: int | None = typer.Option(None, help="Port to listen on (default 9092; 0 = free)."),
        advertised_host: str | None = typer.Option(
            None, help="Host name clients should connect to (default: --host)."
        ),
        advertised_port: int | None = typer.Option(None, help="Port clients should use."),
        node_id: int | None = typer.Option(
            None, "--broker-id", "--node-id", help="This broker's id (broker.id; default 1)."
        ),
        zookeeper: str | None = typer.Option(
            None, help="zookeeper.connect (host:port, optionally /chroot): join a cluster."
        ),
        num_partitions: int | None = typer.Option(None, help="Partitions of new topics."),
        auto_create_topics: bool | None = typer.Option(
            None, help="Create unknown topics on first Metadata request (default on)."
        ),
        queued_max_request_bytes: int | None = typer.Option(
            None,
            help="queued.max.request.bytes: bytes of requests in flight across all connections "
            "before connections wait (default: --max-request-size; -1 = no limit).",
        ),
        connections_max_idle_ms: int | None = typer.Option(
            None, help="connections.max.idle.ms: close connections idle this long (600000)."
        ),
        max_connections: int | None = typer.Option(
            None, help="max.connections: connections beyond this are closed on accept."
        ),
        max_connections_per_ip: int | None = typer.Option(
            None, help="max.connections.per.ip: connections per client address."
        ),
        max_connections_per_ip_overrides: str | None = typer.Option(
            None, help="max.connections.per.ip.overrides: host:count,host:count (names or IPs)."
        ),
        log_cleaner_backoff_ms: int | None = typer.Option(
            None, help="log.cleaner.backoff.ms: pause between log cleaner passes (15000)."
        ),
        metrics_port: int | None = typer.Option(
            None,
            help="metrics.port: serve Prometheus /metrics and /ready on --host at this port "
            "(plain HTTP; default 0 = off; docs/metrics.md).",
        ),
        max_request_size: int | None = typer.Option(
            None, help="Largest request frame accepted (bytes)."
        ),
        group_initial_rebalance_delay_ms: int | None = typer.Option(
            None, help="How long a new group waits for more members before its first rebalance."
        ),
        group_min_session_timeout_ms: int | None = typer.Option(
            None, help="Smallest session.timeout.ms a consumer may ask for."
        ),
        log_level: str | None = typer.Option(
            None, help="DEBUG, INFO, WARNING... (default INFO, or $SLUICE_LOG_LEVEL)."
        ),
    ) -> None:
        """Run the Kafka-compatible broker in the foreground (Ctrl-C stops it cleanly).

        Without --zookeeper (or zookeeper.connect) it is a single node with no other service;
        with it, one member of a replicated cluster (docs/cluster.md).
        """
        from broker.cli.serve import build_config
        from broker.protocol.limits import parse_overrides
        from sluice.node import BrokerSettings, Node, NodeConfig

        flags: dict[str, object] = {
            "data_dir": data_dir,
            "host": host,
            "port": port,
            "advertised_host": advertised_host,
            "advertised_port": advertised_port,
            "node_id": node_id,
            "zookeeper_connect": zookeeper,
            "num_partitions": num_partitions,
            "auto_create_topics": auto_create_topics,
            "max_request_size": max_request_size,
            "group_initial_rebalance_delay_ms": group_initial_rebalance_delay_ms,
            "group_min_session_timeout_ms": group_min_session_timeout_ms,
            "queued_max_request_bytes": queued_max_request_bytes,
            "connections_max_idle_ms": connections_max_idle_ms,
            "max_connections": max_connections,
            "max_connections_per_ip": max_connections_per_ip,
            "max_connections_per_ip_overrides": max_connections_per_ip_overrides,
            "log_cleaner_backoff_ms": log_cleaner_backoff_ms,
            "metrics_port": metrics_port,
        }
        try:
            if max_connections_per_ip_overrides is not None:
                flags["max_connections_per_ip_overrides"] = parse_overrides(
                    max_connections_per_ip_overrides
                )
            config = build_config(config_file, override, flags)
        except (ValueError, OSError) as exc:
            from sluice.terminal import fail

            fail(str(exc), code=2)
        settings = BrokerSettings(config, allow_insecure_network=allow_insecure_network)
        _exit(Node(NodeConfig(broker=settings, log_level=log_level)).run())


def _exit(status: int) -> None:
    if status:
        raise typer.Exit(status)


def _console_metrics(broker: Any) -> dict[str, str]:
    """With the embedded broker's metrics on, the console reads its messages-in rate from them
    (docs/ui.md): the same number as the broker's ``/metrics``."""
    if not broker.metrics_port:
        return {}
    host = "127.0.0.1" if broker.host in ("0.0.0.0", "", "::") else broker.host
    return {"console.broker.metrics.urls": f"http://{host}:{broker.metrics_port}/metrics"}


def _key_values(pairs: list[str], flag: str) -> dict[str, str]:
    """``KEY=VALUE`` arguments as a mapping; one that is not ends the command (exit 2)."""
    from sluice.terminal import fail

    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            fail(f"{flag} {pair!r}: expected KEY=VALUE", code=2)
        out[key.strip()] = value
    return out


def _worker_config(
    path: Path | None,
    bootstrap: str,
    rest_port: int | None,
    host: str | None,
    data_dir: Path | None,
    extra: dict[str, str] | None = None,
) -> Any:
    """The worker settings from ``--config`` with the flags on top (``bootstrap`` "" keeps the
    file's, for ``sluice up``, whose broker sets it once started; ``data_dir`` None keeps the
    file's ``data.dir``). Invalid settings end the command with one line per bad key (exit 2),
    before anything starts."""
    from hub.runtime.config import WorkerConfig
    from hub.runtime.errors import WorkerConfigError
    from sluice.terminal import fail

    overrides: dict[str, Any] = {"rest.port": rest_port, "rest.host.name": host, **(extra or {})}
    if data_dir is not None:
        overrides["data.dir"] = str(data_dir)
    if bootstrap:
        overrides["bootstrap.servers"] = bootstrap
    try:
        if path is not None:
            return WorkerConfig.from_file(path, **overrides)
        return WorkerConfig.from_mapping(overrides)
    except WorkerConfigError as exc:
        if not exc.errors:
            fail(str(exc), code=2)
        where = f"worker config {path}" if path is not None else "worker settings"
        fail(f"{where}: {len(exc.errors)} invalid key(s)", details=exc.errors, code=2)
