"""``s3-sink`` (alias ``io.confluent.connect.s3.S3SinkConnector``) and its task.

Tasks split partitions through the consumer group, so every task gets the same config; each
Kafka partition is written by exactly one task at a time, which is what makes object names
unique per writer.
"""

from __future__ import annotations

import logging
from typing import Any

from connectors._storage.connector import StorageSinkConnector
from connectors._storage.destinations import Destination
from connectors._storage.sink_task import StorageSinkTask
from connectors.s3.config import S3SinkConfig

log = logging.getLogger(__name__)


class S3SinkTask(StorageSinkTask):
    config_class = S3SinkConfig
    kind = "s3-sink"

    def make_destination(self, cfg: Any, name: str) -> Destination:
        # Imported here: the client library costs import time the hub pays only if used.
        from connectors._storage.destinations.s3 import S3Destination

        return S3Destination(cfg, name)


class S3SinkConnector(StorageSinkConnector):
    name = "s3-sink"
    aliases = ("io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector")
    config_model = S3SinkConfig
    description = "Write topics to S3 as JSON lines, Parquet or raw bytes; exactly-once."

    def start(self, config: Any) -> None:
        self.config: S3SinkConfig = config
        log.info("[%s] S3 sink to bucket %s", self.name, config.bucket)

    @classmethod
    def task_class(cls) -> type[S3SinkTask]:
        return S3SinkTask
