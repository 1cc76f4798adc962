"""Framing, ordering and failure isolation of a connection, over raw sockets."""

from __future__ import annotations

import struct
from datetime import timedelta

from kio.schema.api_versions.v0.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

from broker.log.records import Record, build_batch
from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import api_versions_ok


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_pipelined_requests_are_answered_in_order(broker):
    with WireClient(broker.host, broker.port) as client:
        sent = []
        for i in range(50):
            request = (
                ApiVersionsRequest()
                if i % 2
                else MetadataRequest(
                    topics=(), allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False,
                )
            )  # fmt: skip
            sent.append(client.send(request))
        received = [client.receive()[0] for _ in sent]
    assert received == sent


def _acks_0(topic: str) -> ProduceRequest:
    batch = build_batch([Record(0, 1_700_000_000_000, b"k", b"v")])
    return ProduceRequest(
        transactional_id=None,
        acks=0,
        timeout=timedelta(seconds=5),
        topic_data=(
            TopicProduceData(
                name=topic, partition_data=(PartitionProduceData(index=0, records=batch),)
            ),
        ),
    )


def test_acks_0_produce_gets_no_response(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        client.call(
            MetadataRequest(
                topics=(MetadataRequestTopic(topic_id=None, name=topic_name),),
                allow_auto_topic_creation=True, include_topic_authorized_operations=False,
            )
        )  # fmt: skip
        client.send(_acks_0(topic_name), expect_response=False)
        marker = client.send(ApiVersionsRequest())
        correlation, response = client.receive()
    assert correlation == marker
    assert response.error_code == ErrorCode.none


def test_failed_acks_0_produce_closes_the_connection(broker, topic_name):
    # The producer reads no response, so closing is the only way to tell it (as Kafka does).
    with WireClient(broker.host, broker.port) as client:
        client.send(_acks_0(topic_name + "-missing"), expect_response=False)
        assert client.is_closed_by_peer()


def _closed_after(broker, frame: bytes) -> bool:
    with WireClient(broker.host, broker.port) as client:
        client.send_raw(frame)
        return client.is_closed_by_peer()


def test_oversized_frame_closes_the_connection(broker):
    assert _closed_after(broker, struct.pack(">i", 2**31 - 1) + b"\x00" * 16)
    assert api_versions_ok(broker.host, broker.port)


def test_negative_and_tiny_sizes_close_the_connection(broker):
    assert _closed_after(broker, struct.pack(">i", -5))
    assert _closed_after(broker, _frame(b"\x00\x01"))
    assert api_versions_ok(broker.host, broker.port)


def test_unknown_api_key_closes_the_connection(broker):
    assert _closed_after(broker, _frame(struct.pack(">hhih", 9999, 0, 1, -1)))
    assert api_versions_ok(broker.host, broker.port)


def test_a_version_no_schema_describes_closes_the_connection(broker):
    # Versions with a schema get UNSUPPORTED_VERSION instead (test_unsupported.py).
    assert _closed_after(broker, _frame(struct.pack(">hhih", 3, 99, 1, -1)))
    assert api_versions_ok(broker.host, broker.port)


def test_truncated_body_closes_the_connection(broker):
    # Metadata v12 header then half a topic array.
    assert _closed_after(broker, _frame(struct.pack(">hhih", 3, 12, 1, -1) + b"\x00\x05\x01"))
    assert api_versions_ok(broker.host, broker.port)


def test_client_vanishing_mid_frame_does_not_disturb_others(broker):
    with WireClient(broker.host, broker.port) as other:
        with WireClient(broker.host, broker.port) as leaving:
            leaving.send_raw(struct.pack(">i", 100) + b"\x00\x03")
        assert other.call(ApiVersionsRequest()).error_code == ErrorCode.none
