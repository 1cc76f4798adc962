"""Text-form parsers on edge cases the round-trip test does not reach (no database)."""

from __future__ import annotations

from connectors.postgres_cdc import _parse as p
from connectors.postgres_cdc.replication import lsn_to_str, str_to_lsn


def test_intervals() -> None:
    assert p.interval_micros("00:00:00") == 0
    assert p.interval_micros("-1 days +02:00:00") == -86_400_000_000 + 7_200_000_000
    assert p.interval_micros("-00:00:01.5") == -1_500_000
    assert p.interval_micros("1 mon") == round(30.4375 * 86_400_000_000)


def test_times_and_timestamps() -> None:
    assert p.time_micros("24:00:00") == 86_400_000_000
    assert p.zoned_time("23:30:00-01:30") == "01:00:00Z"
    assert p.timestamp_micros("infinity") is None
    assert p.timestamp_micros("1969-12-31 23:59:59.999999") == -1
    assert p.zoned_timestamp("2024-01-02 03:04:05+00") == "2024-01-02T03:04:05Z"
    assert p.epoch_days("1970-01-02") == 1


def test_array_literals() -> None:
    assert p.array_literal("{}") == []
    assert p.array_literal("{{1,2},{3,NULL}}") == [["1", "2"], ["3", None]]
    assert p.array_literal('{"NULL",NULL,"a,b","\\\\"}') == ["NULL", None, "a,b", "\\"]
    assert p.array_literal("[0:1]={5,6}") == ["5", "6"]


def test_lsn_text_round_trip() -> None:
    assert lsn_to_str(str_to_lsn("16/B374D848")) == "16/B374D848"
