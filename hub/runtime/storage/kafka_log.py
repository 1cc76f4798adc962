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
is guaranteed to see its write. Writes go through an idempotent producer (acks=all), so a
retried send never duplicates or reorders records of one key.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

from hub.runtime.topic_admin import COMPACT, TopicAdmin

log = logging.getLogger(__name__)

Callback = Callable[[bytes | None, bytes | None], None]


class KafkaLogError(RuntimeError):
    """A write was not acknowledged, or the reader did not catch up in time."""


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
        admin: TopicAdmin | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.topic = topic
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.timeout = timeout
        self._client_config = client_config
        self._on_record = on_record
        self._admin = admin or TopicAdmin(client_config)
        self._requests: queue.SimpleQueue[threading.Event] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._tps: list[TopicPartition] = []
        self._offsets_client: Consumer | None = None

    def start(self) -> None:
        self._admin.ensure(self.topic, self.partitions, self.replication_factor, COMPACT)
        count = self._admin.partitions(self.topic) or self.partitions
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
            }
        )
        self._consumer.assign(self._tps)
        # End offsets come from a second, idle client: a ListOffsets request on the reading
        # consumer's connection would queue behind its long-polling fetch (~fetch.wait.max.ms).
        self._offsets_client = Consumer(
            {**self._client_config, "group.id": f"sluice-store-{uuid.uuid4().hex}"}
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

        def on_delivery(err: KafkaError | None, _msg: Any) -> None:
            nonlocal pending
            with done:
                pending -= 1
                if err is not None:
                    errors.append(str(err))
                done.notify_all()

        for key, value in records:
            with done:
                pending += 1
            self._producer.produce(self.topic, key=key, value=value, on_delivery=on_delivery)
        deadline = time.monotonic() + self.timeout
        while True:
            self._producer.poll(0.05)
            with done:
                if pending == 0:
                    break
            if time.monotonic() > deadline:
                raise KafkaLogError(f"writes to {self.topic} not acknowledged in time")
        if errors:
            raise KafkaLogError(f"writes to {self.topic} failed: {errors[0]}")

    def read_to_end(self) -> None:
        """Blocks until every record written before this call is applied to the view."""
        event = threading.Event()
        self._requests.put(event)
        if not event.wait(self.timeout):
            raise KafkaLogError(f"reading {self.topic} to its end timed out")

    def _run(self) -> None:
        assert self._consumer is not None
        waiting: list[threading.Event] = []
        ends: dict[int, int] | None = None
        while not self._stopping.is_set():
            try:
                while True:
                    waiting.append(self._requests.get_nowait())
                    ends = None  # a newer request needs fresh end offsets
            except queue.Empty:
                pass
            if waiting and ends is None:
                ends = self._end_offsets()
            if waiting and ends is not None and self._caught_up(ends):
                for event in waiting:
                    event.set()
                waiting, ends = [], None
            for msg in self._consumer.consume(500, 0.05):
                if msg.error() is not None:
                    log.warning(
                        "store read error", extra={"topic": self.topic, "error": msg.error()}
                    )
                    continue
                try:
                    self._on_record(msg.key(), msg.value())
                except Exception:
                    log.exception("bad record in store", extra={"topic": self.topic})

    def _end_offsets(self) -> dict[int, int]:
        """Partition -> end offset, only for partitions holding readable records."""
        assert self._offsets_client is not None
        out = {}
        for tp in self._tps:
            low, high = self._offsets_client.get_watermark_offsets(tp, timeout=self.timeout)
            if high > low:
                out[tp.partition] = high
        return out

    def _caught_up(self, ends: dict[int, int]) -> bool:
        assert self._consumer is not None
        if not ends:
            return True
        positions = self._consumer.position([TopicPartition(self.topic, p) for p in ends])
        return all(tp.offset >= ends[tp.partition] for tp in positions)
