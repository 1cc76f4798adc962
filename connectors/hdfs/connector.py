"""``hdfs-sink`` (alias ``io.confluent.connect.hdfs3.Hdfs3SinkConnector``) and its task."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connectors._storage.destinations import Destination
from connectors._storage.sink_task import StorageSinkTask
from connectors.hdfs.config import HdfsSinkConfig
from hub.api import SinkConnector

log = logging.getLogger(__name__)


class HdfsSinkTask(StorageSinkTask):
    config_class = HdfsSinkConfig
    kind = "hdfs-sink"

    def make_destination(self, cfg: Any, name: str) -> Destination:
        # Imported here: the client library costs import time the hub pays only if used.
        from connectors._storage.destinations.hdfs import HdfsDestination

        return HdfsDestination(cfg, name)


class HdfsSinkConnector(SinkConnector):
    name = "hdfs-sink"
    aliases = ("io.confluent.connect.hdfs3.Hdfs3SinkConnector", "Hdfs3SinkConnector")
    config_model = HdfsSinkConfig
    description = "Write topics to HDFS (WebHDFS) as JSON lines, Parquet or raw bytes."

    def start(self, config: Any) -> None:
        self.config: HdfsSinkConfig = config
        log.info("[%s] HDFS sink to %s", self.name, config.hdfs_url)

    @classmethod
    def task_class(cls) -> type[HdfsSinkTask]:
        return HdfsSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        raw = self.config.raw()
        return [{**raw, "task.id": i} for i in range(max(1, max_tasks))]

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        errors: dict[str, list[str]] = {}
        if not (raw.get("topics") or raw.get("topics.regex")):
            errors["topics"] = ["Missing required configuration: set 'topics' or 'topics.regex'"]
        if not (raw.get("hdfs.url") or raw.get("store.url")):
            errors["hdfs.url"] = ["Missing required configuration"]
        return errors
