"""The versions Kafka 4 dropped and Kafka 3.x serves, request by request over the wire.

Exact semantics that real clients do not expose: per-partition errors of Produce v0-v2,
Fetch v0-v3 message formats and zstd, ListOffsets v0's offset lists, OffsetCommit v0/v1 and
OffsetFetch v0, and the admin APIs' v0 shapes. Real clients pinned to old versions are in
test_old_clients.py.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from kafka.record import MemoryRecords
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kio.schema.errors import ErrorCode

from broker.log.records import CODEC_NONE, CODEC_ZSTD, Record, build_batch
from broker.protocol._entities import build, nested
from broker.protocol._legacy_schemas import load_request
from tests.broker.protocol.wire import WireClient


def _request(api_key: int, version: int, **values):
    return load_request(api_key, version)(**values)


def _entity(api_key: int, version: int, class_name: str, /, **values):
    return nested(load_request(api_key, version), class_name)(**values)


def _message_set(magic: int, values: list[bytes], codec: int = CODEC_NONE) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 30)
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=b"k", value=value)
    return bytes(builder.build())


def _produce(client: WireClient, version: int, topic: str, records: bytes, partition: int = 0):
    request = _request(
        0, version, acks=-1, timeout=timedelta(seconds=5),
        topic_data=(_entity(0, version, "TopicProduceData", name=topic, partition_data=(
            _entity(0, version, "PartitionProduceData", index=partition, records=records),
        )),),
    )  # fmt: skip
    (topic_response,) = client.call(request).responses
    (part,) = topic_response.partition_responses
    return part


def _fetch(client: WireClient, version: int, topic: str, offset: int, partition: int = 0):
    request = build(load_request(1, version),
        replica_id=-1, max_wait=timedelta(0), min_bytes=0, max_bytes=1 << 20,
        isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=(),
        topics=(_entity(1, version, "FetchTopic", topic=topic, partitions=(build(
            nested(load_request(1, version), "FetchPartition"), partition=partition,
            current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
            partition_max_bytes=1 << 20,
        ),)),),
    )  # fmt: skip
    (topic_response,) = client.call(request).responses
    (part,) = topic_response.partitions
    return part


def _create(client: WireClient, topic: str, partitions: int = 1, **configs: str) -> None:
    request = _request(19, 0, timeout=timedelta(seconds=5), topics=(_entity(
        19, 0, "CreatableTopic", name=topic, num_partitions=partitions, replication_factor=1,
        assignments=(),
        configs=tuple(
            _entity(19, 0, "CreatableTopicConfig", name=k.replace("_", "."), value=v)
            for k, v in configs.items()
        ),
    ),))  # fmt: skip
    (result,) = client.call(request).topics
    assert result.error_code == ErrorCode.none, result


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1)])
def test_produce_v0_to_v2_appends_and_answers_base_offsets(broker, topic_name, version, magic):
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        first = _produce(client, version, topic_name, _message_set(magic, [b"a", b"b", b"c"]))
        second = _produce(client, version, topic_name, _message_set(magic, [b"d"]))
        assert (first.error_code, first.base_offset) == (ErrorCode.none, 0)
        assert (second.error_code, second.base_offset) == (ErrorCode.none, 3)
        if version == 2:
            assert first.log_append_time is None  # CreateTime topic: -1 on the wire
        stored = _fetch(client, 4, topic_name, 0)  # a modern fetch sees v2 batches
    values = []
    records = MemoryRecords(bytes(stored.records))
    while (batch := records.next_batch()) is not None:
        assert batch.magic == 2
        values += [r.value for r in batch]
    assert values == [b"a", b"b", b"c", b"d"]


def test_produce_v2_refuses_a_corrupt_message_set_per_partition(broker, topic_name):
    corrupt = bytearray(_message_set(1, [b"payload"]))
    corrupt[-1] ^= 0xFF
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name, partitions=2)
        bad = _produce(client, 2, topic_name, bytes(corrupt), partition=0)
        good = _produce(client, 2, topic_name, _message_set(1, [b"payload"]), partition=1)
    assert bad.error_code == ErrorCode.corrupt_message
    assert (good.error_code, good.base_offset) == (ErrorCode.none, 0)


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 1)])
def test_fetch_v0_to_v3_serves_the_old_message_format(broker, topic_name, version, magic):
    batch = build_batch([Record(i, 1_700_000_000_000 + i, b"k", b"v%d" % i) for i in range(3)])
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        _produce(client, 2, topic_name, _message_set(1, [b"x"]))  # offset 0
        part = _produce_v2_batch(client, topic_name, batch)  # offsets 1-3
        assert part.error_code == ErrorCode.none
        fetched = _fetch(client, version, topic_name, 1)
    assert fetched.error_code == ErrorCode.none and fetched.high_watermark == 4
    records = MemoryRecords(bytes(fetched.records))
    seen = []
    while (b := records.next_batch()) is not None:
        assert b.magic == magic
        seen += [(r.offset, r.value) for r in b]
    assert seen == [(1, b"v0"), (2, b"v1"), (3, b"v2")]


def _produce_v2_batch(client: WireClient, topic: str, batch: bytes):
    from kio.schema.produce.v3.request import (
        PartitionProduceData,
        ProduceRequest,
        TopicProduceData,
    )

    request = ProduceRequest(
        transactional_id=None, acks=-1, timeout=timedelta(seconds=5),
        topic_data=(TopicProduceData(name=topic, partition_data=(
            PartitionProduceData(index=0, records=batch),
        )),),
    )  # fmt: skip
    return client.call(request).responses[0].partition_responses[0]


def test_fetch_v3_answers_zstd_data_with_unsupported_compression_type(broker, topic_name):
    zstd = build_batch([Record(0, 1, b"k", b"v" * 1000)], compression=CODEC_ZSTD)
    assert zstd[22] & 0x07 == CODEC_ZSTD
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        assert _produce_v2_batch(client, topic_name, zstd).error_code == ErrorCode.none
        old = _fetch(client, 3, topic_name, 0)
        new = _fetch(client, 10, topic_name, 0)
    assert old.error_code == ErrorCode.unsupported_compression_type and not old.records
    assert new.error_code == ErrorCode.none and len(new.records) == len(zstd)


def _list_offsets_v0(client: WireClient, topic: str, timestamp: int, max_num: int, replica=-1):
    request = _request(2, 0, replica_id=replica, topics=(_entity(
        2, 0, "ListOffsetsTopic", name=topic, partitions=(_entity(
            2, 0, "ListOffsetsPartition", partition_index=0, timestamp=timestamp,
            max_num_offsets=max_num,
        ),),
    ),))  # fmt: skip
    (part,) = client.call(request).topics[0].partitions
    return part


def test_list_offsets_v0_lists_segment_boundaries_newest_first(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        # segment.bytes this small rolls a segment after every produce
        _create(client, topic_name, segment_bytes="100")
        for _ in range(4):
            _produce(client, 2, topic_name, _message_set(1, [b"x" * 80, b"y" * 80]))
        latest = _list_offsets_v0(client, topic_name, -1, 10)
        assert latest.error_code == ErrorCode.none
        assert latest.old_style_offsets == (8, 6, 4, 2, 0)
        assert _list_offsets_v0(client, topic_name, -1, 1).old_style_offsets == (8,)
        assert _list_offsets_v0(client, topic_name, -1, 3).old_style_offsets == (8, 6, 4)
        assert _list_offsets_v0(client, topic_name, -2, 10).old_style_offsets == (0,)
        # by time: segments modified at or before T (all of them "now"; none in 1970)
        assert _list_offsets_v0(client, topic_name, 2**62, 2).old_style_offsets == (8, 6)
        assert _list_offsets_v0(client, topic_name, 1000, 5).old_style_offsets == ()
        missing = _list_offsets_v0(client, f"missing-{uuid.uuid4().hex}", -1, 1)
        assert missing.error_code == ErrorCode.unknown_topic_or_partition


def test_offset_commit_v0_v1_and_offset_fetch_v0(broker, topic_name):
    group = f"g-{topic_name}"
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name, partitions=2)

        def commit(version: int, partition: int, offset: int, **extra):
            part_extra = {"commit_timestamp": extra.pop("commit_timestamp")} if version else {}
            request = _request(8, version, group_id=group, **extra, topics=(_entity(
                8, version, "OffsetCommitRequestTopic", name=topic_name, partitions=(_entity(
                    8, version, "OffsetCommitRequestPartition", partition_index=partition,
                    committed_offset=offset, committed_metadata=f"m{version}", **part_extra,
                ),),
            ),))  # fmt: skip
            return client.call(request).topics[0].partitions[0].error_code

        assert commit(0, 0, 11) == ErrorCode.none
        assert (
            commit(1, 1, 22, generation_id_or_member_epoch=-1, member_id="", commit_timestamp=-1)
            == ErrorCode.none
        )
        fetch = _request(9, 0, group_id=group, topics=(_entity(
            9, 0, "OffsetFetchRequestTopic", name=topic_name, partition_indexes=(0, 1),
        ),))  # fmt: skip
        (topic,) = client.call(fetch).topics
    got = {
        p.partition_index: (p.committed_offset, p.metadata, p.error_code) for p in topic.partitions
    }
    assert got == {0: (11, "m0", ErrorCode.none), 1: (22, "m1", ErrorCode.none)}


def test_admin_v0_versions(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name, cleanup_policy="compact")
        described = client.call(_request(32, 0, resources=(_entity(
            32, 0, "DescribeConfigsResource", resource_type=2, resource_name=topic_name,
            configuration_keys=("cleanup.policy", "retention.ms"),
        ),)))  # fmt: skip
        (result,) = described.results
        entries = {c.name: (c.value, c.is_default) for c in result.configs}
        assert entries["cleanup.policy"] == ("compact", False)
        assert entries["retention.ms"][1] is True
        dirs = client.call(_request(35, 0, topics=None)).results[0]
        assert topic_name in {t.name for t in dirs.topics}
        deleted = client.call(
            _request(20, 0, topic_names=(topic_name,), timeout=timedelta(seconds=5))
        )
        assert [(r.name, r.error_code) for r in deleted.responses] == [(topic_name, 0)]
