"""Logical type encodings (Timestamp, Date, Time, Decimal)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from hub.api import DataError
from hub.converters import logical


def test_timestamp() -> None:
    stamp = dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    millis = logical.timestamp_to_millis(stamp)
    assert millis == 1704164645678
    assert logical.millis_to_timestamp(millis) == stamp
    assert logical.timestamp_to_millis(stamp.replace(tzinfo=None)) == millis  # naive = UTC
    assert logical.timestamp_to_millis(5) == 5
    assert logical.millis_to_timestamp(-1) == logical.EPOCH - dt.timedelta(milliseconds=1)


def test_date_and_time() -> None:
    assert logical.date_to_days(dt.date(1970, 1, 11)) == 10
    assert logical.days_to_date(-1) == dt.date(1969, 12, 31)
    assert logical.time_to_millis(dt.time(1, 0, 0, 5000)) == 3_600_005
    assert logical.millis_to_time(3_600_005) == dt.time(1, 0, 0, 5000)
    with pytest.raises(DataError):
        logical.millis_to_time(logical.MS_PER_DAY)


def test_decimal() -> None:
    schema = logical.decimal_schema(2)
    assert logical.decimal_to_bytes(decimal.Decimal("12.34"), schema) == b"\x04\xd2"
    assert logical.bytes_to_decimal(b"\x04\xd2", schema) == decimal.Decimal("12.34")
    assert logical.decimal_to_bytes(1.5, schema) == b"\x00\x96"
    with pytest.raises(DataError, match="more than 2 decimal places"):
        logical.decimal_to_bytes(decimal.Decimal("1.234"), schema)
    with pytest.raises(DataError, match="scale"):
        logical.decimal_to_bytes(1, logical.Schema(logical.Type.BYTES, name=logical.DECIMAL))


def test_wrong_python_types() -> None:
    with pytest.raises(DataError):
        logical.timestamp_to_millis("2024")
    with pytest.raises(DataError):
        logical.date_to_days(1.5)
    with pytest.raises(DataError):
        logical.time_to_millis(True)
