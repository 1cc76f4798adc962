"""Kafka's number converters: ``LongConverter``, ``IntegerConverter``, ``ShortConverter``,
``FloatConverter``, ``DoubleConverter`` (``org.apache.kafka.connect.converters``).

Wire format, as Kafka's ``LongSerializer`` and friends write it: the number big-endian in a
fixed width (8, 4, 2, 4 and 8 bytes; IEEE 754 for the floating ones). Null handling follows
Kafka's ``NumberConverter``: a null value serialises to null (a tombstone), null bytes read
back as null, and reading always returns the converter's optional schema (``OPTIONAL_INT64``
...). Bytes of any other length are a ``DataError`` (Kafka's "Size of data received by
LongDeserializer is not 8"), so is a value of the wrong type: the integer converters take
Python ints (not bools) within the type's range; the floating ones also take ints, which a
schemaless source may send for whole numbers (Java would need a Float/Double object).

Each converter also exists as a header converter, as Kafka's classes implement both
interfaces.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from hub.api import Converter, DataError, HeaderConverter, Schema, SchemaAndValue
from hub.api.schema import Type

_PREFIX = "org.apache.kafka.connect.converters."


class _NumberCodec:
    """The encoding of one number type; the converters below only pick one."""

    def __init__(self, type_name: str, fmt: str, kind: Type) -> None:
        self.type_name = type_name
        self.struct = struct.Struct(fmt)
        self.schema = Schema(kind, optional=True)
        self.integral = kind in (Type.INT16, Type.INT32, Type.INT64)
        bits = self.struct.size * 8
        self.low, self.high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        self.deserializer = type_name.capitalize() + "Deserializer"

    def encode(self, value: Any) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataError(f"Failed to serialize to {self.type_name} (was {type(value).__name__})")
        if self.integral:
            if not isinstance(value, int):
                raise DataError(f"Failed to serialize to {self.type_name} (was float)")
            if not self.low <= value <= self.high:
                raise DataError(f"Failed to serialize to {self.type_name}: {value} out of range")
        try:
            return self.struct.pack(value)
        except (OverflowError, struct.error) as exc:  # a double beyond a float's range
            raise DataError(f"Failed to serialize to {self.type_name}: {exc}") from None

    def decode(self, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(self.schema, None)
        if len(data) != self.struct.size:
            raise DataError(
                f"Failed to deserialize {self.type_name}: Size of data received by "
                f"{self.deserializer} is not {self.struct.size}"
            )
        return SchemaAndValue(self.schema, self.struct.unpack(data)[0])


class _NumberConverter(Converter):
    codec: ClassVar[_NumberCodec]

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self.encode, self.decode = self.codec.encode, self.codec.decode

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.encode(value)

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        return self.decode(data)


class _NumberHeaderConverter(HeaderConverter):
    codec: ClassVar[_NumberCodec]

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.codec.encode(value)

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        return self.codec.decode(data)


_LONG = _NumberCodec("long", ">q", Type.INT64)
_INTEGER = _NumberCodec("integer", ">i", Type.INT32)
_SHORT = _NumberCodec("short", ">h", Type.INT16)
_FLOAT = _NumberCodec("float", ">f", Type.FLOAT32)
_DOUBLE = _NumberCodec("double", ">d", Type.FLOAT64)


class LongConverter(_NumberConverter):
    name = "long"
    aliases = ("LongConverter", _PREFIX + "LongConverter")
    codec = _LONG
    description = "64-bit integers, big-endian (Kafka's LongSerializer)."


class IntegerConverter(_NumberConverter):
    name = "integer"
    aliases = ("IntegerConverter", _PREFIX + "IntegerConverter")
    codec = _INTEGER
    description = "32-bit integers, big-endian (Kafka's IntegerSerializer)."


class ShortConverter(_NumberConverter):
    name = "short"
    aliases = ("ShortConverter", _PREFIX + "ShortConverter")
    codec = _SHORT
    description = "16-bit integers, big-endian (Kafka's ShortSerializer)."


class FloatConverter(_NumberConverter):
    name = "float"
    aliases = ("FloatConverter", _PREFIX + "FloatConverter")
    codec = _FLOAT
    description = "32-bit IEEE 754 floats, big-endian (Kafka's FloatSerializer)."


class DoubleConverter(_NumberConverter):
    name = "double"
    aliases = ("DoubleConverter", _PREFIX + "DoubleConverter")
    codec = _DOUBLE
    description = "64-bit IEEE 754 doubles, big-endian (Kafka's DoubleSerializer)."


class LongHeaderConverter(_NumberHeaderConverter):
    name, aliases, codec = LongConverter.name, LongConverter.aliases, _LONG


class IntegerHeaderConverter(_NumberHeaderConverter):
    name, aliases, codec = IntegerConverter.name, IntegerConverter.aliases, _INTEGER


class ShortHeaderConverter(_NumberHeaderConverter):
    name, aliases, codec = ShortConverter.name, ShortConverter.aliases, _SHORT


class FloatHeaderConverter(_NumberHeaderConverter):
    name, aliases, codec = FloatConverter.name, FloatConverter.aliases, _FLOAT


class DoubleHeaderConverter(_NumberHeaderConverter):
    name, aliases, codec = DoubleConverter.name, DoubleConverter.aliases, _DOUBLE


NUMBER_CONVERTERS: tuple[type[Converter], ...] = (
    LongConverter, IntegerConverter, ShortConverter, FloatConverter, DoubleConverter,
)  # fmt: skip
NUMBER_HEADER_CONVERTERS: tuple[type[HeaderConverter], ...] = (
    LongHeaderConverter, IntegerHeaderConverter, ShortHeaderConverter, FloatHeaderConverter,
    DoubleHeaderConverter,
)  # fmt: skip
