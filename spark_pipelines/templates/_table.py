"""Applies micro-batch results to a warehouse table through SQLAlchemy, idempotently.

Each call deletes the rows whose keys it touches and inserts the new versions in one
transaction, so applying the same micro-batch twice (Spark replays foreachBatch after a crash)
leaves the same table. Tables are created on first use from the Spark schema. This writes from
the driver: meant for aggregates and change sets, not for bulk loads (use the warehouse sink
connector on a topic for those).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

log = logging.getLogger(__name__)

_TYPES: dict[str, Any] = {
    "string": sa.Text,
    "int": sa.Integer,
    "integer": sa.Integer,
    "bigint": sa.BigInteger,
    "long": sa.BigInteger,
    "double": sa.Float,
    "float": sa.Float,
    "boolean": sa.Boolean,
    "timestamp": sa.DateTime(timezone=True),
    "date": sa.Date,
}

_ENGINES: dict[str, sa.Engine] = {}


def engine(url: str) -> sa.Engine:
    if url not in _ENGINES:
        _ENGINES[url] = sa.create_engine(url)
    return _ENGINES[url]


def table_for(
    url: str, name: str, columns: Sequence[tuple[str, str]], key: Sequence[str]
) -> sa.Table:
    """The table, created with ``key`` as primary key when missing."""
    eng = engine(url)
    meta = sa.MetaData()
    cols = [
        sa.Column(c, _TYPES.get(t.lower(), sa.Text), primary_key=c in key, nullable=c not in key)
        for c, t in columns
    ]
    table = sa.Table(name, meta, *cols)
    meta.create_all(eng, checkfirst=True)
    return table


def apply(
    url: str,
    name: str,
    columns: Sequence[tuple[str, str]],
    key: Sequence[str],
    upserts: Sequence[dict[str, Any]],
    deletes: Sequence[dict[str, Any]] = (),
) -> None:
    """Deletes every touched key, then inserts ``upserts``; one transaction."""
    table = table_for(url, name, columns, key)
    touched = [tuple(r[k] for k in key) for r in (*upserts, *deletes)]
    with engine(url).begin() as conn:
        for chunk in _chunks(sorted(set(touched), key=repr), 500):
            cond = sa.or_(
                *(
                    sa.and_(*(table.c[k] == v for k, v in zip(key, vals, strict=True)))
                    for vals in chunk
                )
            )
            conn.execute(table.delete().where(cond))
        if upserts:
            conn.execute(table.insert(), [dict(r) for r in upserts])
    log.info("table %s: %d upserts, %d deletes", name, len(upserts), len(deletes))


def _chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def spark_columns(df: Any) -> list[tuple[str, str]]:
    """(name, simple type name) of each column of a Spark DataFrame."""
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
