"""Debezium change-event envelopes and their Connect schemas, one ``TableSchema`` per table.

Key = ``<prefix>.<schema>.<table>.Key`` struct of the primary-key columns (the whole row when a
table has none: documented, since without a key every column is the row's identity). Value =
``<prefix>.<schema>.<table>.Envelope`` {before, after, source, op, ts_ms, ts_us, ts_ns,
transaction}, with ``source`` = ``io.debezium.connector.postgresql.Source``. With the JSON
converter and ``schemas.enable=true`` that is exactly what Debezium writes.

A ``TableSchema`` is immutable and built once per table version (a Relation message or the
snapshot's catalog read), so converters can cache per schema object; a schema change builds a
new one. Columns a row lacks (a TOASTed value the server did not resend) get Debezium's
placeholder ``__debezium_unavailable_value`` when textual, else null.

Column rules (``columns.TableColumns``: include/exclude lists, masking, ``message.key.columns``)
shape the value schema and ``before``/``after`` through ``envelope``; rows are decoded whole
first, so the key can use columns the value leaves out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connectors.postgres_cdc import types
from connectors.postgres_cdc.columns import TableColumns
from connectors.postgres_cdc.pgoutput import UNCHANGED_TOAST
from hub.api import Field, Schema, SourceRecord, Type

VERSION = "2.7.0.sluice"
UNAVAILABLE = "__debezium_unavailable_value"
_INVALID_NAME = re.compile(r"[^A-Za-z0-9_]")
_INVALID_TOPIC = re.compile(r"[^A-Za-z0-9._-]")


def _opt(kind: Type, **kw: Any) -> Schema:
    return Schema(kind, optional=True, **kw)


SOURCE_SCHEMA = Schema(
    Type.STRUCT,
    name="io.debezium.connector.postgresql.Source",
    fields=tuple(
        Field(n, s)
        for n, s in (
            ("version", Schema(Type.STRING)),
            ("connector", Schema(Type.STRING)),
            ("name", Schema(Type.STRING)),
            ("ts_ms", Schema(Type.INT64)),
            ("snapshot", _opt(Type.STRING, name="io.debezium.data.Enum", version=1,
                              default="false", parameters={
                                  "allowed": "true,first,first_in_data_collection,"
                                  "last_in_data_collection,last,false,incremental"})),
            ("db", Schema(Type.STRING)),
            ("sequence", _opt(Type.STRING)),
            ("ts_us", _opt(Type.INT64)),
            ("ts_ns", _opt(Type.INT64)),
            ("schema", Schema(Type.STRING)),
            ("table", Schema(Type.STRING)),
            ("txId", _opt(Type.INT64)),
            ("lsn", _opt(Type.INT64)),
            ("xmin", _opt(Type.INT64)),
        )
    ),
)  # fmt: skip
TRANSACTION_SCHEMA = Schema(
    Type.STRUCT,
    optional=True,
    name="event.block",
    version=1,
    fields=(
        Field("id", Schema(Type.STRING)),
        Field("total_order", Schema(Type.INT64)),
        Field("data_collection_order", Schema(Type.INT64)),
    ),
)
HEARTBEAT_KEY_SCHEMA = Schema(
    Type.STRUCT,
    name="io.debezium.connector.common.ServerNameKey",
    fields=(Field("serverName", Schema(Type.STRING)),),
)
HEARTBEAT_VALUE_SCHEMA = Schema(
    Type.STRUCT,
    name="io.debezium.connector.common.Heartbeat",
    fields=(Field("ts_ms", Schema(Type.INT64)),),
)


def schema_name(text: str) -> str:
    return _INVALID_NAME.sub("_", text)


def topic_name(prefix: str, namespace: str, table: str) -> str:
    return _INVALID_TOPIC.sub("_", f"{prefix}.{namespace}.{table}")


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """A column as both the catalog and a Relation message can describe it."""

    name: str
    type_oid: int
    typmod: int
    not_null: bool
    is_key: bool


class TableSchema:
    """Schemas and row conversion for one version of one table."""

    def __init__(
        self,
        prefix: str,
        namespace: str,
        table: str,
        columns: Sequence[ColumnSpec],
        lookup: types.TypeLookup,
        decimal_mode: str = "precise",
        rules: TableColumns | None = None,
        unavailable: str = UNAVAILABLE,
    ) -> None:
        self.namespace, self.table = namespace, table
        self._unavailable = unavailable
        self.columns = tuple(columns)
        self.topic = topic_name(prefix, namespace, table)
        base = f"{schema_name(prefix)}.{schema_name(namespace)}.{schema_name(table)}"
        fields, self._converters = [], []
        for col in self.columns:
            schema, convert = types.mapping(col.type_oid, col.typmod, lookup, decimal_mode)
            if not col.not_null and not col.is_key:
                schema = types.optional(schema)
            fields.append(Field(col.name, schema))
            self._converters.append((col.name, None if convert is str else convert, schema.type))
        self._names = [col.name for col in self.columns]
        self._converted = [(name, conv) for name, conv, _ in self._converters if conv is not None]
        # for pgoutput.read_row: column names and text converters (None = keep the text)
        self.column_names = tuple(self._names)
        self.row_converters = tuple(conv for _, conv, _ in self._converters)
        self.has_primary_key = any(c.is_key for c in self.columns)
        key_idx = [i for i, c in enumerate(self.columns) if c.is_key]
        self._key_names = [self.columns[i].name for i in (key_idx or range(len(self.columns)))]
        self.custom_key = rules is not None and rules.key_names is not None
        if rules is not None and rules.key_names is not None:
            self._key_names = list(rules.key_names)
        self._project = rules.project if rules is not None and rules.projects else None
        value_fields = fields
        if rules is not None:
            by_name = {f.name: f for f in fields}
            value_fields = [_with_parameters(by_name[n], rules.parameters.get(n))
                            for n in rules.value_names]  # fmt: skip
        self.row_schema = Schema(Type.STRUCT, optional=True, name=f"{base}.Value",
                                 fields=tuple(value_fields))  # fmt: skip
        by_name = {f.name: f for f in fields}
        key_fields = tuple(by_name[n] for n in self._key_names if n in by_name)
        self.key_schema = Schema(Type.STRUCT, name=f"{base}.Key", fields=key_fields)
        self.value_schema = Schema(
            Type.STRUCT,
            name=f"{base}.Envelope",
            version=2,
            fields=(
                Field("before", self.row_schema),
                Field("after", self.row_schema),
                Field("source", SOURCE_SCHEMA),
                Field("op", Schema(Type.STRING)),
                Field("ts_ms", _opt(Type.INT64)),
                Field("ts_us", _opt(Type.INT64)),
                Field("ts_ns", _opt(Type.INT64)),
                Field("transaction", TRANSACTION_SCHEMA),
            ),
        )

    def row(self, values: Sequence[Any]) -> dict[str, Any]:
        """Text values (as pgoutput or the snapshot deliver them) -> a row dict.

        Hot path (every change): the dict is built in C from names and texts, then only the
        columns whose text needs converting are visited; the unchanged-TOAST check is one
        C-level ``in`` over the values.
        """
        if UNCHANGED_TOAST in values:
            return self._row_with_toast(values)
        row = dict(zip(self._names, values, strict=False))
        for name, convert in self._converted:
            text = row.get(name)
            if text is not None:
                row[name] = convert(text)
        return row

    def _row_with_toast(self, values: Sequence[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for (name, convert, kind), text in zip(self._converters, values, strict=False):
            if text is UNCHANGED_TOAST:
                out[name] = self._unavailable if kind is Type.STRING else None
            else:
                out[name] = text if convert is None or text is None else convert(text)
        return out

    def key(self, row: dict[str, Any]) -> dict[str, Any]:
        names = self._key_names
        if len(names) == 1:
            return {names[0]: row.get(names[0])}
        return {name: row.get(name) for name in names}

    def envelope(
        self,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        source: dict[str, Any],
        now_us: int,
    ) -> dict[str, Any]:
        if self._project is not None:
            before, after = self._project(before), self._project(after)
        return {
            "before": before,
            "after": after,
            "source": source,
            "op": op,
            "ts_ms": now_us // 1000,
            "ts_us": now_us,
            "ts_ns": now_us * 1000,
            "transaction": None,
        }


def _with_parameters(field: Field, parameters: dict[str, str] | None) -> Field:
    if not parameters:
        return field
    s = field.schema
    merged = {**(s.parameters or {}), **parameters}
    return Field(field.name, Schema(s.type, optional=s.optional, name=s.name, version=s.version,
                                    doc=s.doc, default=s.default, parameters=merged,
                                    fields=s.fields, key=s.key, value=s.value))  # fmt: skip


def heartbeat_record(
    topic: str, prefix: str, partition: dict[str, Any], offset: dict[str, Any]
) -> SourceRecord:
    """Debezium's heartbeat: key ``{serverName}``, value ``{ts_ms}``; its offset moves the slot."""
    return SourceRecord(
        topic=topic,
        key={"serverName": prefix},
        key_schema=HEARTBEAT_KEY_SCHEMA,
        value={"ts_ms": time.time_ns() // 1_000_000},
        value_schema=HEARTBEAT_VALUE_SCHEMA,
        source_partition=partition,
        source_offset=offset,
    )
