"""``hdfs-sink`` (alias ``io.confluent.connect.hdfs3.Hdfs3SinkConnector``) and its task."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connectors._storage.connector import StorageSinkConnector
from connectors._storage.destinations import Destination
from connectors._storage.sink_task import StorageSinkTask
from connectors.hdfs.config import HdfsSinkConfig

log = logging.getLogger(__name__)


class HdfsSinkTask(StorageSinkTask):
    config_class = HdfsSinkConfig
    kind = "hdfs-sink"

    def make_destination(self, cfg: Any, name: str) -> Destination:
        # Imported here: the client library costs import time the hub pays only if used.
        from connectors._storage.destinations.hdfs import HdfsDestination

        return HdfsDestination(cfg, name)


class HdfsSinkConnector(StorageSinkConnector):
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

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        errors = super().validate(raw)
        if not (raw.get("hdfs.url") or raw.get("store.url")):
            errors["hdfs.url"] = ["Missing required configuration"]
        return errors
