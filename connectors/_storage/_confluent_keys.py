"""The config keys of Confluent's S3 sink and HDFS 3 sink, sorted by what Sluice does.

Facts from Confluent's config definitions (``StorageCommonConfig``,
``StorageSinkConnectorConfig``, ``PartitionerConfig``, ``HiveConfig``, ``AvroDataConfig``,
``S3SinkConnectorConfig``, ``HdfsSinkConnectorConfig``). Keys the config models implement
need no entry; ``hub.api.upstream`` explains the classes, docs/connectors/s3.md and hdfs.md
list them for users.
"""

from __future__ import annotations

from hub.api import KAFKA_CONNECT, UpstreamKeys

_STORAGE_KNOWN = frozenset({
    "storage.class", "store.url", "topics.dir", "directory.delim", "file.delim",
    "format.class", "flush.size", "rotate.interval.ms", "rotate.schedule.interval.ms",
    "retry.backoff.ms", "shutdown.timeout.ms", "filename.offset.zero.pad.width",
    "schema.compatibility", "avro.codec", "parquet.codec", "enhanced.avro.schema.support",
    "connect.meta.data", "allow.optional.map.keys", "schemas.cache.config",
    "partitioner.class", "partition.field.name", "partition.duration.ms", "path.format",
    "locale", "timezone", "timestamp.extractor", "timestamp.field",
    "hive.integration", "hive.metastore.uris", "hive.conf.dir", "hive.home", "hive.database",
    "hive.table.name",
})  # fmt: skip

_STORAGE_IGNORED = {
    "retry.backoff.ms": "the storage client's retry backoff",
    "shutdown.timeout.ms": "the JVM's wait for uploads at shutdown",
}

_STORAGE_EQUIVALENT = {
    "directory.delim": ("/",),
    "file.delim": ("+",),
    "hive.integration": ("false",),
}

_S3_KNOWN = frozenset({
    "s3.bucket.name", "s3.region", "s3.part.size", "s3.part.retries", "s3.retry.backoff.ms",
    "s3.compression.type", "s3.compression.level", "s3.path.style.access.enabled",
    "s3.credentials.provider.class", "aws.access.key.id", "aws.secret.access.key",
    "s3.object.tagging", "s3.object.tagging.key.value.pairs",
    "s3.object.behavior.on.tagging.error", "s3.ssea.name", "s3.sse.kms.key.id",
    "s3.sse.customer.key", "s3.acl.canned", "s3.wan.mode", "s3.send.digest",
    "s3.proxy.url", "s3.proxy.user", "s3.proxy.password", "s3.http.send.expect.continue",
    "s3.elastic.buffer.enable", "s3.elastic.buffer.init.capacity",
    "s3.schema.partition.affix.type", "format.bytearray.extension",
    "format.bytearray.separator", "behavior.on.null.values", "report.null.values.to.dlq",
    "tombstone.encoded.partition", "json.decimal.format", "store.kafka.keys",
    "store.kafka.headers", "keys.format.class", "headers.format.class",
    "partitioner.max.open.files", "rotate.file.on.partition.change", "max.write.duration.ms",
    "enable.conditional.writes", "max.files.scan.limit",
})  # fmt: skip

_S3_IGNORED = {
    "s3.retry.backoff.ms": "the AWS SDK's retry backoff (botocore backs off itself)",
    "s3.http.send.expect.continue": "an HTTP header of the AWS SDK",
    "s3.elastic.buffer.enable": "the JVM buffer that holds a part before upload",
    "s3.elastic.buffer.init.capacity": "the JVM buffer that holds a part before upload",
}

_S3_EQUIVALENT = {
    "storage.class": ("io.confluent.connect.s3.storage.S3Storage",),
    "s3.wan.mode": ("false",),
    "s3.send.digest": ("false",),
    "store.kafka.keys": ("false",),
    "store.kafka.headers": ("false",),
}

_HDFS_KNOWN = frozenset({
    "hdfs.url", "hadoop.conf.dir", "hadoop.home", "logs.dir", "hdfs.authentication.kerberos",
    "connect.hdfs.principal", "connect.hdfs.keytab", "hdfs.namenode.principal",
    "kerberos.ticket.renew.period.ms", "topic.capture.groups.regex",
})  # fmt: skip

_HDFS_IGNORED = {
    "hadoop.conf.dir": "the Hadoop client's configuration (Sluice speaks WebHDFS to hdfs.url)",
    "hadoop.home": "the Hadoop client's installation",
    "kerberos.ticket.renew.period.ms": "the JVM's Kerberos ticket renewal thread",
}

_HDFS_EQUIVALENT = {
    "storage.class": ("io.confluent.connect.hdfs3.storage.HdfsStorage",
                      "io.confluent.connect.hdfs.storage.HdfsStorage"),
}  # fmt: skip

CONFLUENT_S3 = (
    UpstreamKeys(
        system="Confluent S3 sink",
        known=_STORAGE_KNOWN | _S3_KNOWN,
        ignored={**_STORAGE_IGNORED, **_S3_IGNORED},
        equivalent={**_STORAGE_EQUIVALENT, **_S3_EQUIVALENT},
        doc="docs/connectors/s3.md",
    )
    | KAFKA_CONNECT
)
CONFLUENT_HDFS3 = (
    UpstreamKeys(
        system="Confluent HDFS 3 sink",
        known=_STORAGE_KNOWN | _HDFS_KNOWN,
        ignored={**_STORAGE_IGNORED, **_HDFS_IGNORED},
        equivalent={**_STORAGE_EQUIVALENT, **_HDFS_EQUIVALENT},
        doc="docs/connectors/hdfs.md",
    )
    | KAFKA_CONNECT
)
