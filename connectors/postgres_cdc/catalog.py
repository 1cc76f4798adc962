"""Catalog reads on an ordinary (non-replication) connection: types, keys, nullability.

pgoutput's Relation message names columns and their type OIDs but not which are NOT NULL or
which form the primary key (with REPLICA IDENTITY FULL every column is flagged as key), and
it says nothing about enum labels or array element types. Debezium reads those from the
catalog too. The catalog shows the *current* definition, which can run ahead of the change
being decoded; the column list itself always comes from the Relation message, so at worst
an optional flag is stale, never a column.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from connectors.postgres_cdc.events import ColumnSpec
from connectors.postgres_cdc.types import TypeInfo

log = logging.getLogger(__name__)

_TYPE_SQL = """
SELECT t.oid, t.typname, t.typtype, t.typelem, t.typbasetype,
       coalesce(array_agg(e.enumlabel ORDER BY e.enumsortorder)
                FILTER (WHERE e.enumlabel IS NOT NULL), '{}')
FROM pg_type t LEFT JOIN pg_enum e ON e.enumtypid = t.oid
WHERE t.oid = %s GROUP BY t.oid
"""
_KEYS_SQL = """
SELECT a.attname, a.attnotnull,
       coalesce(a.attnum = ANY(i.indkey), false) AS is_pk
FROM pg_attribute a
LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
"""
_COLUMNS_SQL = """
SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull,
       coalesce(a.attnum = ANY(i.indkey), false) AS is_pk
FROM pg_attribute a
LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum
"""


class Catalog:
    """Cached catalog lookups; one thread (the task's) uses it."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._types: dict[int, TypeInfo | None] = {}

    def type_info(self, oid: int) -> TypeInfo | None:
        if oid not in self._types:
            row = self.conn.execute(_TYPE_SQL, (oid,)).fetchone()
            self._types[oid] = (
                TypeInfo(row[0], row[1], row[2], row[3], row[4], tuple(row[5])) if row else None
            )
        return self._types[oid]

    def keys_and_not_null(self, relid: int) -> tuple[set[str], set[str]]:
        """(primary-key column names, NOT NULL column names) of one table."""
        rows = self.conn.execute(_KEYS_SQL, (relid,)).fetchall()
        return {r[0] for r in rows if r[2]}, {r[0] for r in rows if r[1]}

    def columns(self, relid: int) -> list[ColumnSpec]:
        """The columns pgoutput would send (no dropped or generated ones), in order."""
        rows = self.conn.execute(_COLUMNS_SQL, (relid,)).fetchall()
        return [ColumnSpec(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def forget_types(self) -> None:
        """Drops cached type info (a Type message says a type changed, e.g. a new enum label)."""
        self._types.clear()
