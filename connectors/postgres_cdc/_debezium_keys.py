"""The config keys of Debezium's PostgreSQL connector (2.x/3.x), sorted by what Sluice does.

Facts from Debezium's documentation and config definitions (``PostgresConnectorConfig``,
``RelationalDatabaseConnectorConfig``, ``CommonConnectorConfig``), plus the 1.x names a copied
config may still carry. ``hub.api.upstream`` explains the classes; docs/connectors/
postgres-cdc.md lists them for users. Keys the config model implements need no entry here.
"""

from __future__ import annotations

from hub.api import KAFKA_CONNECT, UpstreamKeys

_KNOWN = frozenset({
    # connection and TLS
    "database.hostname", "database.port", "database.user", "database.password",
    "database.dbname", "database.sslmode", "database.sslcert", "database.sslkey",
    "database.sslpassword", "database.sslrootcert", "database.sslfactory",
    "database.tcpKeepAlive", "database.initial.statements", "database.query.timeout.ms",
    "database.connection.factory.class", "connection.validation.timeout.ms",
    # naming
    "topic.prefix", "topic.naming.strategy", "topic.delimiter", "topic.cache.size",
    "topic.heartbeat.prefix", "topic.heartbeat.name", "topic.transaction",
    "schema.name.adjustment.mode", "field.name.adjustment.mode",
    # replication
    "plugin.name", "slot.name", "slot.drop.on.stop", "slot.stream.params", "slot.failover",
    "slot.max.retries", "slot.retry.delay.ms", "publication.name",
    "publication.autocreate.mode", "publish.via.partition.root", "replica.identity.autoset.values",
    "lsn.flush.mode", "flush.lsn.source", "lsn.flush.timeout.ms", "lsn.flush.timeout.action",
    "offset.mismatch.strategy", "status.update.interval.ms", "xmin.fetch.interval.ms",
    # filters and event content
    "schema.include.list", "schema.exclude.list", "table.include.list", "table.exclude.list",
    "table.ignore.builtin", "column.include.list", "column.exclude.list",
    "message.key.columns", "column.propagate.source.type", "datatype.propagate.source.type",
    "message.prefix.include.list", "message.prefix.exclude.list", "skipped.operations",
    "skip.messages.without.change", "tombstones.on.delete", "provide.transaction.metadata",
    "transaction.metadata.factory", "sourceinfo.struct.maker", "extended.headers.enabled",
    "unavailable.value.placeholder", "converters", "post.processors",
    "custom.sanitize.pattern",
    # type mapping
    "decimal.handling.mode", "time.precision.mode", "interval.handling.mode",
    "binary.handling.mode", "hstore.handling.mode", "money.fraction.digits",
    "include.unknown.datatypes", "schema.refresh.mode",
    # snapshots
    "snapshot.mode", "snapshot.mode.custom.name",
    "snapshot.mode.configuration.based.snapshot.data",
    "snapshot.mode.configuration.based.snapshot.schema",
    "snapshot.mode.configuration.based.start.stream",
    "snapshot.mode.configuration.based.snapshot.on.schema.error",
    "snapshot.mode.configuration.based.snapshot.on.data.error",
    "snapshot.isolation.mode", "snapshot.locking.mode", "snapshot.locking.mode.custom.name",
    "snapshot.lock.timeout.ms", "snapshot.query.mode", "snapshot.query.mode.custom.name",
    "snapshot.select.statement.overrides", "snapshot.include.collection.list",
    "snapshot.fetch.size", "snapshot.delay.ms", "streaming.delay.ms", "snapshot.max.threads",
    "snapshot.max.threads.multiplier", "legacy.snapshot.max.threads",
    "snapshot.tables.order.by.row.count", "incremental.snapshot.chunk.size",
    "incremental.snapshot.watermarking.strategy", "incremental.snapshot.allow.schema.changes",
    # signals, notifications, heartbeats
    "signal.data.collection", "signal.enabled.channels", "signal.poll.interval.ms",
    "signal.emit.failure.backoff.ms", "signal.emit.failure.max.retries",
    "notification.enabled.channels", "heartbeat.interval.ms", "heartbeat.action.query",
    "heartbeat.topics.prefix",
    # engine, queues, errors, metrics
    "max.batch.size", "max.queue.size", "max.queue.size.in.bytes", "poll.interval.ms",
    "poll.dispatch.interval.ms", "query.fetch.size", "queue.provider.type",
    "executor.shutdown.timeout.ms", "event.processing.failure.handling.mode",
    "event.converting.failure.handling.mode", "errors.max.retries",
    "retriable.restart.connector.wait.ms", "custom.metric.tags", "statistics.metrics.enabled",
    "guardrail.collections.max", "guardrail.collections.limit.action",
    # Debezium 1.x names (removed in 2.0)
    "database.server.name", "table.whitelist", "table.blacklist", "schema.whitelist",
    "schema.blacklist", "column.whitelist", "column.blacklist", "snapshot.custom.class",
})  # fmt: skip

_KNOWN_PATTERNS = (
    r"column\.truncate\.to\.\d+\.chars",
    r"column\.mask\.with\.\d+\.chars",
    r"column\.mask\.hash\..+",
    r"snapshot\.select\.statement\.overrides\..+",
    r"signal\..+",
    r"notification\..+",
    r"openlineage\..+",
    r"guardrail\..+",
    # Debezium hands every other database.* and driver.* key to the JDBC driver
    r"database\..+",
    r"driver\..+",
)

_IGNORED = {
    "max.queue.size": "size of the connector's internal event queue",
    "max.queue.size.in.bytes": "byte bound of the connector's internal event queue",
    "poll.dispatch.interval.ms": "batching of the connector's internal event queue",
    "queue.provider.type": "implementation of the connector's internal event queue",
    "query.fetch.size": "JDBC fetch size of catalog queries",
    "snapshot.max.threads": "snapshot threads (Sluice reads tables one by one)",
    "snapshot.max.threads.multiplier": "snapshot threads (Sluice reads tables one by one)",
    "legacy.snapshot.max.threads": "snapshot threads (Sluice reads tables one by one)",
    "snapshot.lock.timeout.ms": "lock wait of a locking snapshot (Sluice's takes no locks)",
    "slot.max.retries": "retries of slot creation (Sluice waits for a busy slot itself)",
    "slot.retry.delay.ms": "retries of slot creation (Sluice waits for a busy slot itself)",
    "connection.validation.timeout.ms": "JDBC connection validation",
    "database.connection.factory.class": "JDBC connection factory",
    "database.query.timeout.ms": "JDBC statement timeout of catalog queries",
    "database.sslfactory": "Java SSL socket factory (libpq verifies per database.sslmode)",
    "executor.shutdown.timeout.ms": "JVM executor shutdown",
    "topic.cache.size": "an in-memory cache of topic names",
    "custom.metric.tags": "JMX metric tags",
    "statistics.metrics.enabled": "JMX metric statistics",
}

_EQUIVALENT = {
    "time.precision.mode": ("adaptive",),
    "interval.handling.mode": ("numeric",),
    "binary.handling.mode": ("bytes",),
    "money.fraction.digits": ("2",),
    "schema.refresh.mode": ("columns_diff",),
    "field.name.adjustment.mode": ("none",),
    "topic.delimiter": (".",),
    "topic.naming.strategy": ("io.debezium.schema.SchemaTopicNamingStrategy",),
    "table.ignore.builtin": ("true",),
    "publish.via.partition.root": ("false",),
    "lsn.flush.mode": ("connector",),
    "flush.lsn.source": ("true",),
    "xmin.fetch.interval.ms": ("0",),
    "snapshot.isolation.mode": ("serializable", "repeatable_read"),
    "snapshot.locking.mode": ("none",),
    "snapshot.query.mode": ("select_all",),
    "snapshot.delay.ms": ("0",),
    "streaming.delay.ms": ("0",),
    "skip.messages.without.change": ("false",),
    "extended.headers.enabled": ("false",),
    "event.processing.failure.handling.mode": ("fail",),
    "errors.max.retries": ("-1",),
    "incremental.snapshot.allow.schema.changes": ("false",),
}

DEBEZIUM_POSTGRES = (
    UpstreamKeys(
        system="Debezium PostgreSQL connector",
        known=_KNOWN,
        known_patterns=_KNOWN_PATTERNS,
        implemented=frozenset({"database.server.name", "topic.heartbeat.prefix"}),
        implemented_patterns=(
            r"column\.truncate\.to\.\d+\.chars",
            r"column\.mask\.with\.\d+\.chars",
            r"column\.mask\.hash\.(v2\.)?[^.]+\.with\.salt\..+",
        ),
        ignored=_IGNORED,
        equivalent=_EQUIVALENT,
        doc="docs/connectors/postgres-cdc.md",
    )
    | KAFKA_CONNECT
)
"""Every key a Debezium PostgreSQL connector config may carry, Kafka Connect's included."""
