"""Every advertised (api, version) pair gets a well-formed answer to a generated request.

Real clients only use a few versions each; this walks all of them, the old versions kio does
not carry (``_legacy_schemas``) included. Requests are generated
from kio's schemas with one element in every array and placeholder values (mostly naming
topics that do not exist, so handlers run their per-item error paths), which is where
version-specific response fields are easiest to get wrong. The connection must stay open
and the response must decode.
"""

from __future__ import annotations

import dataclasses
import types
import typing
import uuid
from datetime import timedelta
from typing import Any

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from broker.protocol._legacy_schemas import load_request
from tests.broker.protocol.test_api_versions import EXPECTED
from tests.broker.protocol.wire import WireClient

_SCALARS: dict[str, Any] = {
    "int8": 0, "int16": -1, "int32": -1, "int64": -1, "uint16": 0, "uint32": 0, "uint64": 0,
    "float64": 0.0, "bool": False, "uuid": None, "records": None, "bytes": b"",
    "error_code": 0, "timedelta_i32": timedelta(milliseconds=10),
    "timedelta_i64": timedelta(milliseconds=10), "datetime_i64": None,
}  # fmt: skip


def _value(field_type: Any, kafka_type: str | None, label: str) -> Any:
    origin = typing.get_origin(field_type)
    args = typing.get_args(field_type)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _value(inner[0], kafka_type, label)
    if origin is tuple:
        return (_value(args[0], kafka_type, label),)
    if dataclasses.is_dataclass(field_type):
        return _instance(field_type, label)
    if kafka_type == "string":
        return label
    if kafka_type in _SCALARS:
        return _SCALARS[kafka_type]
    if field_type is uuid.UUID:
        return None
    raise AssertionError(f"no generator for {field_type} ({kafka_type})")


def _instance(cls: Any, label: str) -> Any:
    values = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING and "tag" in f.metadata:
            continue  # tagged fields keep their defaults
        values[f.name] = _value(f.type, f.metadata.get("kafka_type"), label)
    return cls(**values)


CASES = [
    (key, version)
    for key, (low, high) in sorted(EXPECTED.items())
    for version in range(low, high + 1)
    if key != 18  # ApiVersions has its own tests
]


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=[f"api{k}-v{v}" for k, v in CASES])
def test_generated_request_gets_an_answer(broker, api_key, version):
    request_cls = load_request(api_key, version)
    request = _instance(request_cls, f"gen-{api_key}-v{version}-{uuid.uuid4().hex[:6]}")
    with WireClient(broker.host, broker.port) as client:
        acks_zero = api_key == 0 and request.acks == 0
        client.send(request, expect_response=not acks_zero)
        response = client.receive() if not acks_zero else None
        # and the connection is still usable afterwards
        follow = client.call(
            ApiVersionsRequest(client_software_name="t", client_software_version="1")
        )
    assert follow.error_code == 0
    assert response is not None or acks_zero
