"""Records -> row changes: which table, write/delete/truncate, column values and their shape.

Confluent's JDBC sink semantics for the primary key (``pk.mode``/``pk.fields``):

* ``none``: no key; rows are appended.
* ``kafka``: columns ``__connect_topic``, ``__connect_partition``, ``__connect_offset`` (or the
  three ``pk.fields`` names) hold the record's coordinates: redelivery after a crash rewrites
  the same rows instead of duplicating them (with ``insert.mode=upsert``).
* ``record_key``: a struct key gives the ``pk.fields`` it names (all of its fields when
  empty); a primitive key needs exactly one ``pk.fields`` name, the column it goes in.
* ``record_value``: the ``pk.fields`` of the value (all of its fields when empty).

Anything a single record gets wrong (no key, a missing key field, a value that is not a
struct) raises ``DataError`` naming the record, so ``errors.tolerance``/the dead-letter queue
can take it instead of the task failing. Tombstones (null values) are deletes with
``delete.enabled`` and otherwise skipped (counted; Debezium sends one after every delete).

``Shape`` (the columns a record needs) is computed once per (table, key schema, value schema)
object, or per column-name tuple for schemaless values, and cached: per record the work is
building one dict.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter, itemgetter, setitem
from typing import Any

import sqlalchemy as sa

from connectors.warehouse import debezium
from connectors.warehouse.config import KAFKA_PK_FIELDS, WarehouseSinkConfig
from connectors.warehouse.types import column_type, infer_type, to_json_text
from hub.api import DataError, Schema, SinkRecord, Type

log = logging.getLogger(__name__)

_VALUE, _TOPIC, _ROWS = attrgetter("value"), attrgetter("topic"), attrgetter("rows")
_VALUE_SCHEMA, _KEY_SCHEMA = attrgetter("value_schema"), attrgetter("key_schema")
_KEY, _PARTITION, _OFFSET = attrgetter("key"), attrgetter("partition"), attrgetter("offset")


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: sa.types.TypeEngine[Any]
    nullable: bool


@dataclass(slots=True)
class Shape:
    """The columns one kind of record fills; ``pk`` names the key columns (may be empty)."""

    columns: tuple[Column, ...]
    pk: tuple[str, ...]
    adapters: tuple[tuple[str, Callable[[Any], Any]], ...] = ()
    names: tuple[str, ...] = field(default=())
    whole_value: bool = False  # names are every field of the value (no whitelist dropped any)
    # Column -> the Python types its values can have, where a schema says so (see _TYPED).
    typed: dict[str, frozenset[type]] = field(default_factory=dict)


# The Python types a converter delivers for a Connect type (hub.converters check them when
# they decode with a schema: an int64 field is an int, never a bool; a float64 field may
# hold an int). As in Kafka Connect, whose Struct refuses a value of the wrong type, a
# record's schema is trusted for its values' types: the binary COPY check skips such columns.
_TYPED: dict[Type, frozenset[type]] = {
    Type.INT8: frozenset({int}), Type.INT16: frozenset({int}), Type.INT32: frozenset({int}),
    Type.INT64: frozenset({int}), Type.FLOAT32: frozenset({int, float}),
    Type.FLOAT64: frozenset({int, float}), Type.BOOLEAN: frozenset({bool}),
    Type.STRING: frozenset({str}),
}  # fmt: skip


@dataclass(slots=True)
class RowChange:
    record: SinkRecord
    table: str
    action: str  # "write" | "delete" | "truncate"
    row: dict[str, Any]  # column -> value; only the key columns for a delete
    shape: Shape


@dataclass(slots=True)
class RowRun:
    """One put's worth of plain writes into one table with one shape, its rows built without
    Python code per record: what ``RowBuilder.build_run`` makes of a uniform put.

    Why not one ``RowChange`` per record: creating them was the largest per-row cost of a
    bulk insert (an object per record, and the garbage collector scanning them). A run keeps
    the lists it was given; ``changes()`` makes the ``RowChange``s only where a path needs
    them one by one (isolating a bad record, collapsing keys for an upsert, mixed batches).
    It offers ``table``, ``shape``, ``action`` and ``record`` (its first record) like a
    ``RowChange``, which is all ``Tables.ensure`` reads."""

    records: list[SinkRecord]
    table: str
    rows: list[dict[str, Any]]
    shape: Shape
    action: str = "write"

    @property
    def record(self) -> SinkRecord:
        return self.records[0]

    def changes(self) -> list[RowChange]:
        n = len(self.rows)
        return list(map(RowChange, self.records, repeat(self.table, n), repeat("write", n),
                        self.rows, repeat(self.shape, n)))  # fmt: skip


def expand(items: Sequence[RowChange | RowRun]) -> list[RowChange]:
    """``items`` with every run replaced by its changes, in order."""
    if RowRun not in set(map(type, items)):
        return list(items)  # type: ignore[arg-type]
    out: list[RowChange] = []
    for item in items:
        if type(item) is RowRun:
            out += item.changes()
        else:
            out.append(item)  # type: ignore[arg-type]
    return out


def rows_of(items: Sequence[RowChange | RowRun]) -> list[dict[str, Any]]:
    """Every row of ``items`` in order: a run's rows, a change's row."""
    if list(map(type, items)).count(RowRun) == len(items):
        return list(chain.from_iterable(map(_ROWS, items)))
    return list(chain.from_iterable(i.rows if type(i) is RowRun else (i.row,)  # type: ignore[union-attr]
                                    for i in items))  # fmt: skip


def count_rows(items: Sequence[RowChange | RowRun]) -> int:
    """How many rows ``items`` hold (a run holds many)."""
    return len(items) + sum(len(i.rows) - 1 for i in items if type(i) is RowRun)


def where(record: SinkRecord) -> str:
    return f"{record.topic}-{record.partition}@{record.offset}"


class RowBuilder:
    """Turns records into ``RowChange``s for one task's config. Not thread-safe (task thread)."""

    def __init__(self, config: WarehouseSinkConfig) -> None:
        self.config = config
        self._tables: dict[str, str] = {}
        self._shapes: dict[tuple[Any, ...], tuple[Shape, Any, Any]] = {}
        self._envelopes: dict[int, bool] = {}
        self._schemas: list[Schema | None] = []
        self._plans: dict[tuple[str, int, int], tuple[str, Shape, int]] = {}
        self._plain = False
        self.skipped = 0  # tombstones/deletes/truncates not applied by configuration
        self._kafka_names = tuple(config.pk_fields) if config.pk_mode == "kafka" and \
            config.pk_fields else KAFKA_PK_FIELDS  # fmt: skip
        self._whitelist = frozenset(config.fields_whitelist)
        unwrap = config.debezium_unwrap
        self._unwrap: Callable[[Any, Schema | None], bool] = (
            debezium.is_envelope if unwrap == "auto" else (lambda v, s: unwrap == "true")
        )

    def table_for(self, topic: str) -> str:
        name = self._tables.get(topic)
        if name is None:
            name = self._tables[topic] = self.config.table_name_format.replace("${topic}", topic)
        return name

    def build(self, record: SinkRecord) -> RowChange | None:
        """The change ``record`` asks for, or None when configuration says to skip it.

        Hot path: a plain (not Debezium) struct value whose (topic, key schema, value schema)
        was seen before reuses that record's table and shape, and with ``pk.mode=none`` and
        no adapters the value dict itself is the row (rows are never mutated after build).
        Anything unusual falls through to the general path, which raises the DataErrors."""
        value = record.value
        if type(value) is dict:
            plan = self._plans.get((record.topic, id(record.key_schema), id(record.value_schema)))
            if plan is not None and len(value) == plan[2]:
                row = self._fast_row(record, value, plan[1])
                if row is not None:
                    return RowChange(record, plan[0], "write", row, plan[1])
        self._plain = False
        change = self._build(record)
        if change is not None and self._plain and change.shape.whole_value and \
                record.value_schema is not None and type(value) is dict:  # fmt: skip
            if len(self._plans) > 10_000:
                self._plans.clear()
            key = (record.topic, id(record.key_schema), id(record.value_schema))
            self._plans[key] = (change.table, change.shape, len(value))
            self._schemas.extend((record.key_schema, record.value_schema))  # ids stay valid
        return change

    def build_run(self, records: Sequence[SinkRecord]) -> RowRun | None:
        """All of ``records`` as one ``RowRun`` when ``build`` would take its hot path for
        each: no adapters, one topic and value schema object of a known plan (and one key
        schema object, unless the key is not used), dict values of the plan's size, and
        ``pk.mode`` none or record_value (the value dicts themselves are the rows; every key
        field set), record_key (copies of the values with the key's fields written in, as
        ``build`` does; struct keys with every key field set) or kafka (copies with the
        topic, partition and offset written in). Checked and built in C-level
        passes; no Python code per record. None when any record differs (the caller then
        builds record by record, which also raises the DataErrors)."""
        first = records[0]
        plan = self._plans.get((first.topic, id(first.key_schema), id(first.value_schema)))
        mode = self.config.pk_mode
        if plan is None or plan[1].adapters:
            return None
        n = len(records)
        values = list(map(_VALUE, records))
        if list(map(type, values)).count(dict) != n or list(map(len, values)).count(plan[2]) != n:
            return None
        schemas = list(map(id, map(_VALUE_SCHEMA, records)))
        if schemas.count(id(first.value_schema)) != n or \
                list(map(_TOPIC, records)).count(first.topic) != n:  # fmt: skip
            return None
        if mode == "none":
            return RowRun(list(records), plan[0], values, plan[1])
        if mode == "kafka":  # what _fast_row does, column by column
            rows = list(map(dict, values))
            names = self._kafka_names
            list(map(setitem, rows, repeat(names[0], n), repeat(first.topic, n)))
            list(map(setitem, rows, repeat(names[1], n), map(_PARTITION, records)))
            list(map(setitem, rows, repeat(names[2], n), map(_OFFSET, records)))
            return RowRun(list(records), plan[0], rows, plan[1])
        if list(map(id, map(_KEY_SCHEMA, records))).count(id(first.key_schema)) != n:
            return None
        rows, source = values, values
        if mode == "record_key":
            source = list(map(_KEY, records))
            if list(map(type, source)).count(dict) != n:
                return None
            rows = list(map(dict, values))
        for name in plan[1].pk:  # the general path raises the DataError for a missing one
            try:
                column = list(map(itemgetter(name), source))
            except KeyError:
                return None
            if None in column:
                return None
            if rows is not values:
                list(map(setitem, rows, repeat(name, n), column))  # row[name] = key[name]
        return RowRun(list(records), plan[0], rows, plan[1])

    def _fast_row(self, record: SinkRecord, value: dict[str, Any],
                  shape: Shape) -> dict[str, Any] | None:  # fmt: skip
        mode = self.config.pk_mode
        if mode == "none" or mode == "record_value":
            row = dict(value) if shape.adapters else value
            if mode == "record_value":
                for name in shape.pk:
                    if value.get(name) is None:
                        return None
        elif mode == "kafka":
            n = self._kafka_names
            row = dict(value)
            row[n[0]], row[n[1]], row[n[2]] = record.topic, record.partition, record.offset
        else:
            key = record.key
            if type(key) is not dict:
                return None
            row = dict(value)
            for name in shape.pk:
                v = key.get(name)
                if v is None:
                    return None
                row[name] = v
        for name, adapt in shape.adapters:
            v = row[name]
            if v is not None:
                try:
                    row[name] = adapt(v)
                except (TypeError, ValueError, OverflowError):
                    return None  # the general path raises the DataError
        return row

    def _build(self, record: SinkRecord) -> RowChange | None:
        value, vschema = record.value, record.value_schema
        action = "write"
        if vschema is not None and self.config.debezium_unwrap == "auto":
            envelope = self._envelopes.get(id(vschema))  # decided once per schema object
            if envelope is None:
                envelope = debezium.is_envelope(value, vschema)
                if len(self._envelopes) > 10_000:
                    self._envelopes.clear()
                self._envelopes[id(vschema)] = envelope
                self._schemas.append(vschema)  # keeps the id valid
            envelope = envelope and isinstance(value, dict)
        else:
            envelope = value is not None and self._unwrap(value, vschema)
        if envelope:
            if not isinstance(value, dict):
                raise DataError(f"record {where(record)}: debezium.unwrap=true but the value "
                                "is not a change event")  # fmt: skip
            change = debezium.unwrap(value, vschema)
            vschema = change.row_schema
            if change.op == "d":
                action = "delete"
            elif change.op == "t":
                action = "truncate"
            elif change.row is None:
                raise DataError(f"record {where(record)}: change event op={change.op!r} "
                                "without an 'after' row")  # fmt: skip
            value = change.row
        elif value is None:
            action = "delete"
        else:
            self._plain = True
        table = self.table_for(record.topic)
        if action == "truncate":
            if not self.config.truncate_enabled:
                self.skipped += 1
                return None
            return RowChange(record, table, action, {}, Shape((), ()))
        if action == "delete" and not self.config.delete_enabled:
            self.skipped += 1
            return None
        key_values, key_schema = self._key(record, value)
        if action == "delete":
            shape = self._shape(table, key_values, key_schema, None, None)
            return RowChange(record, table, action, key_values, shape)
        if not isinstance(value, dict):
            raise DataError(f"record {where(record)}: the value must be a struct or map to "
                            f"become a row, got {type(value).__name__}")  # fmt: skip
        shape = self._shape(table, key_values, key_schema, value, vschema)
        names = shape.names
        if shape.whole_value and len(value) == len(names):
            row = dict(value)  # the common case: every field, copied in C
        else:
            row = {name: value.get(name) for name in names}
        if key_values:
            row.update(key_values)
        for name, adapt in shape.adapters:
            v = row[name]
            if v is not None:
                try:
                    row[name] = adapt(v)
                except (TypeError, ValueError, OverflowError) as exc:
                    raise DataError(f"record {where(record)}: field {name!r}: {exc}") from None
        if vschema is None:
            for name, v in row.items():
                if isinstance(v, dict | list):
                    row[name] = to_json_text(v)
        return RowChange(record, table, action, row, shape)

    def _key(self, record: SinkRecord, value: Any) -> tuple[dict[str, Any], Schema | None]:
        mode, names = self.config.pk_mode, self.config.pk_fields
        if mode == "none":
            return {}, None
        if mode == "kafka":
            n = self._kafka_names
            return {n[0]: record.topic, n[1]: record.partition, n[2]: record.offset}, None
        if mode == "record_key":
            key, schema = record.key, record.key_schema
            if key is None:
                raise DataError(f"record {where(record)}: pk.mode=record_key but it has no key")
            if not isinstance(key, dict):
                if len(names) != 1:
                    raise DataError(f"record {where(record)}: a primitive key needs exactly one "
                                    "pk.fields name (the column it is written to)")  # fmt: skip
                return {names[0]: key}, schema
            return _pick(record, key, names, "key"), schema
        if not isinstance(value, dict):
            raise DataError(f"record {where(record)}: pk.mode=record_value needs a struct value")
        return _pick(record, value, names, "value"), None

    def _shape(self, table: str, key_values: dict[str, Any], key_schema: Schema | None,
               value: dict[str, Any] | None, vschema: Schema | None) -> Shape:  # fmt: skip
        if vschema is not None or value is None:
            cache_key: tuple[Any, ...] = (table, id(key_schema), id(vschema), tuple(key_values))
        else:
            cache_key = (table, id(key_schema), tuple(key_values), tuple(value))
        hit = self._shapes.get(cache_key)
        if hit is not None:
            return hit[0]
        shape = self._new_shape(key_values, key_schema, value, vschema)
        if len(self._shapes) > 10_000:
            self._shapes.clear()
        self._shapes[cache_key] = (shape, key_schema, vschema)  # holds the ids alive
        return shape

    def _new_shape(self, key_values: dict[str, Any], key_schema: Schema | None,
                   value: dict[str, Any] | None, vschema: Schema | None) -> Shape:  # fmt: skip
        columns: dict[str, Column] = {}
        adapters: list[tuple[str, Callable[[Any], Any]]] = []
        typed: dict[str, frozenset[type]] = {}
        pk = tuple(key_values)
        if self.config.pk_mode == "kafka":  # written by _key/_fast_row/build_run themselves
            n = self._kafka_names
            typed.update({n[0]: frozenset({str}), n[1]: frozenset({int}), n[2]: frozenset({int})})
        for name, v in key_values.items():
            fs = _field_schema(key_schema, name, len(key_values))
            kind, adapt = column_type(fs) if fs is not None else infer_type(v)
            columns[name] = Column(name, kind, False)
            if adapt is not None:
                adapters.append((name, adapt))
            elif fs is not None and fs.type in _TYPED:
                typed[name] = _TYPED[fs.type]
        names: list[str] = []
        fields: list[tuple[str, Schema | None]]
        if vschema is not None and vschema.type is Type.STRUCT:
            fields = [(f.name, f.schema) for f in vschema.fields]
        else:
            fields = [(name, None) for name in (value or {})]
        for name, fs in fields:
            if self._whitelist and name not in self._whitelist and name not in key_values:
                continue
            names.append(name)
            if name in columns:
                continue
            kind, adapt = column_type(fs) if fs is not None else infer_type((value or {})[name])
            columns[name] = Column(name, kind, fs.optional if fs is not None else True)
            if adapt is not None:
                adapters.append((name, adapt))
            elif fs is not None and fs.type in _TYPED:
                typed[name] = _TYPED[fs.type]
        whole = len(names) == len(fields)
        return Shape(tuple(columns.values()), pk, tuple(adapters), tuple(names), whole, typed)


def _field_schema(schema: Schema | None, name: str, count: int) -> Schema | None:
    if schema is None:
        return None
    if schema.type is Type.STRUCT:
        f = schema.field(name)
        return f.schema if f is not None else None
    return schema if count == 1 else None


def _pick(record: SinkRecord, data: dict[str, Any], names: list[str], what: str) -> dict[str, Any]:
    if not names:
        return dict(data)
    missing = [n for n in names if n not in data or data[n] is None]
    if missing:
        raise DataError(f"record {where(record)}: primary key field(s) {missing} missing "
                        f"from the record {what} (pk.fields)")  # fmt: skip
    return {n: data[n] for n in names}
