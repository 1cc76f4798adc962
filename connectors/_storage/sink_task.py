"""``StorageSinkTask``: the SinkTask of the S3 and HDFS sinks, over a ``RollingWriter``.

Subclasses set ``config_class`` and ``make_destination``. ``start`` builds format, partitioner
and destination and checks the destination (so a wrong bucket, endpoint or credential fails the
task at once with a message saying what to fix). ``put`` writes through; ``flush`` does nothing
(files commit on rotation); ``pre_commit`` returns only offsets of committed files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from connectors._storage.config import StorageSinkConfig
from connectors._storage.destinations import Destination
from connectors._storage.formats import build_format
from connectors._storage.partitioner import build_partitioner
from connectors._storage.writer import RollingWriter
from hub.api import SinkRecord, SinkTask, SinkTaskContext, TopicPartition

log = logging.getLogger(__name__)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class StorageSinkTask(SinkTask):
    config_class: ClassVar[type[StorageSinkConfig]] = StorageSinkConfig
    kind: ClassVar[str] = "storage-sink"

    def __init__(self, context: SinkTaskContext, clock: Callable[[], int] = wall_clock_ms) -> None:
        super().__init__(context)
        self.clock = clock
        self.writer: RollingWriter | None = None
        self.destination: Destination | None = None

    def make_destination(self, cfg: Any, name: str) -> Destination:
        raise NotImplementedError

    def start(self, config: Mapping[str, Any]) -> None:
        cfg = self.config_class.parse(config)
        name = f"{config.get('name', self.kind)}-{config.get('task.id', 0)}"
        self.destination = self.make_destination(cfg, name)
        self.destination.check()
        self.writer = RollingWriter(
            cfg, build_format(cfg), build_partitioner(cfg, self.clock), self.destination,
            self.clock, name, rewind=self.context.offset,
        )  # fmt: skip
        log.info("[%s] writing %s files under %s/", name, cfg.format_class.rsplit(".", 1)[-1],
                 cfg.topics_dir)  # fmt: skip

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        assert self.writer is not None
        self.writer.open(partitions)

    def put(self, records: Sequence[SinkRecord]) -> None:
        assert self.writer is not None
        self.writer.put(records)

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Nothing: files commit on rotation, and only committed files' offsets are returned."""

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        assert self.writer is not None
        return self.writer.pre_commit(offsets)

    def close(self, partitions: Sequence[TopicPartition]) -> None:
        if self.writer is not None:
            self.writer.close(partitions)

    def stop(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.destination is not None:
            self.destination.close()
            self.destination = None
