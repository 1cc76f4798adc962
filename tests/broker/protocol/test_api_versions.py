"""ApiVersions: the advertised table, every version, and the UNSUPPORTED_VERSION fallback."""

from __future__ import annotations

import struct

from kio.schema.api_versions.v0.request import ApiVersionsRequest as V0
from kio.schema.api_versions.v3.request import ApiVersionsRequest as V3
from kio.schema.api_versions.v4.request import ApiVersionsRequest as V4
from kio.schema.errors import ErrorCode

from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import _recv_exact

# What the broker implements; a change here is a deliberate protocol change. The floors are
# Kafka 3.x's (v0 everywhere): older clients and tools still send the versions Kafka 4 dropped.
EXPECTED = {
    0: (0, 13),  # Produce (v0-v2: message format v0/v1, up-converted)
    1: (0, 18),  # Fetch (v0-v3: down-converted to message format v0/v1)
    2: (0, 11),  # ListOffsets
    3: (0, 13),  # Metadata
    8: (0, 10),  # OffsetCommit
    9: (0, 10),  # OffsetFetch
    10: (0, 6),  # FindCoordinator
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 6),  # DescribeGroups
    16: (0, 5),  # ListGroups
    17: (0, 1),  # SaslHandshake (v0: raw tokens follow)
    18: (0, 4),  # ApiVersions
    19: (0, 7),  # CreateTopics
    20: (0, 6),  # DeleteTopics
    21: (0, 2),  # DeleteRecords
    22: (0, 6),  # InitProducerId
    23: (2, 4),  # OffsetForLeaderEpoch
    24: (0, 5),  # AddPartitionsToTxn (v4+: batched, verify_only)
    25: (0, 4),  # AddOffsetsToTxn
    26: (0, 5),  # EndTxn
    27: (1, 2),  # WriteTxnMarkers (broker to broker)
    28: (0, 5),  # TxnOffsetCommit
    29: (1, 3),  # DescribeAcls
    30: (1, 3),  # CreateAcls
    31: (1, 3),  # DeleteAcls
    32: (0, 4),  # DescribeConfigs
    33: (0, 2),  # AlterConfigs
    35: (0, 5),  # DescribeLogDirs
    36: (0, 2),  # SaslAuthenticate
    37: (0, 3),  # CreatePartitions
    42: (0, 2),  # DeleteGroups
    43: (0, 2),  # ElectLeaders
    44: (0, 1),  # IncrementalAlterConfigs
    45: (0, 1),  # AlterPartitionReassignments
    46: (0, 0),  # ListPartitionReassignments
    47: (0, 0),  # OffsetDelete
    48: (0, 1),  # DescribeClientQuotas
    49: (0, 1),  # AlterClientQuotas
    50: (0, 0),  # DescribeUserScramCredentials
    51: (0, 0),  # AlterUserScramCredentials
    60: (0, 2),  # DescribeCluster
    61: (0, 0),  # DescribeProducers
    65: (0, 0),  # DescribeTransactions
    66: (0, 2),  # ListTransactions
}


def test_advertises_exactly_the_implemented_versions(broker):
    with WireClient(broker.host, broker.port) as client:
        response = client.call(V4(client_software_name="t", client_software_version="1"))
    assert response.error_code == ErrorCode.none
    table = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert table == EXPECTED
    assert list(table) == sorted(table), "sorted by api key"


def test_every_api_versions_version_answers(broker):
    with WireClient(broker.host, broker.port) as client:
        assert client.call(V0()).error_code == ErrorCode.none
        for cls in (V3, V4):
            response = client.call(cls(client_software_name="t", client_software_version="1"))
            assert response.error_code == ErrorCode.none


def test_newer_api_versions_gets_v0_unsupported_version_with_the_table(broker):
    # KIP-511: a v99 request must be answered in v0 format with UNSUPPORTED_VERSION (35),
    # so the client can retry with a version from the table.
    body = struct.pack(">hhih", 18, 99, 42, 1) + b"x" + b"\x00\x00\x00"
    with WireClient(broker.host, broker.port) as client:
        client.send_raw(struct.pack(">i", len(body)) + body)
        (size,) = struct.unpack(">i", _recv_exact(client.sock, 4))
        payload = _recv_exact(client.sock, size)
        correlation_id, error_code, count = struct.unpack_from(">ihi", payload)
        assert (correlation_id, error_code) == (42, 35)
        assert count >= len(EXPECTED)
        # the connection stays usable
        assert client.call(V0()).error_code == ErrorCode.none
