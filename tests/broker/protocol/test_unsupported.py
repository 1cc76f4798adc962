"""Versions (and APIs) the broker does not serve get UNSUPPORTED_VERSION, not a closed socket.

No client sends such requests after reading ApiVersions, so these tests write raw frames with
kio. Versions no schema describes still close the connection (test_connection.py).
"""

from __future__ import annotations

import io
import struct

import pytest
from kio.schema.describe_delegation_token.v3.request import DescribeDelegationTokenRequest
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.offset_for_leader_epoch.v4.request import (
    OffsetForLeaderEpochRequest as EpochRequest,
)
from kio.schema.offset_for_leader_epoch.v4.request import (
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
from kio.serial import entity_reader, entity_writer

from broker.protocol import registry
from broker.protocol._legacy_schemas import load_request, load_response
from broker.protocol._unsupported import _WarnOncePer, error_response
from tests.broker.protocol.test_every_version import _instance
from tests.broker.protocol.wire import WireClient


def _unserved() -> list[tuple[int, int]]:
    """Every (api key, version) some schema describes that the broker does not serve."""
    import broker.protocol.handlers  # noqa: F401  (registers the handlers)

    out = []
    for key in range(100):
        for version in range(20):
            try:
                load_request(key, version)
            except Exception:
                continue
            reg = registry.lookup(key)
            if reg is None or not reg.min_version <= version <= reg.max_version:
                out.append((key, version))
    return out


UNSERVED = _unserved()


def _frame(request) -> bytes:
    header_cls = request.__header_schema__
    buf = io.BytesIO()
    entity_writer(header_cls)(
        buf,
        header_cls(
            request_api_key=request.__api_key__,
            request_api_version=request.__version__,
            correlation_id=9,
            client_id="t",
        ),
    )
    entity_writer(type(request))(buf, request)
    return buf.getvalue()


def _errors(entity) -> list[ErrorCode]:
    found = []
    for name, f in entity.__dataclass_fields__.items():
        value = getattr(entity, name)
        if f.metadata.get("kafka_type") == "error_code":
            found.append(value)
        for item in value if isinstance(value, tuple) else (value,):
            if hasattr(item, "__dataclass_fields__"):
                found += _errors(item)
    return found


def _metadata() -> MetadataRequest:
    return MetadataRequest(
        topics=(), allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )


def test_there_are_unserved_apis_with_schemas():
    assert len(UNSERVED) > 30  # delegation tokens, KRaft and share-group APIs ...
    assert (41, 1) in UNSERVED and (57, 1) in UNSERVED
    assert (17, 1) not in UNSERVED  # SaslHandshake is served


@pytest.mark.parametrize(("api_key", "version"), UNSERVED)
def test_every_unserved_version_gets_an_encodable_error_response(api_key, version):
    request = _instance(load_request(api_key, version), "t")
    response, why = error_response(api_key, version, _frame(request))
    assert why is None and response is not None
    assert ErrorCode.unsupported_version in _errors(response)
    cls = load_response(api_key, version)
    buf = io.BytesIO()
    entity_writer(cls)(buf, response)
    decoded, size = entity_reader(cls)(buf.getvalue(), 0)
    assert size == len(buf.getvalue()) and decoded == response


def test_error_response_mirrors_the_request_elements():
    request = EpochRequest(
        replica_id=-1,
        topics=(
            OffsetForLeaderTopic(
                topic="orders",
                partitions=tuple(
                    OffsetForLeaderPartition(partition=p, current_leader_epoch=0, leader_epoch=0)
                    for p in (0, 3)
                ),
            ),
        ),
    )
    response, _ = error_response(23, 4, _frame(request))
    (topic,) = response.topics
    assert topic.topic == "orders"
    assert [(p.partition, p.error_code) for p in topic.partitions] == [
        (0, ErrorCode.unsupported_version),
        (3, ErrorCode.unsupported_version),
    ]


def test_a_malformed_unserved_request_gets_no_answer():
    frame = _frame(SaslHandshakeRequest(mechanism="PLAIN"))
    response, why = error_response(17, 1, frame[:-3])
    assert response is None and "malformed" in why
    assert error_response(3, 99, frame) == (None, "no schema for this api version")


def test_unserved_apis_are_answered_and_the_connection_stays_usable(broker):
    with WireClient(broker.host, broker.port) as client:
        handshake = client.call(SaslHandshakeRequest(mechanism="PLAIN"))
        assert handshake.error_code == ErrorCode.illegal_sasl_state  # a PLAINTEXT listener
        tokens = client.call(DescribeDelegationTokenRequest(owners=None))
        assert tokens.error_code == ErrorCode.unsupported_version
        metadata = client.call(_metadata())
        assert metadata.brokers[0].port == broker.port


def test_pipelined_requests_around_an_unserved_one_are_all_answered_in_order(broker):
    with WireClient(broker.host, broker.port) as client:
        first = client.send(_metadata())
        middle = client.send(DescribeDelegationTokenRequest(owners=None))
        last = client.send(_metadata())
        answers = [client.receive() for _ in range(3)]
    assert [c for c, _ in answers] == [first, middle, last]
    assert answers[1][1].error_code == ErrorCode.unsupported_version


def test_warnings_for_unanswerable_versions_are_rate_limited():
    limiter = _WarnOncePer(60.0)
    assert limiter.allow(3, 99)
    assert not limiter.allow(3, 99)
    assert not limiter.allow(3, 99)
    assert limiter.allow(3, 98)  # per api key and version
    assert limiter.suppressed(3, 99) == {"suppressed": 2}
    assert limiter.suppressed(3, 99) == {}


def test_closing_on_an_unanswerable_version_is_logged_once(broker):
    frame = struct.pack(">hhih", 3, 77, 1, -1)
    for _ in range(3):
        with WireClient(broker.host, broker.port) as client:
            client.send_raw(struct.pack(">i", len(frame)) + frame)
            assert client.is_closed_by_peer()
    assert broker.log().count("api_version=77") == 1
