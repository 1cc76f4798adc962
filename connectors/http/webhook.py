"""WebhookSourceTask: records POSTed to ``/ingest/{connector}`` go to the topic, acknowledged.

Flow: the REST layer (``hub/rest/ingest.py`` via ``hub/runtime/ingest.py``) awaits
``ingest_async`` on its event loop with the raw body and headers (``ingest`` is the same for
a caller's own thread, blocking). It checks auth, parses, queues the records as one batch and
waits until every record of the batch was acknowledged by the broker. The worker thread takes
queued requests from ``poll()`` (whole requests only: one poll result holds the records of one
or more requests, never part of one) and produces them through the connector's transforms and
converters with the worker's idempotent acks=all producer, like any source.
``commit_records`` (called once per poll result, in poll order, after every record of it was
acknowledged, dropped by a transform or skipped under ``errors.tolerance=all``) releases the
requests of that result. Only then does a request get its 2xx, so a sender that retries every
non-2xx never loses a record (it may send one twice: at-least-once). A failed delivery never
reaches ``commit_records``: the task fails, and ``stop`` answers every waiting request 503.

Answers (status, reason): 200 all acknowledged; 400 malformed body; 401 bad token/signature;
413 too many records (the byte limit is enforced by the REST layer before reading); 429 too
many records in flight (backpressure); 503 task stopping/failed or no acknowledgement within
``webhook.ack.timeout.ms``. Busy answers carry ``Retry-After``.

Records carry no source offsets: a webhook has no position to resume from; durability comes
from answering 2xx only after the acknowledgement.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    loads,
    ndjson_lines,
    new_record,
    new_records,
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
INLINE_PARSE_BYTES = 1 << 20
_NDJSON_TYPES = ("ndjson", "jsonl", "json-lines", "jsonlines", "json-seq")


class _Batch:
    """One request's records. ``finish`` (any thread) wakes the request once they are safe,
    or once the task stopped (``failed`` set first): through a ``threading.Event`` for the
    blocking ``ingest``, through the event loop for ``ingest_async``."""

    __slots__ = ("done", "failed", "future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.failed: str | None = None
        self.loop = loop
        self.done = threading.Event() if loop is None else None
        self.future = loop.create_future() if loop is not None else None

    def finish(self) -> None:
        if self.done is not None:
            self.done.set()
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            self.loop.call_soon_threadsafe(_resolve, self.future)  # type: ignore[union-attr]


def _resolve(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():  # done: timed out (cancelled) meanwhile
        future.set_result(None)


def _error(status: int, message: str, retry_after: int | None = None) -> Answer:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return status, {"error_code": status, "message": message}, headers


def _answer(batch: _Batch, count: int) -> Answer:
    if batch.failed:
        return _error(503, batch.failed, 5)
    return 200, {"accepted": count}, {}


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
        # id(poll result) -> (that list, its requests); holding the list keeps its id unique
        self._polled: dict[int, tuple[list[SourceRecord], list[_Batch]]] = {}
        self._stopping = False
        self.config = c  # last: hub.runtime.ingest treats a task with a config as started
        log.info("[%s] accepting POST /ingest/%s -> %s", self.name, self.name, c.topic)

    # -- the REST side ---------------------------------------------------------------------------
    def ingest(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        """Parses, queues and waits for the broker (any thread, blocking); returns (status,
        JSON body, headers)."""
        records = self._prepare(body, headers)
        if isinstance(records, tuple):
            return records
        batch = _Batch()
        refused = self._enqueue(records, batch)
        if refused:
            return refused
        if not batch.done.wait(self.config.ack_timeout_ms / 1000):  # type: ignore[union-attr]
            return _error(503, "the broker did not acknowledge the records in time", 5)
        return _answer(batch, len(records))

    async def ingest_async(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        """``ingest`` for the REST server's event loop: the wait for the broker costs no
        thread, and the acknowledgement reaches the loop in one hop (the blocking form needs
        a pool thread and three thread wake-ups per request). Bodies up to
        ``INLINE_PARSE_BYTES`` are parsed on the loop (a few ms); larger ones on a thread, so
        the loop is never held for long."""
        if len(body) <= INLINE_PARSE_BYTES:
            records = self._prepare(body, headers)
        else:
            records = await asyncio.to_thread(self._prepare, body, headers)
        if isinstance(records, tuple):
            return records
        batch = _Batch(asyncio.get_running_loop())
        refused = self._enqueue(records, batch)
        if refused:
            return refused
        try:
            await asyncio.wait_for(batch.future, self.config.ack_timeout_ms / 1000)  # type: ignore[arg-type]
        except TimeoutError:
            return _error(503, "the broker did not acknowledge the records in time", 5)
        return _answer(batch, len(records))

    def _prepare(self, body: bytes, headers: Mapping[str, str]) -> list[SourceRecord] | Answer:
        """The request's records, or the error answer (401, 400, 413, or 200 for none)."""
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
        return self._records(values, texts)

    def _enqueue(self, records: list[SourceRecord], batch: _Batch) -> Answer | None:
        """Queues the request for ``poll``; an error answer if the task refuses it."""
        with self._cond:
            if self._stopping:
                return _error(503, "connector is stopping", 5)
            if self._inflight + len(records) > MAX_INFLIGHT:
                return _error(429, "too many records waiting for the broker", 1)
            self._inflight += len(records)
            self._queue.append((records, batch))
            self._queued += len(records)
            self._cond.notify()  # the one waiter: poll() on the task thread
        return None

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
            doc = loads(body)
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
        # Text records only validate the parsed values, unless a key or timestamp comes from them.
        exact = not self._text or bool(self._key_path or self._ts_path)
        values = parse_ndjson_lines(lines, exact)
        if not self._text:
            return values, None
        try:
            return values, [line.decode("utf-8").strip() for line in lines]
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8: {exc}") from None

    def _records(self, values: list[Any], texts: list[Any] | None) -> list[SourceRecord]:
        """Without ``timestamp.field`` the timestamp stays None: the producer stamps the
        record when the worker produces it (milliseconds after receipt), and the worker keeps
        its fast path, which it takes only for records without a partition or timestamp."""
        topic, kp, tp = self.config.topic, self._key_path, self._ts_path
        if not kp and not tp:  # the common case, kept lean: it runs for every record
            return new_records(topic, values if texts is None else texts)
        now_ms = int(time.time() * 1000)
        out = []
        for i, v in enumerate(values):
            ts = (to_epoch_ms(key_of(v, tp)) or now_ms) if tp else None
            key = key_of(v, kp) if kp else None
            out.append(new_record(topic, key, texts[i] if texts is not None else v, ts))
        return out

    # -- the worker side (task thread, producer callback thread) -------------------------------
    def poll(self) -> list[SourceRecord] | None:
        with self._cond:
            if not self._queue and not self._stopping:
                self._cond.wait(0.5)
            if not self._queue:
                return None
            out: list[SourceRecord] = []
            batches = []
            while self._queue and len(out) < MAX_POLL_RECORDS:
                records, batch = self._queue.popleft()
                out += records
                batches.append(batch)
            self._queued -= len(out)
            self._polled[id(out)] = (out, batches)
        return out

    def commit_records(self, records: list[SourceRecord]) -> None:
        """Every record of the poll result ``records`` is safe: its requests may answer 2xx."""
        with self._cond:
            polled = self._polled.get(id(records))
            if polled is None or polled[0] is not records:
                return  # not a poll result of ours, or stop() already answered its requests
            del self._polled[id(records)]
            self._inflight -= len(records)
        for batch in polled[1]:
            batch.finish()

    def stop(self) -> None:
        """Fails every waiting request (503): unacknowledged records may or may not land."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            batches = [b for _, b in self._queue]
            batches += [b for _, polled in self._polled.values() for b in polled]
            self._polled.clear()
            self._queue.clear()
        for batch in batches:
            batch.failed = "connector stopped before the broker acknowledged every record"
            batch.finish()
        log.info("[%s] stopped", getattr(self, "name", "http-webhook"))
