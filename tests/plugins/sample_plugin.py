"""A third-party plugin as a separate package would write it: only ``hub.api`` and pluggy.

It registers one of each kind through the public hooks; the functions carry no marker, which
the Sluice plugin manager accepts (plugins need not import ``hub.plugins``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.api import (
    ConfigModel,
    Converter,
    HeaderConverter,
    Predicate,
    Schema,
    SchemaAndValue,
    SourceConnector,
    SourceTask,
    Transformation,
)


class UppercaseConfig(ConfigModel):
    field: str


class Uppercase(Transformation[Any]):
    """Upper-cases one string field of a dict value."""

    name = "Uppercase"
    aliases = ("com.example.Uppercase",)
    config_model = UppercaseConfig

    def apply(self, record: Any) -> Any:
        value = dict(record.value)
        value[self.config.field] = str(value[self.config.field]).upper()
        return record.replace(value=value)


class IsEven(Predicate[Any]):
    name = "IsEven"

    def test(self, record: Any) -> bool:
        return isinstance(record.value, int) and record.value % 2 == 0


class Rot13Converter(Converter):
    name = "rot13"

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        import codecs

        return None if value is None else codecs.encode(value, "rot13").encode()

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        import codecs

        return SchemaAndValue(None, None if data is None else codecs.decode(data.decode(), "rot13"))


class UpperHeaderConverter(HeaderConverter):
    name = "upper"

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes:
        return str(value).upper().encode()

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(None, None if data is None else data.decode())


class NullTask(SourceTask):
    def start(self, config: Mapping[str, Any]) -> None:
        pass

    def poll(self) -> None:
        return None

    def stop(self) -> None:
        pass


class NullSource(SourceConnector):
    name = "null-source"
    aliases = ("com.example.NullSourceConnector",)

    def start(self, config: Any) -> None:
        pass

    @classmethod
    def task_class(cls) -> type[NullTask]:
        return NullTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{}]


def sluice_connectors() -> list[type]:
    return [NullSource]


def sluice_transforms() -> list[type]:
    return [Uppercase]


def sluice_predicates() -> list[type]:
    return [IsEven]


def sluice_converters() -> list[type]:
    return [Rot13Converter]


def sluice_header_converters() -> list[type]:
    return [UpperHeaderConverter]


class ConflictingPlugin:
    """A plugin object (not a module) whose transform steals a built-in's name."""

    class FakeCast(Transformation[Any]):
        name = "Cast"

        def apply(self, record: Any) -> Any:
            return record

    def sluice_transforms(self) -> list[type]:
        return [self.FakeCast]
