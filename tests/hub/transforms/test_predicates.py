from __future__ import annotations

import pytest

from hub.api import ConfigError, Header, SinkRecord, SourceRecord
from hub.api.schema import STRING_SCHEMA
from hub.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def test_topic_name_matches_whole_name() -> None:
    p = TopicNameMatches(TopicNameMatches.config_model.parse({"pattern": "orders-.*"}))
    assert p.test(SourceRecord(topic="orders-eu"))
    assert not p.test(SourceRecord(topic="old-orders-eu"))
    assert not TopicNameMatches(TopicNameMatches.config_model.parse({"pattern": "ord"})).test(
        SourceRecord(topic="orders")
    )


def test_topic_name_matches_config_errors() -> None:
    with pytest.raises(ConfigError) as exc:
        TopicNameMatches.config_model.parse({"pattern": "("})
    assert "pattern" in exc.value.errors
    with pytest.raises(ConfigError) as exc:
        TopicNameMatches.config_model.parse({})
    assert "pattern" in exc.value.errors


def test_has_header_key() -> None:
    p = HasHeaderKey(HasHeaderKey.config_model.parse({"name": "trace"}))
    assert p.test(SinkRecord(topic="t", headers=(Header("a", 1), Header("trace", None))))
    assert not p.test(SinkRecord(topic="t", headers=(Header("a", 1),)))


def test_record_is_tombstone_with_and_without_schema() -> None:
    p = RecordIsTombstone(RecordIsTombstone.config_model.parse({}))
    assert p.test(SourceRecord(topic="t", key="k", value=None))
    assert p.test(SourceRecord(topic="t", key="k", value=None, value_schema=STRING_SCHEMA))
    assert not p.test(SourceRecord(topic="t", value=""))
