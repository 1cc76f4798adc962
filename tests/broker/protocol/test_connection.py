"""Framing, ordering and failure isolation of a connection, over raw sockets."""

from __future__ import annotations

import socket
import struct
from dataclasses import replace
from datetime import timedelta

from kio.schema.api_versions.v0.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
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


def test_a_client_resetting_while_its_request_waits_is_not_a_handler_crash(broker, topic_name):
    """A client that resets the connection while its request is parked (a long-poll Fetch)
    leaves the broker answering into a closed transport (uvloop raises there, the stdlib loop
    only warns): that is a lost connection, not a crash to log with a traceback."""
    with WireClient(broker.host, broker.port) as setup:
        setup.call(
            MetadataRequest(
                topics=(MetadataRequestTopic(topic_id=None, name=topic_name),),
                allow_auto_topic_creation=True, include_topic_authorized_operations=False,
            )
        )  # fmt: skip
    fetch = FetchRequest(
        max_wait=timedelta(milliseconds=200), min_bytes=1, max_bytes=1 << 20,
        topics=(FetchTopic(topic=topic_name, partitions=(
            FetchPartition(fetch_offset=0, partition=0, partition_max_bytes=1 << 20),
        )),),
        forgotten_topics_data=(),
    )  # fmt: skip
    for _ in range(5):
        client = WireClient(broker.host, broker.port)
        client.send(fetch)
        # linger 0: close sends an RST, so the broker's transport closes under the parked fetch
        client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
    # A witness fetch parked after them, for longer, is answered after theirs have expired.
    with WireClient(broker.host, broker.port) as witness:
        witness.call(replace(fetch, max_wait=timedelta(milliseconds=400)))
        assert witness.call(ApiVersionsRequest()).error_code == ErrorCode.none
    assert "connection task failed" not in broker.log()
