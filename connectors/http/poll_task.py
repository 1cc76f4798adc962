"""HttpPollTask: polls one endpoint on a schedule, page by page, one page per ``poll()``.

State machine (why): ``poll()`` must come back within about a second so the worker can pause
or stop the task, yet a poll may span many pages, rate-limit waits and retry backoffs. So the
task keeps ``_page`` (the next request of the poll in progress) and ``_due`` (monotonic time of
the next request); each ``poll()`` either waits at most a second for ``_due`` and returns None,
or sends exactly one request and returns that page's records.

Offsets: with ``incremental.field`` the source partition is ``{"url": url}`` and each record's
offset is the cursor after it (see ``cursor.py``); a restart reads the committed cursor and
resumes from it. Without it, records carry no offset and every poll reads the endpoint anew.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from connectors.http._client import Requester, RetryLater
from connectors.http._records import (
    key_of,
    parse_ndjson,
    records_in,
    split_path,
    to_epoch_ms,
)
from connectors.http._schedule import Schedule
from connectors.http.config import HttpPollConfig
from connectors.http.cursor import Cursor
from connectors.http.pagination import PageRequest, first_page, next_page
from hub.api import ConnectError, SourceRecord, SourceTask, SourceTaskContext

log = logging.getLogger(__name__)

MAX_WAIT_S = 1.0
TEMPLATE = "${cursor}"


class HttpPollTask(SourceTask):
    def __init__(
        self,
        context: SourceTaskContext,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], object] | None = None,
    ) -> None:
        super().__init__(context)
        self._clock = clock
        self._stopping = threading.Event()
        self._wait = wait or self._stopping.wait
        self._page: PageRequest | None = None
        self._poll_started = 0.0
        self._due = 0.0
        self.requester: Requester | None = None

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = c = HttpPollConfig.parse(config)
        self.name = str(config.get("name", "http-poll"))
        self.requester = Requester(c, self.name)
        self.schedule = Schedule(c.poll_interval_ms, c.poll_cron)
        self._records_path = split_path(c.records_pointer)
        self._key_path = split_path(c.key_field)
        self._ts_path = split_path(c.timestamp_field)
        self.partition = {"url": c.url}
        self.cursor: Cursor | None = None
        if c.incremental_field:
            self.cursor = Cursor(
                split_path(c.incremental_field),
                c.incremental_mode == "inclusive",
                c.incremental_initial,
            )
            self.cursor.restore(self.context.offset_reader.offset(self.partition))
        self._due = self.schedule.first(self._clock())
        log.info(
            "[%s] polling %s %s (pagination=%s, cursor=%s)", self.name, c.method, c.url,
            c.pagination_type, self.cursor.template_value if self.cursor else None,
        )  # fmt: skip

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            return None
        now = self._clock()
        if now < self._due:
            self._wait(min(MAX_WAIT_S, self._due - now))
            return None
        if self._page is None:
            self._poll_started = now
            self._page = self._first_request()
        page = self._page
        try:
            response = self._send(page)
        except RetryLater as later:
            self._due = self._clock() + later.delay_s
            return None
        except Exception:
            if self._stopping.is_set():  # stop() closed the client under the request
                return None
            raise
        body, items = self._parse(response)
        self._page = next_page(self.config, page, response, body, len(items))
        if self._page is None:
            self._due = self.schedule.after(self._poll_started, self._clock())
        return self._records(items)

    def _first_request(self) -> PageRequest:
        c = self.config
        value = self.cursor.template_value if self.cursor else ""
        params = {k: v.replace(TEMPLATE, value) for k, v in c.params.items()}
        return first_page(c, c.url.replace(TEMPLATE, value), params)

    def _send(self, page: PageRequest) -> Any:
        c, value = self.config, self.cursor.template_value if self.cursor else ""
        assert self.requester is not None
        headers = {k: v.replace(TEMPLATE, value) for k, v in c.headers.items() if TEMPLATE in v}
        body = c.body.replace(TEMPLATE, value) if c.body is not None else None
        if body is not None and "content-type" not in {k.lower() for k in c.headers}:
            headers["Content-Type"] = "application/json"
        return self.requester.send(
            c.method, page.url, params=page.params or None, headers=headers or None, content=body
        )

    def _parse(self, response: Any) -> tuple[Any, list[Any]]:
        try:
            if self.config.records_format == "ndjson":
                items = list(parse_ndjson(response.content))
                return None, items
            body = response.json()
        except ValueError as exc:
            raise ConnectError(
                f"response from {response.url} is not {self.config.records_format}: {exc}"
            ) from None
        return body, records_in(body, self._records_path)

    def _records(self, items: list[Any]) -> list[SourceRecord]:
        now_ms = int(time.time() * 1000)
        pairs = [(item, key_of(item, self._key_path)) for item in items]
        if self.cursor is not None:
            admitted = self.cursor.admit(pairs)
        else:
            admitted = [(item, key, {}) for item, key in pairs]
        partition = self.partition if self.cursor is not None else {}
        out = []
        for item, key, offset in admitted:
            ts = to_epoch_ms(key_of(item, self._ts_path)) if self._ts_path else None
            record = SourceRecord(
                topic=self.config.topic, key=key, value=item,
                timestamp=ts if ts is not None else now_ms,
                source_partition=partition, source_offset=offset,
            )  # fmt: skip
            out.append(record)
        return out

    def stop(self) -> None:
        self._stopping.set()
        if self.requester is not None:
            self.requester.close()
        log.info("[%s] stopped", getattr(self, "name", "http-poll"))
