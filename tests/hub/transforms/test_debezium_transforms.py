"""Debezium's ExtractNewRecordState and outbox EventRouter, and Kafka's SetSchemaMetadata, on
change events built by the postgres-cdc connector's own envelope code."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from connectors.postgres_cdc.events import ColumnSpec, TableSchema
from hub.api import ConfigError, DataError, Schema, SourceRecord, Type
from hub.plugins.registry import PluginRegistry
from hub.transforms.chain import TransformChain

ROW = TableSchema("srv", "public", "t", [ColumnSpec("id", 23, -1, True, True),
                                         ColumnSpec("name", 25, -1, False, False)],
                  lambda oid: None)  # fmt: skip
SOURCE = {
    "version": "2.7.0",
    "connector": "postgresql",
    "name": "srv",
    "ts_ms": 1000,
    "snapshot": "false",
    "db": "db",
    "sequence": None,
    "ts_us": 1_000_000,
    "ts_ns": 10**9,
    "schema": "public",
    "table": "t",
    "txId": 7,
    "lsn": 99,
    "xmin": None,
}


def event(op: str, before: Any = None, after: Any = None, tx: Any = None) -> SourceRecord:
    value = ROW.envelope(op, before, after, dict(SOURCE), 5_000_000)
    value["transaction"] = tx
    key = ROW.key(after or before or {"id": 0})
    return SourceRecord(topic=ROW.topic, key=key, key_schema=ROW.key_schema, value=value,
                        value_schema=ROW.value_schema)  # fmt: skip


def tombstone() -> SourceRecord:
    return SourceRecord(topic=ROW.topic, key={"id": 1}, key_schema=ROW.key_schema)


def chain(registry: PluginRegistry, type_name: str, **settings: str) -> TransformChain[Any]:
    config = {"transforms": "x", "transforms.x.type": type_name}
    config.update({f"transforms.x.{k.replace('_', '.')}": v for k, v in settings.items()})
    return TransformChain.from_config(config, registry)


UNWRAP = "io.debezium.transforms.ExtractNewRecordState"


def test_unwrap_inserts_updates_and_reads(registry: PluginRegistry) -> None:
    unwrap = chain(registry, UNWRAP)
    out = unwrap.apply(event("c", after={"id": 1, "name": "a"}))
    assert out.value == {"id": 1, "name": "a"} and out.key == {"id": 1}
    assert out.value_schema.name == "srv.public.t.Value"
    assert not out.value_schema.optional  # Kafka's copySchemaBasics drops optional
    assert [f.name for f in out.value_schema.fields] == ["id", "name"]
    assert unwrap.apply(event("r", after={"id": 2, "name": None})).value == {"id": 2, "name": None}
    assert unwrap.apply(event("t")) is None  # truncate events are dropped
    heartbeat = SourceRecord(topic="hb", value={"ts_ms": 1},
                             value_schema=Schema(Type.STRUCT, name="x.Heartbeat"))  # fmt: skip
    assert unwrap.apply(heartbeat) is heartbeat
    schemaless = SourceRecord(topic="t", value={"op": "c"})
    assert unwrap.apply(schemaless) is schemaless


@pytest.mark.parametrize(
    ("settings", "delete", "tomb", "create_deleted"),
    [
        ({}, "dropped", False, None),  # Debezium 2.x defaults: drop.tombstones, drop
        ({"delete.handling.mode": "none", "drop.tombstones": "false"}, "null", True, None),
        ({"delete.handling.mode": "rewrite"}, "rewrite", False, "false"),
        ({"delete.tombstone.handling.mode": "drop"}, "dropped", False, None),
        ({"delete.tombstone.handling.mode": "tombstone"}, "null", False, None),
        ({"delete.tombstone.handling.mode": "rewrite"}, "rewrite", False, "false"),
        ({"delete.tombstone.handling.mode": "rewrite-with-tombstone"}, "rewrite", True, "false"),
        ({"delete.tombstone.handling.mode": "delete-to-tombstone"}, "tomb", False, None),
        # the new key wins over the legacy ones
        ({"delete.tombstone.handling.mode": "tombstone", "drop.tombstones": "false"},
         "null", False, None),
    ],
)  # fmt: skip
def test_delete_and_tombstone_handling(registry, settings, delete, tomb, create_deleted) -> None:
    config = {"transforms": "x", "transforms.x.type": UNWRAP,
              **{f"transforms.x.{k}": v for k, v in settings.items()}}  # fmt: skip
    unwrap = TransformChain.from_config(config, registry)
    out = unwrap.apply(event("d", before={"id": 1, "name": "a"}))
    if delete == "dropped":
        assert out is None
    elif delete == "null":
        assert out.value is None and out.value_schema.name == "srv.public.t.Value"
    elif delete == "tomb":
        assert out.value is None and out.value_schema is None
    else:
        assert out.value == {"id": 1, "name": "a", "__deleted": "true"}
        deleted = out.value_schema.field("__deleted")
        assert deleted.schema.type is Type.STRING and deleted.schema.optional
    kept = unwrap.apply(tombstone())
    assert (kept is not None) == tomb
    created = unwrap.apply(event("c", after={"id": 2, "name": "b"})).value
    assert created.get("__deleted") == create_deleted


def test_add_fields_and_headers(registry: PluginRegistry) -> None:
    unwrap = chain(registry, UNWRAP, add_fields="op,table,source.ts_ms,lsn:LSN,transaction.id",
                   add_headers="op,db", add_headers_prefix="dbz.")  # fmt: skip
    tx = {"id": "7:99", "total_order": 1, "data_collection_order": 1}
    out = unwrap.apply(event("u", after={"id": 1, "name": "a"}, tx=tx))
    assert out.value == {
        "id": 1,
        "name": "a",
        "__op": "u",
        "__table": "t",
        "__source_ts_ms": 1000,
        "__LSN": 99,
        "__transaction_id": "7:99",
    }
    added = {f.name: f.schema for f in out.value_schema.fields[2:]}
    assert all(s.optional for s in added.values())
    assert added["__source_ts_ms"].type is Type.INT64
    assert [(h.key, h.value) for h in out.headers] == [("dbz.op", "u"), ("dbz.db", "db")]
    without_tx = unwrap.apply(event("c", after={"id": 2, "name": "b"}))
    assert without_tx.value["__transaction_id"] is None
    deleted = chain(registry, UNWRAP, add_headers="op",
                    **{"drop_tombstones": "false"}).apply(tombstone())  # fmt: skip
    assert [(h.key, h.value) for h in deleted.headers] == [("__op", "d")]


def test_route_by_field(registry: PluginRegistry) -> None:
    unwrap = chain(registry, UNWRAP, route_by_field="name",
                   **{"delete_tombstone_handling_mode": "rewrite"})  # fmt: skip
    assert unwrap.apply(event("c", after={"id": 1, "name": "alpha"})).topic == "alpha"
    assert unwrap.apply(event("d", before={"id": 1, "name": "beta"})).topic == "beta"
    assert unwrap.apply(event("c", after={"id": 1, "name": None})).topic == ROW.topic


def test_unknown_debezium_keys_are_rejected(registry: PluginRegistry) -> None:
    with pytest.raises(ConfigError) as info:
        chain(registry, UNWRAP, drop_fields_header_name="h")
    assert "transforms.x.drop.fields.header.name" in info.value.errors
    with pytest.raises(ConfigError) as info:
        chain(registry, UNWRAP, delete_tombstone_handling_mode="explode")
    assert "transforms.x.delete.tombstone.handling.mode" in info.value.errors


# -- the outbox router ---------------------------------------------------------------------

OUTBOX = TableSchema("srv", "public", "outbox", [
    ColumnSpec("id", 2950, -1, True, True), ColumnSpec("aggregatetype", 1043, 259, True, False),
    ColumnSpec("aggregateid", 1043, 259, True, False), ColumnSpec("type", 1043, 259, True, False),
    ColumnSpec("payload", 3802, -1, False, False), ColumnSpec("created", 1114, 6, False, False),
    ColumnSpec("version", 23, -1, False, False), ColumnSpec("shard", 23, -1, False, False),
], lambda oid: None)  # fmt: skip
ROUTER = "io.debezium.transforms.outbox.EventRouter"


def outbox_event(op: str = "c", payload: Any = '{"total": 5}', **row: Any) -> SourceRecord:
    after = {"id": "0f1e", "aggregatetype": "order", "aggregateid": "o-1", "type": "Created",
             "payload": payload, "created": 1_700_000_000_123_456, "version": 3, "shard": 2,
             **row}  # fmt: skip
    value = OUTBOX.envelope(op, None if op == "c" else after, after if op != "d" else None,
                            dict(SOURCE, table="outbox"), 9_000_000)  # fmt: skip
    return SourceRecord(topic=OUTBOX.topic, key={"id": "0f1e"}, key_schema=OUTBOX.key_schema,
                        value=value, value_schema=OUTBOX.value_schema)  # fmt: skip


def test_outbox_routes_inserts(registry: PluginRegistry) -> None:
    router = chain(registry, ROUTER)
    out = router.apply(outbox_event())
    assert out.topic == "outbox.event.order" and out.key == "o-1"
    assert out.key_schema.type is Type.STRING
    assert out.value == '{"total": 5}' and out.value_schema.name == "io.debezium.data.Json"
    assert [(h.key, h.value) for h in out.headers] == [("id", "0f1e")]
    assert out.headers[0].schema.name == "io.debezium.data.Uuid"
    assert out.timestamp == 9_000  # the event's ts_ms
    assert router.apply(outbox_event("d")) is None
    assert router.apply(SourceRecord(topic="x", key="k")) is None  # tombstones dropped


def test_outbox_placements_version_timestamp_and_routing(registry: PluginRegistry) -> None:
    router = chain(registry, ROUTER, **{
        "table_fields_additional_placement": "type:header:eventType,type:envelope,shard:partition",
        "table_field_event_schema_version": "version", "table_field_event_timestamp": "created",
        "route_topic_regex": "(?<routedByValue>ord.*)",
        "route_topic_replacement": "evt-${routedByValue}",
    })  # fmt: skip
    out = router.apply(outbox_event())
    assert out.topic == "evt-order" and out.partition == 2
    assert out.value == {"payload": '{"total": 5}', "type": "Created"}
    assert out.value_schema.name == "srv.public.outbox.order.Value"
    assert out.value_schema.version == 3
    assert [f.name for f in out.value_schema.fields] == ["payload", "type"]
    assert ("eventType", "Created") in [(h.key, h.value) for h in out.headers]
    assert out.timestamp == 1_700_000_000_123  # MicroTimestamp / 1000
    unmatched = router.apply(outbox_event(aggregatetype="invoice"))
    assert unmatched.topic == "invoice"  # the regex did not match: the value as it is


def test_outbox_expand_json_and_empty_payloads(registry: PluginRegistry, caplog) -> None:
    router = chain(registry, ROUTER, table_expand_json_payload="true",
                   route_tombstone_on_empty_payload="true")  # fmt: skip
    out = router.apply(
        outbox_event(
            payload='{"total": 5, "big": 9999999999, "x": 1.5, '
            '"tags": ["a"], "n": null, "addr": {"zip": "1"}}'
        )
    )
    assert out.value == {"total": 5, "big": 9999999999, "x": 1.5, "tags": ["a"],
                         "addr": {"zip": "1"}}  # fmt: skip
    types = {f.name: f.schema.type for f in out.value_schema.fields}
    assert types == {"total": Type.INT32, "big": Type.INT64, "x": Type.FLOAT64,
                     "tags": Type.ARRAY, "addr": Type.STRUCT}  # fmt: skip
    assert out.value_schema.name == "payload"
    assert out.value_schema.field("addr").schema.name == "payload.addr"
    with caplog.at_level(logging.WARNING):
        kept = router.apply(outbox_event(payload='{"mixed": [1, "a"]}'))
    assert kept.value == '{"mixed": [1, "a"]}' and "JSON expansion failed" in caplog.text
    empty = router.apply(outbox_event(payload="  "))
    assert empty.value is None and empty.value_schema is None and empty.key == "o-1"


def test_outbox_updates_and_bad_configs(registry: PluginRegistry, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        assert chain(registry, ROUTER).apply(outbox_event("u")) is None
    assert "unexpected update" in caplog.text
    with pytest.raises(DataError):
        chain(registry, ROUTER, table_op_invalid_behavior="fatal").apply(outbox_event("u"))
    with pytest.raises(DataError, match="payload"):
        chain(registry, ROUTER, table_field_event_payload="body").apply(outbox_event())
    with pytest.raises(ConfigError) as info:
        chain(registry, ROUTER, tracing_span_context_field="tracingspancontext",
              table_fields_additional_placement="type:nowhere")  # fmt: skip
    assert set(info.value.errors) == {
        "transforms.x.tracing.span.context.field",
        "transforms.x.table.fields.additional.placement",
    }


# -- SetSchemaMetadata -----------------------------------------------------------------------


def test_set_schema_metadata(registry: PluginRegistry) -> None:
    value_schema = Schema(Type.STRUCT, name="old", version=1, fields=ROW.row_schema.fields)
    record = SourceRecord(topic="t", key=5, key_schema=Schema(Type.INT32),
                          value={"id": 1, "name": None}, value_schema=value_schema)  # fmt: skip
    out = chain(registry, "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
                schema_name="new.Name").apply(record)  # fmt: skip
    assert (out.value_schema.name, out.value_schema.version) == ("new.Name", 1)
    assert out.value == record.value and out.value_schema.fields == value_schema.fields
    key = chain(registry, "org.apache.kafka.connect.transforms.SetSchemaMetadata$Key",
                schema_version="4").apply(record)  # fmt: skip
    assert key.key_schema == Schema(Type.INT32, version=4) and key.value_schema is value_schema
    set_name = chain(registry, "SetSchemaMetadata$Value", schema_name="n")
    assert set_name.apply(SourceRecord(topic="t")).value_schema is None  # tombstone passes
    with pytest.raises(DataError, match="Schema required"):
        set_name.apply(SourceRecord(topic="t", value={"a": 1}))
    with pytest.raises(ConfigError) as info:
        chain(registry, "SetSchemaMetadata$Value")
    assert "transforms.x.schema.name" in info.value.errors


def test_set_schema_metadata_replace_null_with_default(registry: PluginRegistry) -> None:
    schema = Schema(Type.STRUCT, name="s", fields=(
        *ROW.row_schema.fields[:1],
        *(f.__class__(f.name, Schema(Type.STRING, optional=True, default="dflt"))
          for f in ROW.row_schema.fields[1:]),
    ))  # fmt: skip
    record = SourceRecord(topic="t", value={"id": 1, "name": None}, value_schema=schema)
    replaced = chain(registry, "SetSchemaMetadata$Value", schema_name="n").apply(record)
    assert replaced.value == {"id": 1, "name": "dflt"}
    kept = chain(registry, "SetSchemaMetadata$Value", schema_name="n",
                 replace_null_with_default="false").apply(record)  # fmt: skip
    assert kept.value == {"id": 1, "name": None}
