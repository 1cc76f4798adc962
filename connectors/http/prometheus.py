"""Prometheus text exposition (0.0.4) and OpenMetrics, read with ``prometheus_client``'s parsers.

A sample is ``name{label="value",...} value [timestamp]``; histogram and summary series
(``_bucket``, ``_sum``, ``_count``) are ordinary samples carrying their family's type, and a
series without a ``# TYPE`` is ``untyped`` (the text format's word; the client library says
``unknown``). Timestamps are milliseconds since the epoch, as in the format.

A malformed line raises ``ValueError`` naming its number: a target that serves garbage should be
noticed, not half-read. The library's text parser accepts extra fields after the timestamp, so
that one rule (value and at most a timestamp) is checked here as well.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    value: float = 0.0
    timestamp_ms: int | None = None
    type: str = "untyped"


def parse(text: str, *, openmetrics: bool = False) -> Iterator[Sample]:
    """The samples of one exposition, in order; ``openmetrics`` for ``application/
    openmetrics-text`` bodies (which must end with ``# EOF``)."""
    if not openmetrics:
        _check_fields(text)
    families = openmetrics_families if openmetrics else text_families
    try:
        parsed = list(families(text))
    except ValueError as exc:
        raise ValueError(_locate(text, exc, openmetrics)) from None
    for family in parsed:
        kind = "untyped" if family.type == "unknown" else family.type
        for s in family.samples:
            stamp = s.timestamp
            millis = None if stamp is None else round(float(stamp) * 1000)
            yield Sample(s.name, dict(s.labels), float(s.value), millis, kind)


def _sample_lines(text: str) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            yield number, line


def _check_fields(text: str) -> None:
    for number, line in _sample_lines(text):
        close = line.rfind("}")
        rest = line[close + 1 :] if close >= 0 else line.partition(" ")[2]
        if len(rest.split()) > 2:
            raise ValueError(
                f"line {number}: expected a value and an optional timestamp: {line[:200]!r}"
            )


def _locate(text: str, error: ValueError, openmetrics: bool) -> str:
    """The parser's error with the number of the first line that fails on its own."""
    if not openmetrics:
        for number, line in _sample_lines(text):
            try:
                list(text_families(line + "\n"))
            except ValueError as exc:
                return f"line {number}: {exc}: {line[:200]!r}"
    return f"line ?: {error}"
