from __future__ import annotations

import datetime as dt

import pytest

from hub.api import ConfigError, DataError, SourceRecord
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Type, struct
from hub.converters import logical
from hub.transforms._java_time import JavaDateFormat
from hub.transforms.timestamp_converter import TimestampConverter

STAMP = dt.datetime(2024, 3, 5, 14, 7, 9, 123000, tzinfo=dt.UTC)
MILLIS = 1709647629123
FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSX"


def make(variant="value", **config):  # type: ignore[no-untyped-def]
    return TimestampConverter(TimestampConverter.config_model.parse(config), variant)


@pytest.mark.parametrize(
    ("target", "extra", "expected"),
    [
        ("string", {"format": FORMAT}, "2024-03-05T14:07:09.123Z"),
        ("unix", {}, MILLIS),
        ("unix", {"unix.precision": "seconds"}, MILLIS // 1000),
        ("unix", {"unix.precision": "microseconds"}, MILLIS * 1000),
        ("Timestamp", {}, STAMP),
        ("Date", {}, dt.date(2024, 3, 5)),
        ("Time", {}, dt.time(14, 7, 9, 123000)),
    ],
)
def test_schemaless_whole_value_targets(target: str, extra: dict, expected: object) -> None:
    # unix.precision governs unix input too, so start from a datetime
    out = make(**{"target.type": target, **extra}).apply(SourceRecord(topic="t", value=STAMP))
    assert out is not None and out.value == expected and out.value_schema is None


@pytest.mark.parametrize(
    "source",
    [STAMP, MILLIS, "2024-03-05T14:07:09.123Z"],
)
def test_schemaless_sources(source: object) -> None:
    t = make(**{"target.type": "unix", "format": FORMAT, "field": "ts"})
    out = t.apply(SourceRecord(topic="t", value={"ts": source, "x": 1}))
    assert out is not None and out.value == {"ts": MILLIS, "x": 1}


def test_with_schema_field_to_string_and_back() -> None:
    schema = struct(("ts", logical.TIMESTAMP_SCHEMA), ("x", INT64_SCHEMA))
    to_string = make(**{"target.type": "string", "format": "yyyy-MM-dd HH:mm", "field": "ts"})
    out = to_string.apply(SourceRecord(topic="t", value={"ts": STAMP, "x": 1}, value_schema=schema))
    assert out is not None and out.value_schema is not None
    assert out.value == {"ts": "2024-03-05 14:07", "x": 1}
    assert out.value_schema.field("ts").schema.type is Type.STRING  # type: ignore[union-attr]
    back = make(**{"target.type": "Timestamp", "format": "yyyy-MM-dd HH:mm", "field": "ts"})
    again = back.apply(out)
    assert again is not None and again.value_schema is not None
    assert again.value["ts"] == STAMP.replace(second=0, microsecond=0)
    assert again.value_schema.field("ts").schema.name == logical.TIMESTAMP_SCHEMA.name  # type: ignore[union-attr]


def test_with_schema_whole_key_from_logical_date_and_unix() -> None:
    t = make("key", **{"target.type": "unix"})
    out = t.apply(SourceRecord(topic="t", key=dt.date(1970, 1, 2), key_schema=logical.DATE_SCHEMA))
    assert out is not None and out.key == 86_400_000
    assert out.key_schema is not None and out.key_schema.type is Type.INT64
    # an int64 without a logical name is unix time in the configured precision
    t = make(**{"target.type": "Date", "unix.precision": "seconds"})
    out = t.apply(SourceRecord(topic="t", value=86_400, value_schema=INT64_SCHEMA))
    assert out is not None and out.value == dt.date(1970, 1, 2)
    assert out.value_schema is not None and out.value_schema.name == logical.DATE_SCHEMA.name


def test_optional_field_stays_optional_and_null_passes() -> None:
    schema = struct(("ts", OPTIONAL_STRING_SCHEMA))
    t = make(**{"target.type": "unix", "format": "yyyy", "field": "ts"})
    out = t.apply(SourceRecord(topic="t", value={"ts": None}, value_schema=schema))
    assert out is not None and out.value == {"ts": None}
    assert out.value_schema.field("ts").schema.optional  # type: ignore[union-attr]


def test_errors() -> None:
    with pytest.raises(ConfigError) as exc:
        TimestampConverter.config_model.parse({"target.type": "string"})
    assert "format" in str(exc.value.errors)
    with pytest.raises(ConfigError) as exc:
        TimestampConverter.config_model.parse({"target.type": "epoch"})
    assert "target.type" in exc.value.errors
    with pytest.raises(DataError, match="does not match the format"):
        make(**{"target.type": "unix", "format": "yyyy-MM-dd"}).apply(
            SourceRecord(topic="t", value="yesterday")
        )
    with pytest.raises(DataError, match="out of range"):
        make(**{"target.type": "Date", "unix.precision": "seconds"}).apply(
            SourceRecord(topic="t", value=MILLIS * 10**6)
        )
    with pytest.raises(DataError, match="need the 'format'"):
        make(**{"target.type": "unix"}).apply(SourceRecord(topic="t", value="2024"))
    with pytest.raises(DataError, match="'nope' does not exist"):
        make(**{"target.type": "unix", "field": "nope"}).apply(
            SourceRecord(topic="t", value={}, value_schema=struct(("a", STRING_SCHEMA)))
        )


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyyMMdd", "20240305"),
        ("dd/MM/yy hh:mm a", "05/03/24 02:07 PM"),
        ("EEE, d MMM yyyy HH:mm:ss Z", "Tue, 5 Mar 2024 14:07:09 +0000"),
        ("yyyy-MM-dd 'at' HH 'o''clock'", "2024-03-05 at 14 o'clock"),
        ("D", "65"),
    ],
)
def test_java_patterns_format_and_parse(pattern: str, text: str) -> None:
    fmt = JavaDateFormat(pattern)
    assert fmt.format(STAMP) == text
    assert fmt.format(fmt.parse(text)) == text


def test_unsupported_pattern_letter() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        JavaDateFormat("yyyy-ww")
