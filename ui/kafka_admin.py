"""Cluster, topic and consumer-group views for the console, over Kafka's admin API.

Everything goes through confluent-kafka's ``AdminClient`` (and, for on-disk sizes only,
kafka-python's DescribeLogDirs, which confluent-kafka does not expose), so the console shows the
same thing against Sluice's broker and any other Kafka cluster. Calls are synchronous with a
deadline: FastAPI runs the endpoints in its thread pool, and a cluster that does not answer
becomes an error message in the page rather than a hung request.

Thread safety: ``AdminClient`` is thread-safe; the kafka-python client is not, so its one use
takes a lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    OffsetSpec,
)

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

    def __init__(self, client_config: Mapping[str, Any], internal_topics: Iterable[str] = ()):
        self.client_config = dict(client_config)
        self.internal_topics = set(internal_topics)
        self.admin = AdminClient(self.client_config)
        self._sizes_client: Any = None
        self._sizes_lock = threading.Lock()
        self._sizes_failed_at = -SIZES_RETRY_AFTER

    # -- cluster ---------------------------------------------------------------------------------
    def metadata(self) -> Any:
        return self.admin.list_topics(timeout=TIMEOUT)

    def is_internal(self, topic: str) -> bool:
        return topic.startswith("__") or topic in self.internal_topics

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
            "partitions": sum(len(t.partitions) for t in md.topics.values()),
            "size_bytes": None if sizes is None else sum(sizes.values()),
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
                        request_timeout_ms=int(TIMEOUT * 1000),
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
                {TopicPartition(t, p): spec for t, p in parts}, request_timeout=TIMEOUT
            )
            for tp, future in futures.items():
                out[(tp.topic, tp.partition)][index] = future.result(TIMEOUT).offset
        return out

    def offsets_for_time(self, topic: str, partitions: Iterable[int], ts_ms: int) -> dict[int, int]:
        """First offset with timestamp >= ``ts_ms`` per partition (-1: none, i.e. the end)."""
        futures = self.admin.list_offsets(
            {TopicPartition(topic, p): OffsetSpec.for_timestamp(ts_ms) for p in partitions},
            request_timeout=TIMEOUT,
        )
        return {tp.partition: f.result(TIMEOUT).offset for tp, f in futures.items()}

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
            resources, request_timeout=TIMEOUT
        ).items():
            try:
                entries = future.result(TIMEOUT)
            except Exception as exc:  # a topic deleted meanwhile: show it without configs
                log.debug("describe_configs topic=%s failed: %r", resource.name, exc)
                continue
            out[resource.name] = {
                key: {
                    "value": entry.value,
                    "is_default": bool(entry.is_default),
                    "read_only": bool(entry.is_read_only),
                    "sensitive": bool(entry.is_sensitive),
                }
                for key, entry in sorted(entries.items())
            }
        return out

    def create_topic(
        self, name: str, partitions: int, replication: int, configs: Mapping[str, str]
    ) -> None:
        topic = NewTopic(name, partitions, replication, config=dict(configs))
        self.admin.create_topics([topic], request_timeout=TIMEOUT)[name].result(TIMEOUT)

    def delete_topic(self, name: str) -> None:
        self.admin.delete_topics([name], request_timeout=TIMEOUT)[name].result(TIMEOUT)

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
            future.result(TIMEOUT)
