"""``valueJsonFields``: the reader's JSON parse gives what Spark's ``from_json`` gives.

The expected rows were taken from ``from_json(v, "a string, b string")`` on pyspark 4.3;
``test_reader_column_equals_from_json_in_spark`` checks them against the running Spark too.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_pipelines.datasource import _json
from spark_pipelines.datasource._options import OptionError, Options
from tests.spark_pipelines._kafka import create_topic, produce

FIELDS = ("a", "b")
NULLS = {"a": None, "b": None}

# value -> from_json(value, "a string, b string") on Spark 4 (PERMISSIVE)
CASES: list[tuple[bytes | None, dict[str, str | None] | None]] = [
    (b'{"a":"x","b":"y"}', {"a": "x", "b": "y"}),
    (b'{"a":"z", "c": 1}', {"a": "z", "b": None}),
    (b'{"a":1.50,"b":true}', {"a": "1.5", "b": "true"}),
    (b'{"a":{"n": [1, "q"]},"b":[1, "z"]}', {"a": '{"n":[1,"q"]}', "b": '[1,"z"]'}),
    (b'{"a":null}', NULLS),
    (b"", None),
    (b"  ", None),
    (None, None),
    (b"[1,2]", NULLS),
    (b"garbage", NULLS),
    (b'"str"', NULLS),
    (b'{"a":"x"', NULLS),
    (b'{"a":"x", "a":"y"}', {"a": "y", "b": None}),
    (b'{"a":"x"} {"a":"y"}', {"a": "x", "b": None}),
    (b'{"a":"x"} junk', {"a": "x", "b": None}),
    (b' {"a":"w"}', {"a": "w", "b": None}),
    (b'{"a":1e3,"b":-0}', {"a": "1000.0", "b": "0"}),
    (b'{"a":1e20,"b":12345678901234567890123}', {"a": "1.0E20", "b": "12345678901234567890123"}),
    (b'{"A":"upper"}', NULLS),
    (b'{"a":"\\u00e9\\n", "b": "tab\\t"}', {"a": "\u00e9\n", "b": "tab\t"}),
    (b'{\n "a": "pretty"\n}', {"a": "pretty", "b": None}),
    (b'{"a":"x"}\n{"a":"y"}', {"a": "x", "b": None}),
    (b'{"a":"t"}\r\n', {"a": "t", "b": None}),
    (b'{"a":false}', {"a": "false", "b": None}),
]


def _parse(values: list[bytes | None]) -> list[dict[str, str | None] | None]:
    return _json.parse(values, pa.array(values, pa.binary()), FIELDS).to_pylist()


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_each_value_alone(value, expected):
    assert _parse([value]) == [expected]


def test_a_batch_mixing_every_case_keeps_rows_aligned():
    values = [v for v, _ in CASES] * 3
    assert _parse(values) == [e for _, e in CASES] * 3


def test_line_breaks_inside_values_keep_rows_aligned():
    values = [b'{"a":"1"}', b'{"a":"2"}\n\n', b'{"a":"3"}\n{"a":"extra"}', b'{"a":"4"}']
    assert [r["a"] for r in _parse(values)] == ["1", "2", "3", "4"]


def test_plain_objects_take_the_arrow_path(monkeypatch):
    def no_fallback(*_a):
        raise AssertionError("fell back to the per-row parse")

    monkeypatch.setattr(_json, "_parse_one", no_fallback)
    values = [b'{"a":"%d","b":"v","c":[1]}' % i for i in range(1000)] + [b'{"b":"only b"}']
    got = _parse(values)
    assert got[:2] == [{"a": "0", "b": "v"}, {"a": "1", "b": "v"}]
    assert got[-1] == {"a": None, "b": "only b"}
    assert _parse([]) == []


@pytest.mark.parametrize("raw", ["", "a,,b", "a,a", " , "])
def test_bad_field_lists_name_the_option(raw):
    with pytest.raises(OptionError, match="valueJsonFields"):
        Options({"valueJsonFields": raw}).json_fields()


def test_reader_column_equals_from_json_in_spark(spark, broker, topic_name):
    """Through Spark: the ``value_json`` column and ``from_json`` agree on every case."""
    from pyspark.sql import functions as F

    create_topic(broker.bootstrap, topic_name, 1)
    produce(broker.bootstrap, topic_name, [(None, v) for v, _ in CASES])  # type: ignore[misc]
    df = (
        spark.read.format("sluice")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic_name)
        .option("valueJsonFields", "a, b")
        .load()
    )
    assert df.columns[-1] == "value_json"
    rows = df.select(
        "offset",
        "value_json",
        F.from_json(F.col("value").cast("string"), "a string, b string").alias("spark"),
    ).collect()
    got = [(r.value_json, r.spark) for r in sorted(rows, key=lambda r: r.offset)]
    as_dicts = [tuple(x.asDict() if x is not None else None for x in pair) for pair in got]
    assert as_dicts == [(e, e) for _, e in CASES]
