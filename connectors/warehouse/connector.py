"""The warehouse sink connector: topics into SQL tables (SQLAlchemy), Confluent JDBC configs.

``io.confluent.connect.jdbc.JdbcSinkConnector`` is an alias, so a Confluent JDBC sink config
is accepted unchanged; see docs/connectors/warehouse.md for the keys and what differs.
Tasks share nothing: each writes the partitions it is assigned in its own transactions, so
``tasks.max`` tasks simply split the topic partitions among themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connectors.warehouse.config import WarehouseSinkConfig
from connectors.warehouse.sink_task import WarehouseSinkTask
from hub.api import ConfigError, ExactlyOnceSupport, SinkConnector

log = logging.getLogger(__name__)


class WarehouseSinkConnector(SinkConnector):
    name = "warehouse-sink"
    aliases = ("io.confluent.connect.jdbc.JdbcSinkConnector", "JdbcSinkConnector")
    config_model = WarehouseSinkConfig
    description = (
        "Write topics into SQL tables (PostgreSQL, DuckDB, SQLite, any SQLAlchemy dialect): "
        "insert/upsert/update, auto create/evolve, deletes, Debezium change events."
    )

    def start(self, config: Any) -> None:
        self.config: WarehouseSinkConfig = config
        target = config.url().render_as_string(hide_password=True)
        log.info("[%s] warehouse sink to %s", self.name, target)

    @classmethod
    def task_class(cls) -> type[WarehouseSinkTask]:
        return WarehouseSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        base = self.config.raw()
        return [{**base, "task.id": i} for i in range(max(1, max_tasks))]

    @classmethod
    def exactly_once_delivery(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """``insert.mode=upsert`` (or ``update``) rewrites a redelivered record's own row (its
        key, or with ``pk.mode=kafka`` its topic/partition/offset): no duplicate rows. Plain
        inserts append a second row."""
        mode = str(config.get("insert.mode", "insert")).strip().lower()
        if mode in ("upsert", "update"):
            return ExactlyOnceSupport.SUPPORTED
        return ExactlyOnceSupport.UNSUPPORTED

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        try:
            WarehouseSinkConfig.parse(raw)
        except ConfigError as exc:
            return exc.errors
        return {}
