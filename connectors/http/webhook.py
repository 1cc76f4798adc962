"""WebhookSourceTask: records POSTed to ``/ingest/{connector}`` go to the topic, acknowledged.

Flow: the REST layer (``hub/rest/ingest.py`` via ``hub/runtime/ingest.py``) calls ``ingest``
on its own thread with the raw body and headers. ``ingest`` checks auth, parses, queues the
records as one batch and *blocks* until every record of the batch was acknowledged by the
broker. The worker thread takes queued records from ``poll()`` and produces them through the
connector's transforms and converters with the worker's idempotent acks=all producer, like
any source; ``commit_record`` (called per acknowledged record, or for a record a transform
dropped) counts the batch down. Only then does the request get its 2xx, so a sender that
retries every non-2xx never loses a record (it may send one twice: at-least-once).

Answers (status, reason): 200 all acknowledged; 400 malformed body; 401 bad token/signature;
413 too many records (the byte limit is enforced by the REST layer before reading); 429 too
many records in flight (backpressure); 503 task stopping/failed or no acknowledgement within
``webhook.ack.timeout.ms``. Busy answers carry ``Retry-After``.

Records carry no source offsets: a webhook has no position to resume from; durability comes
from answering 2xx only after the acknowledgement.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from connectors.http._records import (
    key_of,
    ndjson_lines,
    parse_ndjson_lines,
    split_path,
    to_epoch_ms,
)
from connectors.http.config import WebhookConfig
from hub.api import SourceRecord, SourceTask

log = logging.getLogger(__name__)

Answer = tuple[int, dict[str, Any], dict[str, str]]
MAX_POLL_RECORDS = 20_000
MAX_INFLIGHT = 500_000
_NDJSON_TYPES = ("ndjson", "jsonl", "json-lines", "jsonlines", "json-seq")


class _Batch:
    __slots__ = ("done", "failed", "remaining")

    def __init__(self, count: int) -> None:
        self.remaining = count
        self.done = threading.Event()
        self.failed: str | None = None


def _error(status: int, message: str, retry_after: int | None = None) -> Answer:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return status, {"error_code": status, "message": message}, headers


class WebhookSourceTask(SourceTask):
    """Also an *ingest target* (duck-typed by ``hub.runtime.ingest``): ``max_body_bytes``,
    ``authenticates`` and ``ingest(body, headers)``."""

    def start(self, config: Mapping[str, Any]) -> None:
        c = WebhookConfig.parse(config)
        self.name = str(config.get("name", "http-webhook"))
        self.max_body_bytes = c.max_body_bytes
        self.authenticates = bool(c.auth_token or c.hmac_secret)
        self._text = c.value_format == "text"
        self._key_path = split_path(c.key_field)
        self._ts_path = split_path(c.timestamp_field)
        self._cond = threading.Condition()
        self._queue: deque[tuple[list[SourceRecord], _Batch]] = deque()
        self._queued = 0
        self._inflight = 0
        self._owners: dict[int, tuple[SourceRecord, _Batch]] = {}  # ref keeps id unique
        self._stopping = False
        self.config = c  # last: hub.runtime.ingest treats a task with a config as started
        log.info("[%s] accepting POST /ingest/%s -> %s", self.name, self.name, c.topic)

    # -- the REST side (any thread) ------------------------------------------------------------
    def ingest(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        """Parses, queues and waits for the broker; returns (status, JSON body, headers)."""
        headers = {k.lower(): v for k, v in headers.items()}
        denied = self._check_auth(body, headers)
        if denied:
            return _error(401, denied)
        try:
            values, texts = self._parse(body, headers.get("content-type", ""))
        except ValueError as exc:
            return _error(400, f"malformed body: {exc}")
        if len(values) > self.config.max_records:
            return _error(413, f"{len(values)} records exceed webhook.max.records")
        if not values:
            return 200, {"accepted": 0}, {}
        records = self._records(values, texts)
        batch = _Batch(len(records))
        with self._cond:
            if self._stopping:
                return _error(503, "connector is stopping", 5)
            if self._inflight + len(records) > MAX_INFLIGHT:
                return _error(429, "too many records waiting for the broker", 1)
            self._inflight += len(records)
            for r in records:
                self._owners[id(r)] = (r, batch)
            self._queue.append((records, batch))
            self._queued += len(records)
            self._cond.notify_all()
        if not batch.done.wait(self.config.ack_timeout_ms / 1000):
            return _error(503, "the broker did not acknowledge the records in time", 5)
        if batch.failed:
            return _error(503, batch.failed, 5)
        return 200, {"accepted": len(records)}, {}

    def _check_auth(self, body: bytes, headers: Mapping[str, str]) -> str | None:
        c = self.config
        if c.auth_token:
            scheme, _, token = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode(), c.auth_token.encode()
            ):
                return "missing or wrong bearer token"
        if c.hmac_secret:
            given = headers.get(c.hmac_header.lower(), "").strip()
            digest = hmac.new(c.hmac_secret.encode(), body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(given.encode(), (c.hmac_prefix + digest).encode()):
                return f"missing or wrong {c.hmac_header} signature"
        return None

    def _parse(self, body: bytes, content_type: str) -> tuple[list[Any], list[Any] | None]:
        """(parsed records, their JSON texts for ``webhook.value.format=text`` or None)."""
        if not body.strip():
            raise ValueError("empty body")
        if any(t in content_type.lower() for t in _NDJSON_TYPES):
            return self._ndjson(body)
        try:
            doc = json.loads(body)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # several documents: NDJSON sent without its type
                return self._ndjson(body)
            raise ValueError(f"not JSON: {exc}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8: {exc}") from None
        values = doc if isinstance(doc, list) else [doc]
        texts = [json.dumps(v, ensure_ascii=False) for v in values] if self._text else None
        return values, texts

    def _ndjson(self, body: bytes) -> tuple[list[Any], list[Any] | None]:
        lines = ndjson_lines(body)
        values = parse_ndjson_lines(lines)
        if not self._text:
            return values, None
        try:
            return values, [line.decode("utf-8").strip() for line in lines]
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8: {exc}") from None

    def _records(self, values: list[Any], texts: list[Any] | None) -> list[SourceRecord]:
        now_ms = int(time.time() * 1000)
        topic, kp, tp = self.config.topic, self._key_path, self._ts_path
        if not kp and not tp:  # the common case, kept lean: it runs for every record
            return [SourceRecord(topic=topic, value=v, timestamp=now_ms) for v in (texts or values)]
        out = []
        for i, v in enumerate(values):
            ts = to_epoch_ms(key_of(v, tp)) if tp else None
            key = key_of(v, kp) if kp else None
            value = texts[i] if texts is not None else v
            out.append(SourceRecord(topic=topic, key=key, value=value, timestamp=ts or now_ms))
        return out

    # -- the worker side (task thread, producer callback thread) -------------------------------
    def poll(self) -> list[SourceRecord] | None:
        with self._cond:
            if not self._queue and not self._stopping:
                self._cond.wait(0.5)
            out: list[SourceRecord] = []
            while self._queue and len(out) < MAX_POLL_RECORDS:
                records, _ = self._queue.popleft()
                out.extend(records)
            self._queued -= len(out)
        return out or None

    def commit_record(self, record: SourceRecord, offset: int | None) -> None:
        with self._cond:
            owned = self._owners.pop(id(record), None)
            if owned is None:
                return
            batch = owned[1]
            self._inflight -= 1
            batch.remaining -= 1
            if batch.remaining == 0:
                batch.done.set()

    def stop(self) -> None:
        """Fails every waiting request (503): unacknowledged records may or may not land."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            batches = {id(b): b for _, b in self._owners.values()}
            self._owners.clear()
            self._queue.clear()
        for batch in batches.values():
            batch.failed = "connector stopped before the broker acknowledged every record"
            batch.done.set()
        log.info("[%s] stopped", getattr(self, "name", "http-webhook"))
