"""Creating topics the hub needs: internal stores, source output topics, dead-letter queues.

One ``TopicAdmin`` per worker wraps a confluent-kafka ``AdminClient`` (thread-safe) and caches
the names it has seen exist, so a source task asks the cluster about a topic once, not per
record. Creation is idempotent: TOPIC_ALREADY_EXISTS (another worker, or a broker that
auto-created it on a Metadata request) counts as success.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

log = logging.getLogger(__name__)

COMPACT = {"cleanup.policy": "compact"}


class TopicAdmin:
    """Thread-safe topic existence checks and creation."""

    def __init__(self, client_config: Mapping[str, Any], timeout: float = 15.0) -> None:
        self.admin = AdminClient(dict(client_config))
        self.timeout = timeout
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def exists(self, topic: str) -> bool:
        if topic in self._known:
            return True
        md = self.admin.list_topics(timeout=self.timeout)
        with self._lock:
            self._known.update(t for t, m in md.topics.items() if m.error is None)
        return topic in self._known

    def partitions(self, topic: str) -> int:
        md = self.admin.list_topics(topic, timeout=self.timeout)
        meta = md.topics.get(topic)
        return len(meta.partitions) if meta is not None and meta.error is None else 0

    def ensure(
        self,
        topic: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str] | None = None,
    ) -> bool:
        """Creates ``topic`` unless it exists; True if this call created it."""
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
            err = exc.args[0] if exc.args else None
            if not (isinstance(err, KafkaError) and err.code() == KafkaError.TOPIC_ALREADY_EXISTS):
                raise
            created = False
        else:
            created = True
            log.info("created topic", extra={"topic": topic, "partitions": partitions})
        with self._lock:
            self._known.add(topic)
        return created

    def cluster_id(self) -> str:
        md = self.admin.list_topics(timeout=self.timeout)
        return str(md.cluster_id or "")
