"""The entity classes derived for old API versions have exactly the wire layout Kafka 3.x uses.

kafka-python still ships its own hand-written encoders of these versions
(``kafka.protocol.old``); each derived class must flatten to the same sequence of wire types,
array nesting included, and a request encoded by kafka-python must decode with ours and
re-encode to the same bytes.
"""

from __future__ import annotations

import dataclasses
import io
import typing

import pytest
from kafka.protocol.old import admin, commit, fetch, list_offsets, produce, types

from broker.protocol._entities import nested
from broker.protocol._legacy_schemas import load_request, load_response

OLD = {
    (0, "request"): produce.ProduceRequest, (0, "response"): produce.ProduceResponse,
    (1, "request"): fetch.FetchRequest, (1, "response"): fetch.FetchResponse,
    (2, "request"): list_offsets.ListOffsetsRequest,
    (2, "response"): list_offsets.ListOffsetsResponse,
    (8, "request"): commit.OffsetCommitRequest, (8, "response"): commit.OffsetCommitResponse,
    (9, "request"): commit.OffsetFetchRequest, (9, "response"): commit.OffsetFetchResponse,
    (19, "request"): admin.CreateTopicsRequest, (19, "response"): admin.CreateTopicsResponse,
    (20, "request"): admin.DeleteTopicsRequest, (20, "response"): admin.DeleteTopicsResponse,
    (32, "request"): admin.DescribeConfigsRequest,
    (32, "response"): admin.DescribeConfigsResponse,
    (35, "response"): admin.DescribeLogDirsResponse,
    # Not (35, "request"): kafka-python declares its partitions as one int32, Kafka's schema
    # (DescribeLogDirsRequest.json, "Partitions": "[]int32", versions 0+) as an array; v0 is
    # checked against kio's v1 below.
}  # fmt: skip
LEGACY_VERSIONS = {0: (0, 1, 2), 1: (0, 1, 2, 3), 2: (0,), 8: (0, 1), 9: (0,), 19: (0, 1)}
CASES = [
    (key, version, kind)
    for key in (0, 1, 2, 8, 9, 19, 20, 32, 35)
    for version in LEGACY_VERSIONS.get(key, (0,))
    for kind in ("request", "response")
]

_KIO_WIRE = {
    "int8": "i8", "int16": "i16", "error_code": "i16", "int32": "i32", "timedelta_i32": "i32",
    "int64": "i64", "timedelta_i64": "i64", "datetime_i64": "i64", "string": "str",
    "bytes": "bytes", "records": "bytes", "bool": "bool",
}  # fmt: skip
_OLD_WIRE = {
    types.Int8: "i8", types.Int16: "i16", types.Int32: "i32", types.Int64: "i64",
    types.String: "str", types.Bytes: "bytes", types.Boolean: "bool",
}  # fmt: skip


def _ours(cls: type) -> list[object]:
    out: list[object] = []
    for f in dataclasses.fields(cls):
        hint = f.type
        if typing.get_origin(hint) in (typing.Union, type(int | None)):
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        if typing.get_origin(hint) is tuple:
            inner = typing.get_args(hint)[0]
            if dataclasses.is_dataclass(inner):
                out.append(["array", *_ours(inner)])  # type: ignore[arg-type]
            else:
                out.append(["array", _KIO_WIRE[f.metadata["kafka_type"]]])
        else:
            out.append(_KIO_WIRE[f.metadata["kafka_type"]])
    return out


def _theirs(schema: object) -> list[object]:
    fields = schema.fields if isinstance(schema, types.Schema) else (schema,)
    out: list[object] = []
    for t in fields:
        if isinstance(t, types.Array):
            out.append(["array", *_theirs(t.array_of)])
        else:
            out.append(_OLD_WIRE[t if isinstance(t, type) else type(t)])
    return out


@pytest.mark.parametrize(("api_key", "version", "kind"), [c for c in CASES if c[::2] in OLD])
def test_layout_matches_kafka_python(api_key, version, kind):
    ours = (load_request if kind == "request" else load_response)(api_key, version)
    theirs = OLD[(api_key, kind)][version]
    assert ours.__version__ == version and not ours.__flexible__
    assert _ours(ours) == _theirs(theirs.SCHEMA)


def test_describe_log_dirs_v0_request_is_v1():
    from kio.index import load_request_schema

    assert _ours(load_request(35, 0)) == _ours(load_request_schema(35, 1))


def test_kafka_python_encoded_requests_round_trip():
    from kio.serial import entity_reader, entity_writer

    samples = [
        produce.ProduceRequest[1](required_acks=-1, timeout=1500, topics=[("t", [(3, b"xyz")])]),
        fetch.FetchRequest[3](-1, 500, 1, 1 << 20, [("t", [(0, 42, 4096)])]),
        list_offsets.ListOffsetsRequest[0](-1, [("t", [(0, -1, 5)])]),
        commit.OffsetCommitRequest[1]("g", 3, "m", [("t", [(0, 17, 1234, "meta")])]),
        commit.OffsetCommitRequest[0]("g", [("t", [(0, 17, None)])]),
        commit.OffsetFetchRequest[0]("g", [("t", [0, 1])]),
        admin.CreateTopicsRequest[0]([("t", 3, 1, [], [("cleanup.policy", "compact")])], 1000),
        admin.DescribeConfigsRequest[0]([(2, "t", None)]),
    ]
    for sample in samples:
        raw = sample.encode()
        cls = load_request(sample.API_KEY, sample.API_VERSION)
        decoded, consumed = entity_reader(cls)(raw, 0)
        assert consumed == len(raw)
        buf = io.BytesIO()
        entity_writer(cls)(buf, decoded)
        assert buf.getvalue() == raw


def test_nested_classes_of_old_versions_are_found_by_name():
    response = load_response(32, 0)
    assert nested(response, "DescribeConfigsResourceResult").__version__ == 0
    # a field v0 lacks: its class is still there for handlers, and build() drops the field
    assert nested(response, "DescribeConfigsSynonym").__version__ == 0
    assert load_request(0, 2) is load_request(0, 2)  # cached: one class per version
