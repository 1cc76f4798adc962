"""HDFS through WebHDFS (the ``hdfs`` package): temporary name, then rename, then a marker.

A file is written whole to ``<topics.dir>/+tmp/<topic>/<encoded partition>/<uuid>_tmp<ext>``
(Confluent's ``+tmp`` directory, which readers skip), then renamed to its final name; an
existing final file (a rewrite after a crash) is deleted first, because WebHDFS RENAME does not
overwrite. After every file of a batch is in place, the batch's ``{"start", "next"}`` is written
to ``<logs.dir>/<topic>/<partition>/committed.json`` (again via a temporary name + rename).
``recover`` reads that marker: everything below ``next`` is complete; files of a batch cut by a
crash start at or after ``next`` and are rewritten under the same names.

``hdfs.url`` may be ``http(s)://namenode:9870`` (WebHDFS itself) or, as in Confluent configs,
``hdfs://namenode:8020``: then WebHDFS is assumed at the same host on ``hdfs.webhdfs.port``.
Kerberos: ``hdfs.authentication.kerberos=true`` uses ``hdfs.ext.kerberos.KerberosClient``
(needs ``requests-kerberos`` and a ticket from ``kinit`` with ``connect.hdfs.keytab``).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import uuid
from typing import Any
from urllib.parse import urlsplit

import requests
from hdfs import Client, HdfsError, InsecureClient

from connectors._storage.destinations import Batch
from hub.api import ConnectError, RetriableError

log = logging.getLogger(__name__)

# Namenode states that pass: failover in progress, safe mode, a retriable RPC.
_TRANSIENT = {"RetriableException", "StandbyException", "SafeModeException"}


def webhdfs_url(url: str, port: int) -> str:
    """The WebHDFS base URL for ``hdfs.url``."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return url.rstrip("/")
    if parts.scheme == "webhdfs":
        return f"http://{parts.netloc}"
    if parts.scheme in ("hdfs", "swebhdfs"):
        scheme = "https" if parts.scheme == "swebhdfs" else "http"
        return f"{scheme}://{parts.hostname}:{port}"
    raise ConnectError(f"hdfs.url {url!r}: expected hdfs://, webhdfs:// or http(s)://")


class HdfsDestination:
    def __init__(self, cfg: Any, name: str = "hdfs-sink") -> None:
        self.name = name
        self.url = webhdfs_url(cfg.hdfs_url, cfg.webhdfs_port)
        # Absolute, as Confluent resolves topics.dir/logs.dir against the file system root.
        self.topics_dir = "/" + cfg.topics_dir.strip("/")
        self.logs_dir = "/" + cfg.logs_dir.strip("/")
        self.client: Client
        if cfg.kerberos:
            try:
                from hdfs.ext.kerberos import KerberosClient
            except ImportError as exc:
                raise ConnectError(
                    f"[{name}] hdfs.authentication.kerberos needs requests-kerberos installed"
                ) from exc
            self.client = KerberosClient(self.url, timeout=cfg.timeout_ms / 1000)
        else:
            self.client = InsecureClient(
                self.url, user=cfg.hdfs_user or None, timeout=cfg.timeout_ms / 1000
            )

    def _explain(self, exc: Exception, what: str) -> ConnectError:
        if isinstance(exc, requests.ConnectionError | requests.Timeout):
            return RetriableError(
                f"[{self.name}] cannot reach WebHDFS at {self.url} ({what}): check hdfs.url, "
                "that WebHDFS is enabled (dfs.webhdfs.enabled) and the namenode is up"
            )
        if getattr(exc, "exception", None) in _TRANSIENT:
            return RetriableError(f"[{self.name}] HDFS {what} failed, will retry: {exc}")
        if isinstance(exc, HdfsError) and "Permission denied" in str(exc):
            return ConnectError(
                f"[{self.name}] HDFS refused {what}: {exc}; check hdfs.user and directory "
                "permissions"
            )
        return ConnectError(f"[{self.name}] HDFS {what} failed: {exc}")

    def check(self) -> None:
        try:
            self.client.status("/")
        except (HdfsError, requests.RequestException) as exc:
            err = self._explain(exc, "status of /")
            raise ConnectError(str(err)) from exc  # at start: fail, don't retry forever

    def _put(self, path: str, data: bytes) -> None:
        final = "/" + path.lstrip("/")
        topic_rel = posixpath.relpath(final, self.topics_dir)
        tmp_dir = posixpath.join(self.topics_dir, "+tmp", posixpath.dirname(topic_rel))
        last = final.rsplit("+", 1)[-1]  # "<offset>.<ext>": the topic itself may contain dots
        ext = last[last.index(".") :] if "." in last else ""
        tmp = posixpath.join(tmp_dir, f"{uuid.uuid4()}_tmp{ext}")
        self.client.write(tmp, data, overwrite=True)
        try:
            self.client.makedirs(posixpath.dirname(final))
            if self.client.status(final, strict=False) is not None:
                self.client.delete(final)
            self.client.rename(tmp, final)
        except Exception:
            self._discard(tmp)
            raise

    def _discard(self, tmp: str) -> None:
        """Best effort: a temporary file left by a failed commit (a crash leaves it too; it is
        harmless under +tmp, which readers skip)."""
        try:
            self.client.delete(tmp)
        except Exception as exc:
            log.debug("[%s] could not delete %s: %s", self.name, tmp, exc)

    def _marker(self, topic: str, partition: int) -> str:
        return posixpath.join(self.logs_dir, topic, str(partition), "committed.json")

    def write_batch(self, batch: Batch) -> None:
        marker = self._marker(batch.topic, batch.partition)
        try:
            for path, data in batch.files:
                self._put(path, data)
            body = json.dumps({"start": batch.start, "next": batch.next_offset}).encode()
            tmp = f"{marker}.{uuid.uuid4().hex}.tmp"
            self.client.write(tmp, body, overwrite=True)
            if self.client.status(marker, strict=False) is not None:
                self.client.delete(marker)
            self.client.rename(tmp, marker)
        except (HdfsError, requests.RequestException) as exc:
            raise self._explain(exc, f"commit of {batch.topic}-{batch.partition}") from exc
        log.debug("[%s] %s-%d: committed %d files for offsets [%d, %d)", self.name,
                  batch.topic, batch.partition, len(batch.files), batch.start,
                  batch.next_offset)  # fmt: skip

    def recover(
        self, topic: str, partition: int, prefix: str, names: re.Pattern[str]
    ) -> int | None:
        marker = self._marker(topic, partition)
        try:
            if self.client.status(marker, strict=False) is None:
                return None
            with self.client.read(marker) as reader:
                state = json.loads(reader.read())
        except (HdfsError, requests.RequestException, ValueError) as exc:
            raise ConnectError(f"[{self.name}] unreadable commit marker {marker}: {exc}") from exc
        resume = int(state["next"])
        log.info("[%s] %s-%d: resuming at offset %d (from %s)", self.name, topic, partition,
                 resume, marker)  # fmt: skip
        return resume

    def close(self) -> None:
        session = getattr(self.client, "_session", None)
        if session is not None:
            session.close()
