"""A compacted topic read into memory by a background thread: Kafka Connect's ``KafkaBasedLog``.

Every store (configs, offsets, statuses) is a materialised view of one compacted topic. On
``start`` the topic is created if missing, a consumer is *assigned* (no group: every worker
reads everything) all partitions from the beginning, and ``start`` returns only after the
view has caught up with the end offsets observed at that moment — the "read to end" barrier.
After a crash the view is rebuilt from the topic, so whatever was acknowledged is recovered.

Threading: the consumer belongs to one thread (librdkafka consumers are not meant for
concurrent calls). ``read_to_end`` from any other thread enqueues an Event that the reader
thread sets once its positions reach the end offsets it queries *after* receiving the
request, so a caller that wrote and waited for the acknowledgement then calls ``read_to_end``
is guaranteed to see its write. Both read ``read_committed``: records other writers add in
transactions (exactly-once source tasks' offsets) count once committed, never if aborted.
Writes go through an idempotent producer (acks=all), so a retried send never duplicates or
reorders records of one key.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

from hub.runtime.background import Failure, LoopHealth
from hub.runtime.config import ADMIN_TIMEOUT_S
from hub.runtime.errors import KafkaLogError, RecordTooLargeError
from kafka_admin import KafkaAdmin
from sluice.throttled_log import ThrottledLog

COMPACT = {"cleanup.policy": "compact"}
END_OFFSETS_ATTEMPT_S = 5.0
"""One end-offsets query's bound: a dead leader costs this, then a metadata refresh and a retry,
well inside ``read_to_end``'s own timeout."""

log = logging.getLogger(__name__)

Callback = Callable[[bytes | None, bytes | None], None]


class KafkaBasedLog:
    """Reads ``topic`` into ``on_record(key, value)`` on a background thread; writes records."""

    def __init__(
        self,
        topic: str,
        client_config: dict[str, Any],
        on_record: Callback,
        *,
        partitions: int = 1,
        replication_factor: int = 1,
        admin: KafkaAdmin | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.topic = topic
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.timeout = timeout
        self._client_config = client_config
        self._on_record = on_record
        self._admin = admin or KafkaAdmin(client_config, timeout=ADMIN_TIMEOUT_S)
        self._requests: queue.SimpleQueue[threading.Event] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._tps: list[TopicPartition] = []
        self._offsets_client: Consumer | None = None
        self._waiting: list[threading.Event] = []  # read_to_end requests (reader thread only)
        self._ends: dict[int, int] | None = None
        self.positions: dict[int, int] = {}  # partition -> next offset applied (reader thread)
        self.health = LoopHealth(f"reading {topic}", log, {"topic": topic})
        self._record_errors = ThrottledLog(log, f"errors reading {topic}")

    def start(self) -> None:
        self._admin.ensure_topic(self.topic, self.partitions, self.replication_factor, COMPACT)
        count = self._admin.partition_count(self.topic) or self.partitions
        self._tps = [TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in range(count)]
        self._producer = Producer(
            {
                **self._client_config,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 0,
                "partitioner": "murmur2_random",  # the Java client's, as Kafka Connect uses
            }
        )
        self._consumer = Consumer(
            {
                **self._client_config,
                "group.id": f"sluice-store-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "enable.partition.eof": False,
                "auto.offset.reset": "earliest",
                # Exactly-once source tasks write offsets in their transactions: an aborted
                # one's offsets must never be applied, and "the end" is the last stable offset.
                "isolation.level": "read_committed",
            }
        )
        self._consumer.assign(self._tps)
        # End offsets come from a second, idle client: a ListOffsets request on the reading
        # consumer's connection would queue behind its long-polling fetch (~fetch.wait.max.ms).
        self._offsets_client = Consumer(
            {
                **self._client_config,
                "group.id": f"sluice-store-{uuid.uuid4().hex}",
                "isolation.level": "read_committed",
            }
        )
        self._thread = threading.Thread(
            target=self._run, name=f"kafka-log-{self.topic}", daemon=True
        )
        self._thread.start()
        self.read_to_end()
        log.info("store loaded", extra={"topic": self.topic, "partitions": count})

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(self.timeout)
        if self._producer is not None:
            self._producer.flush(self.timeout)
        if self._consumer is not None:
            self._consumer.close()
        if self._offsets_client is not None:
            self._offsets_client.close()
        # Dropping the clients ends librdkafka's threads now, not at some later GC.
        self._producer = self._consumer = self._offsets_client = None

    def send(self, records: Iterable[tuple[bytes, bytes | None]]) -> None:
        """Writes records in order and returns once the broker acknowledged all of them."""
        assert self._producer is not None, "not started"
        pending = 0
        errors: list[str] = []
        done = threading.Condition()

        too_large = False

        def on_delivery(err: KafkaError | None, _msg: Any) -> None:
            nonlocal pending, too_large
            with done:
                pending -= 1
                if err is not None:
                    errors.append(str(err))
                    too_large = too_large or err.code() == KafkaError.MSG_SIZE_TOO_LARGE
                done.notify_all()

        for key, value in records:
            try:
                self._producer.produce(self.topic, key=key, value=value, on_delivery=on_delivery)
            except KafkaException as exc:
                if exc.args and exc.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE:
                    raise RecordTooLargeError(_too_large(self.topic, key, value)) from None
                raise KafkaLogError(f"writes to {self.topic} failed: {exc}") from None
            with done:
                pending += 1
        deadline = time.monotonic() + self.timeout
        while True:
            self._producer.poll(0.05)
            with done:
                if pending == 0:
                    break
            if time.monotonic() > deadline:
                raise KafkaLogError(f"writes to {self.topic} not acknowledged in time")
        if too_large:
            raise RecordTooLargeError(f"the broker refused a record for {self.topic} as too large")
        if errors:
            raise KafkaLogError(f"writes to {self.topic} failed: {errors[0]}")

    def read_to_end(self) -> None:
        """Blocks until every record written before this call is applied to the view."""
        event = threading.Event()
        self._requests.put(event)
        if not event.wait(self.timeout):
            failure = self.health.failure
            reason = f" ({failure.error})" if failure is not None else ""
            raise KafkaLogError(f"reading {self.topic} to its end timed out{reason}")

    @property
    def failure(self) -> Failure | None:
        """The reader's current failure (the broker unreachable, ...), None while healthy."""
        return self.health.failure

    def _run(self) -> None:
        """Reads until stopped. A failing step (end offsets, position, consume) is retried with
        backoff (``LoopHealth``) instead of ending the thread: the view then catches up once the
        broker is back, and ``read_to_end`` callers time out meanwhile with the reason."""
        while not self._stopping.is_set():
            try:
                self._step()
            except Exception as exc:
                self._stopping.wait(self.health.failed(exc))
            else:
                self.health.succeeded()

    def _step(self) -> None:
        assert self._consumer is not None
        try:
            while True:
                self._waiting.append(self._requests.get_nowait())
                self._ends = None  # a newer request needs fresh end offsets
        except queue.Empty:
            pass
        if self._waiting and self._ends is None:
            self._ends = self._end_offsets()
        if self._waiting and self._ends is not None and self._caught_up(self._ends):
            for event in self._waiting:
                event.set()
            self._waiting, self._ends = [], None
        for msg in self._consumer.consume(500, 0.05):
            if msg.error() is not None:
                self._record_errors.event(
                    "read error", "store read error", topic=self.topic, error=str(msg.error())
                )
                continue
            try:
                self._on_record(msg.key(), msg.value())
            except Exception as exc:  # one bad record must not stop the view
                self._record_errors.event(
                    "bad record",
                    "bad record in store; skipped",
                    topic=self.topic,
                    partition=msg.partition(),
                    offset=msg.offset(),
                    error=f"{type(exc).__name__}: {exc}",
                )
            self.positions[msg.partition() or 0] = (msg.offset() or 0) + 1

    def _end_offsets(self) -> dict[int, int]:
        """Partition -> end offset, only for partitions holding readable records."""
        assert self._offsets_client is not None
        out = {}
        for tp in self._tps:
            try:
                low, high = self._offsets_client.get_watermark_offsets(
                    tp, timeout=min(self.timeout, END_OFFSETS_ATTEMPT_S)
                )
            except KafkaException:
                # librdkafka asks the leader its cached metadata names; after that broker died
                # it can keep asking it until its own metadata refresh. Asking for the topic's
                # metadata now updates that cache, so the retry (LoopHealth's backoff) goes to
                # the new leader instead of timing out against the old one.
                with contextlib.suppress(KafkaException):
                    self._offsets_client.list_topics(self.topic, timeout=END_OFFSETS_ATTEMPT_S)
                raise
            if high > low:
                out[tp.partition] = high
        return out

    def _caught_up(self, ends: dict[int, int]) -> bool:
        assert self._consumer is not None
        if not ends:
            return True
        positions = self._consumer.position([TopicPartition(self.topic, p) for p in ends])
        return all(tp.offset >= ends[tp.partition] for tp in positions)


def _too_large(topic: str, key: bytes | None, value: bytes | None) -> str:
    size = len(key or b"") + len(value or b"")
    return f"a record of {size} bytes for {topic} is larger than the producer accepts"
