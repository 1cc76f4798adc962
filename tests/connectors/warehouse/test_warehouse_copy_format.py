"""COPY data the task formats for PostgreSQL (sql.format_copy): binary only where it cannot
write what text COPY would refuse."""

from __future__ import annotations

import sqlalchemy as sa
from psycopg.adapt import Transformer
from sqlalchemy.dialects import postgresql

from connectors.warehouse import sql

TABLE = sa.Table("t", sa.MetaData(), sa.Column("i", sa.BigInteger()), sa.Column("f", sa.Double()),
                 sa.Column("s", sa.Text()), sa.Column("b", sa.Boolean()),
                 sa.Column("small", sa.Integer()))  # fmt: skip
KINDS = sql.binary_kinds(TABLE, ["i", "f", "s", "b"], postgresql.dialect())


def fmt(rows: list[dict[str, object]]) -> sql.Formatted:
    return sql.format_copy(rows, Transformer(), KINDS)


def test_binary_kinds_only_for_types_whose_dumpers_check_ranges() -> None:
    assert KINDS == ("int8", "float8", "text", "bool")
    assert sql.binary_kinds(TABLE, ["i", "small"], postgresql.dialect()) is None  # int4


def test_plain_values_go_binary() -> None:
    rows = [{"i": 1, "f": 0.5, "s": "a\tb", "b": True}, {"i": None, "f": 2, "s": "", "b": None}]
    out = fmt(rows)
    assert out.binary and out.first is rows[0] and out.count == 2
    assert out.data.startswith(b"PGCOPY\n\xff\r\n\x00") and out.data.endswith(b"\xff\xff")


def test_values_text_copy_would_refuse_go_as_text() -> None:
    for odd in ({"i": True}, {"f": False}, {"b": 1}, {"b": "t"}, {"s": 5}, {"i": 2**63}):
        rows = [{"i": 1, "f": 0.5, "s": "a", "b": True}, {"i": 2, "f": 1.5, "s": "b", "b": False,
                                                          **odd}]  # fmt: skip
        out = fmt(rows)
        assert not out.binary, odd
        assert out.data.split(b"\n")[0] == b"1\t0.5\ta\tt"


def test_a_decimal_is_binary_only_in_a_double_column() -> None:
    import decimal

    base = {"i": 1, "f": 0.5, "s": "a", "b": True}
    assert fmt([base, {**base, "f": decimal.Decimal("1.5")}]).binary
    assert not fmt([base, {**base, "b": decimal.Decimal("2")}]).binary
    assert not fmt([base, {**base, "i": decimal.Decimal("2")}]).binary
