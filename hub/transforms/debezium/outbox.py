"""The outbox ``EventRouter``: rows inserted into an outbox table -> events on their topics.

Semantics of ``io.debezium.transforms.outbox.EventRouter`` (Debezium 2.x/3.x), for change
events of the outbox table:

* tombstones are dropped; records that are not change events pass unchanged; deletes are
  dropped (the outbox pattern deletes rows right after inserting them); updates are dropped
  with a warning or an error log (``table.op.invalid.behavior`` ``warn``/``error``) or fail
  the record (``fatal``, a DataError subject to ``errors.tolerance``).
* From the inserted row (``after``): topic = the ``route.by.field`` column (default
  ``aggregatetype``) rewritten by ``route.topic.regex``/``route.topic.replacement`` (default
  ``outbox.event.${routedByValue}``; the regex must match the whole value, Java syntax); key =
  the ``table.field.event.key`` column (default ``aggregateid``) with its schema; header
  ``id`` = the ``table.field.event.id`` column; timestamp = ``table.field.event.timestamp``
  (a Debezium Timestamp/MicroTimestamp/NanoTimestamp column) or the event's ``ts_ms``.
* Value: the ``table.field.event.payload`` column (default ``payload``) with its schema, or,
  when some ``table.fields.additional.placement`` entry says ``envelope``, a struct {payload,
  those fields} named ``<after schema name with the routed value before its last part>``
  (``srv.public.outbox.order.Value``), version from ``table.field.event.schema.version``.
  ``header`` placements add headers, ``partition`` sets the record's partition; a placement
  naming a missing column is an error, or skipped with ``table.field.additional.missing``
  ``ignore``.
* ``table.expand.json.payload``: a string payload that is a JSON object becomes a struct with
  an inferred schema (``_json_schema``); anything else stays as it was, with a warning.
* ``route.tombstone.on.empty.payload``: a null or blank payload becomes a tombstone.

Tracing (``tracing.*``) needs OpenTelemetry, which Sluice does not bundle: those keys are
rejected by name. ``table.field.event.type`` has no effect in Debezium 2.x/3.x either (place
the column with ``table.fields.additional.placement``): accepted with a warning.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import Field, field_validator

from hub.api import (
    ConfigModel,
    DataError,
    Header,
    Schema,
    Transformation,
    Type,
    UpstreamKeys,
)
from hub.api import Field as SchemaField
from hub.api.transform import Variant
from hub.transforms._util import R
from hub.transforms.debezium._envelope import is_envelope, require_struct_value, string_field
from hub.transforms.debezium._json_schema import JsonSchemaData, JsonSchemaError
from hub.transforms.routers import java_replacement

log = logging.getLogger(__name__)

UPSTREAM = UpstreamKeys(
    system="Debezium outbox EventRouter",
    known=frozenset({
        "table.op.invalid.behavior", "table.field.event.id", "table.field.event.key",
        "table.field.event.type", "table.field.event.payload", "table.field.event.timestamp",
        "table.fields.additional.placement", "table.field.additional.missing",
        "table.field.event.schema.version", "route.by.field", "route.topic.regex",
        "route.topic.replacement", "route.tombstone.on.empty.payload",
        "table.expand.json.payload", "table.json.payload.null.behavior",
        "table.json.payload.empty.array.behavior", "tracing.span.context.field",
        "tracing.operation.name", "tracing.with.context.field.only",
        "debezium.op.invalid.behavior", "table.field.event.payload.id",
    }),
    ignored={"table.field.event.type": "nothing (the option has no effect there either)"},
    equivalent={"field.name.adjustment.mode": ("none",)},
    doc="docs/transforms.md",
)  # fmt: skip

_JAVA_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")
_TIMESTAMP_DIVISORS = {
    "io.debezium.time.Timestamp": 1,
    "io.debezium.time.MicroTimestamp": 1_000,
    "io.debezium.time.NanoTimestamp": 1_000_000,
}
Placement = Literal["header", "envelope", "partition"]


def java_regex(pattern: str) -> re.Pattern[str]:
    """A Java regex with ``(?<name>...)`` groups, as Python's ``(?P<name>...)``."""
    return re.compile(_JAVA_NAMED_GROUP.sub("(?P<", pattern))


@dataclass(frozen=True)
class AdditionalField:
    field: str
    placement: Placement
    alias: str


def parse_placements(value: str | None) -> list[AdditionalField]:
    """``field:placement[:alias],...``; ValueError naming a malformed entry."""
    out = []
    for entry in (value or "").split(","):
        if not entry.strip():
            continue
        parts = [p.strip() for p in entry.split(":")]
        placement = parts[1].lower() if len(parts) > 1 else ""
        if len(parts) not in (2, 3) or placement not in ("header", "envelope", "partition"):
            raise ValueError(f"{entry.strip()!r}: expected <column>:<header|envelope|partition>"
                             "[:<alias>]")  # fmt: skip
        alias = parts[2] if len(parts) == 3 else parts[0]
        out.append(AdditionalField(parts[0], cast(Placement, placement), alias))
    return out


class EventRouterConfig(ConfigModel):
    upstream_keys = UPSTREAM

    field_event_id: str = Field(
        "id", alias="table.field.event.id", description="Column of the event id (header id)."
    )
    field_event_key: str = Field(
        "aggregateid", alias="table.field.event.key", description="Column of the record key."
    )
    field_event_payload: str = Field(
        "payload", alias="table.field.event.payload", description="Column of the payload."
    )
    field_event_timestamp: str | None = Field(
        None, alias="table.field.event.timestamp",
        description="Column of the record timestamp (else the event's ts_ms).",
    )  # fmt: skip
    field_schema_version: str | None = Field(
        None, alias="table.field.event.schema.version",
        description="Column of the value schema's version.",
    )  # fmt: skip
    fields_additional_placement: str | None = Field(
        None, alias="table.fields.additional.placement",
        description="<column>:<header|envelope|partition>[:<alias>],...",
    )  # fmt: skip
    additional_missing: Literal["error", "ignore"] = Field(
        "error", alias="table.field.additional.missing",
        description="A placed column missing from the row: error or ignore.",
    )  # fmt: skip
    route_by_field: str = Field(
        "aggregatetype", alias="route.by.field", description="Column naming the topic."
    )
    route_topic_regex: str = Field(
        "(?<routedByValue>.*)", alias="route.topic.regex",
        description="Java regex the route.by.field value must match whole.",
    )  # fmt: skip
    route_topic_replacement: str = Field(
        "outbox.event.${routedByValue}", alias="route.topic.replacement",
        description="The topic; ${name}/$1 refer to the regex's groups.",
    )  # fmt: skip
    route_tombstone_on_empty_payload: bool = Field(
        False, alias="route.tombstone.on.empty.payload",
        description="A null or blank payload becomes a tombstone.",
    )  # fmt: skip
    op_invalid_behavior: Literal["warn", "error", "fatal"] = Field(
        "warn", alias="table.op.invalid.behavior",
        description="Updates of outbox rows: dropped with a warning/error log, or fail (fatal).",
    )  # fmt: skip
    expand_json_payload: bool = Field(
        False, alias="table.expand.json.payload",
        description="A JSON object payload string becomes a struct with an inferred schema.",
    )  # fmt: skip
    json_null_behavior: Literal["ignore", "optional_bytes"] = Field(
        "ignore", alias="table.json.payload.null.behavior",
        description="JSON nulls when expanding: left out, or optional bytes fields.",
    )  # fmt: skip
    json_empty_array_behavior: Literal["ignore", "optional_string"] = Field(
        "ignore", alias="table.json.payload.empty.array.behavior",
        description="Empty JSON arrays when expanding: left out, or arrays of strings.",
    )  # fmt: skip

    @field_validator("op_invalid_behavior", "json_null_behavior", "json_empty_array_behavior",
                     "additional_missing", mode="before")  # fmt: skip
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("route_topic_regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            java_regex(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value

    @field_validator("route_topic_replacement")
    @classmethod
    def _replacement(cls, value: str) -> str:
        java_replacement(value)
        return value

    @field_validator("fields_additional_placement")
    @classmethod
    def _placements(cls, value: str | None) -> str | None:
        parse_placements(value)
        return value


class EventRouter(Transformation[R]):
    name = "EventRouter"
    aliases = ("io.debezium.transforms.outbox.EventRouter", "OutboxEventRouter")
    config_model = EventRouterConfig
    description = "Debezium outbox: route outbox-table inserts as events to their topics."

    def __init__(self, config: EventRouterConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.placements = parse_placements(config.fields_additional_placement)
        self.headers_only = not any(p.placement == "envelope" for p in self.placements)
        self.regex = java_regex(config.route_topic_regex)
        self.replacement = java_replacement(config.route_topic_replacement)
        self.json = JsonSchemaData(config.json_null_behavior, config.json_empty_array_behavior)
        self._schemas: dict[tuple[Schema, Schema, str, int | None], Schema] = {}

    def apply(self, record: R) -> R | None:
        if record.value is None:
            return None
        if not is_envelope(record):
            return record
        event = require_struct_value(record.value, "Detect Debezium Operation")
        op = event.get("op")
        if op == "d":
            return None
        if op == "u":
            self._unexpected_update(record)
            return None
        envelope = record.value_schema
        assert envelope is not None
        row = require_struct_value(event.get("after"), "Read Outbox Event")
        after_field = envelope.field("after")
        assert after_field is not None
        row_schema = after_field.schema
        c = self.config
        payload_field = row_schema.field(c.field_event_payload)
        if payload_field is None:
            raise DataError(f"Unable to find payload field {c.field_event_payload} in event")
        id_field = row_schema.field(c.field_event_id)
        if id_field is None:
            raise DataError(f"Unable to find event-id field {c.field_event_id} in event")
        payload, payload_schema = row.get(c.field_event_payload), payload_field.schema
        if c.expand_json_payload:
            payload, payload_schema = self._expanded(record, payload, payload_schema)
        routed = string_field(row, row_schema, c.route_by_field)
        headers = [*record.headers, Header("id", row.get(c.field_event_id), id_field.schema)]
        value_schema: Schema | None = payload_schema
        value: Any = payload
        envelope_value: dict[str, Any] = {"payload": payload}
        if not self.headers_only:
            value_schema = self._value_schema(payload_schema, row_schema, row, routed or "")
            value = envelope_value
        partition = record.partition
        for extra in self.placements:
            found = row_schema.field(extra.field)
            if found is None:
                if c.additional_missing == "ignore":
                    continue
                raise DataError(f"Unable to find field {extra.field} in event")
            if extra.placement == "envelope":
                envelope_value[extra.alias] = row.get(extra.field)
            elif extra.placement == "header":
                headers.append(Header(extra.alias, row.get(extra.field), found.schema))
            else:
                partition = row.get(extra.field)
        if c.route_tombstone_on_empty_payload and (
            payload is None or (isinstance(payload, str) and not payload.strip())
        ):
            value_schema, value = None, None
        key_field = row_schema.field(c.field_event_key)
        if key_field is None:
            raise DataError(f"{c.field_event_key} is not a valid field name")
        topic = self._topic(routed)
        return record.replace(
            topic=topic, partition=partition, key=row.get(c.field_event_key),
            key_schema=key_field.schema, value=value, value_schema=value_schema,
            timestamp=self._timestamp(event, row, row_schema), headers=tuple(headers),
        )  # fmt: skip

    def _unexpected_update(self, record: R) -> None:
        behavior = self.config.op_invalid_behavior
        if behavior == "fatal":
            raise DataError(f"Unexpected update message received on {record.topic}, fail.")
        level = logging.WARNING if behavior == "warn" else logging.ERROR
        log.log(level, "unexpected update message received and ignored",
                extra={"topic": record.topic})  # fmt: skip

    def _expanded(self, record: R, payload: Any, schema: Schema) -> tuple[Any, Schema]:
        if payload is None:
            return payload, schema
        if not isinstance(payload, str):
            log.warning("expand JSON payload is on but the payload is not a string",
                        extra={"topic": record.topic})  # fmt: skip
            return payload, schema
        try:
            if not payload.startswith(("{", "[")):
                raise JsonSchemaError(f"unable to parse payload starting with {payload[:1]!r}")
            document = json.loads(payload)
            inferred = self.json.schema(self.config.field_event_payload, document)
            if inferred is None:
                raise JsonSchemaError("the payload gives no schema")
            return self.json.value(document, inferred), inferred
        except (ValueError, JsonSchemaError) as exc:
            log.warning("JSON expansion failed: %s", exc, extra={"topic": record.topic})
            return payload, schema

    def _value_schema(
        self, payload: Schema, row_schema: Schema, row: dict[str, Any], routed: str
    ) -> Schema:
        version: int | None = None
        if self.config.field_schema_version is not None:
            version = row.get(self.config.field_schema_version)
        key = (payload, row_schema, routed, version)
        cached = self._schemas.get(key)
        if cached is not None:
            return cached
        fields = [SchemaField("payload", payload)]
        for extra in self.placements:
            found = row_schema.field(extra.field)
            if extra.placement == "envelope" and found is not None:
                fields.append(SchemaField(extra.alias, found.schema))
        name = row_schema.name
        if name is not None and "." in name:
            head, _, tail = name.rpartition(".")
            name = f"{head}.{routed}.{tail}"
        else:
            name = f"{routed}.{name}" if name else routed
        if len(self._schemas) >= 10_000:
            self._schemas.clear()
        built = self._schemas[key] = Schema(Type.STRUCT, name=name, version=version,
                                            fields=tuple(fields))  # fmt: skip
        return built

    def _topic(self, routed: str | None) -> str:
        value = routed or ""
        match = self.regex.fullmatch(value)
        return match.expand(self.replacement) if match else value

    def _timestamp(self, event: dict[str, Any], row: dict[str, Any], schema: Schema) -> int | None:
        name = self.config.field_event_timestamp
        if name is None:
            return event.get("ts_ms")
        field = schema.field(name)
        if field is None:
            raise DataError(f"Unable to find timestamp field {name} in event")
        value = row.get(name)
        if value is None:
            return event.get("ts_ms")
        divisor = _TIMESTAMP_DIVISORS.get(field.schema.name or "")
        if divisor is None or field.schema.type is not Type.INT64:
            raise DataError(f"Unsupported field type {field.schema.name or field.schema.type} "
                            "for event timestamp")  # fmt: skip
        return int(value) // divisor
