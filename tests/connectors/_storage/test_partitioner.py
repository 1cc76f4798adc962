"""Partitioners: Confluent's encodings, time flooring in a zone, Joda patterns, extractors."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from connectors._storage.partitioner import (
    DefaultPartitioner,
    FieldPartitioner,
    TimeBasedPartitioner,
    TimestampExtractor,
    build_partitioner,
    compile_joda,
)
from hub.api import ConfigError, DataError
from tests.connectors._storage.sink_context import Clock, rec

_P = "io.confluent.connect.storage.partitioner."


def cfg(**kw: Any) -> SimpleNamespace:
    base = dict(partitioner_class=_P + "DefaultPartitioner", timestamp_extractor="Record",
                timestamp_field="timestamp", partition_field_name="", timezone="UTC",
                path_format="", partition_duration_ms=-1)  # fmt: skip
    return SimpleNamespace(**{**base, **kw})


def ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp() * 1000)  # type: ignore[misc]


def test_default_is_kafka_partition() -> None:
    assert DefaultPartitioner().encode(rec(5, {}, partition=3)) == "partition=3"


def test_field_partitioner_one_and_many_fields() -> None:
    p = FieldPartitioner(["region", "meta.kind"])
    value = {"region": "eu", "meta": {"kind": True}}
    assert p.encode(rec(0, value)) == "region=eu/meta.kind=true"
    with pytest.raises(DataError, match="region"):
        p.encode(rec(0, {"other": 1}))


def test_field_partitioner_from_config_needs_fields() -> None:
    with pytest.raises(ConfigError) as err:
        build_partitioner(cfg(partitioner_class=_P + "FieldPartitioner"), Clock())
    assert "partition.field.name" in err.value.errors


def test_hourly_and_daily_from_record_time() -> None:
    record = rec(0, {}, timestamp=ms(2015, 12, 7, 15, 42, 1))
    hourly = build_partitioner(cfg(partitioner_class=_P + "HourlyPartitioner"), Clock())
    assert hourly.encode(record) == "year=2015/month=12/day=07/hour=15"
    daily = build_partitioner(cfg(partitioner_class="DailyPartitioner"), Clock())
    assert daily.encode(record) == "year=2015/month=12/day=07"


def test_time_based_floors_in_local_time() -> None:
    # 02:30 UTC is 21:30 the previous day in New York (EST): the day bucket is local.
    extractor = TimestampExtractor("Record", "", Clock())
    p = TimeBasedPartitioner(86_400_000, "YYYY-MM-dd/HH", "America/New_York", extractor)
    assert p.encode(rec(0, {}, timestamp=ms(2024, 1, 10, 2, 30))) == "2024-01-09/00"
    p15 = TimeBasedPartitioner(900_000, "'t'=HHmm", "UTC", extractor)
    assert p15.encode(rec(0, {}, timestamp=ms(2024, 1, 10, 2, 44))) == "t=0230"


def test_record_field_extractor_accepts_millis_and_iso() -> None:
    ex = TimestampExtractor("RecordField", "meta.ts", Clock())
    assert ex(rec(0, {"meta": {"ts": 1234}})) == 1234
    assert ex(rec(0, {"meta": {"ts": "2024-01-01T00:00:00Z"}})) == ms(2024, 1, 1)
    with pytest.raises(DataError):
        ex(rec(0, {"meta": {"ts": "yesterday"}}))


def test_wallclock_uses_the_injected_clock() -> None:
    clock = Clock(ms(2020, 5, 17, 8))
    p = build_partitioner(
        cfg(partitioner_class="TimeBasedPartitioner", timestamp_extractor="Wallclock",
            partition_duration_ms=3_600_000, path_format="'dt'=YYYYMMdd/'h'=HH"),
        clock,
    )  # fmt: skip
    assert p.encode(rec(0, {}, timestamp=0)) == "dt=20200517/h=08"


def test_time_based_config_errors_name_their_keys() -> None:
    with pytest.raises(ConfigError) as err:
        build_partitioner(
            cfg(partitioner_class="TimeBasedPartitioner", timezone="Mars/Olympus"), Clock()
        )
    assert {"partition.duration.ms", "path.format", "timezone"} <= set(err.value.errors)
    with pytest.raises(ConfigError):
        build_partitioner(cfg(timestamp_extractor="Sundial"), Clock())


def test_joda_quotes_and_names() -> None:
    render = compile_joda("'year'=yyyy/MMM/EEEE/'it''s' D")
    assert render(datetime(2024, 3, 4, tzinfo=UTC)) == "year=2024/Mar/Monday/it's 64"
