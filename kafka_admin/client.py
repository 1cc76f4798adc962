"""``KafkaAdmin``: cluster, topic and offset operations over Kafka's admin API.

The one admin client the CLI (``sluice topics|groups``), the web console and the hub runtime
(internal and output topics) share. Everything goes through confluent-kafka's ``AdminClient``
(and, for on-disk sizes only, kafka-python's DescribeLogDirs, which confluent-kafka does not
expose), so it works the same against Sluice's broker and any other Kafka cluster. Calls are
synchronous with a deadline (``timeout``): a cluster that does not answer becomes an error, not
a hung caller. Errors are confluent-kafka's ``KafkaException`` as raised, ``LookupError`` for a
missing topic, ``ValueError`` for bad input; each caller translates them for its users.

Thread safety: ``AdminClient`` is thread-safe; the kafka-python client is not, so its one use
takes a lock; the known-topics cache has its own lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

from sluice.client_security import to_kafka_python, to_librdkafka

log = logging.getLogger(__name__)

TIMEOUT = 10.0
SIZES_RETRY_AFTER = 60.0
"""After DescribeLogDirs failed, sizes show as unknown this long instead of delaying each page."""
SHOWN_CONFIGS = ("retention.ms", "retention.bytes", "cleanup.policy")


class KafkaAdmin:
    """Read and change topics and groups of the cluster at ``client_config["bootstrap.servers"]``.

    ``internal_topics`` names topics that belong to the platform (the hub's config, offset and
    status topics) so the console can hide them by default like ``__consumer_offsets``.
    """

    def __init__(
        self,
        client_config: Mapping[str, Any],
        internal_topics: Iterable[str] = (),
        *,
        timeout: float = TIMEOUT,
    ) -> None:
        self.client_config = to_librdkafka(client_config)  # Java security forms too
        self.internal_topics = set(internal_topics)
        self.timeout = timeout
        self.admin = AdminClient(self.client_config)
        self._sizes_client: Any = None
        self._sizes_lock = threading.Lock()
        self._sizes_failed_at = -SIZES_RETRY_AFTER
        self._known: set[str] = set()
        self._known_lock = threading.Lock()

    # -- cluster ---------------------------------------------------------------------------------
    def metadata(self, topic: str | None = None) -> Any:
        """Cluster metadata (of one topic only, when given)."""
        if topic is None:
            return self.admin.list_topics(timeout=self.timeout)
        return self.admin.list_topics(topic, timeout=self.timeout)

    def cluster_id(self) -> str:
        return str(self.metadata().cluster_id or "")

    def is_internal(self, topic: str) -> bool:
        """Kafka's own (``__consumer_offsets``), a platform's by convention (``_schemas``,
        ``_confluent-*``: a leading underscore) or one named in ``internal_topics``."""
        return topic.startswith("_") or topic in self.internal_topics

    def overview(self) -> dict[str, Any]:
        md = self.metadata()
        sizes = self.sizes()
        return {
            "cluster_id": md.cluster_id,
            "controller_id": md.controller_id,
            "brokers": sorted(
                ({"id": b.id, "host": b.host, "port": b.port} for b in md.brokers.values()),
                key=lambda b: b["id"],
            ),
            "topics": sum(1 for t in md.topics if not self.is_internal(t)),
            "internal_topics": sum(1 for t in md.topics if self.is_internal(t)),
            "partitions": sum(
                len(m.partitions) for t, m in md.topics.items() if not self.is_internal(t)
            ),
            "internal_partitions": sum(
                len(m.partitions) for t, m in md.topics.items() if self.is_internal(t)
            ),
            "under_replicated": sum(
                1
                for m in md.topics.values()
                for p in m.partitions.values()
                if len(p.isrs) < len(p.replicas)
            ),
            "size_bytes": None
            if sizes is None
            else sum(v for (t, _), v in sizes.items() if not self.is_internal(t)),
            "internal_size_bytes": None
            if sizes is None
            else sum(v for (t, _), v in sizes.items() if self.is_internal(t)),
        }

    def sizes(self) -> dict[tuple[str, int], int] | None:
        """Bytes on disk per partition (largest replica), or None when the cluster won't say."""
        if time.monotonic() - self._sizes_failed_at < SIZES_RETRY_AFTER:
            return None
        try:
            with self._sizes_lock:
                if self._sizes_client is None:
                    from kafka.admin import KafkaAdminClient

                    self._sizes_client = KafkaAdminClient(
                        bootstrap_servers=self.client_config["bootstrap.servers"],
                        request_timeout_ms=int(self.timeout * 1000),
                        **to_kafka_python(self.client_config),
                    )
                answers = self._sizes_client.describe_log_dirs()
        except Exception as exc:  # an optional figure: never fail the page for it
            log.debug("describe_log_dirs failed: %r", exc)
            self._sizes_failed_at = time.monotonic()
            return None
        out: dict[tuple[str, int], int] = {}
        for broker in answers if isinstance(answers, list) else [answers]:
            for log_dir in broker.get("log_dirs", []):
                for topic in log_dir.get("topics", []):
                    for part in topic.get("partitions", []):
                        key = (topic["name"], part["partition_index"])
                        out[key] = max(out.get(key, 0), int(part["partition_size"]))
        return out

    # -- offsets -------------------------------------------------------------------------------
    def watermarks(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[int]]:
        """``[start, end]`` offsets per partition (earliest and latest from ListOffsets)."""
        parts = list(partitions)
        if not parts:
            return {}
        out: dict[tuple[str, int], list[int]] = {p: [0, 0] for p in parts}
        for index, spec in ((0, OffsetSpec.earliest()), (1, OffsetSpec.latest())):
            futures = self.admin.list_offsets(
                {TopicPartition(t, p): spec for t, p in parts}, request_timeout=self.timeout
            )
            for tp, future in futures.items():
                out[(tp.topic, tp.partition)][index] = future.result(self.timeout).offset
        return out

    def offsets_for_time(self, topic: str, partitions: Iterable[int], ts_ms: int) -> dict[int, int]:
        """First offset with timestamp >= ``ts_ms`` per partition (-1: none, i.e. the end)."""
        futures = self.admin.list_offsets(
            {TopicPartition(topic, p): OffsetSpec.for_timestamp(ts_ms) for p in partitions},
            request_timeout=self.timeout,
        )
        return {tp.partition: f.result(self.timeout).offset for tp, f in futures.items()}

    # -- topics --------------------------------------------------------------------------------
    def topics(self) -> list[dict[str, Any]]:
        md = self.metadata()
        names = sorted(md.topics)
        parts = [(t, p) for t in names for p in md.topics[t].partitions]
        marks = self.watermarks(parts)
        sizes = self.sizes()
        configs = self.topic_configs(names) if names else {}
        rows = []
        for name in names:
            meta = md.topics[name].partitions
            ids = sorted(meta)
            cfg = configs.get(name, {})
            rows.append({
                "name": name,
                "internal": self.is_internal(name),
                "partitions": len(ids),
                "replication": max((len(p.replicas) for p in meta.values()), default=0),
                "messages": sum(marks[(name, p)][1] - marks[(name, p)][0] for p in ids),
                "end_offsets": {str(p): marks[(name, p)][1] for p in ids},
                "size_bytes": None if sizes is None else sum(sizes.get((name, p), 0) for p in ids),
                **{key: cfg.get(key, {}).get("value") for key in SHOWN_CONFIGS},
            })  # fmt: skip
        return rows

    def topic(self, name: str) -> dict[str, Any]:
        md = self.metadata()
        meta = md.topics.get(name)
        if meta is None or (meta.error is not None and not meta.partitions):
            raise LookupError(f"Topic {name} not found")
        ids = sorted(meta.partitions)
        marks = self.watermarks((name, p) for p in ids)
        sizes = self.sizes() or {}
        partitions = [
            {
                "partition": p,
                "leader": meta.partitions[p].leader,
                "replicas": list(meta.partitions[p].replicas),
                "isr": list(meta.partitions[p].isrs),
                "under_replicated": len(meta.partitions[p].isrs) < len(meta.partitions[p].replicas),
                "start_offset": marks[(name, p)][0],
                "end_offset": marks[(name, p)][1],
                "size_bytes": sizes.get((name, p)),
            }
            for p in ids
        ]
        configs = self.topic_configs([name]).get(name, {})
        return {
            "name": name,
            "internal": self.is_internal(name),
            "partitions": partitions,
            "configs": configs,
        }

    def topic_configs(self, names: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """Per topic, per config key: value, whether it is the default, whether it is secret."""
        resources = [ConfigResource(ConfigResource.Type.TOPIC, n) for n in names]
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for resource, future in self.admin.describe_configs(
            resources, request_timeout=self.timeout
        ).items():
            try:
                entries = future.result(self.timeout)
            except Exception as exc:  # a topic deleted meanwhile: show it without configs
                log.debug("describe_configs topic=%s failed: %r", resource.name, exc)
                continue
            out[resource.name] = {
                key: {
                    "value": entry.value,
                    "is_default": bool(entry.is_default),
                    "read_only": bool(entry.is_read_only),
                    "sensitive": bool(entry.is_sensitive),
                    "source": config_source(entry),
                }
                for key, entry in sorted(entries.items())
            }
        return out

    def create_topic(
        self, name: str, partitions: int, replication: int, configs: Mapping[str, str]
    ) -> None:
        topic = NewTopic(name, partitions, replication, config=dict(configs))
        self.admin.create_topics([topic], request_timeout=self.timeout)[name].result(self.timeout)

    def delete_topic(self, name: str) -> None:
        self.admin.delete_topics([name], request_timeout=self.timeout)[name].result(self.timeout)

    def alter_topic_configs(
        self, name: str, set_: Mapping[str, str], delete: Iterable[str] = ()
    ) -> None:
        """Incremental: keys not named keep their values (no read-modify-write race)."""
        entries = [
            ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET)
            for k, v in set_.items()
        ] + [ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in delete]
        resource = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=entries)
        for future in self.admin.incremental_alter_configs([resource]).values():
            future.result(self.timeout)

    def create_partitions(self, name: str, total: int) -> None:
        """Grows ``name`` to ``total`` partitions (Kafka never shrinks a topic)."""
        self.admin.create_partitions([NewPartitions(name, total)])[name].result(self.timeout)

    def delete_records(self, name: str, before: Mapping[int, int]) -> dict[int, int]:
        """DeleteRecords: moves each partition's log start up to ``before[p]`` (-1: its end,
        i.e. purge everything); returns the new log start per partition. Records below it are
        gone for every consumer; nothing else changes (offsets keep counting)."""
        if not before:
            return {}
        futures = self.admin.delete_records(
            [TopicPartition(name, p, o) for p, o in sorted(before.items())],
            request_timeout=self.timeout,
            operation_timeout=self.timeout,
        )
        return {
            tp.partition: future.result(self.timeout).low_watermark
            for tp, future in futures.items()
        }

    # -- topics the hub needs (internal stores, source outputs, dead-letter queues) -------------
    def exists(self, topic: str) -> bool:
        """Whether ``topic`` exists; a topic seen once is remembered (never asked again)."""
        if topic in self._known:
            return True
        md = self.metadata()
        with self._known_lock:
            self._known.update(t for t, m in md.topics.items() if m.error is None)
        return topic in self._known

    def partition_count(self, topic: str) -> int:
        """Partitions of ``topic`` (0 when it does not exist)."""
        meta = self.metadata(topic).topics.get(topic)
        return len(meta.partitions) if meta is not None and meta.error is None else 0

    def ensure_topic(
        self,
        topic: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str] | None = None,
    ) -> bool:
        """Creates ``topic`` unless it exists; True if this call created it.

        Idempotent: TOPIC_ALREADY_EXISTS (another worker, or a broker that auto-created it on
        a Metadata request) counts as success. -1 leaves the count to the broker's default."""
        if self.exists(topic):
            return False
        new = NewTopic(
            topic,
            num_partitions=partitions,
            replication_factor=replication_factor,
            config=dict(configs or {}),
        )
        future = self.admin.create_topics([new], operation_timeout=self.timeout)[topic]
        try:
            future.result(timeout=self.timeout)
        except KafkaException as exc:
            if error_code(exc) != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
            created = False
        else:
            created = True
            log.info("created topic", extra={"topic": topic, "partitions": partitions})
        with self._known_lock:
            self._known.add(topic)
        return created


def config_source(entry: Any) -> str:
    """Kafka's name for where a config value comes from (``DEFAULT_CONFIG``,
    ``DYNAMIC_TOPIC_CONFIG``, ...), as ``kafka-configs --describe`` prints it."""
    source = getattr(entry, "source", None)
    if isinstance(source, int) and not isinstance(source, bool):  # confluent-kafka gives an int
        try:
            return ConfigSource(source).name
        except ValueError:
            return "UNKNOWN_CONFIG"
    name = getattr(source, "name", None)
    return str(name) if name else str(source or "UNKNOWN_CONFIG")


def error_code(exc: KafkaException) -> int | None:
    """The Kafka error code a ``KafkaException`` carries, if any."""
    err = exc.args[0] if exc.args else None
    return err.code() if isinstance(err, KafkaError) else None
