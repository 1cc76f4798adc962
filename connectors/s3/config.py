"""Settings of the S3 sink: Confluent's ``S3SinkConnector`` keys and defaults.

``s3.bucket.name`` is required; ``s3.region`` defaults to us-west-2 and ``s3.part.size`` to
25 MiB (minimum 5 MiB, S3's smallest part) as in Confluent. ``s3.compression.type`` is gzip in
Confluent; snappy and zstd are extensions (JSON and bytes formats; Parquet uses parquet.codec).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from connectors._storage._confluent_keys import CONFLUENT_S3
from connectors._storage.config import StorageSinkConfig
from hub.api import Password


class S3SinkConfig(StorageSinkConfig):
    upstream_keys = CONFLUENT_S3

    bucket: str = Field(alias="s3.bucket.name", min_length=1, description="Bucket to write to.")
    region: str = Field("us-west-2", alias="s3.region", description="AWS region of the bucket.")
    store_url: str | None = Field(
        None, alias="store.url", description="Endpoint of an S3-compatible store (MinIO...)."
    )
    part_size: int = Field(
        26_214_400,
        alias="s3.part.size",
        ge=5 * 1024 * 1024,
        description="Multipart part size; objects at least this big are sent in parts.",
    )
    compression_type: Literal["none", "gzip", "snappy", "zstd"] = Field(
        "none", alias="s3.compression.type", description="Compression of JSON/bytes objects."
    )
    path_style: bool = Field(
        True, alias="s3.path.style.access.enabled", description="Path-style addressing."
    )
    access_key_id: str | None = Field(
        None, alias="aws.access.key.id", description="Access key; else the standard chain."
    )
    secret_access_key: Password | None = Field(
        None, alias="aws.secret.access.key", description="Secret key; else the standard chain."
    )
    part_retries: int = Field(
        3, alias="s3.part.retries", ge=0, description="Retries per request (5xx, throttling)."
    )
    retry_backoff_ms: int = Field(
        200, alias="s3.retry.backoff.ms", ge=0, description="Ignored (warning): botocore backs off."
    )
    connect_timeout_ms: int = Field(
        10_000, alias="s3.connect.timeout.ms", gt=0, description="Extension: TCP connect timeout."
    )

    @property
    def compression(self) -> str:
        return self.compression_type
