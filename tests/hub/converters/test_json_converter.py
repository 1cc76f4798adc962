"""JsonConverter against messages as Kafka Connect's JsonConverter writes them."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from hub.api import ConfigError, DataError, Schema
from hub.api.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Type,
    struct,
)
from hub.converters import logical
from hub.converters.json import JsonConverter, JsonHeaderConverter

# Byte-for-byte what Kafka Connect's FileStreamSource quickstart writes with the JSON converter.
QUICKSTART = b'{"schema":{"type":"string","optional":false},"payload":"foo"}'

USER_ENVELOPE = {
    "schema": {
        "type": "struct",
        "fields": [
            {"type": "int32", "optional": False, "field": "id"},
            {"type": "string", "optional": True, "field": "name"},
            {
                "type": "int64",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Timestamp",
                "version": 1,
                "field": "created",
            },
            {
                "type": "bytes",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1,
                "parameters": {"scale": "2"},
                "field": "balance",
            },
            {
                "type": "int32",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Date",
                "version": 1,
                "field": "birthday",
            },
            {
                "type": "int32",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Time",
                "version": 1,
                "field": "alarm",
            },
            {"type": "bytes", "optional": True, "field": "blob"},
        ],
        "optional": False,
        "name": "com.example.User",
    },
    "payload": {
        "id": 1,
        "name": "ann",
        "created": 1700000000123,
        "balance": "BNI=",
        "birthday": 19000,
        "alarm": 25200000,
        "blob": "AAEC",
    },
}


def conv(**config: str) -> JsonConverter:
    return JsonConverter(config, is_key=False)


def test_quickstart_envelope_round_trip() -> None:
    c = conv()
    assert c.from_connect("t", STRING_SCHEMA, "foo") == QUICKSTART
    got = c.to_connect("t", QUICKSTART)
    assert got.schema == STRING_SCHEMA and got.value == "foo"


def test_reads_kafka_connect_struct_with_logical_types() -> None:
    got = conv().to_connect("t", json.dumps(USER_ENVELOPE).encode())
    assert got.schema is not None and got.schema.name == "com.example.User"
    assert got.value == {
        "id": 1,
        "name": "ann",
        "created": dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.UTC),
        "balance": decimal.Decimal("12.34"),
        "birthday": dt.date(2022, 1, 8),
        "alarm": dt.time(7, 0),
        "blob": b"\x00\x01\x02",
    }
    # and writes the very same JSON back
    again = conv().from_connect("t", got.schema, got.value)
    assert json.loads(again) == USER_ENVELOPE


def test_schemaless_mode_is_plain_json_and_infers_nothing() -> None:
    c = conv(**{"schemas.enable": "false"})
    assert c.from_connect("t", None, {"a": 1, "b": [True, None]}) == b'{"a":1,"b":[true,null]}'
    got = c.to_connect("t", b'{"a": 1, "b": 2.5, "c": "x"}')
    assert got.schema is None and got.value == {"a": 1, "b": 2.5, "c": "x"}
    # with a schema given, the value is still written bare, encoded per the schema
    assert c.from_connect("t", logical.TIMESTAMP_SCHEMA, logical.EPOCH) == b"0"


def test_envelope_with_null_schema() -> None:
    c = conv()
    assert c.from_connect("t", None, {"a": 1}) == b'{"schema":null,"payload":{"a":1}}'
    got = c.to_connect("t", b'{"schema":null,"payload":{"a":1}}')
    assert got.schema is None and got.value == {"a": 1}


def test_tombstones() -> None:
    c = conv()
    assert c.from_connect("t", None, None) is None
    assert c.to_connect("t", None).value is None
    assert c.to_connect("t", b"null").value is None
    # a null value under an optional schema is an envelope with a null payload
    assert json.loads(c.from_connect("t", OPTIONAL_STRING_SCHEMA, None) or b"") == {
        "schema": {"type": "string", "optional": True},
        "payload": None,
    }


def test_bytes_are_base64() -> None:
    c = conv()
    data = c.from_connect("t", Schema(Type.BYTES), b"\xff\x00")
    assert json.loads(data)["payload"] == "/wA="
    assert c.to_connect("t", data).value == b"\xff\x00"
    assert json.loads(conv(**{"schemas.enable": "false"}).from_connect("t", None, b"hi")) == "aGk="


def test_decimal_numeric_format() -> None:
    c = conv(**{"decimal.format": "NUMERIC"})
    schema = logical.decimal_schema(3)
    data = c.from_connect("t", schema, decimal.Decimal("-1234567890123.456"))
    assert data.endswith(b'"payload":-1234567890123.456}')
    numeric = b'{"schema":%s,"payload":1.5}' % json.dumps(schema.to_json()).encode()
    assert c.to_connect("t", numeric).value == decimal.Decimal("1.5")
    assert conv().to_connect("t", data).value == decimal.Decimal("-1234567890123.456")


@pytest.mark.parametrize(
    ("value", "encoded"),
    [("0", "AA=="), ("1.27", "fw=="), ("1.28", "AIA="), ("-1.28", "gA=="), ("-1.29", "/38=")],
)
def test_decimal_bytes_are_minimal_twos_complement(value: str, encoded: str) -> None:
    schema = logical.decimal_schema(2)
    payload = json.loads(conv().from_connect("t", schema, decimal.Decimal(value)))["payload"]
    assert payload == encoded


def test_maps_object_mode_and_pair_mode() -> None:
    c = conv()
    string_keys = Schema(Type.MAP, key=STRING_SCHEMA, value=INT32_SCHEMA)
    assert json.loads(c.from_connect("t", string_keys, {"a": 1}))["payload"] == {"a": 1}
    int_keys = Schema(Type.MAP, key=INT32_SCHEMA, value=STRING_SCHEMA)
    data = c.from_connect("t", int_keys, {1: "a", 2: "b"})
    assert json.loads(data)["payload"] == [[1, "a"], [2, "b"]]
    assert c.to_connect("t", data).value == {1: "a", 2: "b"}


def test_arrays_and_defaults() -> None:
    c = conv()
    schema = Schema(Type.ARRAY, value=Schema(Type.INT64, optional=True, default=7))
    data = c.from_connect("t", schema, [1, None])
    assert json.loads(data)["payload"] == [1, 7]
    no_replace = conv(**{"replace.null.with.default": "false"})
    assert json.loads(no_replace.from_connect("t", schema, [None]))["payload"] == [None]


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        (b"{not json", "malformed JSON"),
        (b'{"a": 1}', 'exactly the fields "schema" and "payload"'),
        (b"[1, 2]", "schemas.enable=false"),
        (b'{"schema": {"type": "nope"}, "payload": 1}', "invalid schema"),
        (b'{"schema": {"type": "int32"}, "payload": "x"}', "expected int32"),
        (b'{"schema": {"type": "int32"}, "payload": null}', "invalid null value"),
        (b'{"schema": {"type": "bytes"}, "payload": "***"}', "invalid base64"),
        (b'{"schema": {"type": "struct", "fields": []}, "payload": 3}', "JSON objects"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_bad_messages_raise_data_error(message: bytes, fragment: str) -> None:
    with pytest.raises(DataError, match=fragment.replace("(", r"\(")):
        conv().to_connect("t", message)


def test_write_side_validation() -> None:
    schema = struct(("id", INT32_SCHEMA), ("n", INT64_SCHEMA))
    with pytest.raises(DataError, match="field 'n'"):
        conv().from_connect("t", schema, {"id": 1, "n": None})
    with pytest.raises(DataError, match="not a valid int32"):
        conv().from_connect("t", INT32_SCHEMA, 2**40)
    with pytest.raises(DataError, match="not a boolean"):
        conv().from_connect("t", Schema(Type.BOOLEAN), 1)


def test_header_converter_uses_the_same_format() -> None:
    h = JsonHeaderConverter({})
    data = h.from_connect("t", "k", INT32_SCHEMA, 5)
    assert data == b'{"schema":{"type":"int32","optional":false},"payload":5}'
    assert h.to_connect("t", "k", data).value == 5
    plain = JsonHeaderConverter({"schemas.enable": "false"})
    assert plain.to_connect("t", "k", b'{"x": [1]}').value == {"x": [1]}
    assert plain.to_connect("t", "k", None).value is None


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError) as exc:
        conv(**{"schemas.enable": "maybe", "decimal.format": "HEX"})
    assert set(exc.value.errors) == {"schemas.enable", "decimal.format"}


def test_repeated_schema_reads_take_the_cached_path_and_stay_exact() -> None:
    c = conv()
    message = json.dumps(USER_ENVELOPE, separators=(",", ":")).encode()
    first = c.to_connect("t", message)
    assert c.codec._readers, "the schema head should be cached after a full parse"
    second = c.to_connect("t", message + b"\n")
    assert second == first
    # same head, different payloads: each payload still validated against the schema
    head = message.split(b',"payload":')[0]
    with pytest.raises(DataError, match="expected int32"):
        c.to_connect("t", head + b',"payload":{"id":"x"}}')
    with pytest.raises(DataError, match="exactly the fields"):
        c.to_connect("t", head + b',"payload":null,"extra":1}')
    with pytest.raises(DataError, match="malformed JSON"):
        c.to_connect("t", head + b',"payload":{"id":}')


def test_separator_inside_the_schema_text_is_not_mis_split() -> None:
    c = conv()
    tricky = Schema(Type.STRING, doc='not here ,"payload": really')
    data = c.from_connect("t", tricky, "v")
    for _ in range(2):
        got = c.to_connect("t", data)
        assert got.value == "v" and got.schema is not None and got.schema.doc == tricky.doc


def test_cached_null_schema_envelope() -> None:
    c = conv()
    for value in ({"a": 1}, [1, 2], "s"):
        got = c.to_connect("t", c.from_connect("t", None, value) or b"")
        assert got.schema is None and got.value == value
