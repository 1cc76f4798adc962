"""Background work (cleaner, flush, retention) fails per partition, never per pass."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from broker.background import FailureTracker
from broker.errors import StorageError
from broker.log.log_manager import LogManager
from broker.log.records import CODEC_SNAPPY, decode_batches

from .helpers import make_batch
from .test_cleaner import Clock

DAY = 86_400_000


def poisoned_snappy_batch(timestamp: int) -> bytes:
    """A batch whose header and CRC are valid but whose snappy payload is garbage.

    The produce path accepts it (it never decompresses), exactly like a batch written by a
    buggy client; only the cleaner, which must decode it, finds out.
    """
    from crc32c import crc32c

    good = bytearray(
        make_batch([b"x" * 200] * 4, keys=[b"k"] * 4, timestamp=timestamp, compression=CODEC_SNAPPY)
    )
    assert good[22] & 0x07 == CODEC_SNAPPY  # really compressed (values are compressible)
    good[61:] = b"\xff" * (len(good) - 61)
    good[17:21] = crc32c(memoryview(good)[21:]).to_bytes(4, "big")
    return bytes(good)


def fill(manager: LogManager, topic: str, partition: int, ts: int, poison: bool) -> None:
    plog = manager.log(topic, partition)
    for i in range(40):
        plog.append(make_batch([b"v%d" % i], keys=[b"k%d" % (i % 2)], timestamp=ts))
        if poison and i == 5:
            plog.append(poisoned_snappy_batch(ts))
    assert len(plog.segments()) > 2


def test_one_poisoned_partition_does_not_stop_the_cleaner(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(10 * DAY)
    manager = LogManager(tmp_path, clock=clock)
    manager.load()
    manager.create_topic(
        "compacted", 4, {"cleanup.policy": "compact", "segment.bytes": "300", "retention.ms": "-1"}
    )
    for p in range(4):
        fill(manager, "compacted", p, clock.now, poison=p == 0)  # the first one: others follow
    sizes = {p: manager.log("compacted", p).size_bytes() for p in range(4)}

    with caplog.at_level(logging.INFO, logger="broker.log.cleaner"):
        rewritten = manager.run_cleaner(clock.now)

    assert rewritten > 0
    for p in (1, 2, 3):  # every healthy partition was compacted, after the poisoned one
        assert manager.log("compacted", p).size_bytes() < sizes[p], p
    assert manager.log("compacted", 0).size_bytes() == sizes[0]  # left as it was
    [failure] = manager.cleaner.uncleanable_partitions
    assert failure.key == "compacted-0" and failure.failures == 1
    assert "snappy" in failure.error and "CorruptRecordError" in failure.error
    assert [f.key for f in manager.background_failures()] == ["compacted-0"]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "compacted-0" in errors[0].getMessage()

    # Not retried before its backoff; retried (and still reported) after it.
    manager.run_cleaner(clock.now + 1_000)
    assert manager.cleaner.uncleanable_partitions[0].failures == 1
    manager.run_cleaner(clock.now + 16_000)
    assert manager.cleaner.uncleanable_partitions[0].failures == 2
    # Rate-limited by the schedule: one ERROR (with traceback) then one WARNING per retry.
    levels = [r.levelname for r in caplog.records if r.levelno >= logging.WARNING]
    assert levels == ["ERROR", "WARNING"]
    manager.close()


def test_poisoned_partition_recovers_once_the_bad_data_is_gone(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    manager = LogManager(tmp_path, clock=clock)
    manager.load()
    manager.create_topic(
        "c", 1, {"cleanup.policy": "compact", "segment.bytes": "300", "retention.ms": "-1"}
    )
    fill(manager, "c", 0, clock.now, poison=True)
    manager.run_cleaner(clock.now)
    assert manager.cleaner.uncleanable_partitions
    # DeleteRecords past the bad batch: the next retry succeeds and clears the report.
    plog = manager.log("c", 0)
    plog.delete_records_before(plog.segments()[-2].base_offset)
    manager.run_cleaner(clock.now + 16_000)
    assert manager.cleaner.uncleanable_partitions == []
    for chunk in plog.read(plog.log_start_offset, 1 << 20).chunks:
        list(decode_batches(chunk))  # everything left decodes
    manager.close()


def test_a_failing_flush_does_not_skip_other_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(10 * DAY)
    manager = LogManager(tmp_path, clock=clock)
    manager.load()
    manager.create_topic("f", 3, {"flush.ms": "0"})
    for p in range(3):
        manager.log("f", p).append(make_batch([b"v"]))
    broken = manager.log("f", 0)

    def disk_error() -> None:
        raise StorageError("I/O error: could not flush [f-0]")

    monkeypatch.setattr(broken, "flush", disk_error)  # a stand-in for a failing disk
    assert manager.run_flush(clock.now) == 2
    assert [(f.task, f.key) for f in manager.background_failures()] == [("log flush", "f-0")]
    monkeypatch.undo()
    assert manager.run_flush(clock.now + 1_000) == 1  # retried after its backoff, and succeeds
    assert manager.background_failures() == []
    manager.close()


def test_tracker_schedule_repeats_its_last_delay() -> None:
    tracker = FailureTracker("work", (10, 20))
    delays = []
    now = 0
    for _ in range(4):
        failure = tracker.failed("a", ValueError("boom"), now)
        delays.append(failure.next_retry_ms - now)
        now = failure.next_retry_ms
    assert delays == [10, 20, 20, 20]
    assert not tracker.due("a", now - 1) and tracker.due("a", now)
    tracker.retain(["b"])
    assert tracker.failures() == []


def test_a_failing_partition_is_reported_in_the_broker_metrics(tmp_path: Path) -> None:
    """The cleaner's poisoned partition shows in the metrics scrape (by task and unit), so an
    operator's alert sees it; the collector reads the same ``background_failures()``."""
    from types import SimpleNamespace

    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from broker.metrics.collector import BrokerCollector

    clock = Clock(10 * DAY)
    manager = LogManager(tmp_path, clock=clock)
    manager.load()
    manager.create_topic(
        "compacted", 2, {"cleanup.policy": "compact", "segment.bytes": "300", "retention.ms": "-1"}
    )
    for p in range(2):
        fill(manager, "compacted", p, clock.now, poison=p == 0)
    # Only what the section reads: the log manager and no group coordinator.
    collector = BrokerCollector(SimpleNamespace(logs=manager, coordinator=None))  # type: ignore[arg-type]

    def scrape() -> dict[str, list[tuple[dict[str, str], float]]]:
        registry = CollectorRegistry()
        registry.register(_Only(collector))
        text = generate_latest(registry).decode()
        return {
            f.name: [(s.labels, s.value) for s in f.samples]
            for f in text_string_to_metric_families(text)
        }

    assert scrape()["sluice_broker_background_failing_units"] == [({}, 0.0)]
    manager.run_cleaner(clock.now)
    found = scrape()
    assert found["sluice_broker_background_failures"] == [
        ({"task": "log cleaner", "unit": "compacted-0"}, 1.0)
    ]
    assert found["sluice_broker_background_failing_units"] == [({}, 1.0)]
    manager.close()


class _Only:
    """A collector of just the background-failure section of ``BrokerCollector``."""

    def __init__(self, collector: object) -> None:
        self._collector = collector

    def collect(self) -> object:
        return self._collector._background()  # type: ignore[attr-defined]
