"""Typed config of ``postgres-cdc``, keyed by Debezium's PostgreSQL connector names.

A Debezium user POSTs the config they already have: the keys below keep Debezium's names,
meanings and defaults, with two deliberate differences (documented in
docs/connectors/postgres-cdc.md): only ``plugin.name=pgoutput`` is supported (it ships with
PostgreSQL; decoderbufs/wal2json need server extensions), and truncate events are emitted by
default (``skipped.operations=none``), because the hub promises every committed change.

Every other key Debezium defines is sorted by ``_debezium_keys``: implemented here, accepted
because Sluice behaves as its given value, ignored with a warning (JVM-internal tuning), or a
validation error naming it. The column rules (``column.mask.*``, ``column.truncate.*``) are
key families read from the extra keys by ``column_rules``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from connectors.postgres_cdc._debezium_keys import DEBEZIUM_POSTGRES
from connectors.postgres_cdc._regex_list import compile_list, matches_any
from connectors.postgres_cdc.columns import ColumnRules, key_columns_errors, value_rules
from hub.api import ConfigError, ConfigModel, Password

SnapshotMode = Literal[
    "initial", "initial_only", "never", "no_data", "when_needed", "always", "configuration_based"
]
_EXCLUSIVE = (("table.include.list", "table.exclude.list"),
              ("schema.include.list", "schema.exclude.list"),
              ("column.include.list", "column.exclude.list"))  # fmt: skip


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class PostgresCdcConfig(ConfigModel):
    """Settings of ``postgres-cdc`` (alias: Debezium's PostgresConnector class name)."""

    upstream_keys = DEBEZIUM_POSTGRES

    hostname: str = Field(alias="database.hostname", description="PostgreSQL host.")
    port: int = Field(5432, alias="database.port", gt=0, lt=65536)
    user: str = Field(alias="database.user", description="Role with LOGIN and REPLICATION.")
    password: Password = Field("", alias="database.password")
    dbname: str = Field(alias="database.dbname", description="Database to capture.")
    sslmode: str = Field("prefer", alias="database.sslmode")
    sslcert: str | None = Field(None, alias="database.sslcert", description="Client certificate.")
    sslkey: str | None = Field(None, alias="database.sslkey", description="Client private key.")
    sslpassword: Password | None = Field(
        None, alias="database.sslpassword", description="Password of database.sslkey."
    )
    sslrootcert: str | None = Field(
        None, alias="database.sslrootcert", description="CA certificate(s) to verify the server."
    )
    tcp_keepalive: bool = Field(
        True, alias="database.tcpKeepAlive", description="TCP keepalives on the connections."
    )
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
    column_include_list: str | None = Field(
        None, alias="column.include.list",
        description="Regexes of schema.table.column names the events carry (all others "
        "are left out of before/after and the value schema).",
    )  # fmt: skip
    column_exclude_list: str | None = Field(
        None, alias="column.exclude.list",
        description="Regexes of schema.table.column names left out of the events.",
    )  # fmt: skip
    message_key_columns: str | None = Field(
        None, alias="message.key.columns",
        description="<table regex>:<col>,<col>;... columns that make the record key instead "
        "of the primary key.",
    )  # fmt: skip
    provide_transaction_metadata: bool = Field(
        False, alias="provide.transaction.metadata",
        description="A transaction block in every event, and BEGIN/END events on "
        "<topic.prefix>.<topic.transaction>.",
    )  # fmt: skip
    topic_transaction: str = Field("transaction", alias="topic.transaction", min_length=1)
    unavailable_value_placeholder: str = Field(
        "__debezium_unavailable_value", alias="unavailable.value.placeholder",
        description="Value of unchanged TOASTed text columns the server did not resend.",
    )  # fmt: skip
    snapshot_mode: SnapshotMode = Field("initial", alias="snapshot.mode")
    snapshot_data: bool = Field(False, alias="snapshot.mode.configuration.based.snapshot.data")
    snapshot_schema: bool = Field(False, alias="snapshot.mode.configuration.based.snapshot.schema")
    start_stream: bool = Field(False, alias="snapshot.mode.configuration.based.start.stream")
    snapshot_on_schema_error: bool = Field(
        False, alias="snapshot.mode.configuration.based.snapshot.on.schema.error"
    )
    snapshot_on_data_error: bool = Field(
        False, alias="snapshot.mode.configuration.based.snapshot.on.data.error"
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
    def _renamed_keys(cls, data: Any) -> Any:
        """Debezium 1.x names the prefix ``database.server.name`` and 2.x names the heartbeat
        prefix ``topic.heartbeat.prefix``: each is read in place of the other name."""
        if not isinstance(data, dict):
            return data
        if "topic.prefix" not in data and "topic_prefix" not in data:
            legacy = data.get("database.server.name")
            if legacy:
                data = {**data, "topic.prefix": legacy}
        if "topic.heartbeat.prefix" in data and "heartbeat.topics.prefix" not in data:
            data = {**data, "heartbeat.topics.prefix": data["topic.heartbeat.prefix"]}
        return data

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        config = super().parse(raw)
        errors = config.cross_field_errors()
        if errors:
            raise ConfigError(f"invalid {cls.__name__}", errors)
        return config

    def cross_field_errors(self) -> dict[str, list[str]]:
        """Debezium's rules between keys, and the column-rule key families."""
        errors: dict[str, list[str]] = {}
        for include, exclude in _EXCLUSIVE:
            if getattr(self, include.replace(".", "_")) and getattr(
                self, exclude.replace(".", "_")
            ):
                errors[exclude] = [f'"{include}" is already specified; use one of them']
        if self.message_key_columns is not None:
            problems = key_columns_errors(self.message_key_columns)
            if problems:
                errors["message.key.columns"] = problems
        for key, problem in value_rules(self.model_extra or {})[1].items():
            errors[key] = [problem]
        return errors

    @field_validator("snapshot_mode", mode="before")
    @classmethod
    def _snapshot_mode(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        mode = value.strip().lower()
        if mode == "custom":
            raise ValueError(
                "'custom' needs a Java Snapshotter plugin (snapshot.mode.custom.name), which "
                "Sluice cannot load; use initial, always, when_needed, no_data, initial_only or "
                "configuration_based"
            )
        return mode

    @field_validator("unavailable_value_placeholder")
    @classmethod
    def _placeholder(cls, value: str) -> str:
        if value.startswith("hex:"):
            raise ValueError(
                "hex: placeholders (bytes for binary columns) are not supported; Sluice "
                "puts the placeholder text in TOASTed text columns and null elsewhere"
            )
        return value

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
                     "schema_exclude_list", "column_include_list",
                     "column_exclude_list")  # fmt: skip
    @classmethod
    def _regexes(cls, value: str | None) -> str | None:
        compile_list(value)  # ValueError names the bad expression
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
        for name in ("sslcert", "sslkey", "sslpassword", "sslrootcert"):
            if getattr(self, name):
                params[name] = getattr(self, name)
        if not self.tcp_keepalive:
            params["keepalives"] = "0"
        params.update(extra)
        return " ".join(f"{k}='{_quote(v)}'" for k, v in params.items())

    @property
    def skipped(self) -> frozenset[str]:
        return frozenset(op for op in _split(self.skipped_operations) if op != "none")

    def column_rules(self) -> ColumnRules:
        rules, _ = value_rules(self.model_extra or {})
        return ColumnRules(self.column_include_list, self.column_exclude_list,
                           self.message_key_columns, rules)  # fmt: skip

    @property
    def streams(self) -> bool:
        """Whether the connector streams changes after its snapshot (or without one)."""
        if self.snapshot_mode == "configuration_based":
            return self.start_stream
        return self.snapshot_mode != "initial_only"

    @property
    def transaction_topic(self) -> str:
        return f"{self.topic_prefix}.{self.topic_transaction}"

    def table_filter(self) -> TableFilter:
        return TableFilter(
            self.table_include_list,
            self.table_exclude_list,
            self.schema_include_list,
            self.schema_exclude_list,
        )


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")


class TableFilter:
    """Debezium's include/exclude lists: regexes (``_regex_list`` rules: case-insensitive,
    escaped commas) matched against the whole schema name or ``schema.table``."""

    def __init__(
        self,
        include: str | None,
        exclude: str | None,
        schema_include: str | None,
        schema_exclude: str | None,
    ) -> None:
        self._include = compile_list(include)
        self._exclude = compile_list(exclude)
        self._schema_include = compile_list(schema_include)
        self._schema_exclude = compile_list(schema_exclude)

    def __call__(self, namespace: str, table: str) -> bool:
        if namespace in ("pg_catalog", "information_schema"):
            return False
        full = f"{namespace}.{table}"
        if self._schema_include and not matches_any(self._schema_include, namespace):
            return False
        if matches_any(self._schema_exclude, namespace):
            return False
        if self._include:
            return matches_any(self._include, full)
        return not matches_any(self._exclude, full)
