"""Debezium change events read as row changes, without the ExtractNewRecordState transform.

A change event's value is an envelope ``{before, after, source, op, ts_ms, ...}`` (schema name
``<prefix>.<schema>.<table>.Envelope``); ``op`` is c(reate), u(pdate), r(ead: snapshot),
d(elete) or t(runcate). The sink applies c/u/r as writes of ``after`` (upserts by key with
``insert.mode=upsert``), d as a delete of the row whose key is the record key (with
``delete.enabled``), t as emptying the table (with ``truncate.enabled``). The tombstone
Debezium sends after a delete is a plain tombstone: a no-op delete when enabled.

Detection (``debezium.unwrap=auto``): the value is a dict with ``op`` in c/u/r/d/t and both
``before`` and ``after`` keys, and its schema (if any) is a struct with those fields. A user
table that happens to have such columns can set ``debezium.unwrap=false``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.api import Schema, Type

OPS = frozenset("curdt")


@dataclass(frozen=True, slots=True)
class Change:
    """``op`` plus the row image to write (``after``) and its struct schema, if known."""

    op: str
    row: dict[str, Any] | None
    row_schema: Schema | None


def is_envelope(value: Any, schema: Schema | None) -> bool:
    """True when ``value`` looks like a Debezium change event (see the module docstring)."""
    if not isinstance(value, dict) or value.get("op") not in OPS:
        return False
    if "before" not in value or "after" not in value:
        return False
    if schema is None:
        return True
    return schema.type is Type.STRUCT and schema.field("after") is not None


def unwrap(value: dict[str, Any], schema: Schema | None) -> Change:
    """The change an envelope describes; ``row`` is None for deletes and truncates."""
    op = value["op"]
    row_schema = None
    if schema is not None:
        after = schema.field("after")
        row_schema = after.schema if after is not None else None
    if op in ("d", "t"):
        return Change(op, None, row_schema)
    row = value.get("after")
    if not isinstance(row, dict):
        return Change(op, None, row_schema)
    return Change(op, row, row_schema)
