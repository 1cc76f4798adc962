"""Every mapped type, through the snapshot (``::text``) and the stream (pgoutput text), gives
the same value and the Debezium-shaped schema (task driven directly, no worker)."""

from __future__ import annotations

import base64
import json
from decimal import Decimal

from hub.converters.json import JsonConverter

COLUMNS = """
    id int PRIMARY KEY, i2 smallint, i8 bigint, f4 real, f8 double precision,
    n numeric(10,3), nv numeric, b boolean, t text, vc varchar(5), c char(3), d date,
    tm time, tm3 time(3), ts timestamp, ts3 timestamp(3), tstz timestamptz, ttz timetz,
    iv interval, u uuid, j json, jb jsonb, by bytea, ai int[], at text[], e mood, m money,
    nn int NOT NULL
"""
VALUES = """
    1, -32768, 9223372036854775807, 1.5, -2.25, 1234567.891, 0.000123, true, 'héllo',
    'abc', 'x', '2024-02-29', '13:37:24.123456', '01:02:03.456', '2024-01-02 03:04:05.678901',
    '1970-01-01 00:00:01.5', '2024-01-02 03:04:05.5+02', '10:00:00+02',
    '1 year 2 mons 3 days 04:05:06.5', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2]}',
    '{"b": null}', '\\x00ff10', '{1,NULL,3}', '{"x y","q\\"uote",NULL}', 'happy', 12.34, 7
"""
NULLS = "2" + ", NULL" * 26 + ", 0"
EXPECTED = {
    "id": 1, "i2": -32768, "i8": 9223372036854775807, "f4": 1.5, "f8": -2.25,
    "n": Decimal("1234567.891"), "nv": {"scale": 6, "value": (123).to_bytes(1, "big")},
    "b": True, "t": "héllo", "vc": "abc", "c": "x  ", "d": 19782,
    "tm": 49044123456, "tm3": 3723456, "ts": 1704164645678901, "ts3": 1500,
    "tstz": "2024-01-02T01:04:05.5Z", "ttz": "08:00:00Z",
    "iv": round(14 * 30.4375 * 86_400_000_000) + 3 * 86_400_000_000 + 14_706_500_000,
    "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "j": '{"a": [1, 2]}', "jb": '{"b": null}',
    "by": b"\x00\xff\x10", "ai": [1, None, 3], "at": ["x y", 'q"uote', None], "e": "happy",
    "m": Decimal("12.34"), "nn": 7,
}  # fmt: skip
SCHEMA_NAMES = {
    "n": "org.apache.kafka.connect.data.Decimal", "nv": "io.debezium.data.VariableScaleDecimal",
    "d": "io.debezium.time.Date", "tm": "io.debezium.time.MicroTime",
    "tm3": "io.debezium.time.Time", "ts": "io.debezium.time.MicroTimestamp",
    "ts3": "io.debezium.time.Timestamp", "tstz": "io.debezium.time.ZonedTimestamp",
    "ttz": "io.debezium.time.ZonedTime", "iv": "io.debezium.time.MicroDuration",
    "u": "io.debezium.data.Uuid", "j": "io.debezium.data.Json", "jb": "io.debezium.data.Json",
    "e": "io.debezium.data.Enum",
}  # fmt: skip


def test_every_mapped_type_round_trips(harness, sql) -> None:
    sql("CREATE TYPE mood AS ENUM ('sad', 'happy')", f"CREATE TABLE t ({COLUMNS})",
        f"INSERT INTO t VALUES ({VALUES})", f"INSERT INTO t VALUES ({NULLS})")  # fmt: skip
    h = harness()
    h.wait_changes(2)
    sql("DELETE FROM t", f"INSERT INTO t VALUES ({VALUES})", f"INSERT INTO t VALUES ({NULLS})")
    changes = h.wait_changes(6)
    snap, streamed = changes[0], changes[4]
    assert (snap.value["op"], streamed.value["op"]) == ("r", "c")
    assert snap.value["after"] == EXPECTED
    assert streamed.value["after"] == EXPECTED
    for null_row in (changes[1], changes[5]):
        assert null_row.value["after"] == {**dict.fromkeys(EXPECTED), "id": 2, "nn": 0}
    row_schema = snap.value_schema.field("after").schema
    fields = {f.name: f.schema for f in row_schema.fields}
    for name, schema_name in SCHEMA_NAMES.items():
        assert fields[name].name == schema_name, name
    assert fields["e"].parameters == {"allowed": "sad,happy"}
    assert fields["n"].parameters["scale"] == "3"
    assert fields["ai"].type.value == "array" and fields["ai"].value.type.value == "int32"
    assert not fields["nn"].optional and not fields["id"].optional and fields["t"].optional
    assert [f.schema.type.value for f in snap.key_schema.fields] == ["int32"]


def test_events_are_debezium_json_with_schemas(harness, sql) -> None:
    """Through the hub's JsonConverter (schemas.enable=true): Debezium's envelope shape."""
    sql("CREATE TABLE t (id int PRIMARY KEY, n numeric(5,2))", "INSERT INTO t VALUES (1, 2.5)")
    h = harness()
    record = h.wait_changes(1)[0]
    conv = JsonConverter({"schemas.enable": "true"}, is_key=False)
    doc = json.loads(conv.from_connect(record.topic, record.value_schema, record.value))
    assert doc["schema"]["name"].endswith(".public.t.Envelope")
    assert [f["field"] for f in doc["schema"]["fields"]][:4] == ["before", "after", "source", "op"]
    payload = doc["payload"]
    assert payload["op"] == "r" and payload["after"]["id"] == 1
    assert base64.b64decode(payload["after"]["n"]) == (250).to_bytes(2, "big")
    assert set(payload["source"]) >= {"version", "connector", "name", "ts_ms", "snapshot", "db",
                                      "schema", "table", "txId", "lsn"}  # fmt: skip
