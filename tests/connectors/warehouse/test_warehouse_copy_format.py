"""Binary COPY on PostgreSQL (sql.binary_copy plans it, the writer thread streams it): binary
only where it cannot write what text COPY would refuse, and a value a binary dumper refuses
while streaming makes the batch go again as text, losing nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from psycopg.adapt import Transformer
from sqlalchemy.dialects import postgresql

from connectors.warehouse import sql
from tests.connectors.warehouse.helpers import Target, rec

TABLE = sa.Table("t", sa.MetaData(), sa.Column("i", sa.BigInteger()), sa.Column("f", sa.Double()),
                 sa.Column("s", sa.Text()), sa.Column("b", sa.Boolean()),
                 sa.Column("small", sa.Integer()))  # fmt: skip
KINDS = sql.binary_kinds(TABLE, ["i", "f", "s", "b"], postgresql.dialect())
BASE = {"i": 1, "f": 0.5, "s": "a", "b": True}


def plan(rows: list[dict[str, object]]) -> sql.BinaryCopy | None:
    return sql.binary_copy(rows, Transformer(), KINDS)


def test_binary_kinds_only_for_types_whose_dumpers_check_ranges() -> None:
    assert KINDS == ("int8", "float8", "text", "bool")
    assert sql.binary_kinds(TABLE, ["i", "small"], postgresql.dialect()) is None  # int4


def test_plain_values_are_planned_binary() -> None:
    rows = [{"i": 1, "f": 0.5, "s": "a\tb", "b": True}, {"i": None, "f": 2, "s": "", "b": None}]
    out = plan(rows)
    assert out is not None and out.first is rows[0] and out.count == 2 and out.kinds == KINDS


def test_types_the_binary_dumpers_would_take_but_text_refuses_are_planned_text() -> None:
    for odd in ({"i": True}, {"f": False}, {"b": 1}, {"b": "t"}):
        assert plan([BASE, {**BASE, **odd}]) is None, odd


def test_a_decimal_is_binary_only_in_a_double_column() -> None:
    import decimal

    assert plan([BASE, {**BASE, "f": decimal.Decimal("1.5")}]) is not None
    assert plan([BASE, {**BASE, "b": decimal.Decimal("2")}]) is None
    assert plan([BASE, {**BASE, "i": decimal.Decimal("2")}]) is None


@pytest.fixture
def pg(request: pytest.FixtureRequest) -> Iterator[Target]:
    server = request.getfixturevalue("postgres")
    db = server.create_database()
    url = f"jdbc:postgresql://{server.host}:{server.port}/{db}?user={server.user}"
    if server.password:
        url += f"&password={server.password}"
    target = Target("postgresql", url)
    yield target
    for task in target.tasks:
        task.stop()


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records whether each COPY the sink streams is binary."""
    seen: list[bool] = []
    real = sql._stream

    def spy(copy: Any, rows: Any, transformer: Any, fmt: Any, binary: bool) -> None:
        seen.append(binary)
        real(copy, rows, transformer, fmt, binary)

    monkeypatch.setattr(sql, "_stream", spy)
    return seen


def put_pairs(target: Target, values: list[dict[str, Any]], **config: Any) -> Any:
    """A task that learns the table from a first put, then gets ``values`` in one put."""
    task = target.task(tolerate=True, **{"auto.create": "true", **config})
    task.put([rec(0, {"id": 0, "n": 1, "s": "x"}), rec(1, {"id": 1, "n": 2, "s": "y"})])
    task.flush({})
    task.put([rec(2 + i, v) for i, v in enumerate(values)])
    task.flush({})
    return task


def test_rows_that_fit_go_binary_in_one_copy(pg: Target, streams: list[bool]) -> None:
    task = put_pairs(pg, [{"id": i, "n": i * 10, "s": f"r{i}"} for i in range(2, 300)])
    assert streams == [True, True]  # one COPY per put
    rows = pg.rows(task, "SELECT id, n, s FROM orders ORDER BY id")
    assert rows == [(0, 1, "x"), (1, 2, "y")] + [(i, i * 10, f"r{i}") for i in range(2, 300)]


def test_a_non_string_in_a_text_column_goes_again_as_text(pg: Target,
                                                          streams: list[bool]) -> None:  # fmt: skip
    values = [{"id": i, "n": i, "s": f"r{i}"} for i in range(2, 200)]
    values[150]["s"] = 12345  # the text dumper refuses an int half-way through the stream
    task = put_pairs(pg, values)
    assert streams[1:] == [True, False]  # binary, aborted, then the same batch as text
    assert task.context.reporter.reported == []  # type: ignore[attr-defined]
    rows = pg.rows(task, "SELECT id, n, s FROM orders WHERE id >= 2 ORDER BY id")
    assert rows == [(v["id"], v["n"], str(v["s"])) for v in values]


def test_an_int_out_of_bigint_range_is_a_bad_record_and_the_rest_is_written(
    pg: Target, streams: list[bool]
) -> None:
    values = [{"id": i, "n": i, "s": f"r{i}"} for i in range(2, 200)]
    values[100]["n"] = 2**63  # the int8 dumper overflows; text COPY: out of range
    task = put_pairs(pg, values)
    assert streams[1:3] == [True, False]
    [(bad, error)] = task.context.reporter.reported  # type: ignore[attr-defined]
    assert bad.offset == 102 and "out of range" in str(error)
    rows = pg.rows(task, "SELECT id FROM orders WHERE id >= 2 ORDER BY id")
    assert rows == [(v["id"],) for v in values if v["n"] != 2**63]


def test_columns_a_schema_types_are_not_looked_at() -> None:
    """A schema's int64 field holds ints (the converter checks it when it decodes): its
    column is not scanned, so even a bool there would pass. Columns without a known type,
    or whose known types do not all fit, are still scanned."""
    odd = [BASE, {**BASE, "i": True}]
    assert sql.binary_copy(odd, Transformer(), KINDS, {"i": frozenset({int})}) is not None
    assert sql.binary_copy(odd, Transformer(), KINDS, {"f": frozenset({int, float})}) is None
    wide = {"i": frozenset({int, float})}  # a float64 field in a bigint column: scanned
    assert sql.binary_copy(odd, Transformer(), KINDS, wide) is None


def test_the_json_converter_refuses_what_a_typed_column_trusts() -> None:
    """The premise of ``Shape.typed``: decoding with a schema, a bool is not an int64, a
    string is not a double, a number is not a boolean."""
    from hub.api import DataError
    from hub.converters.json import JsonConverter

    converter = JsonConverter({"schemas.enable": "true"}, is_key=False)
    for kind, bad in (("int64", "true"), ("double", '"1.5"'), ("boolean", "1"),
                      ("string", "5")):  # fmt: skip
        envelope = (f'{{"schema":{{"type":"struct","fields":[{{"type":"{kind}","field":"x"}}]}},'
                    f'"payload":{{"x":{bad}}}}}')  # fmt: skip
        with pytest.raises(DataError):
            converter.to_connect("t", envelope.encode())


def test_shape_types_come_from_the_schema_only(pg: Target) -> None:
    from hub.api.schema import (
        BOOLEAN_SCHEMA,
        FLOAT64_SCHEMA,
        INT32_SCHEMA,
        INT64_SCHEMA,
        STRING_SCHEMA,
        struct,
    )
    from hub.converters import logical

    schema = struct(("id", INT64_SCHEMA), ("f", FLOAT64_SCHEMA), ("b", BOOLEAN_SCHEMA),
                    ("s", STRING_SCHEMA), ("n", INT32_SCHEMA),
                    ("at", logical.TIMESTAMP_SCHEMA), name="v")  # fmt: skip
    task = pg.task(**{"auto.create": "true"})
    value = {"id": 1, "f": 2, "b": True, "s": "x", "n": 3, "at": 0}
    change = task.builder.build(rec(0, value, schema=schema))
    assert change is not None
    assert change.shape.typed == {"id": frozenset({int}), "f": frozenset({int, float}),
                                  "b": frozenset({bool}), "s": frozenset({str}),
                                  "n": frozenset({int})}  # fmt: skip  # "at" is adapted
    schemaless = task.builder.build(rec(1, {"id": 1, "s": "x"}))
    assert schemaless is not None and schemaless.shape.typed == {}


def test_schema_typed_rows_go_binary_and_read_back(pg: Target, streams: list[bool]) -> None:
    from hub.api.schema import FLOAT64_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, struct

    schema = struct(("id", INT64_SCHEMA), ("f", FLOAT64_SCHEMA), ("s", STRING_SCHEMA), name="v")
    task = pg.task(**{"auto.create": "true"})
    values = [{"id": i, "f": i if i % 2 else i / 4, "s": f"r{i}"} for i in range(200)]
    task.put([rec(i, v, schema=schema) for i, v in enumerate(values[:2])])
    task.put([rec(i, v, schema=schema) for i, v in enumerate(values[2:], 2)])
    rows = pg.rows(task, "SELECT id, f, s FROM orders ORDER BY id")
    assert streams and all(streams)
    assert rows == [(v["id"], float(v["f"]), v["s"]) for v in values]
