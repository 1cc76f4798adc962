"""Fetch over the wire: long-poll wake-ups, byte limits, errors, topic ids, isolation."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import request as f12
from kio.schema.fetch.v13 import request as f13
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

from broker.log.batch import read_header
from broker.log.records import Record, build_batch
from tests.broker.protocol.wire import WireClient

LONG_WAIT = timedelta(seconds=10)


def _create(client: WireClient, topic: str) -> uuid.UUID:
    response = client.call(
        MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=None, name=topic),),
            allow_auto_topic_creation=True,
            include_topic_authorized_operations=False,
        )
    )
    assert response.topics[0].error_code == ErrorCode.none
    return response.topics[0].topic_id


def _produce(client: WireClient, topic: str, value: bytes, count: int = 1) -> int:
    records = b"".join(
        build_batch([Record(0, 1_700_000_000_000, None, value)]) for _ in range(count)
    )
    response = client.call(
        ProduceRequest(
            transactional_id=None, acks=-1, timeout=timedelta(seconds=5),
            topic_data=(TopicProduceData(
                name=topic, partition_data=(PartitionProduceData(index=0, records=records),)
            ),),
        )
    )  # fmt: skip
    part = response.responses[0].partition_responses[0]
    assert part.error_code == ErrorCode.none
    return part.base_offset


def _fetch(offset: int, topic: str, *, max_wait=LONG_WAIT, min_bytes=1, max_bytes=1 << 20,
           partition_max_bytes=1 << 20) -> f12.FetchRequest:  # fmt: skip
    return f12.FetchRequest(
        max_wait=max_wait, min_bytes=min_bytes, max_bytes=max_bytes,
        topics=(f12.FetchTopic(topic=topic, partitions=(f12.FetchPartition(
            partition=0, fetch_offset=offset, partition_max_bytes=partition_max_bytes),)),),
        forgotten_topics_data=(),
    )  # fmt: skip


def _batches(records: bytes) -> list[int]:
    """Base offsets of the batches in a records field."""
    out, pos = [], 0
    while pos < len(records):
        header = read_header(records, pos)
        out.append(header.base_offset)
        pos += header.size
    return out


def test_long_poll_wakes_as_soon_as_data_arrives(broker, topic_name):
    with (
        WireClient(broker.host, broker.port) as fetcher,
        WireClient(broker.host, broker.port) as producer,
    ):
        _create(producer, topic_name)
        fetcher.send(_fetch(0, topic_name))
        started = time.monotonic()
        # The fetch is parked: another connection is still served meanwhile.
        _produce(producer, topic_name, b"wake up")
        _, response = fetcher.receive()
        elapsed = time.monotonic() - started
    part = response.responses[0].partitions[0]
    assert part.error_code == ErrorCode.none
    assert _batches(part.records) == [0]
    assert part.high_watermark == 1
    assert elapsed < LONG_WAIT.total_seconds() / 2


def test_long_poll_times_out_with_an_empty_answer(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        started = time.monotonic()
        response = client.call(_fetch(0, topic_name, max_wait=timedelta(milliseconds=300)))
        assert time.monotonic() - started >= 0.25
    part = response.responses[0].partitions[0]
    assert (part.error_code, part.records, part.high_watermark) == (ErrorCode.none, b"", 0)


def test_min_bytes_waits_for_enough_data(broker, topic_name):
    with (
        WireClient(broker.host, broker.port) as fetcher,
        WireClient(broker.host, broker.port) as producer,
    ):
        _create(producer, topic_name)
        fetcher.send(_fetch(0, topic_name, min_bytes=3000))
        done = threading.Event()

        def receive() -> None:
            fetcher.response = fetcher.receive()[1]  # type: ignore[attr-defined]
            done.set()

        threading.Thread(target=receive, daemon=True).start()
        _produce(producer, topic_name, b"x" * 1000)
        assert not done.wait(0.3), "answered before min_bytes were available"
        _produce(producer, topic_name, b"y" * 2500)
        assert done.wait(5)
    assert _batches(fetcher.response.responses[0].partitions[0].records) == [0, 1]  # type: ignore[attr-defined]


def test_byte_limits_are_soft_for_the_first_batch(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        _produce(client, topic_name, b"z" * 1000, count=10)
        limited = client.call(_fetch(0, topic_name, partition_max_bytes=2500))
        assert _batches(limited.responses[0].partitions[0].records) == [0, 1]
        tiny = client.call(_fetch(3, topic_name, max_bytes=10, partition_max_bytes=10))
        assert _batches(tiny.responses[0].partitions[0].records) == [3]


def test_offset_out_of_range_and_unknown_topic(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        started = time.monotonic()
        response = client.call(_fetch(5, topic_name))
        assert response.responses[0].partitions[0].error_code == ErrorCode.offset_out_of_range
        response = client.call(_fetch(0, topic_name + "-missing"))
        part = response.responses[0].partitions[0]
        assert part.error_code == ErrorCode.unknown_topic_or_partition
        assert time.monotonic() - started < LONG_WAIT.total_seconds() / 2, "errors answer at once"


def test_fetch_by_topic_id(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        topic_id = _create(client, topic_name)
        _produce(client, topic_name, b"by id")

        def fetch(tid: uuid.UUID) -> f13.FetchRequest:
            return f13.FetchRequest(
                max_wait=timedelta(milliseconds=10), min_bytes=1,
                topics=(f13.FetchTopic(topic_id=tid, partitions=(f13.FetchPartition(
                    partition=0, fetch_offset=0, partition_max_bytes=1 << 20),)),),
                forgotten_topics_data=(),
            )  # fmt: skip

        found = client.call(fetch(topic_id)).responses[0]
        assert found.topic_id == topic_id
        assert _batches(found.partitions[0].records) == [0]
        missing = client.call(fetch(uuid.uuid4())).responses[0]
        assert missing.partitions[0].error_code == ErrorCode.unknown_topic_id


def test_unknown_fetch_session_is_refused(broker, topic_name):
    request = _fetch(0, topic_name)
    request = f12.FetchRequest(
        max_wait=request.max_wait, min_bytes=1, session_id=1234, session_epoch=1,
        topics=request.topics, forgotten_topics_data=(),
    )  # fmt: skip
    with WireClient(broker.host, broker.port) as client:
        response = client.call(request)
    assert response.error_code == ErrorCode.fetch_session_id_not_found
    assert response.session_id == 0


def test_flush_messages_topic_acknowledges_after_fsync(broker, topic_name):
    # flush.messages=1: the broker fsyncs before answering and only then moves the high
    # watermark; the records must be readable right after the acknowledgement.
    from kio.schema.create_topics.v7 import request as ct

    with WireClient(broker.host, broker.port) as client:
        created = client.call(
            ct.CreateTopicsRequest(
                topics=(ct.CreatableTopic(
                    name=topic_name, num_partitions=1, replication_factor=1, assignments=(),
                    configs=(ct.CreatableTopicConfig(name="flush.messages", value="1"),),
                ),),
                timeout=timedelta(seconds=5), validate_only=False,
            )
        )  # fmt: skip
        assert created.topics[0].error_code == ErrorCode.none
        for i in range(3):
            assert _produce(client, topic_name, b"durable") == i
        response = client.call(_fetch(0, topic_name, max_wait=timedelta(milliseconds=10)))
    part = response.responses[0].partitions[0]
    assert part.high_watermark == 3
    assert _batches(part.records) == [0, 1, 2]


def test_parked_fetch_answers_when_the_client_hangs_up(broker, topic_name):
    import socket

    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        started = time.monotonic()
        client.send(_fetch(0, topic_name))  # would wait LONG_WAIT for data
        client.sock.shutdown(socket.SHUT_WR)
        _, response = client.receive()
    assert time.monotonic() - started < LONG_WAIT.total_seconds() / 2
    assert response.responses[0].partitions[0].records == b""
