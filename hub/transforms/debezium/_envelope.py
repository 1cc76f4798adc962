"""What Debezium's transforms share: recognising change events, and Kafka's schema copying.

A record is a change event when its value schema's name ends with ``.Envelope`` (Debezium's
``SmtManager.isValidEnvelope``); anything else (heartbeats, transaction metadata, schemaless
records) passes the transforms unchanged. Values are plain dicts whose keys are the schema's
fields (``hub.api.schema``).
"""

from __future__ import annotations

from typing import Any

from hub.api import ConnectRecord, DataError, Field, Schema, Type


def is_envelope(record: ConnectRecord) -> bool:
    schema = record.value_schema
    return schema is not None and schema.name is not None and schema.name.endswith(".Envelope")


def copy_basics(source: Schema, fields: tuple[Field, ...], optional: bool = False) -> Schema:
    """Kafka's ``SchemaUtil.copySchemaBasics``: type, name, version, doc and parameters, not
    ``optional`` or the default (so a copied struct is required unless said otherwise)."""
    return Schema(
        source.type,
        optional=optional,
        name=source.name,
        version=source.version,
        doc=source.doc,
        parameters=source.parameters,
        fields=fields,
        key=source.key if source.type is Type.MAP else None,
        value=source.value if source.type in (Type.MAP, Type.ARRAY) else None,
    )


def require_struct_value(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(
            f"Only Struct objects supported for [{purpose}], found: {type(value).__name__}"
        )
    return value


def string_field(value: dict[str, Any], schema: Schema, name: str) -> str | None:
    """Connect's ``Struct.getString``: the field must exist and hold a string (or null)."""
    field = schema.field(name)
    if field is None:
        raise DataError(f"{name} is not a valid field name")
    got = value.get(name)
    if got is not None and not isinstance(got, str):
        raise DataError(f"field {name} is not a string (it is {type(got).__name__})")
    return got
