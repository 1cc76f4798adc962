"""Transactional streaming writes (``transactional=true``): one Kafka transaction per
micro-batch task, committed with a marker of its own.

Each task of micro-batch B writing Spark partition P:

1. opens a producer with ``transactional.id = sluice-spark-<writer>-<B>-<P>`` and calls
   ``init_transactions``, which aborts whatever an earlier attempt of the same task left open
   and fences that attempt (a retried or speculative task cannot also commit);
2. asks the broker, through consumer group ``sluice-spark-txn-<writer>-<P>``, for the last
   committed marker of its partition: the group's committed offset of
   ``__sluice_spark_txn_commits``-0, which is B + 1 once batch B's task P committed. If it is
   beyond B, the rows are already in the topic (a micro-batch replayed from Spark's checkpoint)
   and the task writes nothing;
3. otherwise begins a transaction, produces its rows, adds the marker (B + 1) to the same
   transaction with ``send_offsets_to_transaction`` (KIP-447: the offset is pending until the
   transaction commits; a fetch with ``require_stable``, as librdkafka's read_committed
   consumers send, waits for it), and commits.

So rows and marker become visible together: a ``read_committed`` reader sees each task's rows
exactly once, never a failed attempt's. A micro-batch is visible task by task (as Kafka
Connect's exactly-once tasks are), not all at once. ``<writer>`` is a digest of the writer id
(option ``writerId``, else ``checkpointLocation``, else the topic). The marker topic is created
by the driver on first use (compacted, one partition; it holds no records, only committed
group offsets point into it).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable

import pyarrow as pa
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from spark_pipelines.datasource import _kafka
from spark_pipelines.datasource._produce import Written, produce_batches, producer

log = logging.getLogger(__name__)

MARKER_TOPIC = "__sluice_spark_txn_commits"
TIMEOUT_S = 60.0


def _digest(writer_id: str) -> str:
    return hashlib.sha1(writer_id.encode()).hexdigest()[:16]


def transactional_id(writer_id: str, batch_id: int, partition: int) -> str:
    return f"sluice-spark-{_digest(writer_id)}-{batch_id}-{partition}"


def marker_group(writer_id: str, partition: int) -> str:
    return f"sluice-spark-txn-{_digest(writer_id)}-{partition}"


def ensure_marker_topic(kafka_config: dict[str, str]) -> None:
    admin = AdminClient(dict(kafka_config))  # type: ignore[arg-type]
    if MARKER_TOPIC in admin.list_topics(timeout=_kafka.TIMEOUT_S).topics:
        return
    new = NewTopic(MARKER_TOPIC, 1, 1, config={"cleanup.policy": "compact"})
    for future in admin.create_topics([new]).values():
        try:
            future.result(_kafka.TIMEOUT_S)
        except Exception as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise


def write_task(
    kafka_config: dict[str, str],
    writer_id: str,
    batch_id: int,
    partition: int,
    default_topic: str | None,
    batches: Iterable[pa.RecordBatch],
) -> Written:
    """Writes one task's rows in a transaction with its marker; see the module docstring."""
    prod = producer({**kafka_config, "transactional.id":
                     transactional_id(writer_id, batch_id, partition)})  # fmt: skip
    prod.init_transactions(TIMEOUT_S)
    group = Consumer({
        **kafka_config, "group.id": marker_group(writer_id, partition),
        "isolation.level": "read_committed", "enable.auto.commit": False,
    })  # fmt: skip
    try:
        marker = TopicPartition(MARKER_TOPIC, 0)
        committed = group.committed([marker], TIMEOUT_S)[0].offset
        if committed > batch_id:
            skipped = sum(b.num_rows for b in batches)
            log.info("batch %d partition %d already committed by writer %s: skipped",
                     batch_id, partition, writer_id)  # fmt: skip
            return Written(0, skipped)
        prod.begin_transaction()
        try:
            written = produce_batches(kafka_config, default_topic, batches, prod=prod)
            prod.send_offsets_to_transaction(
                [TopicPartition(MARKER_TOPIC, 0, batch_id + 1)],
                group.consumer_group_metadata(), TIMEOUT_S,
            )  # fmt: skip
            prod.commit_transaction(TIMEOUT_S)
        except BaseException:
            try:
                prod.abort_transaction(TIMEOUT_S)
            except KafkaException as exc:
                log.warning("abort after a failed write did not complete: %s", exc)
            raise
        return written
    finally:
        group.close()
