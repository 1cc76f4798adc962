"""``ExtractNewRecordState``: a Debezium change event -> the row it leaves behind.

Semantics of ``io.debezium.transforms.ExtractNewRecordState`` (Debezium 2.7):

* Records that are not change events (value schema not named ``*.Envelope``: heartbeats,
  transaction metadata, schemaless values) pass unchanged; truncate events (no ``before``,
  no ``after``) are dropped.
* Inserts, updates and snapshot reads become ``after``, with the value schema copied as Kafka's
  ``SchemaUtil.copySchemaBasics`` copies it (a required struct) plus the ``add.fields``.
* Deletes and tombstones follow ``delete.tombstone.handling.mode``:

  ====================== ============================= ======================
  mode                   delete event                  tombstone
  ====================== ============================= ======================
  drop                   dropped                       dropped
  tombstone              value null (schema of after)  dropped
  rewrite                ``before`` + ``__deleted``    dropped
  rewrite-with-tombstone ``before`` + ``__deleted``    kept
  delete-to-tombstone    value and schema null         dropped
  ====================== ============================= ======================

  ``rewrite`` modes add ``__deleted`` (optional string) ``"true"`` to deletes and ``"false"``
  to the other events. When ``delete.tombstone.handling.mode`` is not set, Debezium 2.x's
  older keys decide: ``drop.tombstones`` (default true) and ``delete.handling.mode``
  (``drop`` default, ``rewrite``, ``none`` = the tombstone mode's null value). Debezium 3.x
  removed them and defaults to ``tombstone``: set the new key to get the same result on both.
* ``add.fields``: ``op,table,source.ts_ms,transaction.id`` or ``field:newName``; unqualified
  ``op``/``ts_ms``/``ts_us``/``ts_ns`` are the envelope's, ``id``/``total_order``/
  ``data_collection_order`` the transaction block's, anything else ``source``'s. The new
  field is ``<add.fields.prefix>`` (default ``__``) + name (``<struct>_<name>`` when
  qualified), optional, absent fields skipped. ``add.headers`` does the same as headers (a
  tombstone gets only an ``op`` header, ``d``).
* ``route.by.field``: the topic becomes that field's value (from ``before`` for deletes).
* ``replace.null.with.default`` (3.x): a null ``after``/``before`` is replaced by its schema's
  default, if it has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from hub.api import ConfigModel, Header, Schema, Transformation, UpstreamKeys
from hub.api import Field as SchemaField
from hub.api.schema import OPTIONAL_STRING_SCHEMA, STRING_SCHEMA
from hub.api.transform import Variant
from hub.transforms._util import CommaList, R
from hub.transforms.debezium._envelope import (
    copy_basics,
    is_envelope,
    require_struct_value,
    string_field,
)

DELETED = "__deleted"
_TX_FIELDS = frozenset({"id", "total_order", "data_collection_order"})
_ENVELOPE_FIELDS = frozenset({"op", "ts_ms", "ts_us", "ts_ns"})

UPSTREAM = UpstreamKeys(
    system="Debezium ExtractNewRecordState",
    known=frozenset({
        "delete.tombstone.handling.mode", "route.by.field", "add.fields.prefix", "add.fields",
        "add.headers.prefix", "add.headers", "replace.null.with.default",
        "drop.fields.header.name", "drop.fields.from.key", "drop.fields.keep.schema.compatible",
        "drop.tombstones", "delete.handling.mode", "operation.header", "add.source.fields",
    }),
    doc="docs/transforms.md",
)  # fmt: skip

Mode = Literal["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"]


class ExtractNewRecordStateConfig(ConfigModel):
    upstream_keys = UPSTREAM

    delete_tombstone_handling_mode: Mode | None = Field(
        None,
        alias="delete.tombstone.handling.mode",
        description="drop, tombstone, rewrite, rewrite-with-tombstone or delete-to-tombstone; "
        "unset: drop.tombstones and delete.handling.mode decide (Debezium 2.x).",
    )
    drop_tombstones: bool = Field(True, alias="drop.tombstones", description="Legacy (2.x).")
    delete_handling_mode: Literal["drop", "rewrite", "none"] = Field(
        "drop", alias="delete.handling.mode", description="Legacy (2.x)."
    )
    route_by_field: str = Field("", alias="route.by.field", description="Topic from a field.")
    add_fields: CommaList = Field(
        default_factory=list, alias="add.fields",
        description="Event fields to add to the row: op, table, source.ts_ms, name:newName...",
    )  # fmt: skip
    add_fields_prefix: str = Field("__", alias="add.fields.prefix", description="Their prefix.")
    add_headers: CommaList = Field(
        default_factory=list, alias="add.headers", description="Event fields to add as headers."
    )
    add_headers_prefix: str = Field("__", alias="add.headers.prefix", description="Their prefix.")
    replace_null_with_default: bool = Field(
        True, alias="replace.null.with.default",
        description="A null after/before becomes its schema's default, if any.",
    )  # fmt: skip

    def mode(self) -> tuple[str, bool]:
        """(what deletes become, whether tombstones are kept) after the legacy fallback."""
        mode = self.delete_tombstone_handling_mode
        if mode == "rewrite-with-tombstone":
            return "rewrite", True
        if mode is not None:
            return mode, False
        legacy = {"drop": "drop", "rewrite": "rewrite", "none": "tombstone"}
        return legacy[self.delete_handling_mode], not self.drop_tombstones


@dataclass(frozen=True)
class FieldReference:
    """One ``add.fields``/``add.headers`` entry: where it is read, what it is named."""

    struct: str | None
    field: str
    new_name: str

    @classmethod
    def parse(cls, prefix: str, text: str) -> FieldReference:
        path, _, rename = text.partition(":")
        parts = path.split(".")
        field = parts[0] if len(parts) == 1 else parts[1]
        struct: str | None = parts[0]
        if len(parts) == 1:
            struct = "transaction" if field in _TX_FIELDS else "source"
            if field in _ENVELOPE_FIELDS:
                struct = None
        name = rename or (field if len(parts) == 1 else f"{struct}_{field}")
        return cls(struct, field, prefix + name)

    def schema(self, envelope: Schema) -> Schema | None:
        """The optional schema of the referenced field; None when the event has no such."""
        parent = envelope
        if self.struct is not None:
            holder = envelope.field(self.struct)
            if holder is None:
                return None
            parent = holder.schema
        found = parent.field(self.field) or envelope.field(self.field)
        if found is None:
            return None
        return copy_basics(found.schema, found.schema.fields, optional=True)

    def value(self, envelope: Schema, value: dict[str, Any]) -> Any:
        if self.struct is None:
            return value.get(self.field)
        parent, holder = value.get(self.struct), envelope.field(self.struct)
        if parent is None or holder is None:
            return None  # e.g. no transaction block (snapshot, or metadata off)
        if holder.schema.field(self.field) is not None:
            return parent.get(self.field)
        return value.get(self.field)  # a field another transform put in the envelope


class ExtractNewRecordState(Transformation[R]):
    name = "ExtractNewRecordState"
    aliases = ("io.debezium.transforms.ExtractNewRecordState",)
    config_model = ExtractNewRecordStateConfig
    description = "Debezium: replace a change event by the row state it leaves behind."

    def __init__(self, config: ExtractNewRecordStateConfig, variant: Variant | None = None):
        super().__init__(config, variant)
        self.deletes, self.keep_tombstones = config.mode()
        self.rewrite = self.deletes == "rewrite"
        self.fields = [FieldReference.parse(config.add_fields_prefix, f) for f in config.add_fields]
        self.headers = [FieldReference.parse(config.add_headers_prefix, f)
                        for f in config.add_headers]  # fmt: skip
        self.route = config.route_by_field or None
        self._schemas: dict[tuple[int, int], tuple[Schema, Schema, Schema | None]] = {}

    def apply(self, record: R) -> R | None:
        value = record.value
        envelope = is_envelope(record)
        if self.headers and (envelope or value is None):
            record = self._with_headers(record)
        if value is None:
            return record if self.keep_tombstones else None
        if not envelope:
            return record
        value = require_struct_value(value, "ExtractNewRecordState")
        schema = record.value_schema
        assert schema is not None
        after_field, before_field = schema.field("after"), schema.field("before")
        after, before = value.get("after"), value.get("before")
        if self.config.replace_null_with_default:
            if after is None and after_field is not None:
                after = after_field.schema.default
            if before is None and before_field is not None:
                before = before_field.schema.default
        if after is None and before is None:
            return None  # a truncate event
        if after is None:
            return self._delete(record, before, before_field, after_field)
        assert after_field is not None
        row = require_struct_value(after, "ExtractNewRecordState")
        row_schema = after_field.schema
        if self.rewrite:
            row_schema, row = self._rewritten(row_schema, row, "false")
        topic = record.topic
        if self.route is not None:
            topic = string_field(row, row_schema, self.route) or topic
        new_schema, new_row = self._add_fields(schema, value, row_schema, row)
        return record.replace(topic=topic, value=new_row, value_schema=new_schema)

    def _delete(self, record: R, before: Any, before_field: Any, after_field: Any) -> R | None:
        if self.deletes == "drop":
            return None
        if self.deletes == "delete-to-tombstone":
            out = record.replace(value=None, value_schema=None)
        elif self.deletes == "tombstone":
            out = record.replace(
                value=None, value_schema=after_field.schema if after_field else None
            )
        else:
            assert before_field is not None
            row = require_struct_value(before, "ExtractNewRecordState")
            row_schema, row = self._rewritten(before_field.schema, row, "true")
            out = record.replace(value=row, value_schema=row_schema)
        if self.route is not None:
            assert before_field is not None
            old = require_struct_value(before, "Read record to set topic routing for DELETE")
            topic = string_field(old, before_field.schema, self.route)
            if topic:
                out = out.replace(topic=topic)
        if out.value is not None:
            schema = record.value_schema
            assert schema is not None and out.value_schema is not None
            new_schema, new_row = self._add_fields(schema, record.value, out.value_schema,
                                                   out.value)  # fmt: skip
            out = out.replace(value=new_row, value_schema=new_schema)
        return out

    def _rewritten(
        self, schema: Schema, row: dict[str, Any], deleted: str
    ) -> tuple[Schema, dict[str, Any]]:
        """Kafka's InsertField$Value with ``static.field=__deleted``."""
        key = (id(schema), -1)
        hit = self._schemas.get(key)
        if hit is None or hit[0] is not schema:
            fields = (*schema.fields, SchemaField(DELETED, OPTIONAL_STRING_SCHEMA))
            hit = self._cache(key, schema, copy_basics(schema, fields))
        return hit[1], {**row, DELETED: deleted}

    def _add_fields(
        self, envelope: Schema, value: dict[str, Any], schema: Schema, row: dict[str, Any]
    ) -> tuple[Schema, dict[str, Any]]:
        key = (id(schema), id(envelope))
        hit = self._schemas.get(key)
        if hit is None or hit[0] is not schema or hit[2] is not envelope:
            fields = list(schema.fields)
            for ref in self.fields:
                field_schema = ref.schema(envelope)
                if field_schema is not None:
                    fields.append(SchemaField(ref.new_name, field_schema))
            hit = self._cache(key, schema, copy_basics(schema, tuple(fields)), envelope)
        new_schema = hit[1]
        out = dict(row)
        for ref in self.fields:
            if new_schema.field(ref.new_name) is not None:
                out[ref.new_name] = ref.value(envelope, value)
        return new_schema, out

    def _cache(
        self, key: tuple[int, int], schema: Schema, built: Schema, envelope: Schema | None = None
    ) -> tuple[Schema, Schema, Schema | None]:
        if len(self._schemas) >= 64:
            self._schemas.clear()
        hit = self._schemas[key] = (schema, built, envelope)
        return hit

    def _with_headers(self, record: R) -> R:
        headers: list[Header] = list(record.headers)
        value, envelope = record.value, record.value_schema
        for ref in self.headers:
            if value is None:
                if ref.field == "op":
                    headers.append(Header(ref.new_name, "d", STRING_SCHEMA))
                continue
            assert envelope is not None
            schema = ref.schema(envelope)
            if schema is not None:
                headers.append(Header(ref.new_name, ref.value(envelope, value), schema))
        return record.replace(headers=tuple(headers))
