"""The data source inside Spark: batch reads, streaming copies, kill and restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.broker import wait_until
from tests.spark_pipelines._kafka import create_topic, produce, read_all

# Spark start-up on a busy 2-core machine takes up to ~90 s of the first test's budget.
pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[3]


def _copy_once(spark, broker, source: str, sink: str, checkpoint: Path, **writer: str) -> dict:
    df = (
        spark.readStream.format("sluice")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "40")
        .load()
        .selectExpr("key", "concat(cast(value as string), '!') as value", "headers")
    )
    query = (
        df.writeStream.format("sluice")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(checkpoint))
        .options(**writer)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert not query.isActive and query.exception() is None
    return {"batches": len(query.recentProgress)}


def test_spark_batch_read_and_streaming_copy_resumes(spark, broker, topic_name, tmp_path):
    source, sink = f"{topic_name}-in", f"{topic_name}-out"
    create_topic(broker.bootstrap, source, 2)
    create_topic(broker.bootstrap, sink, 1)
    for p in (0, 1):
        produce(broker.bootstrap, source, [(f"{p}", f"a{p}-{i}") for i in range(50)], partition=p)

    df = (
        spark.read.format("sluice")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", source)
        .load()
    )
    assert df.rdd.getNumPartitions() == 2  # one Spark partition per topic partition
    counts = {r["partition"]: r["count"] for r in df.groupBy("partition").count().collect()}
    assert counts == {0: 50, 1: 50}

    first = _copy_once(spark, broker, source, sink, tmp_path / "ckpt")
    assert first["batches"] >= 3  # maxOffsetsPerTrigger=40 over 100 records
    produce(broker.bootstrap, source, [("0", f"b-{i}") for i in range(7)], partition=0)
    _copy_once(spark, broker, source, sink, tmp_path / "ckpt")  # resumes from the checkpoint

    values = sorted(v.decode() for *_, v, _h in read_all(broker.bootstrap, sink))
    expected = [f"a{p}-{i}!" for p in (0, 1) for i in range(50)] + [f"b-{i}!" for i in range(7)]
    assert values == sorted(expected)


def test_transactional_streaming_copy_of_a_topic_with_aborted_data(
    spark, broker, topic_name, tmp_path
):
    """Kafka transactions on both ends: the reader (read_committed) skips an aborted
    transaction of the input, the writer commits each micro-batch task in a transaction."""
    from confluent_kafka import Producer

    from tests.broker.transaction.helpers import read_all as read_isolated

    source, sink = f"{topic_name}-in", f"{topic_name}-out"
    create_topic(broker.bootstrap, source, 2)
    create_topic(broker.bootstrap, sink, 2)
    txn = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": source,
                    "log_level": 0})  # fmt: skip
    txn.init_transactions(30)
    for name, commit in (("a", True), ("bad", False), ("b", True)):
        txn.begin_transaction()
        for i in range(30):
            txn.produce(source, f"{name}-{i}".encode(), partition=i % 2)
        txn.flush(30)
        txn.commit_transaction(30) if commit else txn.abort_transaction(30)
    _copy_once(spark, broker, source, sink, tmp_path / "ckpt", transactional="true")
    values = sorted(v.decode() for *_, v in read_isolated(broker.bootstrap, sink, 2))
    assert values == sorted(f"{n}-{i}!" for n in ("a", "b") for i in range(30))


def _job(broker, source: str, sink: str, checkpoint: Path, mode: str, log: Path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.spark_pipelines._stream_job",
                broker.bootstrap,
                source,
                sink,
                str(checkpoint),
                mode,
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@pytest.mark.slow
def test_killed_stream_restarts_without_gap_or_duplicate(broker, topic_name, tmp_path):
    source, sink = f"{topic_name}-in", f"{topic_name}-out"
    create_topic(broker.bootstrap, source, 2)
    create_topic(broker.bootstrap, sink, 2)
    n = 3000
    for p in (0, 1):
        produce(
            broker.bootstrap, source, [(f"{i}", f"v{p}-{i}") for i in range(n // 2)], partition=p
        )
    log, ckpt = tmp_path / "job.log", tmp_path / "ckpt"

    proc = _job(broker, source, sink, ckpt, "continuous", log)
    try:
        wait_until(lambda: len(read_all(broker.bootstrap, sink)) >= 600, 240, "first rows out")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # driver, JVM and Python workers at once
        proc.wait()
    written = len(read_all(broker.bootstrap, sink))
    assert written < n, "killed too late to test a restart"

    again = _job(broker, source, sink, ckpt, "once", log)
    assert again.wait(300) == 0, log.read_text()[-3000:]
    values = [v.decode() for *_, v, _h in read_all(broker.bootstrap, sink)]
    expected = [f"V{p}-{i}" for p in (0, 1) for i in range(n // 2)]
    assert sorted(values) == sorted(expected)  # no gap, no duplicate
