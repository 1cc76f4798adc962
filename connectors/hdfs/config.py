"""Settings of the HDFS sink: Confluent's ``Hdfs3SinkConnector`` keys where they exist.

``hdfs.url`` (or ``store.url``) names the cluster; an ``hdfs://host:port`` URL is reached over
WebHDFS on ``hdfs.webhdfs.port`` (9870, Hadoop 3's default). ``logs.dir`` holds the commit
markers (Confluent keeps its write-ahead logs there). Keys marked "extension" are Sluice's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field

from connectors._storage._confluent_keys import CONFLUENT_HDFS3
from connectors._storage.config import StorageSinkConfig
from hub.api import ConfigError


class HdfsSinkConfig(StorageSinkConfig):
    upstream_keys = CONFLUENT_HDFS3

    hdfs_url: str = Field(
        "", alias="hdfs.url", description="hdfs://namenode:8020 or http://namenode:9870."
    )
    store_url: str | None = Field(None, alias="store.url", description="Same as hdfs.url.")
    logs_dir: str = Field("logs", alias="logs.dir", description="Commit markers directory.")
    webhdfs_port: int = Field(
        9870, alias="hdfs.webhdfs.port", description="Extension: WebHDFS port for hdfs:// URLs."
    )
    hdfs_user: str | None = Field(
        None, alias="hdfs.user", description="Extension: user for simple auth (HADOOP_USER_NAME)."
    )
    kerberos: bool = Field(
        False, alias="hdfs.authentication.kerberos", description="Use Kerberos (SPNEGO)."
    )
    principal: str | None = Field(None, alias="connect.hdfs.principal", description="Kerberos.")
    keytab: str | None = Field(None, alias="connect.hdfs.keytab", description="Kerberos keytab.")
    hadoop_conf_dir: str | None = Field(
        None, alias="hadoop.conf.dir", description="Ignored (WARNING): WebHDFS needs no conf."
    )
    compression_type: Literal["none", "gzip", "snappy", "zstd"] = Field(
        "none", alias="compression.type", description="Extension: JSON/bytes file compression."
    )
    timeout_ms: int = Field(
        30_000, alias="hdfs.timeout.ms", gt=0, description="Extension: WebHDFS request timeout."
    )

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        config = super().parse(raw)
        url = config.hdfs_url or config.store_url
        if not url:
            raise ConfigError(
                f"invalid {cls.__name__}", {"hdfs.url": ["Missing required configuration"]}
            )
        return config.model_copy(update={"hdfs_url": url})

    @property
    def compression(self) -> str:
        return self.compression_type
