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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"


class WorkerConfig(BaseModel):
    """Settings of one hub worker; field aliases are Kafka Connect's worker config names."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    bootstrap_servers: str = Field("127.0.0.1:9092", alias="bootstrap.servers")
    group_id: str = Field("sluice-connect", alias="group.id")
    rest_host_name: str = Field("127.0.0.1", alias="rest.host.name")
    rest_port: int = Field(8083, alias="rest.port")
    rest_advertised_host_name: str | None = Field(None, alias="rest.advertised.host.name")
    rest_auth_token: str | None = Field(None, alias="rest.auth.token")
    rest_auth_basic: str | None = Field(None, alias="rest.auth.basic")

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

    key_converter: str = Field(JSON_CONVERTER, alias="key.converter")
    value_converter: str = Field(JSON_CONVERTER, alias="value.converter")
    header_converter: str = Field(SIMPLE_HEADER_CONVERTER, alias="header.converter")

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> WorkerConfig:
        return cls.model_validate(dict(raw))

    @classmethod
    def from_file(cls, path: Path, **overrides: Any) -> WorkerConfig:
        """Loads a ``.json`` object or a Java ``.properties`` file; ``overrides`` win."""
        text = path.read_text()
        raw: dict[str, Any] = json.loads(text) if path.suffix == ".json" else parse_properties(text)
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
        """confluent-kafka settings for a ``producer``/``consumer``/``admin`` client."""
        return {"bootstrap.servers": self.bootstrap_servers, **self.prefixed(f"{kind}.")}

    @property
    def worker_id(self) -> str:
        host = self.rest_advertised_host_name or self.rest_host_name
        return f"{host}:{self.rest_port}"


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
