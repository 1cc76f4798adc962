"""Destination tables: find, create (``auto.create``) and widen (``auto.evolve``) them.

Each table is reflected once and kept as a SQLAlchemy ``Table``; a record shape is checked
against it once (cached by shape), so DDL and reflection happen only when something new
appears. DDL runs in its own transaction before the data transaction of a batch: a failed
batch is retried against a table that already has the columns it needs.

Rules (Confluent's): a missing table without ``auto.create`` fails the task (it is a setup
problem, not a bad record); a field with no column is added as a nullable column with
``auto.evolve`` and otherwise makes that record a DataError; columns are never dropped or
retyped. ``upsert``/``update`` need a primary key or unique index on the key columns.

Names: ``table.name.format`` after ``${topic}`` substitution; ``a.b`` is schema ``a``, table
``b``, and with three or more parts the last two count (Debezium topics are
``prefix.schema.table``). SQLite has no schemas: its table name keeps the dots as ``_``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.schema import SchemaItem

from connectors.warehouse._reflect import has_table, reflect
from connectors.warehouse.rows import RowChange, Shape, where
from hub.api import ConnectError, DataError

log = logging.getLogger(__name__)


def split_name(name: str, dialect: str) -> tuple[str | None, str]:
    """(schema, table) for a formatted table name on this dialect."""
    parts = [p for p in name.split(".") if p]
    if dialect == "sqlite" or len(parts) == 1:
        return None, "_".join(parts)
    return parts[-2], parts[-1]


class Tables:
    """The tables one task writes; all calls from the task thread."""

    def __init__(self, engine: sa.Engine, connect: Callable[[], sa.Connection], *,
                 auto_create: bool, auto_evolve: bool, needs_key: bool,
                 ident: str) -> None:  # fmt: skip
        self.engine = engine
        self._connect = connect  # the task's one connection: DDL and data never interleave
        self.auto_create, self.auto_evolve, self.needs_key = auto_create, auto_evolve, needs_key
        self.ident = ident
        self.dialect = engine.dialect.name
        self._tables: dict[str, sa.Table] = {}
        self._checked: dict[tuple[str, int], Shape] = {}  # shapes known to fit; holds them alive

    def table(self, name: str) -> sa.Table:
        return self._tables[name]

    def ensure(self, change: RowChange) -> sa.Table | None:
        """The table for ``change``, created or widened as configured; DataError when the
        record cannot fit it, ConnectError when the table itself is missing or unusable.
        None for a delete or truncate of a table that does not exist: nothing to do."""
        name, shape = change.table, change.shape
        table = self._tables.get(name)
        if table is not None and (name, id(shape)) in self._checked:
            return table
        if table is None:
            table = self._load(name, shape, creates=change.action == "write")
            if table is None:
                return None
        missing = [c for c in shape.columns if c.name not in table.c]
        if missing and not self.auto_evolve:
            raise DataError(f"record {where(change.record)}: table {table.fullname} has no "
                            f"column(s) {[c.name for c in missing]}; add them or set "
                            "auto.evolve=true")  # fmt: skip
        if missing:
            table = self._evolve(table, shape)
        if change.action != "truncate" and shape.pk and self.needs_key:
            self._check_key(table, shape.pk)
        self._checked[(name, id(shape))] = shape
        return table

    def _load(self, name: str, shape: Shape, creates: bool) -> sa.Table | None:
        schema, table_name = split_name(name, self.dialect)
        conn = self._connect()
        with conn.begin():
            if has_table(conn, table_name, schema):
                table = reflect(conn, table_name, schema)
            elif not creates:
                return None
            elif not self.auto_create:
                raise ConnectError(f"[{self.ident}] table {name} does not exist: create it or "
                                   "set auto.create=true")  # fmt: skip
            else:
                if schema is not None:
                    conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
                items: list[SchemaItem] = [
                    sa.Column(
                        c.name,
                        c.type,
                        nullable=c.nullable and c.name not in shape.pk,
                        autoincrement=False,
                        quote=True,
                    )
                    for c in shape.columns
                ]
                if shape.pk:
                    items.append(sa.PrimaryKeyConstraint(*shape.pk))
                table = sa.Table(table_name, sa.MetaData(), *items, schema=schema)
                table.create(conn)
                log.info("[%s] created table %s (%d columns, key %s)", self.ident,
                         table.fullname, len(shape.columns), list(shape.pk))  # fmt: skip
        self._tables[name] = table
        return table

    def _evolve(self, table: sa.Table, shape: Shape) -> sa.Table:
        preparer = self.engine.dialect.identifier_preparer
        conn = self._connect()
        with conn.begin():
            current = reflect(conn, table.name, table.schema)
            for col in shape.columns:
                if col.name in current.c:
                    continue
                kind = col.type.compile(dialect=self.engine.dialect)
                conn.execute(sa.text(f"ALTER TABLE {preparer.format_table(current)} ADD COLUMN "
                                     f"{preparer.quote_identifier(col.name)} {kind}"))  # fmt: skip
                log.info("[%s] table %s: added nullable column %s %s", self.ident,
                         current.fullname, col.name, kind)  # fmt: skip
            table = reflect(conn, table.name, table.schema)
        for key, value in list(self._tables.items()):
            if value.fullname == table.fullname:
                self._tables[key] = table
        self._checked = {k: v for k, v in self._checked.items() if k[0] not in self._tables
                         or self._tables[k[0]] is not table}  # fmt: skip
        return table

    def _check_key(self, table: sa.Table, pk: tuple[str, ...]) -> None:
        keys = [tuple(c.name for c in table.primary_key.columns)]
        keys += [tuple(c.name for c in ix.columns) for ix in table.indexes if ix.unique]
        keys += [tuple(c.name for c in uc.columns) for uc in table.constraints
                 if isinstance(uc, sa.UniqueConstraint)]  # fmt: skip
        if not any(k and set(k) == set(pk) for k in keys):
            raise ConnectError(
                f"[{self.ident}] table {table.fullname} has no primary key or "
                f"unique index on {list(pk)}, which upsert/update/delete by key "
                "need; add one or drop the table and let auto.create make it"
            )

    def dispose(self) -> None:
        self._tables.clear()
        self._checked.clear()
