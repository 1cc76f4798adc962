"""Record -> encoded partition (the directory between ``<topic>/`` and the file name).

Confluent's storage partitioners, with their class names and config keys:

- ``DefaultPartitioner``: ``partition=<kafka partition>``.
- ``FieldPartitioner``: ``<field>=<value>`` for each of ``partition.field.name`` (comma list),
  joined by ``/``; values are read from the record value (a struct/dict; dotted paths allowed).
- ``TimeBasedPartitioner``: the record's timestamp (``timestamp.extractor``: ``Record`` = Kafka
  record time, ``RecordField`` = ``timestamp.field`` of the value, ``Wallclock`` = now), floored
  to ``partition.duration.ms`` in ``timezone``, rendered with ``path.format`` (a Joda-Time
  pattern such as ``'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH``). ``HourlyPartitioner`` and
  ``DailyPartitioner`` are the same with fixed duration and format.

Partitioners are pure functions of (record, clock), so the same records always land under the
same names: the basis of the exactly-once argument in ``writer``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hub.api import ConfigError, DataError, SinkRecord

_PKG = "io.confluent.connect.storage.partitioner."
HOURLY_FORMAT = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
DAILY_FORMAT = "'year'=YYYY/'month'=MM/'day'=dd"
Clock = Callable[[], int]  # wall clock, epoch milliseconds


class Partitioner(Protocol):
    """Maps a record to its encoded partition; ``timestamp`` gives the record time it used."""

    def encode(self, record: SinkRecord) -> str: ...

    def timestamp(self, record: SinkRecord) -> int | None: ...


def field_value(value: Any, path: str) -> Any:
    """``value[a][b]`` for ``path`` ``a.b``; DataError naming the field when absent."""
    current = value
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            raise DataError(f"record value has no field {path!r}")
        current = current[part]
    return current


class TimestampExtractor:
    """``timestamp.extractor``: Record | RecordField | Wallclock (Confluent's three)."""

    def __init__(self, kind: str, field: str, clock: Clock) -> None:
        short = kind.rsplit(".", 1)[-1].removesuffix("TimestampExtractor")
        if short not in ("Record", "RecordField", "Wallclock"):
            raise ConfigError(
                "bad timestamp.extractor",
                {"timestamp.extractor": [f"unknown extractor {kind!r}; "
                                         "use Record, RecordField or Wallclock"]},
            )  # fmt: skip
        self.kind, self.field, self.clock = short, field, clock

    def __call__(self, record: SinkRecord) -> int:
        if self.kind == "Wallclock":
            return self.clock()
        if self.kind == "Record":
            if record.timestamp is None:
                raise DataError(f"record at offset {record.offset} has no timestamp")
            return record.timestamp
        raw = field_value(record.value, self.field)
        return _to_millis(raw, self.field)


def _to_millis(raw: Any, field: str) -> int:
    if isinstance(raw, bool):
        raise DataError(f"timestamp field {field!r} is a boolean")
    if isinstance(raw, int | float):
        return int(raw)
    if isinstance(raw, datetime):
        return int(raw.timestamp() * 1000)
    if isinstance(raw, str):
        try:
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            raise DataError(f"timestamp field {field!r} is not ISO-8601: {raw!r}") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return int(parsed.timestamp() * 1000)
    raise DataError(f"timestamp field {field!r} has unsupported type {type(raw).__name__}")


class DefaultPartitioner:
    def encode(self, record: SinkRecord) -> str:
        return f"partition={record.partition}"

    def timestamp(self, record: SinkRecord) -> int | None:
        return record.timestamp


class FieldPartitioner:
    def __init__(self, fields: list[str]) -> None:
        if not fields:
            raise ConfigError(
                "FieldPartitioner needs fields",
                {"partition.field.name": ["required by FieldPartitioner"]},
            )
        self.fields = fields

    def encode(self, record: SinkRecord) -> str:
        return "/".join(f"{f}={_text(field_value(record.value, f))}" for f in self.fields)

    def timestamp(self, record: SinkRecord) -> int | None:
        return record.timestamp


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class TimeBasedPartitioner:
    def __init__(
        self, duration_ms: int, path_format: str, tz: str, extractor: TimestampExtractor
    ) -> None:
        errors: dict[str, list[str]] = {}
        if duration_ms <= 0:
            errors["partition.duration.ms"] = ["must be > 0 for TimeBasedPartitioner"]
        if not path_format:
            errors["path.format"] = ["required by TimeBasedPartitioner"]
        try:
            self.zone = ZoneInfo(tz or "UTC")
        except (ZoneInfoNotFoundError, ValueError):
            errors["timezone"] = [f"unknown time zone {tz!r}"]
        if errors:
            raise ConfigError("bad time-based partitioner config", errors)
        self.duration_ms = duration_ms
        self.render = compile_joda(path_format)
        self.extract = extractor

    def timestamp(self, record: SinkRecord) -> int | None:
        return self.extract(record)

    def encode(self, record: SinkRecord) -> str:
        return self.encode_time(self.extract(record))

    def encode_time(self, ts: int) -> str:
        """Floors ``ts`` to the duration in local time (as Confluent does), then formats it."""
        local = datetime.fromtimestamp(ts / 1000, self.zone)
        offset_ms = int(local.utcoffset().total_seconds() * 1000)  # type: ignore[union-attr]
        floored = (ts + offset_ms) // self.duration_ms * self.duration_ms - offset_ms
        return self.render(datetime.fromtimestamp(floored / 1000, self.zone))


_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _field(letter: str, width: int) -> Callable[[datetime], str]:
    if letter in "yY":
        return (
            (lambda d: f"{d.year % 100:02d}") if width == 2 else (lambda d: f"{d.year:0{width}d}")
        )
    if letter == "M":
        if width >= 4:
            return lambda d: _MONTHS[d.month - 1]
        if width == 3:
            return lambda d: _MONTHS[d.month - 1][:3]
        return lambda d: f"{d.month:0{width}d}"
    if letter == "E":
        return (lambda d: _DAYS[d.weekday()]) if width >= 4 else (lambda d: _DAYS[d.weekday()][:3])
    simple: dict[str, Callable[[datetime], int]] = {
        "d": lambda d: d.day, "H": lambda d: d.hour, "m": lambda d: d.minute,
        "s": lambda d: d.second, "S": lambda d: d.microsecond // 1000,
        "D": lambda d: d.timetuple().tm_yday,
    }  # fmt: skip
    if letter not in simple:
        raise ConfigError(
            "bad path.format", {"path.format": [f"unsupported pattern letter {letter!r}"]}
        )
    get = simple[letter]
    return lambda d: f"{get(d):0{width}d}"


_TOKEN = re.compile(r"'((?:[^']|'')*)'|([A-Za-z])\2*|([^'A-Za-z]+)")


def _constant(text: str) -> Callable[[datetime], str]:
    return lambda _d: text


def compile_joda(pattern: str) -> Callable[[datetime], str]:
    """A Joda-Time ``DateTimeFormat`` pattern as a function. Quoted text is literal, ``''`` is a
    quote; letters y Y M d H m s S D E are supported (English month/day names)."""
    parts: list[Callable[[datetime], str]] = []
    for match in _TOKEN.finditer(pattern):
        quoted, letter, literal = match.group(1), match.group(2), match.group(3)
        if quoted is not None:
            parts.append(_constant(quoted.replace("''", "'") if quoted else "'"))
        elif letter:
            parts.append(_field(letter, len(match.group(0))))
        else:
            parts.append(_constant(literal))
    return lambda d: "".join(p(d) for p in parts)


def build_partitioner(cfg: Any, clock: Clock) -> Partitioner:
    """From a storage config (``connectors._storage.config.StorageSinkConfig``)."""
    name = cfg.partitioner_class.removeprefix(_PKG)
    extractor = TimestampExtractor(cfg.timestamp_extractor, cfg.timestamp_field, clock)
    if name == "DefaultPartitioner":
        return DefaultPartitioner()
    if name == "FieldPartitioner":
        fields = [f.strip() for f in cfg.partition_field_name.split(",") if f.strip()]
        return FieldPartitioner(fields)
    if name == "HourlyPartitioner":
        return TimeBasedPartitioner(3_600_000, HOURLY_FORMAT, cfg.timezone, extractor)
    if name == "DailyPartitioner":
        return TimeBasedPartitioner(86_400_000, DAILY_FORMAT, cfg.timezone, extractor)
    if name == "TimeBasedPartitioner":
        return TimeBasedPartitioner(
            cfg.partition_duration_ms, cfg.path_format, cfg.timezone, extractor
        )
    raise ConfigError(
        "unknown partitioner",
        {"partitioner.class": [f"unknown partitioner {cfg.partitioner_class!r}"]},
    )
