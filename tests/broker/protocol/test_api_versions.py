"""ApiVersions: the advertised table, every version, and the UNSUPPORTED_VERSION fallback."""

from __future__ import annotations

import struct

from kio.schema.api_versions.v0.request import ApiVersionsRequest as V0
from kio.schema.api_versions.v3.request import ApiVersionsRequest as V3
from kio.schema.api_versions.v4.request import ApiVersionsRequest as V4
from kio.schema.errors import ErrorCode

from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import _recv_exact

# What the broker implements; a change here is a deliberate protocol change.
EXPECTED = {
    0: (3, 13),  # Produce
    1: (4, 18),  # Fetch
    2: (1, 11),  # ListOffsets
    3: (0, 13),  # Metadata
    18: (0, 4),  # ApiVersions
    19: (2, 7),  # CreateTopics
    20: (1, 6),  # DeleteTopics
    21: (0, 2),  # DeleteRecords
    22: (0, 6),  # InitProducerId
    32: (1, 4),  # DescribeConfigs
    35: (1, 5),  # DescribeLogDirs
    33: (0, 2),  # AlterConfigs
    37: (0, 3),  # CreatePartitions
    44: (0, 1),  # IncrementalAlterConfigs
    60: (0, 2),  # DescribeCluster
}


def test_advertises_exactly_the_implemented_versions(broker):
    with WireClient(broker.host, broker.port) as client:
        response = client.call(V4(client_software_name="t", client_software_version="1"))
    assert response.error_code == ErrorCode.none
    table = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    for key, versions in EXPECTED.items():
        assert table.get(key) == versions, f"api {key}"
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
