"""WarehouseSinkConfig: Confluent JDBC sink keys, meaning the same here.

Keys and defaults follow ``io.confluent.connect.jdbc.JdbcSinkConnector`` (``insert.mode``
insert, ``pk.mode`` none, ``batch.size`` 3000, ``auto.create``/``auto.evolve``/
``delete.enabled`` false, ``table.name.format`` ``${topic}``), so a config written for it
validates unchanged. Its cross-field rules are checked here too, so the REST API's 400 names
the key to fix: ``delete.enabled`` needs ``pk.mode=record_key``; ``upsert``/``update`` need a
key (``pk.mode`` other than none); ``pk.mode=kafka`` takes zero or exactly three ``pk.fields``.

Extensions (defaults keep Confluent's behaviour): ``truncate.enabled`` (apply Debezium
truncate events), ``debezium.unwrap`` (auto/true/false: read change-event envelopes directly).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field, field_validator

from connectors.warehouse._jdbc_keys import CONFLUENT_JDBC
from connectors.warehouse.jdbc_url import require_driver, to_sqlalchemy_url
from hub.api import ConfigError, ConfigModel, Password
from hub.api.paths import check_database

KAFKA_PK_FIELDS = ("__connect_topic", "__connect_partition", "__connect_offset")


def _split(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class WarehouseSinkConfig(ConfigModel):
    """Settings of ``warehouse-sink`` (alias io.confluent.connect.jdbc.JdbcSinkConnector)."""

    upstream_keys = CONFLUENT_JDBC

    topics: str | None = Field(None, description="Comma-separated topics to read.")
    topics_regex: str | None = Field(None, alias="topics.regex", description="Topic regex.")
    connection_url: str = Field(
        alias="connection.url",
        description="JDBC URL (jdbc:postgresql://host:5432/db, jdbc:sqlite:path, "
        "jdbc:duckdb:path) or SQLAlchemy URL (postgresql+psycopg://user@host/db).",
    )
    connection_user: str | None = Field(None, alias="connection.user")
    connection_password: Password | None = Field(None, alias="connection.password")
    insert_mode: Literal["insert", "upsert", "update"] = Field(
        "insert",
        alias="insert.mode",
        description="insert: plain INSERT (COPY on PostgreSQL); upsert: insert or update by "
        "primary key (ON CONFLICT); update: UPDATE existing rows by primary key only.",
    )
    pk_mode: Literal["none", "kafka", "record_key", "record_value"] = Field(
        "none", alias="pk.mode", description="Where the primary key comes from."
    )
    pk_fields: list[str] = Field(
        default_factory=list,
        alias="pk.fields",
        description="Primary key columns; meaning depends on pk.mode (see the docs).",
    )
    fields_whitelist: list[str] = Field(
        default_factory=list,
        alias="fields.whitelist",
        description="Value fields to write (empty: all). Key fields are always written.",
    )
    auto_create: bool = Field(
        False, alias="auto.create", description="CREATE TABLE from the record schema if missing."
    )
    auto_evolve: bool = Field(
        False, alias="auto.evolve", description="ALTER TABLE ADD nullable columns for new fields."
    )
    table_name_format: str = Field(
        "${topic}",
        alias="table.name.format",
        description="Destination table; ${topic} is the record's topic. A dot separates "
        "schema and table.",
    )
    delete_enabled: bool = Field(
        False,
        alias="delete.enabled",
        description="Tombstones (null values) and Debezium deletes delete the row by key.",
    )
    truncate_enabled: bool = Field(
        False, alias="truncate.enabled", description="Debezium truncate events empty the table."
    )
    debezium_unwrap: Literal["auto", "true", "false"] = Field(
        "auto",
        alias="debezium.unwrap",
        description="Read Debezium change events (before/after/op) as row changes: auto "
        "detects them by their envelope.",
    )
    batch_size: int = Field(
        3000, alias="batch.size", ge=1, description="Rows per statement or COPY flush."
    )

    @field_validator("pk_fields", "fields_whitelist", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        return _split(value)

    @field_validator("debezium_unwrap", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else str(value).lower()

    @field_validator("connection_url")
    @classmethod
    def _url(cls, value: str) -> str:
        url = to_sqlalchemy_url(value)  # raises ValueError with the hint
        require_driver(url)  # a missing driver (DuckDB: the duckdb extra) is named here
        check_database(url.drivername, url.database)  # a SQLite/DuckDB file: file.allowed.paths
        return value

    @field_validator("table_name_format")
    @classmethod
    def _format(cls, value: str) -> str:
        if not value.replace("${topic}", "x").strip(". "):
            raise ValueError("must produce a table name")
        return value

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        config = super().parse(raw)
        errors = config.cross_field_errors()
        if errors:
            raise ConfigError(f"invalid {cls.__name__}", errors)
        return config

    def cross_field_errors(self) -> dict[str, list[str]]:
        """Rules between keys, as Confluent's sink enforces them at start."""
        errors: dict[str, list[str]] = {}
        if not (self.topics or self.topics_regex):
            errors["topics"] = ["Missing required configuration: set 'topics' or 'topics.regex'"]
        if self.delete_enabled and self.pk_mode != "record_key":
            errors["delete.enabled"] = [
                "requires pk.mode=record_key (a delete finds its row by the record key)"
            ]
        if self.insert_mode != "insert" and self.pk_mode == "none":
            errors["pk.mode"] = [f"insert.mode={self.insert_mode} needs a primary key: set "
                                 "pk.mode to kafka, record_key or record_value"]  # fmt: skip
        if self.pk_mode == "kafka" and len(self.pk_fields) not in (0, 3):
            errors["pk.fields"] = ["pk.mode=kafka takes three names (topic, partition, offset "
                                   "columns) or none for the defaults"]  # fmt: skip
        return errors

    def url(self) -> Any:
        """The SQLAlchemy URL, credentials applied."""
        return to_sqlalchemy_url(self.connection_url, self.connection_user,
                                 self.connection_password)  # fmt: skip
