"""The worker's durable state: configs, source offsets and statuses, each a compacted topic.

Each store has a topic-backed implementation (``Kafka*Store``, see ``kafka_log.py``) and an
in-memory one (``Memory*Store``) for unit tests; both share the view and record handling.
"""

from hub.runtime.storage.config_store import ConfigStore, KafkaConfigStore, MemoryConfigStore
from hub.runtime.storage.offset_store import KafkaOffsetStore, MemoryOffsetStore, OffsetStore
from hub.runtime.storage.status_store import KafkaStatusStore, MemoryStatusStore, StatusStore

__all__ = [
    "ConfigStore",
    "KafkaConfigStore",
    "KafkaOffsetStore",
    "KafkaStatusStore",
    "MemoryConfigStore",
    "MemoryOffsetStore",
    "MemoryStatusStore",
    "OffsetStore",
    "StatusStore",
]
