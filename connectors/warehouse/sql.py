"""Statements per dialect: bulk insert, native upsert, update and delete by key.

* Plain inserts on PostgreSQL go through ``COPY ... FROM STDIN`` (psycopg 3's copy), the
  fastest path the server has; elsewhere ``executemany`` in ``batch.size`` chunks.
* Upserts use the dialect's own ``INSERT ... ON CONFLICT (key) DO UPDATE``: on PostgreSQL a
  COPY into a temporary staging table and one ``INSERT ... SELECT ... ON CONFLICT`` (no
  per-row statement at all), after an optimistic plain COPY under a savepoint (all keys new,
  the common case for CDC snapshots and appends); on DuckDB one INSERT ... SELECT (ON
  CONFLICT) from the rows as an Arrow table; on SQLite ``executemany`` of the ON CONFLICT
  insert. DuckDB plain inserts take the same Arrow path.
  Other dialects fall back to UPDATE, then INSERT of the rows the UPDATE did not find.
* ``update`` mode: UPDATE ... WHERE key, rows that match nothing are ignored (Confluent's).
* Deletes: DELETE ... WHERE key, ``executemany``; truncate events: DELETE of every row (it
  stays inside the batch's transaction, which TRUNCATE is not on every database).

All functions run inside the caller's transaction and never commit. Within one call rows
must all have the same columns (the caller groups them); ON CONFLICT cannot touch one row
twice in a statement, so the caller collapses repeated keys first (last change wins).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import repeat
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

Rows = Sequence[dict[str, Any]]


def _chunks(rows: Rows, size: int) -> Iterator[Rows]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def begin(conn: sa.Connection) -> None:
    """Called at the start of every transaction the writer runs."""
    conn.info["sluice_stages_used"] = set()


def insert(conn: sa.Connection, table: sa.Table, rows: Rows, batch_size: int) -> None:
    if conn.dialect.name == "postgresql" and _psycopg(conn):
        _copy(conn, table, rows)
        return
    if conn.dialect.name == "duckdb" and _duck_arrow(conn, table, rows, (), None):
        return
    for chunk in _chunks(rows, batch_size):
        conn.execute(table.insert(), list(chunk))


def _psycopg(conn: sa.Connection) -> bool:
    return conn.dialect.driver == "psycopg"


def _copy(conn: sa.Connection, table: sa.Table, rows: Rows) -> None:
    _copy_into(conn, conn.dialect.identifier_preparer.format_table(table), list(rows[0]), rows)


def _copy_into(conn: sa.Connection, target: str, names: list[str], rows: Rows) -> None:
    """psycopg 3 ``COPY target (names) FROM STDIN``; every row has ``names`` in that order.

    Rows are formatted here, in the thread that holds the connection, a block at a time:
    the server parses one block while the next is formatted, as with psycopg's own
    ``write_row``, but with no Python code per row. Binary when the caller planned it for
    exactly these rows (``BinaryCopy`` in ``conn.info``), else text."""
    preparer = conn.dialect.identifier_preparer
    cols = ", ".join(preparer.quote_identifier(n) for n in names)
    raw = conn.connection.driver_connection
    assert raw is not None
    stmt = f"COPY {target} ({cols}) FROM STDIN"
    plan: BinaryCopy | None = conn.info.get("sluice_copy_binary")
    if plan is not None and plan.first is rows[0] and plan.count == len(rows):
        with raw.cursor() as cur, cur.copy(stmt + " (FORMAT BINARY)") as copy:  # type: ignore[attr-defined]
            _stream(copy, rows, plan.transformer(), _format_row_binary, binary=True)
        return
    with raw.cursor() as cur, cur.copy(stmt) as copy:  # type: ignore[attr-defined]
        transformer = getattr(getattr(copy, "formatter", None), "transformer", None)
        if _format_row_text is None or transformer is None:  # pragma: no cover - other psycopg
            write = copy.write_row
            for row in rows:
                write(tuple(row.values()))
            return
        _stream(copy, rows, transformer, _format_row_text, binary=False)


def _stream(copy: Any, rows: Rows, transformer: Any, fmt: Any, binary: bool) -> None:
    """What ``write_row`` does per row (psycopg's C formatter, same adapters), ``_CHUNK``
    rows per C-level pass, and one socket write per ~``_COPY_BLOCK`` bytes: each write may
    wait for the server and so give up the GIL, and taking it back from a busy thread costs
    up to a switch interval. A value the binary dumpers refuse raises ``BinaryRefused``
    (the COPY, and with it the transaction, is then aborted)."""
    block = bytearray(_BINARY_SIGNATURE) if binary else bytearray()
    values = dict.values
    for i in range(0, len(rows), _CHUNK):
        chunk = rows[i : i + _CHUNK]
        k = len(chunk)
        try:
            deque(map(fmt, map(tuple, map(values, chunk)), repeat(transformer, k),
                      repeat(block, k)), 0)  # fmt: skip
        except (TypeError, ValueError, OverflowError) as exc:
            if not binary:
                raise
            raise BinaryRefused(str(exc)) from exc
        if len(block) >= _COPY_BLOCK:
            copy.write(block)
            block = bytearray()
    if binary:
        block += _BINARY_TRAILER
    if block:
        copy.write(block)


_CHUNK = 128  # rows per formatting pass
_COPY_BLOCK = 1 << 16  # bytes per socket write: small enough that the server starts at once


class BinaryRefused(Exception):
    """A value in a planned binary COPY that its column's binary dumper does not take (an
    int out of int8's range, a non-str in a text column): the caller writes the same rows
    again as text, where the server decides."""


def copy_transformer(conn: sa.Connection) -> Any | None:
    """A psycopg Transformer with the adapters the task's connections use, for formatting
    binary COPY rows (``binary_copy``); None where that does not
    apply: not psycopg, a client encoding other than UTF-8 (the Transformer has no
    connection, so it writes UTF-8), or another psycopg without the formatter."""
    if conn.dialect.name != "postgresql" or not _psycopg(conn) or _format_row_text is None:
        return None
    raw: Any = conn.connection.driver_connection
    if raw is None or raw.info.encoding != "utf-8":
        return None
    from psycopg.adapt import Transformer

    adapters = getattr(conn.dialect, "_psycopg_adapters_map", None)
    return Transformer(adapters) if adapters is not None else Transformer()


@dataclass(frozen=True, slots=True)
class BinaryCopy:
    """Binary COPY planned for ``count`` rows starting with the row object ``first``, whose
    columns have the binary types ``kinds``; ``adapters``: the connection's adapters map."""

    first: dict[str, Any]
    count: int
    kinds: tuple[str, ...]
    adapters: Any

    def transformer(self) -> Any:
        from psycopg.adapt import Transformer
        from psycopg.pq import Format

        tx = Transformer(self.adapters)
        tx.set_dumper_types([tx.adapters.types[k].oid for k in self.kinds], Format.BINARY)
        return tx


# Column types (as SQLAlchemy compiles them for PostgreSQL) that binary COPY is used for, and
# the Python types their values must have for it. Binary COPY has no per-field type: the
# server reads each field with its column's own receive function, so the bytes must be
# exactly that type's. Only types whose binary dumpers refuse what text COPY would refuse:
# psycopg's int2/int4 dumpers truncate out-of-range ints and float4 turns 1e300 into
# Infinity (the server rejects both as text), so those columns, like all others, go as text.
_BINARY_KINDS = {"BIGINT": "int8", "DOUBLE PRECISION": "float8", "TEXT": "text",
                 "BOOLEAN": "bool"}  # fmt: skip
_BINARY_VALUES: dict[str, frozenset[type]] = {
    "int8": frozenset({int}), "float8": frozenset({float, int}), "text": frozenset({str}),
    "bool": frozenset({bool}),
}  # fmt: skip
_NONE = type(None)


def binary_kinds(table: sa.Table, names: Sequence[str], dialect: Any) -> tuple[str, ...] | None:
    """The binary COPY type of each of ``names`` in ``table``, or None if one has none."""
    kinds = []
    for name in names:
        column = table.c.get(name)
        if column is None:
            return None
        compiled = column.type.compile(dialect=dialect).upper()
        kind = _BINARY_KINDS.get(compiled) or ("text" if compiled.startswith("VARCHAR") else None)
        if kind is None:
            return None
        kinds.append(kind)
    return tuple(kinds)


def binary_copy(
    rows: Rows,
    transformer: Any,
    kinds: tuple[str, ...] | None,
    typed: Mapping[str, frozenset[type]] | None = None,
) -> BinaryCopy | None:
    """A binary COPY plan for ``rows`` (columns in the first row's order) when ``kinds``
    (``binary_kinds``) is given and no value has a Python type the binary dumpers would
    write although text COPY refuses it; None: text. ``typed``: columns whose values' types
    a schema already gives (``rows.Shape.typed``); only the others are looked at. Checked in
    the task's thread, before the rows go to the writer (the dumpers' own refusals surface
    while streaming)."""
    if kinds is None or not rows or not _binary_fits(rows, kinds, typed or {}):
        return None
    return BinaryCopy(rows[0], len(rows), kinds, transformer.adapters)


def _binary_fits(rows: Rows, kinds: tuple[str, ...],
                 typed: Mapping[str, frozenset[type]]) -> bool:  # fmt: skip
    """No value the binary dumpers would take but text COPY would refuse: strictly bools in
    boolean columns (the dumper takes any truthy value), ints and floats in numeric ones (a
    bool would become 1; the float8 dumper also takes a Decimal, which text COPY takes as
    the same number). Text columns need no pass: the dumper refuses anything but str, and
    then the COPY goes as text (``BinaryRefused``)."""
    for name, kind in zip(rows[0], kinds, strict=True):
        known = typed.get(name)
        if kind != "text" and (known is None or not known <= _BINARY_VALUES[kind]):
            column = set(map(type, map(itemgetter(name), rows)))
            column.discard(_NONE)
            if kind == "float8":
                column.discard(Decimal)
            if not column <= _BINARY_VALUES[kind]:
                return False
    return True


try:  # psycopg 3's row formatters (C with psycopg[binary]); internal, hence the fallback
    from psycopg._copy_base import format_row_binary as _format_row_binary
    from psycopg._copy_base import format_row_text as _format_row_text
except ImportError:  # pragma: no cover
    _format_row_text = _format_row_binary = None
_BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, no extension
_BINARY_TRAILER = b"\xff\xff"


def upsert(conn: sa.Connection, table: sa.Table, rows: Rows, pk: Sequence[str],
           batch_size: int) -> None:  # fmt: skip
    names = list(rows[0])
    others = [n for n in names if n not in pk]
    dialect = conn.dialect.name
    if dialect == "postgresql" and _psycopg(conn):
        if not _optimistic_copy(conn, table, rows):
            _pg_staged_upsert(conn, table, rows, names, pk, others)
        return
    if dialect == "duckdb" and _duck_arrow(conn, table, rows, pk, others):
        return
    if dialect in ("sqlite", "duckdb", "postgresql"):
        module = sqlite if dialect == "sqlite" else postgresql  # duckdb-engine is PG-based
        stmt = module.insert(table)
        if others:
            stmt = stmt.on_conflict_do_update(
                index_elements=list(pk), set_={n: stmt.excluded[n] for n in others}
            )
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=list(pk))
        for chunk in _chunks(rows, batch_size):
            conn.execute(stmt, list(chunk))
        return
    for row in rows:  # portable fallback: one UPDATE, then INSERT if it found nothing
        if not others or _update_one(conn, table, row, pk, others) == 0:
            if not others and _exists(conn, table, row, pk):
                continue
            conn.execute(table.insert(), [row])


def _optimistic_copy(conn: sa.Connection, table: sa.Table, rows: Rows) -> bool:
    """Upserting keys that are all new is an insert: try a plain COPY under a savepoint.

    True when it worked. A unique violation rolls back to the savepoint (the rest of the
    transaction is kept) and the caller upserts; the table is then not tried again for
    ``_PESSIMISM`` batches, so a stream of updates pays for one failed COPY in a hundred.
    Other errors propagate: the upsert would fail on them too.
    """
    state: dict[str, int] = conn.info.setdefault("sluice_copy_skips", {})
    skips = state.get(table.fullname, 0)
    if skips > 0:
        state[table.fullname] = skips - 1
        return False
    try:
        with conn.begin_nested():
            _copy(conn, table, rows)
    except Exception as exc:
        orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
        if getattr(orig, "sqlstate", None) != "23505":  # unique_violation
            raise
        state[table.fullname] = _PESSIMISM
        return False
    return True


_PESSIMISM = 100


def _pg_staged_upsert(conn: sa.Connection, table: sa.Table, rows: Rows, names: list[str],
                      pk: Sequence[str], others: list[str]) -> None:  # fmt: skip
    """COPY into a temporary staging table, then one INSERT ... SELECT ... ON CONFLICT.

    The staging table (``LIKE`` the target, ``ON COMMIT DELETE ROWS``) is made once per
    connection and column list and emptied by the commit (or by a DELETE if it is used twice
    in one transaction), so a batch costs one COPY and one statement whatever its size. Keys
    are unique within ``rows`` (the caller collapses them).
    """
    preparer = conn.dialect.identifier_preparer
    stages: dict[tuple[str, tuple[str, ...]], str] = conn.info.setdefault("sluice_stages", {})
    key = (table.fullname, tuple(table.c.keys()))
    stage = stages.get(key)
    if stage is None:
        stage = stages[key] = f"sluice_stage_{len(stages)}"
        conn.exec_driver_sql(f"CREATE TEMPORARY TABLE {stage} (LIKE "
                             f"{preparer.format_table(table)}) ON COMMIT DELETE ROWS")  # fmt: skip
    used: set[str] = conn.info.setdefault("sluice_stages_used", set())
    if stage in used:  # a second use in this transaction: ON COMMIT has not emptied it yet
        conn.exec_driver_sql(f"DELETE FROM {stage}")
    used.add(stage)
    _copy_into(conn, stage, names, rows)
    cols = ", ".join(preparer.quote_identifier(n) for n in names)
    if others:
        action = "DO UPDATE SET " + ", ".join(
            f"{preparer.quote_identifier(n)} = EXCLUDED.{preparer.quote_identifier(n)}"
            for n in others
        )
    else:
        action = "DO NOTHING"
    conflict = ", ".join(preparer.quote_identifier(n) for n in pk)
    conn.exec_driver_sql(
        f"INSERT INTO {preparer.format_table(table)} ({cols}) SELECT {cols} FROM {stage} "
        f"ON CONFLICT ({conflict}) {action}"
    )


def _duck_arrow(conn: sa.Connection, table: sa.Table, rows: Rows, pk: Sequence[str],
                others: list[str] | None) -> bool:  # fmt: skip
    """DuckDB: the rows as one Arrow table, registered as a view, then one INSERT ... SELECT
    (with ON CONFLICT when ``others`` is not None): columnar, no per-row statement, where
    DuckDB's executemany runs one statement per row. False (nothing done) when Arrow cannot
    type a column (mixed Python types): the caller's executemany lets DuckDB judge each row.
    """
    import pyarrow as pa

    names = list(rows[0])
    try:
        batch = pa.table({n: [row[n] for row in rows] for n in names})
    except (pa.ArrowException, TypeError, ValueError):
        return False
    preparer = conn.dialect.identifier_preparer
    cols = ", ".join(preparer.quote_identifier(n) for n in names)
    sql = f"INSERT INTO {preparer.format_table(table)} ({cols}) SELECT {cols} FROM sluice_batch"
    if others is not None:
        conflict = ", ".join(preparer.quote_identifier(n) for n in pk)
        if others:
            sets = ", ".join(f"{preparer.quote_identifier(n)} = excluded."
                             f"{preparer.quote_identifier(n)}" for n in others)  # fmt: skip
            sql += f" ON CONFLICT ({conflict}) DO UPDATE SET {sets}"
        else:
            sql += f" ON CONFLICT ({conflict}) DO NOTHING"
    raw: Any = conn.connection.driver_connection
    # register() replaces the previous batch's view. Never unregister: with duckdb-engine an
    # unregister inside a transaction left later failed transactions unable to roll back.
    raw.register("sluice_batch", batch)
    conn.exec_driver_sql(sql)
    return True


def _key_clause(table: sa.Table, pk: Sequence[str]) -> Any:
    return sa.and_(*(table.c[n] == sa.bindparam(f"_k_{n}") for n in pk))


def _keyed(row: dict[str, Any], pk: Sequence[str]) -> dict[str, Any]:
    out = {n: v for n, v in row.items() if n not in pk}
    out.update({f"_k_{n}": row[n] for n in pk})
    return out


def _update_one(conn: sa.Connection, table: sa.Table, row: dict[str, Any], pk: Sequence[str],
                others: list[str]) -> int:  # fmt: skip
    stmt = table.update().where(_key_clause(table, pk)).values({n: sa.bindparam(n) for n in others})
    return conn.execute(stmt, _keyed(row, pk)).rowcount


def _exists(conn: sa.Connection, table: sa.Table, row: dict[str, Any], pk: Sequence[str]) -> bool:
    stmt = sa.select(sa.literal(1)).select_from(table).where(_key_clause(table, pk))
    return conn.execute(stmt, {f"_k_{n}": row[n] for n in pk}).first() is not None


def update(conn: sa.Connection, table: sa.Table, rows: Rows, pk: Sequence[str],
           batch_size: int) -> None:  # fmt: skip
    others = [n for n in rows[0] if n not in pk]
    if not others:
        return
    stmt = table.update().where(_key_clause(table, pk)).values({n: sa.bindparam(n) for n in others})
    for chunk in _chunks(rows, batch_size):
        conn.execute(stmt, [_keyed(row, pk) for row in chunk])


def delete(conn: sa.Connection, table: sa.Table, keys: Rows, pk: Sequence[str],
           batch_size: int) -> None:  # fmt: skip
    stmt = table.delete().where(_key_clause(table, pk))
    for chunk in _chunks(keys, batch_size):
        conn.execute(stmt, [{f"_k_{n}": key[n] for n in pk} for key in chunk])


def truncate(conn: sa.Connection, table: sa.Table) -> None:
    conn.execute(table.delete())
