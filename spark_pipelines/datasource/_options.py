"""Options of the ``sluice`` data source, spelled and interpreted as Spark's Kafka source does.

Spark passes options case-insensitively; :class:`Options` looks keys up without case. Options
prefixed ``kafka.`` go to confluent-kafka with the prefix removed (``kafka.bootstrap.servers``,
``kafka.security.protocol``, ...), exactly like Spark's Kafka source hands them to its client.

Offsets are JSON ``{"topic": {"0": 23, "1": -2}}`` where -2 means earliest and -1 latest, as in
Spark; ``startingTimestamp`` (ms) starts every partition at the first offset whose timestamp is
>= it (the end of the partition when there is none).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hub.api.client_settings import client_setting_errors
from sluice.client_security import ClientSecurityError, to_librdkafka
from spark_pipelines.errors import OptionError

EARLIEST = -2
LATEST = -1

Offsets = dict[str, dict[str, int]]
"""``{topic: {partition-as-string: offset}}``: JSON-friendly, the shape Spark checkpoints."""


@dataclass(frozen=True)
class Subscription:
    """Which topics or partitions to read: exactly one of the three Kafka-source strategies."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assign: tuple[tuple[str, int], ...] = ()

    def matches(self, topic: str) -> bool:
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        if self.assign:
            return any(t == topic for t, _ in self.assign)
        return topic in self.topics


class Options:
    """Case-insensitive view over Spark's option map."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._raw = {str(k).lower(): str(v) for k, v in dict(options).items() if v is not None}

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._raw.get(key.lower(), default)

    def int(self, key: str, default: int | None = None) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise OptionError(f"option {key} must be an integer, not {value!r}") from None

    def kafka_config(self) -> dict[str, str]:
        """``kafka.*`` options without the prefix; ``bootstrap.servers`` is required. Security
        settings may be librdkafka's or the Java client's (``sluice.client_security``)."""
        config = {k[len("kafka.") :]: v for k, v in self._raw.items() if k.startswith("kafka.")}
        if "bootstrap.servers" not in config:
            raise OptionError("option kafka.bootstrap.servers is required")
        refused = client_setting_errors(config)  # settings that load code or run commands
        if refused:
            key, reasons = next(iter(refused.items()))
            raise OptionError(f"option kafka.{key} is {reasons[0]}")
        try:  # Java-client forms (kafka.sasl.jaas.config, PEM truststores) for librdkafka
            return {k: str(v) for k, v in to_librdkafka(config).items()}
        except ClientSecurityError as exc:
            raise OptionError(f"option kafka.{exc}") from None

    def subscription(self) -> Subscription:
        given = [k for k in ("subscribe", "subscribepattern", "assign") if k in self._raw]
        if len(given) != 1:
            raise OptionError(
                "exactly one of subscribe, subscribePattern, assign is required"
                f" (got {', '.join(given) or 'none'})"
            )
        value = self._raw[given[0]]
        if given[0] == "subscribe":
            topics = tuple(t.strip() for t in value.split(",") if t.strip())
            if not topics:
                raise OptionError("option subscribe names no topic")
            return Subscription(topics=topics)
        if given[0] == "subscribepattern":
            return Subscription(pattern=value)
        try:
            parsed = json.loads(value)
            pairs = tuple((str(t), int(p)) for t, parts in parsed.items() for p in parts)
        except (ValueError, AttributeError, TypeError):
            raise OptionError(
                f'option assign must be JSON like {{"t": [0, 1]}}, not {value!r}'
            ) from None
        return Subscription(assign=pairs)

    def json_fields(self) -> tuple[str, ...]:
        """``valueJsonFields``: names parsed from JSON values into column ``value_json``."""
        value = self.get("valueJsonFields")
        if value is None:
            return ()
        fields = tuple(f.strip() for f in value.split(","))
        if not all(fields) or len(set(fields)) != len(fields):
            raise OptionError(
                f"option valueJsonFields must be distinct comma-separated names, not {value!r}"
            )
        return fields

    def fetch_native(self) -> bool:
        """``fetch.native``: read ranges with the native fetch path where it is exact (default)."""
        value = (self.get("fetch.native") or "true").strip().lower()
        if value not in ("true", "false"):
            raise OptionError(f"option fetch.native must be true or false, not {value!r}")
        return value == "true"

    def offsets_spec(self, key: str, default: str) -> str | Offsets:
        """``earliest``, ``latest`` or the parsed per-partition JSON of option ``key``."""
        value = (self.get(key) or default).strip()
        if value.lower() in ("earliest", "latest"):
            return value.lower()
        try:
            parsed = json.loads(value)
            return {t: {str(p): int(o) for p, o in parts.items()} for t, parts in parsed.items()}
        except (ValueError, AttributeError, TypeError):
            raise OptionError(
                f"option {key} must be earliest, latest or JSON, not {value!r}"
            ) from None


def resolve_spec(spec: str | Offsets, topic: str, partition: int) -> int:
    """The symbolic or numeric offset ``spec`` names for one partition (earliest if unnamed)."""
    if spec == "earliest":
        return EARLIEST
    if spec == "latest":
        return LATEST
    assert isinstance(spec, dict)
    return spec.get(topic, {}).get(str(partition), EARLIEST)
