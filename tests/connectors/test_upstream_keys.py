"""Every connector's config rejects, by name, the keys its upstream system defines and Sluice
does not implement; keys that only tune JVM internals pass with a warning; custom keys pass.
The REST-level check (``connector_errors``) reports them as Kafka Connect's validate does."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connectors.file.config import FileSinkConfig, FileSourceConfig
from connectors.hdfs.config import HdfsSinkConfig
from connectors.http.config import HttpPollConfig, WebhookConfig
from connectors.mirror.config import MirrorSourceConfig
from connectors.postgres_cdc._debezium_keys import DEBEZIUM_POSTGRES
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.s3.config import S3SinkConfig
from connectors.warehouse.config import WarehouseSinkConfig
from hub.api import KAFKA_CONNECT, ConfigError, ConfigModel

S3 = {"topics": "t", "flush.size": "3", "format.class": "json", "s3.bucket.name": "b"}
HDFS = {"topics": "t", "flush.size": "3", "format.class": "json", "hdfs.url": "hdfs://nn:8020"}
JDBC = {"topics": "t", "connection.url": "jdbc:sqlite:/tmp/x.db"}


def errors(model: type[ConfigModel], raw: dict[str, str]) -> dict[str, list[str]]:
    with pytest.raises(ConfigError) as info:
        model.parse(raw)
    return info.value.errors


@pytest.mark.parametrize(
    ("model", "base", "unsupported"),
    [
        (S3SinkConfig, S3, ["s3.sse.kms.key.id", "behavior.on.null.values", "s3.ssea.name",
                            "hive.metastore.uris", "s3.proxy.url"]),
        (HdfsSinkConfig, HDFS, ["hdfs.namenode.principal", "hive.database",
                                "topic.capture.groups.regex"]),
        (WarehouseSinkConfig, JDBC, ["timestamp.fields.list", "date.timezone",
                                     "jdbc.credentials.provider.class"]),
        (FileSourceConfig, {"file": "/tmp/x", "topic": "t"}, ["connector.plugin.version"]),
        (FileSinkConfig, {"topics": "t"}, ["admin.override.x"]),
        (HttpPollConfig, {"topic": "t", "url": "http://x"}, ["producer.override.acks"]),
        (WebhookConfig, {"topic": "t"}, ["topic.creation.groups"]),
    ],
)  # fmt: skip
def test_known_unsupported_keys_are_errors(model, base, unsupported) -> None:
    raw = {**base, **{key: "x" for key in unsupported}, "my.custom.key": "kept"}
    got = errors(model, raw)
    assert set(got) == set(unsupported)
    for key in unsupported:
        assert "does not support" in got[key][0] and key in got[key][0]
    model.parse({**base, "my.custom.key": "kept", "errors.tolerance": "all",
                 "transforms": "a", "transforms.a.type": "x"})  # fmt: skip


def test_equivalent_values_and_ignored_keys(caplog: pytest.LogCaptureFixture) -> None:
    S3SinkConfig.parse({**S3, "store.kafka.keys": "false", "directory.delim": "/"})
    assert "store.kafka.keys" in errors(S3SinkConfig, {**S3, "store.kafka.keys": "true"})
    S3SinkConfig.parse({**S3, "schema.compatibility": "backward"})  # projecting: implemented
    assert "schema.compatibility" in errors(S3SinkConfig, {**S3, "schema.compatibility": "X"})
    assert "locale" in errors(S3SinkConfig, {**S3, "locale": "de_DE"})
    WarehouseSinkConfig.parse({**JDBC, "quote.sql.identifiers": "always", "db.timezone": "UTC"})
    with caplog.at_level(logging.WARNING):
        S3SinkConfig.parse({**S3, "s3.retry.backoff.ms": "50", "shutdown.timeout.ms": "1"})
        HdfsSinkConfig.parse({**HDFS, "hadoop.conf.dir": "/etc/hadoop"})
        WarehouseSinkConfig.parse({**JDBC, "max.retries": "3"})
    for key in ("s3.retry.backoff.ms", "shutdown.timeout.ms", "hadoop.conf.dir", "max.retries"):
        assert key in caplog.text


def test_every_debezium_doc_key_is_sorted() -> None:
    """Each key of the documented list is implemented, equivalent, ignored or rejected."""
    implemented = PostgresCdcConfig.implemented_keys()
    base = {"database.hostname": "h", "database.user": "u", "database.dbname": "d",
            "topic.prefix": "p"}  # fmt: skip
    for key in sorted(DEBEZIUM_POSTGRES.known):
        if key in implemented or key in DEBEZIUM_POSTGRES.implemented:
            continue
        try:
            PostgresCdcConfig.parse({**base, key: "some-value"})
        except ConfigError as exc:
            assert key in exc.errors, key
        else:
            assert key in DEBEZIUM_POSTGRES.ignored, key


def test_rest_validation_reports_unsupported_keys() -> None:
    from hub.plugins.manager import create_plugin_manager
    from hub.runtime.config import WorkerConfig
    from hub.runtime.validation import connector_errors

    registry = create_plugin_manager(load_entrypoints=False)
    cls = registry.connectors()["io.debezium.connector.postgresql.PostgresConnector"]
    config = {
        "name": "c",
        "connector.class": cls.name,
        "database.hostname": "h",
        "database.user": "u",
        "database.dbname": "d",
        "topic.prefix": "p",
        "column.propagate.source.type": ".*",
        "exactly.once.support": "required",  # refused: the worker's support is disabled
    }
    got = connector_errors(registry, WorkerConfig(), cls, config)
    assert set(got) == {"column.propagate.source.type", "exactly.once.support"}


@pytest.mark.parametrize(
    ("doc", "model"),
    [("postgres-cdc.md", PostgresCdcConfig), ("s3.md", S3SinkConfig),
     ("hdfs.md", HdfsSinkConfig), ("warehouse.md", WarehouseSinkConfig),
     ("config-keys.md", FileSourceConfig), ("mirror.md", MirrorSourceConfig)],
)  # fmt: skip
def test_docs_name_every_rejected_ignored_and_equivalent_key(doc: str, model) -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "connectors" / doc).read_text()
    keys = model.upstream_keys
    named = [*keys.unsupported_keys(model.implemented_keys()), *keys.ignored, *keys.equivalent]
    if doc != "config-keys.md":  # Kafka Connect's own keys are listed there, once
        named = [k for k in named if k not in KAFKA_CONNECT.known | set(KAFKA_CONNECT.equivalent)]
    missing = [k for k in named if f"`{k}" not in text]
    assert not missing, f"docs/connectors/{doc} does not name {missing}"
