"""WebhookSourceTask driven directly: an in-test SourceTaskContext, the test thread playing the
worker (``poll`` then ``commit_records`` with the polled list, as the worker does once the
broker acknowledged all of it)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
from typing import Any

import pytest

from connectors.http import webhook
from connectors.http.webhook import WebhookSourceTask
from hub.api import SourceRecord
from tests.connectors.http.support import Context
from tests.fixtures.broker import wait_until


def started(**config: str) -> WebhookSourceTask:
    cfg = {"name": "hook", "topic": "events", **config}
    task = WebhookSourceTask(Context(cfg))
    task.start(cfg)
    return task


class Request:
    """``task.ingest`` on its own thread, as the REST layer calls it."""

    def __init__(self, task: WebhookSourceTask, body: bytes, headers: dict[str, str]) -> None:
        self.answer: Any = None
        self.thread = threading.Thread(target=self._run, args=(task, body, headers))
        self.thread.start()

    def _run(self, task: WebhookSourceTask, body: bytes, headers: dict[str, str]) -> None:
        self.answer = task.ingest(body, headers)

    def result(self) -> Any:
        self.thread.join(10)
        return self.answer


def ingest_and_ack(task: WebhookSourceTask, body: bytes, **headers: str) -> tuple[Any, list]:
    request = Request(task, body, headers)
    polled: list = []
    if request.thread.is_alive():
        wait_until(lambda: task._queued or not request.thread.is_alive(), 5, "the batch")
    while batch := task.poll():
        polled.append(batch)
        assert request.thread.is_alive(), "answered before the broker acknowledged"
        if task._queued == 0:
            break
    for batch in polled:
        task.commit_records(batch)
    return request.result(), [r for batch in polled for r in batch]


@pytest.mark.parametrize(
    ("body", "content_type", "values"),
    [
        (b'{"a": 1}', "application/json", [{"a": 1}]),
        (b'[{"a": 1}, {"a": 2}]', "application/json", [{"a": 1}, {"a": 2}]),
        (b'{"a": 1}\n\n{"a": 2}\n', "application/x-ndjson", [{"a": 1}, {"a": 2}]),
        (b'{"a": 1}\n{"a": 2}', "", [{"a": 1}, {"a": 2}]),  # NDJSON without its type
    ],
)
def test_answers_200_only_after_every_record_is_acknowledged(
    body: bytes, content_type: str, values: list
) -> None:
    task = started(**{"key.field": "a"})
    answer, records = ingest_and_ack(task, body, **{"Content-Type": content_type})
    assert answer == (200, {"accepted": len(values)}, {})
    assert [r.value for r in records] == values
    assert [r.key for r in records] == [v["a"] for v in values]
    assert all(r.topic == "events" and r.source_offset == {} for r in records)


@pytest.mark.parametrize(
    ("body", "reason"),
    [(b"", "empty body"), (b"{nope", "not JSON"), (b'{"a":1}\n{bad\n', "line 2")],
)
def test_malformed_bodies_get_400_with_a_reason(body: bytes, reason: str) -> None:
    status, payload, _ = started().ingest(body, {"content-type": "application/json"})
    assert status == 400 and reason in payload["message"]


def test_bearer_token() -> None:
    task = started(**{"webhook.auth.token": "s3cret"})
    assert task.ingest(b"{}", {})[0] == 401
    assert task.ingest(b"{}", {"Authorization": "Bearer wrong"})[0] == 401
    answer, _ = ingest_and_ack(task, b"{}", Authorization="Bearer s3cret")
    assert answer[0] == 200


def test_hmac_signature() -> None:
    task = started(**{"webhook.hmac.secret": "k"})
    body = b'{"event": "push"}'
    good = "sha256=" + hmac.new(b"k", body, hashlib.sha256).hexdigest()
    status, payload, _ = task.ingest(body, {"X-Signature-256": "sha256=00"})
    assert status == 401 and "X-Signature-256" in payload["message"]
    assert task.ingest(body + b" ", {"X-Signature-256": good})[0] == 401  # body changed
    assert ingest_and_ack(task, body, **{"X-Signature-256": good})[0][0] == 200


def test_too_many_records_is_413() -> None:
    task = started(**{"webhook.max.records": "2"})
    assert task.ingest(json.dumps([1, 2, 3]).encode(), {})[0] == 413


def test_backpressure_is_429_with_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webhook, "MAX_INFLIGHT", 3)
    task = started(**{"webhook.ack.timeout.ms": "5000"})
    waiting = Request(task, b"[1, 2]", {})
    wait_until(lambda: task._queued == 2, 5, "the first batch")
    status, _, headers = task.ingest(b"[3, 4]", {})
    assert status == 429 and headers["Retry-After"]
    task.commit_records(task.poll() or [])
    assert waiting.result()[0] == 200


def test_no_acknowledgement_in_time_is_503() -> None:
    task = started(**{"webhook.ack.timeout.ms": "50"})
    status, payload, headers = task.ingest(b"[1]", {})
    assert status == 503 and "acknowledge" in payload["message"] and "Retry-After" in headers


def test_stop_fails_waiting_requests_with_503() -> None:
    task = started()
    waiting = Request(task, b"[1, 2]", {})
    wait_until(lambda: task._queued == 2, 5, "the batch")
    task.stop()
    assert waiting.result()[0] == 503
    assert task.ingest(b"[1]", {})[0] == 503


def test_text_value_format_keeps_each_records_json_text() -> None:
    task = started(**{"webhook.value.format": "text", "key.field": "id"})
    body = b'{"id": 1, "s": "\xc3\xa9"}\n{"id":2}\n'
    answer, records = ingest_and_ack(task, body, **{"Content-Type": "application/x-ndjson"})
    assert answer[0] == 200
    assert [(r.key, r.value) for r in records] == [(1, '{"id": 1, "s": "é"}'), (2, '{"id":2}')]
    answer, records = ingest_and_ack(task, b'[{"id": 3}]')
    assert [r.value for r in records] == ['{"id": 3}']
    assert task.ingest(b'{"id": 1}\n1, 2\n', {"content-type": "application/x-ndjson"})[0] == 400


def test_each_request_is_answered_when_its_own_poll_result_is_safe() -> None:
    task = started()
    first = Request(task, b"[1, 2]", {})
    wait_until(lambda: task._queued == 2, 5, "the first request")
    first_poll = task.poll()
    second, third = Request(task, b"[3]", {}), Request(task, b"[4, 5]", {})
    wait_until(lambda: task._queued == 3, 5, "two more requests")
    both = task.poll()  # one poll result holding two whole requests
    assert [r.value for r in both or []] == [3, 4, 5]
    task.commit_records([*both])  # an equal list that poll did not return: nothing happens
    task.commit_records(both)
    assert second.result()[0] == 200 and third.result() == (200, {"accepted": 2}, {})
    assert first.thread.is_alive(), "answered before its own records were safe"
    task.commit_records(first_poll)
    assert first.result()[0] == 200
    assert task._inflight == 0 and not task._polled


def test_stop_fails_polled_but_unacknowledged_requests_with_503() -> None:
    task = started()
    waiting = Request(task, b"[1, 2]", {})
    wait_until(lambda: task._queued == 2, 5, "the batch")
    polled = task.poll()
    task.stop()
    status, payload, _ = waiting.result()
    assert status == 503 and "stopped" in payload["message"]
    task.commit_records(polled)  # a late acknowledgement after stop changes nothing
    assert task.poll() is None


def test_records_have_no_timestamp_unless_a_field_gives_one() -> None:
    answer, records = ingest_and_ack(started(), b'{"a": 1}')
    assert answer[0] == 200 and records[0].timestamp is None  # the producer stamps it
    task = started(**{"timestamp.field": "t"})
    _, records = ingest_and_ack(task, b'[{"t": 1767225600}, {"t": "2026-01-01T00:00:01Z"}, {}]')
    assert [r.timestamp for r in records[:2]] == [1767225600000, 1767225601000]
    assert records[2].timestamp and records[2].timestamp > 1_700_000_000_000  # receipt time


def test_records_equal_constructed_ones() -> None:
    _, records = ingest_and_ack(started(), b'{"a": 1}\n{"a": 2}\n')
    assert records == [SourceRecord(topic="events", value={"a": a}) for a in (1, 2)]
    _, records = ingest_and_ack(started(**{"key.field": "a"}), b'{"a": 1}')
    assert records == [SourceRecord(topic="events", key=1, value={"a": 1})]


@pytest.mark.parametrize(
    "body",
    [
        b'{"id": 340282366920938463463374607431768211455}\n{"id": -9223372036854775809}\n',
        b'{"n": NaN}\n{"s": "\\ud800"}\n',  # accepted by the stdlib, refused by orjson
        b'{"id": 18446744073709551615, "big": 1e300, "s": "caf\xc3\xa9 \\u00e9"}\n',
    ],
)
def test_parsing_matches_the_stdlib_exactly(body: bytes) -> None:
    _, records = ingest_and_ack(started(), body, **{"Content-Type": "application/x-ndjson"})
    expected = [json.loads(line) for line in body.splitlines()]
    assert repr([r.value for r in records]) == repr(expected)  # repr: NaN != NaN


def test_text_records_are_the_lines_verbatim_whatever_the_numbers() -> None:
    task = started(**{"webhook.value.format": "text"})
    lines = [b'{"id": 340282366920938463463374607431768211455}', b'{"n": NaN}', b"[1,2]"]
    body = b"\n".join(lines) + b"\n"
    _, records = ingest_and_ack(task, body, **{"Content-Type": "application/x-ndjson"})
    assert [r.value for r in records] == [line.decode() for line in lines]


class AsyncRequest:
    """``task.ingest_async`` on an event loop of its own thread, as the REST server awaits it."""

    def __init__(self, task: WebhookSourceTask, body: bytes) -> None:
        self.answer: Any = None
        self.thread = threading.Thread(target=self._run, args=(task, body))
        self.thread.start()

    def _run(self, task: WebhookSourceTask, body: bytes) -> None:
        self.answer = asyncio.run(task.ingest_async(body, {}))

    def result(self) -> Any:
        self.thread.join(10)
        return self.answer


@pytest.mark.parametrize("inline_bytes", [1 << 20, 0])  # parsed on the loop / on a thread
def test_async_ingest_answers_once_its_poll_result_is_safe(
    monkeypatch: pytest.MonkeyPatch, inline_bytes: int
) -> None:
    monkeypatch.setattr(webhook, "INLINE_PARSE_BYTES", inline_bytes)
    task = started()
    request = AsyncRequest(task, b"[1, 2]")
    wait_until(lambda: task._queued == 2, 5, "the batch")
    polled = task.poll()
    assert request.thread.is_alive(), "answered before the broker acknowledged"
    task.commit_records(polled)
    assert request.result() == (200, {"accepted": 2}, {})
    assert asyncio.run(task.ingest_async(b"{nope", {}))[0] == 400


def test_async_ingest_timeout_and_stop_are_503() -> None:
    task = started(**{"webhook.ack.timeout.ms": "50"})
    status, payload, headers = asyncio.run(task.ingest_async(b"[1]", {}))
    assert status == 503 and "acknowledge" in payload["message"] and "Retry-After" in headers
    task.commit_records(task.poll())  # late: the timed-out request is gone, nothing breaks
    task = started()
    waiting = AsyncRequest(task, b"[1, 2]")
    wait_until(lambda: task._queued == 2, 5, "the batch")
    task.stop()
    status, payload, _ = waiting.result()
    assert status == 503 and "stopped" in payload["message"]
