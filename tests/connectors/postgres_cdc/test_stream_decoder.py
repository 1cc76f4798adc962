"""ChangeDecoder on hand-built pgoutput messages (no database): the insert fast path, the
records it builds without the dataclass constructor, and the resume filter."""

from __future__ import annotations

import struct
from typing import Any

from connectors.postgres_cdc._records import make_record
from connectors.postgres_cdc._stream import ChangeDecoder, Position
from connectors.postgres_cdc.events import ColumnSpec, TableSchema
from hub.api import SourceRecord
from hub.converters.json import JsonConverter

RELID = 16384
COLUMNS = [
    ColumnSpec("id", 20, -1, True, True),
    ColumnSpec("v", 23, -1, False, False),
    ColumnSpec("pad", 25, -1, False, False),
]
SCHEMA = TableSchema("srv", "public", "rows", COLUMNS, lambda oid: None)


def relation() -> bytes:
    out = b"R" + struct.pack(">I", RELID) + b"public\0rows\0d" + struct.pack(">h", 3)
    for c in COLUMNS:
        out += bytes([c.is_key]) + c.name.encode() + b"\0" + struct.pack(">Ii", c.type_oid, -1)
    return out


def tuple_data(values: list[str | None]) -> bytes:
    out = struct.pack(">h", len(values))
    for v in values:
        if v is None:
            out += b"n"
        else:
            raw = v.encode()
            out += b"t" + struct.pack(">i", len(raw)) + raw
    return out


def begin(final_lsn: int, xid: int) -> bytes:
    return b"B" + struct.pack(">QqI", final_lsn, 0, xid)


def commit(lsn: int) -> bytes:
    return b"C" + struct.pack(">BQQq", 0, lsn, lsn + 8, 0)


def insert(i: int, pad: str | None = "x") -> bytes:
    return b"I" + struct.pack(">I", RELID) + b"N" + tuple_data([str(i), str(i % 7), pad])


def update(i: int, old_key: int | None = None) -> bytes:
    new = tuple_data([str(i), "99", "u"])
    if old_key is None:
        return b"U" + struct.pack(">I", RELID) + b"N" + new
    return (
        b"U" + struct.pack(">I", RELID) + b"K" + tuple_data([str(old_key), None, None]) + b"N" + new
    )


def delete(i: int) -> bytes:
    return b"D" + struct.pack(">I", RELID) + b"K" + tuple_data([str(i), None, None])


START = Position(0, 0)


def decoder(resume: Position = START, **kw: Any) -> ChangeDecoder:
    d = ChangeDecoder(
        prefix="srv", dbname="db", partition={"server": "srv"},
        relation_schema=lambda rel: SCHEMA, tombstones=True,
        skipped=frozenset(kw.get("skipped", ())), resume=resume,
    )  # fmt: skip
    d.handle(1, relation(), [])
    return d


def stream(d: ChangeDecoder) -> list[SourceRecord]:
    """Two transactions: ids 1-3 (commit 100), then 4 and a delete of 1 (commit 200)."""
    out: list[SourceRecord] = []
    msgs = [begin(100, 7), insert(1), insert(2, None), insert(3), commit(100),
            begin(200, 8), insert(4), delete(1), commit(200)]  # fmt: skip
    for lsn, m in enumerate(msgs, start=50):
        d.handle(lsn, m, out)
    return out


def test_inserts_become_debezium_events_in_order() -> None:
    out = stream(decoder())
    assert [(r.value and r.value["op"], r.key) for r in out] == [
        ("c", {"id": 1}), ("c", {"id": 2}), ("c", {"id": 3}), ("c", {"id": 4}),
        ("d", {"id": 1}), (None, {"id": 1}),
    ]  # fmt: skip
    first = out[0]
    assert first.value["after"] == {"id": 1, "v": 1, "pad": "x"}
    assert out[1].value["after"]["pad"] is None
    assert first.value["source"]["txId"] == 7 and first.value["source"]["lsn"] == 51
    assert [(r.source_offset["lsn_commit"], r.source_offset["event_serial_no"]) for r in out] == [
        (100, 1),
        (100, 2),
        (100, 3),
        (200, 1),
        (200, 2),
        (200, 3),
    ]
    # records built through the slots equal constructed ones, and convert the same way
    twin = SourceRecord(
        topic=first.topic, key=first.key, key_schema=first.key_schema, value=first.value,
        value_schema=first.value_schema, source_partition=first.source_partition,
        source_offset=first.source_offset,
    )  # fmt: skip
    assert first == twin and first.headers == () and first.partition is None
    conv = JsonConverter({}, is_key=False)
    assert conv.from_connect(first.topic, first.value_schema, first.value) == conv.from_connect(
        twin.topic, twin.value_schema, twin.value
    )


def positions(records: list[SourceRecord]) -> list[tuple[int, int, Any]]:
    return [
        (r.source_offset["lsn_commit"], r.source_offset["event_serial_no"], r.key) for r in records
    ]


def test_resume_skips_exactly_what_the_offset_covers() -> None:
    everything = positions(stream(decoder()))
    for commit_lsn, serial, expect in [
        (100, 2, 4),
        (100, 3, 3),
        (200, 1, 2),
        (0, 0, 6),
        (300, 0, 0),
    ]:
        got = positions(stream(decoder(Position(commit_lsn, serial))))
        assert got == everything[len(everything) - expect :], (commit_lsn, serial)


def test_skipped_creates_still_number_the_others() -> None:
    out = stream(decoder(skipped={"c"}))
    assert [r.source_offset["event_serial_no"] for r in out] == [1, 2]  # delete + tombstone


def test_make_record_defaults() -> None:
    r = make_record("t", None, None, "v", None, {"p": 1}, {"o": 2})
    assert r == SourceRecord(
        topic="t", value="v", source_partition={"p": 1}, source_offset={"o": 2}
    )


def test_updates_with_and_without_a_key_change() -> None:
    d = decoder()
    out: list[SourceRecord] = []
    for lsn, m in enumerate([begin(300, 9), update(5), update(6, old_key=2), commit(300)]):
        d.handle(lsn, m, out)
    assert [(r.value and r.value["op"], r.key) for r in out] == [
        ("u", {"id": 5}), ("d", {"id": 2}), (None, {"id": 2}), ("c", {"id": 6}),
    ]  # fmt: skip
    assert out[0].value["before"] is None
    assert out[0].value["after"] == {"id": 5, "v": 99, "pad": "u"}
    assert [r.source_offset["event_serial_no"] for r in out] == [1, 2, 3, 4]
    skipped = decoder(skipped={"u"})
    out = []
    for lsn, m in enumerate([begin(300, 9), update(5), commit(300)]):
        skipped.handle(lsn, m, out)
    assert out == []


def test_read_row_matches_read_tuple_then_row() -> None:
    from connectors.postgres_cdc import pgoutput as pg

    names, convs = SCHEMA.column_names, SCHEMA.row_converters
    for values in (["1", "2", "x"], ["7", None, None], ["-5", "0", "é \u2028"]):
        data = tuple_data(values)
        assert pg.read_row(data, 0, names, convs) == SCHEMA.row(pg.read_tuple(data, 0)[0])
    toast = struct.pack(">h", 3) + b"t" + struct.pack(">i", 1) + b"1" + b"n" + b"u"
    assert pg.read_row(toast, 0, names, convs) is None
    assert SCHEMA.row(pg.read_tuple(toast, 0)[0])["pad"] == "__debezium_unavailable_value"
    assert pg.read_row(tuple_data(["1", "2"]), 0, names, convs) is None  # column count differs
