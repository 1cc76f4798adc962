"""The worker's configuration, with Kafka Connect's worker key names as aliases.

A ``worker.properties`` written for Kafka Connect loads as-is: unknown keys are kept
(``extra="allow"``) because converter settings (``value.converter.schemas.enable``) and client
overrides (``producer.linger.ms``, ``consumer.fetch.min.bytes``, ``admin.*``) are open-ended
families that ``prefixed`` hands on without the prefix.

The three internal topics are compacted and created when missing. Configs use one partition so
every write is totally ordered (as Kafka Connect requires); offsets use a few partitions (Kafka's
default is 25, far more than one machine needs).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hub.runtime.errors import WorkerConfigError

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
ADMIN_TIMEOUT_S = 15.0  # how long the runtime waits for one admin call (topic creation, ...)
DEFAULT_TASKS_MAX_LIMIT = 64
REFUSED_KEYS = {
    "scheduled.rebalance.max.delay.ms": "Sluice's workers rebalance eagerly (connect.protocol="
    "eager); incremental cooperative rebalancing is not implemented (docs/distributed.md)",
}


class WorkerConfig(BaseModel):
    """Settings of one hub worker; field aliases are Kafka Connect's worker config names."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    bootstrap_servers: str = Field("127.0.0.1:9092", alias="bootstrap.servers")
    group_id: str = Field("sluice-connect", alias="group.id")
    rest_host_name: str = Field("127.0.0.1", alias="rest.host.name")
    rest_port: int = Field(8083, alias="rest.port")
    rest_advertised_host_name: str | None = Field(None, alias="rest.advertised.host.name")
    listeners: str | None = Field(None, alias="listeners")
    """Kafka Connect's ``listeners``: one ``http://host:port`` or ``https://host:port``; it
    sets ``rest.host.name``/``rest.port`` (flags still win) and, for https, the REST API is
    served over TLS with ``listeners.https.ssl.*`` (or the top-level ``ssl.*``) PEM keys."""
    rest_auth_token: str | None = Field(None, alias="rest.auth.token")
    rest_auth_basic: str | None = Field(None, alias="rest.auth.basic")
    # Security settings of the REST API and of file access (docs/security.md).
    rest_auth_allow_unauthenticated: bool = Field(False, alias="rest.auth.allow.unauthenticated")
    rest_allowed_hosts: str = Field("", alias="rest.allowed.hosts")
    data_dir: str = Field("./data", alias="data.dir")
    file_allowed_paths: str | None = Field(None, alias="file.allowed.paths")

    config_storage_topic: str = Field("sluice-connect-configs", alias="config.storage.topic")
    offset_storage_topic: str = Field("sluice-connect-offsets", alias="offset.storage.topic")
    offset_storage_partitions: int = Field(5, alias="offset.storage.partitions", gt=0)
    status_storage_topic: str = Field("sluice-connect-status", alias="status.storage.topic")
    status_storage_partitions: int = Field(1, alias="status.storage.partitions", gt=0)
    # Single-node default; a real cluster wants 3 (Kafka Connect's default).
    internal_topic_replication_factor: int = Field(1, alias="replication.factor")

    # Kafka Connect's default is 60 s; shorter means less redelivery after a crash and sink
    # files that fill visibly, at the cost of one small offsets write per interval.
    offset_flush_interval_ms: int = Field(10_000, alias="offset.flush.interval.ms", ge=1)
    offset_flush_timeout_ms: int = Field(5_000, alias="offset.flush.timeout.ms", ge=1)
    task_shutdown_graceful_timeout_ms: int = Field(
        5_000, alias="task.shutdown.graceful.timeout.ms", ge=0
    )
    task_restart_backoff_ms: int = Field(1_000, alias="task.restart.backoff.ms", ge=0)
    task_restart_max_backoff_ms: int = Field(60_000, alias="task.restart.max.backoff.ms", ge=0)
    # Not a Kafka Connect key (Connect has no cap): each task is a thread (a sink task also a
    # consumer with its own threads), and a connector asking for thousands of tasks once made
    # a machine unusable. Connectors asking for more are rejected by name (docs/runtime.md).
    tasks_max_limit: int = Field(DEFAULT_TASKS_MAX_LIMIT, alias="tasks.max.limit", ge=1)
    # Largest REST request body (hub/rest/limits.py); not a Kafka Connect key either.
    rest_request_max_bytes: int = Field(1024 * 1024, alias="rest.request.max.bytes", ge=1)

    exactly_once_source_support: Literal["disabled", "preparing", "enabled"] = Field(
        "disabled", alias="exactly.once.source.support"
    )
    """KIP-618: ``enabled`` runs every source task with its own transactional producer,
    committing records and source offsets together (docs/runtime.md); ``preparing`` is
    accepted (Kafka's rolling-upgrade step) and runs tasks as ``disabled``."""

    # Distributed mode (``sluice connect``; docs/distributed.md): group membership settings
    # under Kafka Connect's names and defaults.
    session_timeout_ms: int = Field(10_000, alias="session.timeout.ms", ge=1)
    heartbeat_interval_ms: int = Field(3_000, alias="heartbeat.interval.ms", ge=1)
    rebalance_timeout_ms: int = Field(60_000, alias="rebalance.timeout.ms", ge=1)
    connect_protocol: Literal["eager"] = Field("eager", alias="connect.protocol")
    """Only Connect's ``eager`` protocol is implemented: every rebalance stops and restarts
    all tasks. ``compatible``/``sessioned`` (incremental cooperative rebalancing, KIP-415)
    and ``scheduled.rebalance.max.delay.ms`` are refused by name rather than ignored."""

    key_converter: str = Field(JSON_CONVERTER, alias="key.converter")
    value_converter: str = Field(JSON_CONVERTER, alias="value.converter")
    header_converter: str = Field(SIMPLE_HEADER_CONVERTER, alias="header.converter")

    def rest_tls(self) -> dict[str, Any] | None:
        """uvicorn's ``ssl_*`` arguments when ``listeners`` is https, else None. Kafka
        Connect's keys: ``listeners.https.ssl.keystore.location`` (PEM: key and chain in one
        file), ``...ssl.key.password``, ``...ssl.truststore.location`` with
        ``...ssl.client.auth=required`` for client certificates; each falls back to the plain
        ``ssl.*`` key, as in Connect."""
        if self.listeners is None or _listener(self.listeners)[0] != "https":
            return None
        extra = self.model_extra or {}

        def get(key: str) -> Any:
            return extra.get(f"listeners.https.{key}", extra.get(key))

        keystore = get("ssl.keystore.location")
        if keystore is None:
            return None
        if str(get("ssl.keystore.type") or "PEM").upper() != "PEM":
            raise ValueError("listeners.https.ssl.keystore.type: only PEM is supported")
        tls: dict[str, Any] = {"ssl_certfile": keystore, "ssl_keyfile": keystore}
        if get("ssl.key.password") is not None:
            tls["ssl_keyfile_password"] = str(get("ssl.key.password"))
        if get("ssl.truststore.location") is not None:
            tls["ssl_ca_certs"] = get("ssl.truststore.location")
        if str(get("ssl.client.auth") or "none").lower() == "required":
            import ssl

            tls["ssl_cert_reqs"] = ssl.CERT_REQUIRED
        return tls

    @property
    def rest_scheme(self) -> str:
        return _listener(self.listeners)[0] if self.listeners is not None else "http"

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> WorkerConfig:
        """The validated settings; WorkerConfigError naming each bad key (by its worker name).
        ``listeners`` gives ``rest.host.name``/``rest.port`` unless they are set here."""
        raw = {k: v for k, v in raw.items() if v is not None}
        refused = {k: [f"not supported: {why}"] for k, why in REFUSED_KEYS.items() if k in raw}
        if refused:
            raise WorkerConfigError(f"invalid worker config: {', '.join(refused)}", refused)
        if raw.get("listeners"):
            try:
                _, host, port = _listener(str(raw["listeners"]))
            except ValueError as exc:
                raise WorkerConfigError(
                    f"invalid worker config: listeners ({exc})", {"listeners": [str(exc)]}
                ) from None
            raw.setdefault("rest.host.name", host)
            raw.setdefault("rest.port", port)
        try:
            config = cls.model_validate(dict(raw))
            try:
                tls = config.rest_tls()
            except ValueError as exc:
                tls, reason = None, str(exc)
            else:
                reason = (
                    "https needs listeners.https.ssl.keystore.location (a PEM file with the "
                    "key and certificate chain)"
                )
            if config.rest_scheme == "https" and tls is None:
                raise WorkerConfigError(f"invalid worker config: listeners ({reason})",
                                        {"listeners": [reason]})  # fmt: skip
        except ValidationError as exc:
            errors: dict[str, list[str]] = {}
            for error in exc.errors():
                key = ".".join(str(part) for part in error["loc"]) or "(config)"
                errors.setdefault(key, []).append(_reason(error))
            keys = ", ".join(errors)
            raise WorkerConfigError(f"invalid worker config: {keys}", errors) from None
        from hub.api.errors import ConfigError
        from hub.runtime.config_providers import ConfigTransformer

        try:  # config.providers and its family (KIP-297): refused by name when wrong
            ConfigTransformer.from_worker(config.raw())
        except ConfigError as exc:
            raise WorkerConfigError(f"invalid worker config: {exc}") from None
        return config

    @classmethod
    def from_file(cls, path: Path, **overrides: Any) -> WorkerConfig:
        """Loads a ``.json`` object or a Java ``.properties`` file; ``overrides`` win.

        WorkerConfigError (one line, the file named) when it cannot be read or parsed."""
        try:
            text = path.read_text()
        except OSError as exc:
            raise WorkerConfigError(f"cannot read worker config {path}: {exc.strerror}") from None
        if path.suffix == ".json":
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise WorkerConfigError(
                    f"worker config {path} is not JSON: {exc.msg} at line {exc.lineno}"
                ) from None
            if not isinstance(loaded, dict):
                raise WorkerConfigError(f"worker config {path} must hold a JSON object")
            raw: dict[str, Any] = loaded
        else:
            raw = parse_properties(text)
        if raw.get("listeners"):  # Kafka Connect: listeners wins over rest.host.name/rest.port
            raw.pop("rest.host.name", None)
            raw.pop("rest.port", None)
        raw.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_mapping(raw)

    def raw(self) -> dict[str, Any]:
        """Every setting under its worker key name, extra keys included."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def prefixed(self, prefix: str) -> dict[str, Any]:
        """Extra keys starting with ``prefix``, without it (``producer.`` -> client config)."""
        extra = self.model_extra or {}
        return {k[len(prefix) :]: v for k, v in extra.items() if k.startswith(prefix)}

    def client_config(self, kind: str) -> dict[str, Any]:
        """confluent-kafka settings for a ``producer``/``consumer``/``admin`` client.

        The worker's top-level security settings (``security.protocol``, ``sasl.*``,
        ``ssl.*``) apply to every client it makes, as they do to a Kafka Connect worker's own
        clients; ``producer.``/``consumer.``/``admin.`` prefixed ones override them per kind.
        Java forms (``sasl.jaas.config``, PEM ``ssl.truststore.location`` ...) are translated
        for librdkafka (``sluice.client_security``). ``logger`` sends librdkafka's own log lines
        through ``sluice.logs`` (throttled, never ERROR: the client retries, and real failures
        surface through its callbacks)."""
        from sluice.client_security import security_settings, to_librdkafka
        from sluice.logs import librdkafka_logger

        return to_librdkafka({
            "bootstrap.servers": self.bootstrap_servers,
            "logger": librdkafka_logger(),
            **security_settings(self.model_extra or {}),
            **self.prefixed(f"{kind}."),
        })  # fmt: skip

    def file_roots(self) -> list[Path]:
        """``file.allowed.paths`` as absolute paths, or the data directory and ``files`` beside
        it (hub/api/paths.py)."""
        from hub.api.paths import roots_from_setting

        return roots_from_setting(self.file_allowed_paths, self.data_dir)

    @property
    def exactly_once_enabled(self) -> bool:
        return self.exactly_once_source_support == "enabled"

    @property
    def advertised_host(self) -> str:
        """The host other workers reach this one at: ``rest.advertised.host.name``, else the
        bound host, else (bound to a wildcard) this machine's address, as Kafka Connect's REST
        server does; so replicas of one container image (``docker compose --scale``) need no
        per-replica setting."""
        if self.rest_advertised_host_name:
            return self.rest_advertised_host_name
        if self.rest_host_name.strip() not in WILDCARD_HOSTS:
            return self.rest_host_name
        return _machine_address()

    @property
    def worker_id(self) -> str:
        return f"{self.advertised_host}:{self.rest_port}"


# Bind addresses meaning "every interface": names no client can use to reach the worker.
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]"})


@cache
def _machine_address() -> str:
    """This machine's address as its own host name resolves (a container's /etc/hosts entry),
    or the host name itself when it does not resolve; looked up once per process."""
    name = socket.gethostname()
    try:
        return socket.gethostbyname(name)
    except OSError:
        return name


def _listener(value: str) -> tuple[str, str, int]:
    """``https://0.0.0.0:8443`` -> ("https", "0.0.0.0", 8443); one listener only."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if len(items) != 1:
        raise ValueError("exactly one http:// or https:// listener is supported")
    scheme, sep, address = items[0].partition("://")
    host, colon, port = address.rpartition(":")
    if not sep or scheme.lower() not in ("http", "https") or not colon or not port.isdigit():
        raise ValueError(f"expected http://host:port or https://host:port, got {items[0]!r}")
    return scheme.lower(), host.strip("[]") or "0.0.0.0", int(port)


def _reason(error: Any) -> str:
    """A pydantic error as a reason a worker.properties user reads (the value they gave)."""
    message = str(error.get("msg", "invalid"))
    if "input" in error and error.get("type") != "missing":
        return f"{message} (got {error['input']!r})"
    return message


def parse_properties(text: str) -> dict[str, str]:
    """The subset of Java ``.properties`` syntax worker files use: ``k=v``/``k: v``, # comments."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            out[line] = ""
        else:
            out[line[:sep].strip()] = line[sep + 1 :].strip()
    return out
