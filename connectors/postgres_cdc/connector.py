"""``postgres-cdc``: the PostgreSQL change-data-capture source (Debezium-compatible).

``connector.class`` may be Debezium's ``io.debezium.connector.postgresql.PostgresConnector``
and the rest of a Debezium config is read as-is (see ``config``). Always one task: a logical
replication slot is one ordered stream, and splitting it would break commit order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.source_task import PostgresCdcSourceTask
from hub.api import ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector

log = logging.getLogger(__name__)


class PostgresCdcConnector(SourceConnector):
    name = "postgres-cdc"
    aliases = ("io.debezium.connector.postgresql.PostgresConnector", "PostgresConnector")
    version = "0.1.0"
    config_model = PostgresCdcConfig
    description = (
        "Stream every committed insert, update, delete and truncate of PostgreSQL tables "
        "(pgoutput logical decoding) as Debezium change events, after a consistent snapshot."
    )

    def start(self, config: Any) -> None:
        self.config: PostgresCdcConfig = config
        log.info("[%s] capturing %s:%s/%s into %s.*", self.name, config.hostname, config.port,
                 config.dbname, config.topic_prefix)  # fmt: skip

    @classmethod
    def task_class(cls) -> type[PostgresCdcSourceTask]:
        return PostgresCdcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """Exactly one task, whatever ``max_tasks`` allows (see the module docstring)."""
        return [self.config.raw()]

    @classmethod
    def exactly_once_support(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """Streamed changes resume exactly after the committed (commit LSN, event number), and
        the slot is confirmed only up to what a committed transaction holds, so streaming is
        exactly once. A snapshot is not resumable: one cut short starts over, and ``always``
        (or ``configuration_based`` with ``snapshot.data``) re-reads every table on each
        start. So: SUPPORTED without snapshots (``never``, ``no_data``), or with a one-time
        snapshot (``initial``, ``initial_only``) when the task holds it in one transaction
        (``transaction.boundary=connector``); UNSUPPORTED otherwise."""
        mode = str(config.get("snapshot.mode", "initial")).strip().lower()
        boundary = str(config.get("transaction.boundary", "poll")).strip().lower()
        if mode in ("never", "no_data"):
            return ExactlyOnceSupport.SUPPORTED
        if mode in ("initial", "initial_only") and boundary == "connector":
            return ExactlyOnceSupport.SUPPORTED
        return ExactlyOnceSupport.UNSUPPORTED

    @classmethod
    def can_define_transaction_boundaries(
        cls, config: Mapping[str, Any]
    ) -> ConnectorTransactionBoundaries:
        """The task keeps a whole snapshot in one transaction and commits after each poll
        of the change stream."""
        return ConnectorTransactionBoundaries.SUPPORTED

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        tasks = str(raw.get("tasks.max", "1")).strip()
        if tasks not in ("", "1"):
            return {"tasks.max": ["must be 1: one replication slot is one ordered stream that "
                                  "only one task can consume; set tasks.max=1"]}  # fmt: skip
        return {}
