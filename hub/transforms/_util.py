"""Helpers shared by the transforms: config list parsing, key/value targeting, schema caching."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator

from hub.api import ConnectRecord, DataError, Schema
from hub.api.schema import Field, Type

R = TypeVar("R", bound=ConnectRecord)
JAVA_PREFIX = "org.apache.kafka.connect.transforms."


def split_list(value: Any) -> Any:
    """Kafka Connect LIST config: a comma-separated string, items trimmed, empties dropped."""
    if value is None:
        return []
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


CommaList = Annotated[list[str], BeforeValidator(split_list)]


def java_aliases(name: str) -> tuple[str, ...]:
    return (JAVA_PREFIX + name,)


def operating(record: ConnectRecord, variant: str | None) -> tuple[Any, Schema | None]:
    """The (value, schema) a ``$Key``/``$Value`` transform works on."""
    if variant == "key":
        return record.key, record.key_schema
    return record.value, record.value_schema


def updated(record: R, variant: str | None, value: Any, schema: Schema | None) -> R:
    if variant == "key":
        return record.replace(key=value, key_schema=schema)
    return record.replace(value=value, value_schema=schema)


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(
            f"only dict values are supported without a schema for [{purpose}], "
            f"found {type(value).__name__}"
        )
    return value


def require_struct(value: Any, schema: Schema, purpose: str) -> dict[str, Any]:
    if schema.type is not Type.STRUCT or not isinstance(value, dict):
        raise DataError(
            f"only struct values are supported with a schema for [{purpose}], "
            f"found {schema.type.value} schema and {type(value).__name__} value"
        )
    return value


def copy_schema(schema: Schema, fields: list[Field], **changes: Any) -> Schema:
    """A struct schema like ``schema`` (name, version, doc, optional) with other fields."""
    return Schema(
        Type.STRUCT,
        optional=changes.get("optional", schema.optional),
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        fields=tuple(fields),
    )


class SchemaCache:
    """Input schema -> derived schema, by identity: records of a topic share schema objects.

    Entries keep their key schema alive, so an ``id`` is never reused while cached; the cache
    is cleared when full rather than tracking recency (cheap and good enough for a handful of
    live schemas per task).
    """

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._entries: dict[int, tuple[Schema, Schema]] = {}

    def get(self, schema: Schema, build: Callable[[Schema], Schema]) -> Schema:
        hit = self._entries.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        if len(self._entries) >= self.size:
            self._entries.clear()
        result = build(schema)
        self._entries[id(schema)] = (schema, result)
        return result
