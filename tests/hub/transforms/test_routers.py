from __future__ import annotations

import pytest

from hub.api import ConfigError, DataError, SinkRecord, SourceRecord
from hub.transforms.routers import RegexRouter, TimestampRouter, java_replacement


def make(cls, **config):  # type: ignore[no-untyped-def]
    return cls(cls.config_model.parse(config))


def test_regex_router_full_match_and_groups() -> None:
    router = make(RegexRouter, regex=r"(.*)-(\d+)", replacement="$1_v$2")
    out = router.apply(SourceRecord(topic="orders-42", value=1))
    assert out is not None and out.topic == "orders_v42"
    untouched = SourceRecord(topic="orders", value=1)
    assert router.apply(untouched) is untouched
    # the regex must match the whole topic, like Java's Matcher.matches()
    assert make(RegexRouter, regex="ord", replacement="x").apply(untouched) is untouched


def test_regex_router_named_groups_and_escapes() -> None:
    router = make(RegexRouter, regex=r"(?P<name>\w+)\.db", replacement=r"\$${name}\\x")
    out = router.apply(SinkRecord(topic="users.db", offset=1))
    assert out is not None and out.topic == "$users\\x"
    assert java_replacement("a$0b") == r"a\g<0>b"


def test_regex_router_config_errors() -> None:
    with pytest.raises(ConfigError) as exc:
        RegexRouter.config_model.parse({"regex": "(", "replacement": "x\\"})
    assert set(exc.value.errors) == {"regex", "replacement"}


def test_timestamp_router_defaults_and_format() -> None:
    record = SourceRecord(topic="logs", timestamp=1_700_000_000_000)
    out = make(TimestampRouter).apply(record)
    assert out is not None and out.topic == "logs-20231114"
    custom = make(
        TimestampRouter,
        **{"topic.format": "${timestamp}.${topic}", "timestamp.format": "yyyy-MM-dd'T'HH"},
    )
    out = custom.apply(record)
    assert out is not None and out.topic == "2023-11-14T22.logs"


def test_timestamp_router_errors() -> None:
    with pytest.raises(DataError, match="no timestamp"):
        make(TimestampRouter).apply(SourceRecord(topic="t"))
    with pytest.raises(ConfigError) as exc:
        TimestampRouter.config_model.parse({"timestamp.format": "yyyy-QQ"})
    assert "timestamp.format" in exc.value.errors
