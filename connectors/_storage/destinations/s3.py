"""S3 (and S3-compatible stores: MinIO, Ceph, moto) through boto3.

- Endpoint: ``store.url`` for S3-compatible stores; path-style addressing unless
  ``s3.path.style.access.enabled=false``; region from ``s3.region``.
- Credentials: ``aws.access.key.id``/``aws.secret.access.key`` when given, else boto3's standard
  chain (environment, shared config/credentials files, container/instance roles).
- Retries: botocore's ``standard`` retry mode (exponential backoff with jitter on 5xx,
  throttling and connection errors), ``s3.part.retries`` retries per request.
- Objects at least ``s3.part.size`` are sent as multipart uploads (parts of that size, sent in
  parallel by s3transfer); smaller ones in one PUT.

Commit marker: each object's user metadata holds ``sluice-batch-start``/``sluice-batch-next``,
and the batch's first file is uploaded last. ``recover`` finds the object with the highest start
offset, reads its batch start ``B``; if the object named ``B`` exists and says it starts batch
``B``, that batch is complete and recovery resumes at its ``next``; otherwise at ``B`` (the
partial batch is rewritten under the same names). A multipart upload cut by a crash leaves
invisible parts behind: add a lifecycle rule aborting incomplete uploads (docs/connectors/s3.md).
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
)

from connectors._storage.destinations import Batch
from hub.api import ConnectError, RetriableError

log = logging.getLogger(__name__)

_META_START = "sluice-batch-start"
_META_NEXT = "sluice-batch-next"
_CREDENTIALS = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403",
                "InvalidToken", "ExpiredToken"}  # fmt: skip
_TRANSIENT = {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout",
              "InternalError", "ServiceUnavailable", "500", "502", "503", "504"}  # fmt: skip


class S3Destination:
    """Thread-safe as boto3 clients are; one per task."""

    def __init__(self, cfg: Any, name: str = "s3-sink") -> None:
        self.bucket: str = cfg.bucket
        self.name = name
        self.url = cfg.store_url or f"https://s3.{cfg.region}.amazonaws.com"
        session = boto3.session.Session(
            aws_access_key_id=cfg.access_key_id or None,
            aws_secret_access_key=cfg.secret_access_key or None,
            region_name=cfg.region,
        )
        self.client = session.client(
            "s3",
            endpoint_url=cfg.store_url or None,
            config=Config(
                retries={"mode": "standard", "max_attempts": cfg.part_retries + 1},
                s3={"addressing_style": "path" if cfg.path_style else "auto"},
                connect_timeout=cfg.connect_timeout_ms / 1000,
                read_timeout=60,
                max_pool_connections=16,
            ),
        )
        self.part_size: int = cfg.part_size
        self.transfer = TransferConfig(
            multipart_threshold=cfg.part_size, multipart_chunksize=cfg.part_size,
            max_concurrency=8,
        )  # fmt: skip

    def _explain(self, exc: Exception, what: str, running: bool = False) -> ConnectError:
        """The error the task fails (or retries) with, saying what to do about it. A lost
        connection while ``running`` is retriable; at start it fails the task at once."""
        if isinstance(exc, NoCredentialsError):
            return ConnectError(
                f"[{self.name}] no AWS credentials found for {what}: set aws.access.key.id and "
                "aws.secret.access.key, or configure the standard chain (AWS_ACCESS_KEY_ID, "
                "~/.aws/credentials, an instance role)"
            )
        if isinstance(exc, EndpointConnectionError):
            cls = RetriableError if running else ConnectError
            return cls(
                f"[{self.name}] cannot reach S3 at {self.url} ({what}): check store.url / "
                f"s3.region and that the store is running ({exc})"
            )
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("NoSuchBucket", "404"):
                return ConnectError(
                    f"[{self.name}] bucket {self.bucket!r} does not exist at {self.url}: create "
                    "it or fix s3.bucket.name"
                )
            if code in _CREDENTIALS:
                return ConnectError(
                    f"[{self.name}] S3 refused {what} on bucket {self.bucket!r} ({code}): check "
                    "aws.access.key.id/aws.secret.access.key and the bucket policy"
                )
            if code in _TRANSIENT:
                return RetriableError(f"[{self.name}] S3 {what} failed after retries: {code}")
            return ConnectError(f"[{self.name}] S3 {what} failed: {exc}")
        if isinstance(exc, BotoCoreError):
            return RetriableError(f"[{self.name}] S3 {what} failed: {exc}")
        return ConnectError(f"[{self.name}] S3 {what} failed: {exc}")

    def check(self) -> None:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except (ClientError, BotoCoreError) as exc:
            raise self._explain(exc, "HeadBucket") from exc

    def _put(self, key: str, data: bytes, meta: dict[str, str]) -> None:
        if len(data) < self.part_size:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data, Metadata=meta)
        else:
            self.client.upload_fileobj(
                io.BytesIO(data), self.bucket, key, ExtraArgs={"Metadata": meta},
                Config=self.transfer,
            )  # fmt: skip

    def write_batch(self, batch: Batch) -> None:
        meta = {_META_START: str(batch.start), _META_NEXT: str(batch.next_offset)}
        # files[0] (named after batch.start) last: its presence marks the batch complete.
        for key, data in [*batch.files[1:], batch.files[0]]:
            try:
                self._put(key, data, meta)
            except (ClientError, BotoCoreError) as exc:
                raise self._explain(exc, f"upload of {key}", running=True) from exc
        log.debug("[%s] %s-%d: committed %d objects for offsets [%d, %d)", self.name,
                  batch.topic, batch.partition, len(batch.files), batch.start,
                  batch.next_offset)  # fmt: skip

    def _meta(self, key: str) -> tuple[int, int] | None:
        head = self.client.head_object(Bucket=self.bucket, Key=key)
        meta = head.get("Metadata", {})
        if _META_START not in meta or _META_NEXT not in meta:
            return None
        return int(meta[_META_START]), int(meta[_META_NEXT])

    def recover(
        self, topic: str, partition: int, prefix: str, names: re.Pattern[str]
    ) -> int | None:
        by_start: dict[int, str] = {}
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    match = names.match(obj["Key"].rsplit("/", 1)[-1])
                    if match:
                        by_start[int(match.group(1))] = obj["Key"]
            if not by_start:
                return None
            last = self._meta(by_start[max(by_start)])
            if last is None:  # written by another tool (e.g. Confluent's connector)
                return None
            start, _ = last
            first_key = by_start.get(start)
            first = self._meta(first_key) if first_key else None
        except (ClientError, BotoCoreError) as exc:
            raise self._explain(exc, f"listing {prefix}") from exc
        resume = first[1] if first is not None and first[0] == start else start
        log.info("[%s] %s-%d: resuming after objects in s3://%s/%s at offset %d", self.name,
                 topic, partition, self.bucket, prefix, resume)  # fmt: skip
        return resume

    def close(self) -> None:
        self.client.close()
