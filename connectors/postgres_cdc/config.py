"""Typed config of ``postgres-cdc``, keyed by Debezium's PostgreSQL connector names.

A Debezium user POSTs the config they already have: the keys below keep Debezium's names,
meanings and defaults, with two deliberate differences (documented in
docs/connectors/postgres-cdc.md): only ``plugin.name=pgoutput`` is supported (it ships with
PostgreSQL; decoderbufs/wal2json need server extensions), and truncate events are emitted by
default (``skipped.operations=none``), because the hub promises every committed change.
Keys Debezium has and this connector does not use are accepted and ignored (``extra=allow``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from hub.api import ConfigModel


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class PostgresCdcConfig(ConfigModel):
    """Settings of ``postgres-cdc`` (alias: Debezium's PostgresConnector class name)."""

    hostname: str = Field(alias="database.hostname", description="PostgreSQL host.")
    port: int = Field(5432, alias="database.port", gt=0, lt=65536)
    user: str = Field(alias="database.user", description="Role with LOGIN and REPLICATION.")
    password: str = Field("", alias="database.password")
    dbname: str = Field(alias="database.dbname", description="Database to capture.")
    sslmode: str = Field("prefer", alias="database.sslmode")
    topic_prefix: str = Field(
        alias="topic.prefix",
        description="Logical server name: topics are <prefix>.<schema>.<table>.",
        min_length=1,
    )
    plugin_name: Literal["pgoutput"] = Field(
        "pgoutput",
        alias="plugin.name",
        description="Logical decoding plugin; only PostgreSQL's built-in pgoutput.",
    )
    slot_name: str = Field("debezium", alias="slot.name", pattern=r"^[a-z0-9_]{1,63}$")
    slot_drop_on_stop: bool = Field(False, alias="slot.drop.on.stop")
    publication_name: str = Field("dbz_publication", alias="publication.name", min_length=1)
    publication_autocreate_mode: Literal["all_tables", "filtered", "disabled"] = Field(
        "all_tables",
        alias="publication.autocreate.mode",
        description="all_tables: FOR ALL TABLES (needs superuser); filtered: FOR TABLE the "
        "included tables; disabled: the publication must exist.",
    )
    table_include_list: str | None = Field(None, alias="table.include.list")
    table_exclude_list: str | None = Field(None, alias="table.exclude.list")
    schema_include_list: str | None = Field(None, alias="schema.include.list")
    schema_exclude_list: str | None = Field(None, alias="schema.exclude.list")
    snapshot_mode: Literal["initial", "initial_only", "never", "no_data", "when_needed"] = Field(
        "initial", alias="snapshot.mode"
    )
    snapshot_fetch_size: int = Field(10240, alias="snapshot.fetch.size", gt=0)
    tombstones_on_delete: bool = Field(True, alias="tombstones.on.delete")
    skipped_operations: str = Field(
        "none", alias="skipped.operations", description="Comma list of c,u,d,t or none."
    )
    heartbeat_interval_ms: int = Field(0, alias="heartbeat.interval.ms", ge=0)
    heartbeat_topics_prefix: str = Field("__debezium-heartbeat", alias="heartbeat.topics.prefix")
    max_batch_size: int = Field(2048, alias="max.batch.size", gt=0)
    poll_interval_ms: int = Field(500, alias="poll.interval.ms", gt=0)
    status_update_interval_ms: int = Field(10_000, alias="status.update.interval.ms", gt=0)
    decimal_handling_mode: Literal["precise", "double", "string"] = Field(
        "precise", alias="decimal.handling.mode"
    )
    retriable_restart_wait_ms: int = Field(
        10_000,
        alias="retriable.restart.connector.wait.ms",
        ge=0,
        description="Longest wait between reconnect attempts after a dropped connection.",
    )
    tasks_max: int = Field(1, alias="tasks.max")

    @model_validator(mode="before")
    @classmethod
    def _legacy_server_name(cls, data: Any) -> Any:
        """Debezium 1.x configs name the prefix ``database.server.name``: accept them as-is."""
        if isinstance(data, dict) and "topic.prefix" not in data and "topic_prefix" not in data:
            legacy = data.get("database.server.name")
            if legacy:
                return {**data, "topic.prefix": legacy}
        return data

    @field_validator("plugin_name", mode="before")
    @classmethod
    def _pgoutput_only(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip() != "pgoutput":
            raise ValueError(
                f"{value!r} is not supported: only PostgreSQL's built-in 'pgoutput' (no server "
                "extension needed); set plugin.name=pgoutput"
            )
        return value

    @field_validator("tasks_max")
    @classmethod
    def _one_task(cls, value: int) -> int:
        if value != 1:
            raise ValueError(
                "must be 1: a replication slot streams one ordered change log that only one "
                "task can consume; set tasks.max=1"
            )
        return value

    @field_validator("table_include_list", "table_exclude_list", "schema_include_list",
                     "schema_exclude_list")  # fmt: skip
    @classmethod
    def _regexes(cls, value: str | None) -> str | None:
        for part in _split(value):
            try:
                re.compile(part)
            except re.error as exc:
                raise ValueError(f"{part!r} is not a valid regular expression: {exc}") from None
        return value

    @field_validator("skipped_operations")
    @classmethod
    def _ops(cls, value: str) -> str:
        bad = [op for op in _split(value) if op not in ("c", "u", "d", "t", "none")]
        if bad:
            raise ValueError(f"unknown operations {bad}: use a comma list of c, u, d, t or none")
        return value

    def conninfo(self, **extra: str) -> str:
        """libpq conninfo; sessions are pinned to the formats ``_parse`` reads."""
        params = {
            "host": self.hostname, "port": str(self.port), "user": self.user,
            "dbname": self.dbname, "sslmode": self.sslmode, "application_name": "sluice-cdc",
            "connect_timeout": "10",
            "options": "-c DateStyle=ISO -c IntervalStyle=postgres -c TimeZone=UTC "
            "-c extra_float_digits=3",
        }  # fmt: skip
        if self.password:
            params["password"] = self.password
        params.update(extra)
        return " ".join(f"{k}='{_quote(v)}'" for k, v in params.items())

    @property
    def skipped(self) -> frozenset[str]:
        return frozenset(op for op in _split(self.skipped_operations) if op != "none")

    def table_filter(self) -> TableFilter:
        return TableFilter(
            _split(self.table_include_list),
            _split(self.table_exclude_list),
            _split(self.schema_include_list),
            _split(self.schema_exclude_list),
        )


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")


class TableFilter:
    """Debezium's include/exclude lists: regexes matched against the whole ``schema.table``."""

    def __init__(
        self,
        include: list[str],
        exclude: list[str],
        schema_include: list[str],
        schema_exclude: list[str],
    ) -> None:
        self._include = [re.compile(p) for p in include]
        self._exclude = [re.compile(p) for p in exclude]
        self._schema_include = [re.compile(p) for p in schema_include]
        self._schema_exclude = [re.compile(p) for p in schema_exclude]

    def __call__(self, namespace: str, table: str) -> bool:
        if namespace in ("pg_catalog", "information_schema"):
            return False
        full = f"{namespace}.{table}"
        if self._schema_include and not any(p.fullmatch(namespace) for p in self._schema_include):
            return False
        if any(p.fullmatch(namespace) for p in self._schema_exclude):
            return False
        if self._include:
            return any(p.fullmatch(full) for p in self._include)
        return not any(p.fullmatch(full) for p in self._exclude)
