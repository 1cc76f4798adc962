"""StringConverter, ByteArrayConverter and the header converters."""

from __future__ import annotations

import decimal

import pytest

from hub.api import ConfigError, DataError
from hub.api.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Type,
)
from hub.converters.bytes import ByteArrayConverter
from hub.converters.headers import SimpleHeaderConverter, StringHeaderConverter
from hub.converters.string import StringConverter
from hub.converters.values import parse_string, to_string


def test_string_converter_round_trip_and_schema() -> None:
    c = StringConverter({}, is_key=True)
    assert c.from_connect("t", None, "héllo") == "héllo".encode()
    assert c.from_connect("t", None, 42) == b"42"
    assert c.from_connect("t", None, None) is None
    got = c.to_connect("t", "héllo".encode())
    assert got.schema == OPTIONAL_STRING_SCHEMA and got.value == "héllo"
    assert c.to_connect("t", None).value is None


@pytest.mark.parametrize("key", ["converter.encoding", "encoding"])
def test_string_converter_encoding(key: str) -> None:
    c = StringConverter({key: "UTF-16"}, is_key=False)
    data = c.from_connect("t", None, "ok")
    assert data == "ok".encode("utf-16")
    assert c.to_connect("t", data).value == "ok"


def test_string_converter_errors() -> None:
    with pytest.raises(ConfigError) as exc:
        StringConverter({"converter.encoding": "klingon"}, is_key=False)
    assert "unknown encoding" in str(exc.value.errors)
    ascii_ = StringConverter({"converter.encoding": "ascii"}, is_key=False)
    with pytest.raises(DataError, match="cannot encode"):
        ascii_.from_connect("t", None, "é")
    with pytest.raises(DataError, match="not valid ascii"):
        ascii_.to_connect("t", b"\xff")


def test_byte_array_converter() -> None:
    c = ByteArrayConverter({}, is_key=False)
    assert c.from_connect("t", BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert c.from_connect("t", None, bytearray(b"x")) == b"x"
    assert c.from_connect("t", None, None) is None
    got = c.to_connect("t", b"raw")
    assert got.schema == OPTIONAL_BYTES_SCHEMA and got.value == b"raw"
    with pytest.raises(DataError, match="needs bytes"):
        c.from_connect("t", None, "text")
    with pytest.raises(DataError, match="bytes schema"):
        c.from_connect("t", STRING_SCHEMA, b"x")


@pytest.mark.parametrize(
    ("text", "schema_type", "value"),
    [
        ("true", Type.BOOLEAN, True),
        ("42", Type.INT8, 42),
        ("1000", Type.INT16, 1000),
        ("-100000", Type.INT32, -100000),
        ("10000000000", Type.INT64, 10_000_000_000),
        ("2.5", Type.FLOAT64, 2.5),
        ("us-east", Type.STRING, "us-east"),
        ("[unclosed", Type.STRING, "[unclosed"),
    ],
)
def test_parse_string_guesses_types(text: str, schema_type: Type, value: object) -> None:
    got = parse_string(text)
    assert got.schema is not None and got.schema.type is schema_type
    assert got.value == value


def test_parse_string_containers_null_and_huge_ints() -> None:
    assert parse_string("null").value is None and parse_string("null").schema is None
    assert parse_string('{"a": [1]}').value == {"a": [1]}
    assert parse_string("[1,2]").schema is None
    assert parse_string(str(2**70)).value == decimal.Decimal(2**70)


def test_to_string() -> None:
    assert to_string(True) == "true"
    assert to_string(b"\x00") == "AA=="
    assert to_string({"a": 1}) == '{"a":1}'
    assert to_string(1.5) == "1.5"


def test_simple_header_converter_round_trips_typed_values() -> None:
    h = SimpleHeaderConverter({})
    for schema, value in [(INT32_SCHEMA, 7), (BOOLEAN_SCHEMA, False), (FLOAT64_SCHEMA, 0.5)]:
        data = h.from_connect("t", "k", schema, value)
        assert h.to_connect("t", "k", data).value == value
    assert h.from_connect("t", "k", None, None) is None
    assert h.to_connect("t", "k", None).value is None
    assert h.to_connect("t", "k", b"").schema == STRING_SCHEMA


def test_string_header_converter_does_not_guess() -> None:
    h = StringHeaderConverter({})
    assert h.to_connect("t", "k", b"42").value == "42"
    assert h.from_connect("t", "k", None, 42) == b"42"
