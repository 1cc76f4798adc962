"""Compaction with transactions, through a real broker and real clients: the cleaner removes
aborted records (they never win a key), drops the abort marker once its data is gone and
``delete.retention.ms`` passed, together with its index entry, so the same producer's later
committed batches stay visible to read_committed readers; restarts find the LSO caught up."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Producer

from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.log.records import decode_batches
from tests.broker.transaction.helpers import (
    TIMEOUT,
    create_topic,
    end_offsets,
    read_all,
    txn_broker,
)
from tests.fixtures.broker import wait_until


def test_compaction_removes_aborted_records_and_keeps_committed_ones(tmp_path: Path, topic_name):
    broker = txn_broker(tmp_path / "data")
    broker.start()
    try:
        create_topic(
            broker.bootstrap, topic_name, **{
                "cleanup.policy": "compact", "segment.bytes": "2048",
                "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "100",
            },
        )  # fmt: skip
        p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": topic_name,
                      "log_level": 0})  # fmt: skip
        p.init_transactions(TIMEOUT)
        p.begin_transaction()
        for k in range(10):
            p.produce(topic_name, b"v1", key=b"k%d" % k)
        p.commit_transaction(TIMEOUT)
        p.begin_transaction()
        for k in range(10):
            p.produce(topic_name, b"bad", key=b"k%d" % k)
        p.flush(TIMEOUT)
        p.abort_transaction(TIMEOUT)
        p.begin_transaction()
        for k in range(5):
            p.produce(topic_name, b"v2", key=b"k%d" % k)
        p.commit_transaction(TIMEOUT)
        filler = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        for i in range(60):  # closes the segments above so the cleaner may take them
            filler.produce(topic_name, b"x" * 100, key=b"f%d" % i)
            filler.flush(TIMEOUT)

        def aborted_gone() -> bool:
            seen = read_all(broker.bootstrap, topic_name, isolation="read_uncommitted")
            return b"bad" not in {r[3] for r in seen}

        wait_until(aborted_gone, TIMEOUT, "the cleaner to remove the aborted records")
        expected = {b"k%d" % k: (b"v2" if k < 5 else b"v1") for k in range(10)}

        def latest(isolation: str) -> dict[bytes | None, bytes | None]:
            seen = read_all(broker.bootstrap, topic_name, isolation=isolation)
            return {key: value for _, _, key, value in seen if key and key.startswith(b"k")}

        assert latest("read_committed") == expected
        assert latest("read_uncommitted") == expected
        broker.restart()  # producer state rebuilt from the compacted log: nothing left open
        lso, hw = end_offsets(broker.bootstrap, topic_name)
        assert lso == hw
        assert latest("read_committed") == expected
    finally:
        broker.stop()
    plog = PartitionLog.open(tmp_path / "data" / f"{topic_name}-0", topic_name, 0, LogConfig())
    try:
        # the abort's marker went with its data, and its index entry with it; the commit
        # markers stay while their transactions' records do
        assert plog.aborted_transactions(0, plog.log_end_offset) == []
        markers = [
            b for chunk in plog.read(0, 1 << 24).chunks for b in decode_batches(chunk)
            if b.is_control
        ]  # fmt: skip
        assert len(markers) == 2
    finally:
        plog.close()
