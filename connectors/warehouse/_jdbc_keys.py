"""The config keys of Confluent's JDBC sink (``JdbcSinkConfig``), sorted by what Sluice does.

Keys ``WarehouseSinkConfig`` implements need no entry; ``hub.api.upstream`` explains the
classes, docs/connectors/warehouse.md lists them for users.
"""

from __future__ import annotations

from hub.api import KAFKA_CONNECT, UpstreamKeys

_KNOWN = frozenset({
    "connection.url", "connection.user", "connection.password", "connection.attempts",
    "connection.backoff.ms", "jdbc.credentials.provider.class", "dialect.name",
    "insert.mode", "batch.size", "delete.enabled", "table.types", "replace.null.with.default",
    "table.name.format", "pk.mode", "pk.fields", "fields.whitelist", "db.timezone",
    "date.timezone", "timestamp.fields.list", "timestamp.precision.mode",
    "date.calendar.system", "string.output.value.column.name", "auto.create", "auto.evolve",
    "quote.sql.identifiers", "mssql.use.merge.holdlock", "max.retries", "retry.backoff.ms",
    "trim.sensitive.log",
})  # fmt: skip

_IGNORED = {
    "connection.attempts": "JDBC connection retries (the worker retries failed writes)",
    "connection.backoff.ms": "JDBC connection retries (the worker retries failed writes)",
    "max.retries": "the sink's own write retries (the worker retries failed writes, "
    "errors.retry.timeout)",
    "retry.backoff.ms": "the sink's own write retries (the worker retries failed writes, "
    "errors.retry.timeout)",
    "trim.sensitive.log": "the JDBC sink's logging of statements (Sluice never logs values)",
}

_EQUIVALENT = {
    "dialect.name": ("",),
    "quote.sql.identifiers": ("always",),
    "table.types": ("TABLE",),
    "db.timezone": ("UTC",),
}

CONFLUENT_JDBC = (
    UpstreamKeys(
        system="Confluent JDBC sink",
        known=_KNOWN,
        known_patterns=(r"jdbc\.credentials\.provider\..+",),
        ignored=_IGNORED,
        equivalent=_EQUIVALENT,
        doc="docs/connectors/warehouse.md",
    )
    | KAFKA_CONNECT
)
