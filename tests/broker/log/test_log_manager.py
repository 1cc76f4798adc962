from pathlib import Path

import pytest

from broker.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidTopicError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from broker.log.log_manager import LogManager

from .helpers import make_batch


def manager(path: Path) -> LogManager:
    m = LogManager(path)
    m.load()
    return m


def test_create_append_reopen(tmp_path: Path) -> None:
    m = manager(tmp_path)
    info = m.create_topic("orders", 3, {"retention.ms": "1000"})
    assert info.partitions == 3 and info.configs == {"retention.ms": "1000"}
    m.log("orders", 1).append(make_batch([b"a", b"b"]))
    m.close()
    m = manager(tmp_path)
    assert m.topic("orders") == info
    assert m.log("orders", 1).log_end_offset == 2
    assert m.effective_config("orders").retention_ms == 1000
    assert (tmp_path / "orders-2").is_dir()
    m.close()


def test_validate_only_creates_nothing(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.create_topic("t", 2, validate_only=True)
    assert m.topics() == {}
    assert not (tmp_path / "t-0").exists()


def test_errors(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.create_topic("t", 1)
    with pytest.raises(TopicAlreadyExistsError):
        m.create_topic("t", 1)
    with pytest.raises(InvalidTopicError):
        m.create_topic("bad/name", 1)
    with pytest.raises(InvalidPartitionsError):
        m.create_topic("u", 0)
    with pytest.raises(InvalidConfigError, match=r"segment\.bytes"):
        m.create_topic("u", 1, {"segment.bytes": "nope"})
    with pytest.raises(UnknownTopicOrPartitionError):
        m.log("t", 1)
    with pytest.raises(UnknownTopicOrPartitionError):
        m.topic("nope")
    with pytest.raises(InvalidPartitionsError):
        m.create_partitions("t", 1)


def test_delete_topic_and_recreate(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.create_topic("t", 2)
    m.log("t", 0).append(make_batch([b"a"]))
    m.delete_topic("t")
    assert m.topics() == {}
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    m.create_topic("t", 1)
    assert m.log("t", 0).log_end_offset == 0
    m.close()
    assert list(manager(tmp_path).topics()) == ["t"]


def test_create_partitions_and_alter_configs_persist(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.create_topic("t", 1, {"cleanup.policy": "compact"})
    assert m.create_partitions("t", 4).partitions == 4
    m.alter_configs("t", {"segment.bytes": "4096"})
    m.alter_configs("t", {}, ["cleanup.policy"])
    assert m.log("t", 3).config.segment_bytes == 4096
    assert m.log("t", 0).config.cleanup_policy == "delete"
    with pytest.raises(InvalidConfigError, match=r"flush\.ms"):
        m.alter_configs("t", {"flush.ms": "-5"})
    m.close()
    m = manager(tmp_path)
    assert m.topic("t").configs == {"segment.bytes": "4096"}
    assert m.topic("t").partitions == 4
    assert m.alter_configs("t", {"retention.ms": "5"}, replace=True).configs == {
        "retention.ms": "5"
    }
    m.close()


def test_background_threads_start_and_stop(tmp_path: Path) -> None:
    m = LogManager(tmp_path, flush_check_interval_ms=1)
    m.load()
    m.create_topic("t", 1, {"flush.ms": "0"})
    m.start()
    m.log("t", 0).append(make_batch([b"a"]))
    m.close()


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def test_retention_flush_and_cleaner_passes_use_the_injected_clock(tmp_path: Path) -> None:
    clock = Clock(1_000_000)
    m = LogManager(tmp_path, clock=clock)
    m.load()
    m.create_topic("d", 1, {"segment.bytes": "200", "retention.ms": "1000", "flush.ms": "500"})
    m.create_topic("c", 1, {"segment.bytes": "200", "cleanup.policy": "compact"})
    for _ in range(6):
        m.log("d", 0).append(make_batch([b"x" * 50], timestamp=clock.now))
        m.log("c", 0).append(make_batch([b"x" * 50], keys=[b"k"], timestamp=clock.now))
    assert m.run_retention() == 0
    clock.now += 2_000
    assert m.run_retention() > 0
    assert m.log("d", 0).log_start_offset > 0
    assert m.log("c", 0).log_start_offset == 0  # compact-only topics never expire
    m.run_flush()
    assert (tmp_path / "d-0" / "recovery-point").read_text().strip() == "6"
    assert m.run_cleaner() > 0
    m.close()


def test_load_finishes_interrupted_deletes_and_ignores_orphans(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.create_topic("kept", 1)
    m.close()
    (tmp_path / "gone-0.abc.deleted").mkdir()
    (tmp_path / "orphan-0").mkdir()  # an interrupted create: no metadata names it
    m = manager(tmp_path)
    assert not (tmp_path / "gone-0.abc.deleted").exists()
    assert list(m.topics()) == ["kept"]
    m.create_topic("orphan", 1)  # the stale directory is replaced, not adopted
    assert m.log("orphan", 0).log_end_offset == 0
    with pytest.raises(InvalidConfigError, match="nope"):
        m.alter_configs("kept", {}, ["nope"])
    m.close()


def test_a_topic_that_cannot_be_fully_created_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of descriptors at the third partition (a stand-in: the real limit is exercised by
    tests/broker/test_open_files_limit.py): no half-created topic, and the broker goes on."""
    import errno

    from broker.errors import StorageError
    from broker.log.partition_log import PartitionLog

    m = manager(tmp_path)
    real_open = PartitionLog.open

    def flaky_open(directory: Path, topic: str, partition: int, *args, **kwargs):
        if partition == 2:
            directory.mkdir(parents=True)  # failed after creating something, like a real one
            raise OSError(errno.EMFILE, "Too many open files")
        return real_open(directory, topic, partition, *args, **kwargs)

    monkeypatch.setattr(PartitionLog, "open", flaky_open)
    with pytest.raises(StorageError, match="nothing was created"):
        m.create_topic("half", 4)
    assert m.topics() == {}
    assert not any(p.name.startswith("half-") for p in tmp_path.iterdir())
    m.create_topic("other", 1)
    with pytest.raises(StorageError, match="nothing was created"):
        m.create_partitions("other", 4)
    assert m.topic("other").partitions == 1
    assert not (tmp_path / "other-1").exists()
    monkeypatch.undo()
    assert m.create_topic("half", 4).partitions == 4  # the same name works once it can
    m.close()
    assert set(manager(tmp_path).topics()) == {"half", "other"}
