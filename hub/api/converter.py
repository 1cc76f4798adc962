"""Converters: between a record's Python data (+ optional schema) and the bytes in Kafka.

Chosen per worker and overridable per connector with Kafka Connect's keys:
``key.converter``, ``value.converter``, ``header.converter`` plus their prefixed settings
(``value.converter.schemas.enable=false``). The configure call gets those settings without the
prefix. ``from_connect`` serialises for producing; ``to_connect`` parses consumed bytes and
raises DataError on bytes it cannot read (subject to ``errors.tolerance``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from hub.api.config import ConfigModel
from hub.api.schema import Schema


@dataclass(frozen=True, slots=True)
class SchemaAndValue:
    schema: Schema | None
    value: Any


class Converter(ABC):
    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    config_model: ClassVar[type[ConfigModel]] = ConfigModel
    description: ClassVar[str] = ""

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        self.config = self.config_model.parse(config)
        self.is_key = is_key

    @abstractmethod
    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Bytes to produce; None stays None (a tombstone value)."""

    @abstractmethod
    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Data read from Kafka; None bytes give SchemaAndValue(None, None)."""


class HeaderConverter(ABC):
    """Converts single header values (``header.converter``)."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    config_model: ClassVar[type[ConfigModel]] = ConfigModel

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = self.config_model.parse(config)

    @abstractmethod
    def from_connect(
        self, topic: str, key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue: ...
