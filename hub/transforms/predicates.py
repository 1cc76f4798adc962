"""Predicates that guard transforms: ``TopicNameMatches``, ``HasHeaderKey``, ``RecordIsTombstone``.

A transform with ``predicate=<p>`` applies only to records the predicate accepts (or, with
``negate=true``, only to those it rejects); others pass through unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from hub.api import ConfigModel, Predicate
from hub.api.record import ConnectRecord

_PREFIX = "org.apache.kafka.connect.transforms.predicates."


class TopicNameMatchesConfig(ConfigModel):
    pattern: str = Field(min_length=1, description="Regex the whole topic name must match.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value


class TopicNameMatches(Predicate[ConnectRecord]):
    name = "TopicNameMatches"
    aliases = (_PREFIX + "TopicNameMatches",)
    config_model = TopicNameMatchesConfig
    description = "True for records whose topic name matches a regular expression."

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.pattern = re.compile(config.pattern)

    def test(self, record: ConnectRecord) -> bool:
        return self.pattern.fullmatch(record.topic) is not None


class HasHeaderKeyConfig(ConfigModel):
    name: str = Field(min_length=1, description="Header name to look for.")


class HasHeaderKey(Predicate[ConnectRecord]):
    name = "HasHeaderKey"
    aliases = (_PREFIX + "HasHeaderKey",)
    config_model = HasHeaderKeyConfig
    description = "True for records with at least one header of the given name."

    def test(self, record: ConnectRecord) -> bool:
        return any(h.key == self.config.name for h in record.headers)


class RecordIsTombstone(Predicate[ConnectRecord]):
    name = "RecordIsTombstone"
    aliases = (_PREFIX + "RecordIsTombstone",)
    description = "True for tombstones (records whose value is null)."

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None
