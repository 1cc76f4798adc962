"""Table reflection, with a DuckDB path of our own.

SQLAlchemy reflects through each dialect's catalog queries; duckdb-engine inherits
PostgreSQL's, which ask for ``pg_catalog`` tables DuckDB does not have (``pg_collation``), so
for DuckDB columns come from ``information_schema.columns`` and keys from
``duckdb_constraints()``. Column types only need to be close enough for binding values.
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.schema import SchemaItem

_TYPE_NAME = re.compile(r"^([A-Za-z ]+)(?:\((\d+)(?:,\s*(\d+))?\))?")
_DUCK_TYPES: dict[str, sa.types.TypeEngine[Any]] = {
    "VARCHAR": sa.Text(), "BIGINT": sa.BigInteger(), "INTEGER": sa.Integer(),
    "SMALLINT": sa.SmallInteger(), "TINYINT": sa.SmallInteger(), "DOUBLE": sa.Double(),
    "FLOAT": sa.REAL(), "BOOLEAN": sa.Boolean(), "BLOB": sa.LargeBinary(), "DATE": sa.Date(),
    "TIME": sa.Time(), "TIMESTAMP": sa.DateTime(),
    "TIMESTAMP WITH TIME ZONE": sa.DateTime(timezone=True), "HUGEINT": sa.Numeric(38, 0),
}  # fmt: skip


def has_table(conn: sa.Connection, name: str, schema: str | None) -> bool:
    if conn.dialect.name != "duckdb":
        return sa.inspect(conn).has_table(name, schema=schema)
    sql = ("SELECT 1 FROM information_schema.tables WHERE table_name = :t "
           "AND table_schema = coalesce(:s, current_schema())")  # fmt: skip
    return conn.execute(sa.text(sql), {"t": name, "s": schema}).first() is not None


def reflect(conn: sa.Connection, name: str, schema: str | None) -> sa.Table:
    if conn.dialect.name != "duckdb":
        return sa.Table(name, sa.MetaData(), schema=schema, autoload_with=conn)
    params = {"t": name, "s": schema}
    columns = conn.execute(sa.text(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = :t AND table_schema = coalesce(:s, current_schema()) "
        "ORDER BY ordinal_position"), params).all()  # fmt: skip
    keys = conn.execute(sa.text(
        "SELECT constraint_type, constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = :t AND schema_name = coalesce(:s, current_schema()) "
        "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"), params).all()  # fmt: skip
    items: list[SchemaItem] = [
        sa.Column(
            col, _duck_type(kind), nullable=nullable == "YES", autoincrement=False, quote=True
        )
        for col, kind, nullable in columns
    ]
    for kind, names in keys:
        if kind == "PRIMARY KEY":
            items.append(sa.PrimaryKeyConstraint(*names))
        else:
            items.append(sa.UniqueConstraint(*names))
    return sa.Table(name, sa.MetaData(), *items, schema=schema)


def _duck_type(text: str) -> sa.types.TypeEngine[Any]:
    match = _TYPE_NAME.match(text)
    base = match.group(1).strip().upper() if match else text.upper()
    if base in ("DECIMAL", "NUMERIC") and match and match.group(2):
        return sa.Numeric(int(match.group(2)), int(match.group(3) or 0))
    return _DUCK_TYPES.get(base, sa.types.NullType())
