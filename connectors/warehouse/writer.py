"""Applies one batch of row changes inside one transaction, table by table.

Order within a table is kept where it matters and relaxed where it cannot:

* With a key and ``insert.mode`` upsert/update, changes collapse per key (the last write or
  delete of each key wins): keys are independent, so applying the survivors in any order
  gives the same table as applying every change in order, and ON CONFLICT never sees a key
  twice in one statement.
* Without a key, or with ``insert.mode=insert``, changes run as consecutive runs of the same
  action in record order (a duplicate key on insert is then an error, as it should be).
* A truncate is a barrier: what came before it is applied, then the table is emptied.

Rows of one run are grouped by shape (one column list), since a statement binds one list.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

import sqlalchemy as sa

from connectors.warehouse import sql
from connectors.warehouse.rows import RowChange, RowRun, expand, rows_of
from connectors.warehouse.tables import Tables

log = logging.getLogger(__name__)

_TABLE, _ACTION = attrgetter("table"), attrgetter("action")
_SHAPE, _ROW = attrgetter("shape"), attrgetter("row")


def _unique(rows: list[dict[str, Any]], pk: Sequence[str]) -> bool:
    """No key twice among ``rows`` (then collapsing them would change nothing); found in C."""
    try:
        return len(set(map(itemgetter(*pk), rows))) == len(rows)
    except TypeError:  # an unhashable key value: the general path says what is wrong
        return False


class BatchWriter:
    def __init__(self, tables: Tables, insert_mode: str, batch_size: int) -> None:
        self.tables, self.insert_mode, self.batch_size = tables, insert_mode, batch_size

    def apply(self, conn: sa.Connection, changes: Sequence[RowChange | RowRun],
              binary: sql.BinaryCopy | None = None) -> None:  # fmt: skip
        """``binary``: a binary COPY planned for every change's row (``sql.binary_copy``),
        used if a COPY gets exactly those rows (one table and shape, no key collapsed).

        A batch holding runs (``RowRun``) that is all writes of one table and shape, without
        a key that repeats (the usual bulk insert, or upsert of distinct keys), goes to the
        statement as its rows, with no object per row; any other batch holding runs is
        expanded into single changes first."""
        sql.begin(conn)
        if not changes:
            return
        info = conn.info  # held: after a lost connection, conn.info itself raises
        if binary is None:
            info.pop("sluice_copy_binary", None)
        else:
            info["sluice_copy_binary"] = binary
        try:
            n = len(changes)
            first = changes[0]
            runs = RowRun in set(map(type, changes))
            rows = None
            if runs and list(map(_TABLE, changes)).count(first.table) == n and \
                    list(map(id, map(_SHAPE, changes))).count(id(first.shape)) == n and \
                    list(map(_ACTION, changes)).count("write") == n:  # fmt: skip
                rows = rows_of(changes)
                pk = first.shape.pk
                if pk and self.insert_mode != "insert" and not _unique(rows, pk):
                    rows = None  # keys to collapse: change by change below
            if rows is not None:
                self._rows(conn, self.tables.table(first.table), "write", rows, first.shape.pk)
            else:
                self._apply(conn, expand(changes) if runs else changes)  # type: ignore[arg-type]
        finally:
            info.pop("sluice_copy_binary", None)

    def _apply(self, conn: sa.Connection, changes: Sequence[RowChange]) -> None:
        by_table: dict[str, list[RowChange]] | None = None
        first = changes[0]
        # The usual batch, one table and no truncate, is found in C (no loop per change).
        if list(map(_TABLE, changes)).count(first.table) == len(changes):
            actions = list(map(_ACTION, changes))
            if "truncate" not in actions:
                self._segment(conn, self.tables.table(first.table), list(changes), actions)
                return
            by_table = {first.table: list(changes)}
        if by_table is None:
            by_table = {}
            for change in changes:
                by_table.setdefault(change.table, []).append(change)
        for name, items in by_table.items():
            table = self.tables.table(name)
            segment: list[RowChange] = []
            for change in items:
                if change.action == "truncate":
                    self._segment(conn, table, segment)
                    segment = []
                    sql.truncate(conn, table)
                else:
                    segment.append(change)
            self._segment(conn, table, segment)

    def _segment(self, conn: sa.Connection, table: sa.Table, changes: list[RowChange],
                 actions: list[str] | None = None) -> None:  # fmt: skip
        """``actions``: each change's action, when the caller has them."""
        if not changes:
            return
        pk = changes[-1].shape.pk
        if pk and self.insert_mode != "insert":
            last: dict[Any, RowChange] = {}
            if len(pk) == 1:
                name = pk[0]
                for change in changes:
                    last[change.row[name]] = change
            else:
                for change in changes:
                    row = change.row
                    last[tuple([row[n] for n in pk])] = change
            deletes = [c for c in last.values() if c.action == "delete"]
            writes = [c for c in last.values() if c.action == "write"]
            self._run(conn, table, "delete", deletes)
            self._run(conn, table, "write", writes)
            return
        if actions is None:
            actions = list(map(_ACTION, changes))
        if actions.count(changes[0].action) == len(changes):  # one run: the usual case
            self._run(conn, table, changes[0].action, changes)
            return
        run: list[RowChange] = []
        for change in changes:
            if run and run[-1].action != change.action:
                self._run(conn, table, run[-1].action, run)
                run = []
            run.append(change)
        self._run(conn, table, run[-1].action, run)

    def _run(self, conn: sa.Connection, table: sa.Table, action: str,
             changes: list[RowChange]) -> None:  # fmt: skip
        if not changes:
            return
        # One shape -> one column list in one order (see rows.Shape), so rows group by it.
        groups: dict[int, list[dict[str, Any]]] = {}
        shapes = list(map(id, map(_SHAPE, changes)))
        if shapes.count(shapes[0]) == len(changes):  # one shape (by identity), found in C
            groups[shapes[0]] = list(map(_ROW, changes))
        else:
            for change in changes:
                group = groups.get(id(change.shape))
                if group is None:
                    group = groups[id(change.shape)] = []
                group.append(change.row)
        pk = changes[-1].shape.pk
        for rows in groups.values():
            self._rows(conn, table, action, rows, pk)

    def _rows(self, conn: sa.Connection, table: sa.Table, action: str,
              rows: list[dict[str, Any]], pk: Sequence[str]) -> None:  # fmt: skip
        """One statement's worth: ``rows`` of one shape, keys already collapsed."""
        size = self.batch_size
        if action == "delete":
            sql.delete(conn, table, rows, pk, size)
        elif self.insert_mode == "upsert" and pk:
            sql.upsert(conn, table, rows, pk, size)
        elif self.insert_mode == "update" and pk:
            sql.update(conn, table, rows, pk, size)
        else:
            sql.insert(conn, table, rows, size)
